// Command webui benchmarks the web view: the run page of a 1,000-node
// stack run (internal/stacksim: 1,000 proposals, a plan, 900 layers, a
// task event per layer) and of a real 1,000-node wave run (dome run start:
// grants, workers, proposals, a plan and an integration per wave, the
// validation and the promotion; see wave.go) served by dome serve --ui,
// each beside the JSON answer for the same view (run.json: the same data
// encoded as JSON instead of rendered) and the floor, GET /healthz on the
// same server; the wave run's page also beside dome run status --json, the
// CLI's JSON answer (a process; its floor dome version). The target: a run
// page renders in under 100 ms on the server.
//
// Requests run one at a time (a page is rendered on one core); each
// figure is the median and the 90th percentile of -n requests, after a
// warm-up. The first request of a run (its ledger read and folded) is
// reported apart. It prints "workload | dome | baseline | baseline/dome |
// floor" rows: the JSON answers are baselines, not peers (no other tool
// serves these views), and the ratio reads as baseline time / dome time.
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
	"strings"
	"time"

	"github.com/dome-registry/dome/internal/stacksim"
)

func main() {
	dome := flag.String("dome", os.Getenv("DOME_BIN"), "dome binary")
	work := flag.String("work", "bench/.work/webui", "work directory")
	nodes := flag.Int("nodes", 1000, "proposals in the stack run")
	waveNodes := flag.Int("wave-nodes", 1000, "nodes in the wave run")
	fresh := flag.Bool("fresh", false, "make the wave run again even when the one kept under -work has the same queue")
	n := flag.Int("n", 200, "measured requests per workload")
	flag.Parse()
	if err := run(*dome, *work, *nodes, *waveNodes, *fresh, *n); err != nil {
		fmt.Fprintln(os.Stderr, "bench/webui:", err)
		os.Exit(1)
	}
}

// serve starts dome serve --ui on a free port over repo's runs and
// returns its URL and how to stop it.
func serve(dome, repo, store string) (string, func(), error) {
	cmd := exec.Command(dome, "serve", "--ui", "--repo", repo, "--store", "git:"+store, "--addr", "127.0.0.1:0", "--access-log=false")
	cmd.Env = append(os.Environ(), `TRUSTED_KEYS_JSON=[{"kid":"bench","alg":"ed25519","public_key":"base64:6kpsY+KcUgq+9VB7Ey7F+ZVHdq6+vnuSQh7qaRRG0iw="}]`)
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		return "", nil, err
	}
	stop := func() { cmd.Process.Signal(os.Interrupt); cmd.Wait() }
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
		stop()
		return "", nil, fmt.Errorf("dome serve --ui did not start")
	}
	go io.Copy(io.Discard, stderr)
	return base, stop, nil
}

type stat struct {
	p50, p90 time.Duration
	size     int
}

// timed runs f n+n/10 times and keeps the last n: the median, the 90th
// percentile and the size of the last answer.
func timed(n int, f func() (time.Duration, int, error)) (stat, error) {
	var ds []time.Duration
	size := 0
	for i := 0; i < n+n/10; i++ {
		d, s, err := f()
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

// med is the round with the median p50.
func med(ss []stat) stat {
	sort.Slice(ss, func(i, j int) bool { return ss[i].p50 < ss[j].p50 })
	return ss[len(ss)/2]
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d.Microseconds())/1000) }

