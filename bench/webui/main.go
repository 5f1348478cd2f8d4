// Command webui benchmarks the web view: a run page of a
// 1,000-node stack run (internal/stacksim: 1,000 proposals, a plan, 900
// layers, a task event per layer) served by dome serve --ui, beside the
// JSON answer for the same view (run.json: the same RunView, encoded as
// JSON instead of rendered; a baseline, as no other tool serves this view)
// and the floor, GET /healthz on the same
// server. The target: the run page renders in under 100 ms on the server.
//
// Requests run one at a time (a page is rendered on one core); each
// figure is the median and the 90th percentile of -n requests, after a
// warm-up. The first request of a run (its ledger read and folded) is
// reported apart. The workloads alternate in 3 rounds; each row gives the
// median of the rounds' medians with their range, page / baseline, and the
// load average at the start and the end.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"time"

	"github.com/dome-registry/dome/internal/benchrun"
	"github.com/dome-registry/dome/internal/stacksim"
)

func main() {
	dome := flag.String("dome", os.Getenv("DOME_BIN"), "dome binary")
	work := flag.String("work", "bench/.work/webui", "work directory")
	nodes := flag.Int("nodes", 1000, "proposals in the run")
	n := flag.Int("n", 200, "measured requests per workload")
	flag.Parse()
	if err := run(*dome, *work, *nodes, *n); err != nil {
		fmt.Fprintln(os.Stderr, "bench/webui:", err)
		os.Exit(1)
	}
}

func run(dome, work string, nodes, n int) error {
	loadStart := benchrun.Load()
	if dome == "" {
		return fmt.Errorf("set -dome or DOME_BIN")
	}
	dome, _ = filepath.Abs(dome)
	os.RemoveAll(work)
	repo := filepath.Join(work, "repo")
	runs := filepath.Join(repo, "ops", "runs")
	if err := os.MkdirAll(runs, 0o755); err != nil {
		return err
	}
	if out, err := exec.Command("git", "-C", repo, "init", "-q").CombinedOutput(); err != nil {
		return fmt.Errorf("git init: %v: %s", err, out)
	}
	last, err := stacksim.Write(runs, stacksim.Options{RunID: "big", Proposals: nodes, Tasks: true, At: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)})
	if err != nil {
		return err
	}
	store := filepath.Join(work, "actions.git")
	if out, err := exec.Command("git", "init", "-q", "--bare", store).CombinedOutput(); err != nil {
		return fmt.Errorf("git init: %v: %s", err, out)
	}
	cmd := exec.Command(dome, "serve", "--ui", "--repo", repo, "--store", "git:"+store, "--addr", "127.0.0.1:0", "--access-log=false")
	cmd.Env = append(os.Environ(), `TRUSTED_KEYS_JSON=[{"kid":"bench","alg":"ed25519","public_key":"base64:6kpsY+KcUgq+9VB7Ey7F+ZVHdq6+vnuSQh7qaRRG0iw="}]`)
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		return err
	}
	defer func() { cmd.Process.Signal(os.Interrupt); cmd.Wait() }()
	base := ""
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		var rec struct{ Msg, URL string }
		if json.Unmarshal(sc.Bytes(), &rec) == nil && rec.Msg == "listening" {
			base = rec.URL
			break
		}
	}
	if base == "" {
		return fmt.Errorf("dome serve --ui did not start")
	}
	go io.Copy(io.Discard, stderr)
	c := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
	at := fmt.Sprintf("%s/ui/runs/big/at/%d/", base, last)
	fetch := func(url string) (time.Duration, int, error) {
		start := time.Now()
		resp, err := c.Get(url)
		if err != nil {
			return 0, 0, err
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			return 0, 0, fmt.Errorf("%s: HTTP %d", url, resp.StatusCode)
		}
		return time.Since(start), len(b), err
	}
	cold, coldSize, err := fetch(at)
	if err != nil {
		return err
	}
	type stat struct {
		p50, p90 time.Duration
		size     int
	}
	measure := func(url string) (stat, error) {
		var ds []time.Duration
		size := 0
		for i := 0; i < n+n/10; i++ {
			d, s, err := fetch(url)
			if err != nil {
				return stat{}, err
			}
			if i >= n/10 {
				ds = append(ds, d)
			}
			size = s
		}
		sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
		return stat{ds[len(ds)/2], ds[len(ds)*9/10], size}, nil
	}
	// Interleave the workloads so load swings hit all alike.
	var page, js, plan, floor []stat
	for round := 0; round < 3; round++ {
		for _, w := range []struct {
			url string
			out *[]stat
		}{{at, &page}, {at + "run.json", &js}, {at + "plan/", &plan}, {base + "/healthz", &floor}} {
			s, err := measure(w.url)
			if err != nil {
				return err
			}
			*w.out = append(*w.out, s)
		}
	}
	ms := func(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d.Microseconds())/1000) }
	// spread is the median over the rounds of one figure, with its range.
	spread := func(ss []stat, f func(stat) time.Duration) (time.Duration, string) {
		var ds []time.Duration
		for _, x := range ss {
			ds = append(ds, f(x))
		}
		sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
		m := ds[len(ds)/2]
		return m, fmt.Sprintf("%s [%s-%s]", ms(m), ms(ds[0]), ms(ds[len(ds)-1]))
	}
	p50 := func(x stat) time.Duration { return x.p50 }
	p90 := func(x stat) time.Duration { return x.p90 }
	pm, ps := spread(page, p50)
	jm, js50 := spread(js, p50)
	_, fs := spread(floor, p50)
	pm90, ps90 := spread(page, p90)
	jm90, js90 := spread(js, p90)
	_, fs90 := spread(floor, p90)
	plm, pls := spread(plan, p50)
	fmt.Printf("bench/webui: a %d-node stack run (%d events), %d requests per workload x 3 interleaved rounds; load average at start %s, at the end %s\n", nodes, last, n, loadStart, benchrun.Load())
	var t benchrun.Table
	t.Row("workload (no peer serves this view)", "dome", "baseline: run.json", "dome/baseline", "floor: GET /healthz")
	t.Row(fmt.Sprintf("run page (HTML, %d KB; run.json %d KB), median", page[0].size>>10, js[0].size>>10), ps, js50, fmt.Sprintf("%.2fx", float64(pm)/float64(jm)), fs)
	t.Row("run page, p90", ps90, js90, fmt.Sprintf("%.2fx", float64(pm90)/float64(jm90)), fs90)
	t.Row(fmt.Sprintf("plan page with its %d-node graph (HTML+SVG, %d KB), median", nodes+1, plan[0].size>>10), pls, js50, fmt.Sprintf("%.2fx", float64(plm)/float64(jm)), fs)
	t.Row(fmt.Sprintf("first request of the run (%d events read and folded; %d KB), once", last, coldSize>>10), ms(cold), "-", "-", "-")
	t.Print(os.Stdout)
	p := struct{ p50 time.Duration }{pm}
	if p.p50 > 100*time.Millisecond {
		fmt.Printf("run page median %s is over the 100 ms target\n", ms(p.p50))
	}
	return nil
}