func run(dome, work string, nodes, waveNodes int, fresh bool, n int) error {
	if dome == "" {
		return fmt.Errorf("set -dome or DOME_BIN")
	}
	dome, _ = filepath.Abs(dome)
	os.RemoveAll(filepath.Join(work, "repo"))
	os.RemoveAll(filepath.Join(work, "actions.git"))
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
	store, err := filepath.Abs(filepath.Join(work, "actions.git"))
	if err != nil {
		return err
	}
	if out, err := exec.Command("git", "init", "-q", "--bare", store).CombinedOutput(); err != nil {
		return fmt.Errorf("git init: %v: %s", err, out)
	}
	waveRepo, took, err := waveRun(dome, work, waveNodes, fresh)
	if err != nil {
		return err
	}
	base, stop, err := serve(dome, repo, store)
	if err != nil {
		return err
	}
	defer stop()
	waveBase, stopWave, err := serve(dome, waveRepo, store)
	if err != nil {
		return err
	}
	defer stopWave()
	c := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
	fetch := func(url string) func() (time.Duration, int, error) {
		return func() (time.Duration, int, error) {
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
	}
	at := fmt.Sprintf("%s/ui/runs/big/at/%d/", base, last)
	cold, err := timed(1, fetch(at))
	if err != nil {
		return err
	}
	var ws struct {
		Sequence int64 `json:"sequence"`
		Counters struct {
			Attempts int `json:"attempts"`
			Reopened int `json:"reopened"`
		} `json:"counters"`
		Waves []json.RawMessage `json:"waves"`
	}
	b, err := os.ReadFile(filepath.Join(waveRepo, "ops", "runs", "wave", "run.state.json"))
	if err == nil {
		err = json.Unmarshal(b, &ws)
	}
	if err != nil {
		return fmt.Errorf("the wave run's state: %v", err)
	}
	wat := fmt.Sprintf("%s/ui/runs/wave/at/%d/", waveBase, ws.Sequence)
	waveCold, err := timed(1, fetch(wat))
	if err != nil {
		return err
	}
	// dome run status --json: the CLI's JSON answer for the same run, a
	// process end to end (it reads run.state.json).
	status := func() (time.Duration, int, error) {
		cmd := exec.Command(dome, "run", "status", "wave", "--json")
		cmd.Dir = waveRepo
		start := time.Now()
		out, err := cmd.Output()
		return time.Since(start), len(out), err
	}
	version := func() (time.Duration, int, error) {
		start := time.Now()
		out, err := exec.Command(dome, "version").Output()
		return time.Since(start), len(out), err
	}
	// Interleave the workloads so load swings hit all alike.
	type workload struct {
		f     func() (time.Duration, int, error)
		n     int
		stats []stat
	}
	ws0 := map[string]*workload{
		"page": {f: fetch(at), n: n}, "json": {f: fetch(at + "run.json"), n: n}, "plan": {f: fetch(at + "plan/"), n: n}, "floor": {f: fetch(base + "/healthz"), n: n},
		"wpage": {f: fetch(wat), n: n}, "wjson": {f: fetch(wat + "run.json"), n: n}, "wnode": {f: fetch(wat + "nodes/" + fmt.Sprintf("n%04d", waveNodes/2+7) + "/"), n: n},
		"wtasks": {f: fetch(wat + "tasks/"), n: n}, "wfloor": {f: fetch(waveBase + "/healthz"), n: n},
		"status": {f: status, n: max(n/10, 5)}, "version": {f: version, n: max(n/10, 5)},
	}
	order := []string{"page", "json", "plan", "floor", "wpage", "wjson", "wnode", "wtasks", "wfloor", "status", "version"}
	for round := 0; round < 3; round++ {
		for _, k := range order {
			w := ws0[k]
			s, err := timed(w.n, w.f)
			if err != nil {
				return err
			}
			w.stats = append(w.stats, s)
		}
	}
	m := map[string]stat{}
	for k, w := range ws0 {
		m[k] = med(w.stats)
	}
	load, _ := os.ReadFile("/proc/loadavg")
	fmt.Printf("bench/webui: a %d-node stack run (%d events) and a %d-node wave run (%d events, %d attempts, %d waves, %d reopened), %d requests per workload x 3 interleaved rounds, load average %s\n",
		nodes, last, waveNodes, ws.Sequence, ws.Counters.Attempts, len(ws.Waves), ws.Counters.Reopened, n, strings.Join(strings.Fields(string(load))[:3], " "))
	if took > 0 {
		fmt.Printf("(the wave run was made now: dome run start --sandbox none took %s)\n", took.Round(time.Second))
	}
	fmt.Println("workload | dome | baseline | baseline/dome | floor")
	row := func(what string, a, b stat, p90 bool, floor stat) {
		x, y, f := a.p50, b.p50, floor.p50
		if p90 {
			x, y, f = a.p90, b.p90, floor.p90
		}
		fmt.Printf("%s | %s | %s | %.2fx | %s\n", what, ms(x), ms(y), float64(y)/float64(x), ms(f))
	}
	p, j := m["page"], m["json"]
	row(fmt.Sprintf("stack run page (HTML, %d KB) vs run.json (%d KB), median", p.size>>10, j.size>>10), p, j, false, m["floor"])
	row("stack run page vs run.json, p90", p, j, true, m["floor"])
	row(fmt.Sprintf("plan page with its %d-node graph (HTML+SVG, %d KB) vs run.json, median", nodes+1, m["plan"].size>>10), m["plan"], j, false, m["floor"])
	wp, wj := m["wpage"], m["wjson"]
	row(fmt.Sprintf("wave run page with its %d-node graph (HTML+SVG, %d KB) vs run.json (%d KB), median", waveNodes, wp.size>>10, wj.size>>10), wp, wj, false, m["wfloor"])
	row("wave run page vs run.json, p90", wp, wj, true, m["wfloor"])
	row(fmt.Sprintf("wave run page vs dome run status --json (a process, %d KB; floor: dome version), median", m["status"].size>>10), wp, m["status"], false, m["version"])
	row(fmt.Sprintf("a node's page (%d KB) vs run.json, median", m["wnode"].size>>10), m["wnode"], wj, false, m["wfloor"])
	row(fmt.Sprintf("the attempts page (%d KB) vs run.json, median", m["wtasks"].size>>10), m["wtasks"], wj, false, m["wfloor"])
	fmt.Printf("first request of the stack run (%d events read and folded; %d KB) | %s | - | - | -\n", last, cold.size>>10, ms(cold.p50))
	fmt.Printf("first request of the wave run (%d events read, folded, every decision re-derived; %d KB) | %s | - | - | -\n", ws.Sequence, waveCold.size>>10, ms(waveCold.p50))
	for _, c := range []struct {
		what string
		s    stat
	}{{"stack run page", p}, {"wave run page", wp}} {
		if c.s.p50 > 100*time.Millisecond {
			fmt.Printf("%s median %s is over the 100 ms target\n", c.what, ms(c.s.p50))
		}
	}
	return nil
}
