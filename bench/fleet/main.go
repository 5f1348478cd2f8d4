// Command fleet is the fleet simulation of a wave run spread over machines,
// on loopback (issue 26): an embedded NATS JetStream server (the
// nats-server library, in this process), worker daemons (dome worker
// --nats --gateway, each its own process, --sandbox bwrap where it works),
// one coordinator (dome run start --dispatch nats://...) with its gateway
// on TLS (a throwaway CA), and a layered graph of no-op or editing nodes.
//
//	-mode check (make fleet): a 1,000-node graph whose workers each write
//	    one file and submit it, 8 daemons, two of them killed (-9) mid-run
//	    while they hold a job; the run must stop constraints_met with every
//	    node's file in the integration tree exactly once, and replay.
//	-mode bench (make bench): a 1,000-node graph of no-op workers, dome run
//	    start with the local dispatcher against NATS dispatch with 8 daemons
//	    (both at most 8 attempts at once, the same sandbox): tasks per
//	    second, dispatch latency p50/p99 (task.dispatched to the attempt
//	    running, from the ledger), and the run again with two daemons killed
//	    (the cost of a kill: the grant lifetime plus the ack grace).
//
// It prints the figures and the load average.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/dome-registry/dome/internal/fleetsim"
	"github.com/dome-registry/dome/internal/natstest"
	"github.com/dome-registry/dome/internal/runtest"
	"github.com/dome-registry/dome/internal/tlstest"
	"github.com/dome-registry/dome/pkg/ledger"
	"github.com/dome-registry/dome/pkg/stack"
)

func main() {
	dome := flag.String("dome", os.Getenv("DOME_BIN"), "dome binary")
	work := flag.String("work", "bench/.work/fleet", "work directory")
	mode := flag.String("mode", "bench", "check (make fleet) or bench (make bench)")
	nodes := flag.Int("nodes", 1000, "nodes of the graph")
	width := flag.Int("width", 100, "nodes per layer (each depends on the one a layer before)")
	workers := flag.Int("workers", 8, "worker daemons")
	kills := flag.Int("kills", 2, "worker daemons killed mid-run")
	ttl := flag.Int("ttl", 30, "grant lifetime in seconds (the cost of a kill is about this plus the ack grace; a job waiting longer than this for a daemon fails its attempt)")
	sb := flag.String("sandbox", "auto", "the workers' sandbox: auto (bwrap where it works), bwrap, none")
	flag.Parse()
	if *dome == "" {
		fail("-dome BIN (or DOME_BIN) is required")
	}
	d, err := filepath.Abs(*dome)
	must(err)
	must(os.RemoveAll(*work))
	must(os.MkdirAll(*work, 0o755))
	w, err := filepath.Abs(*work)
	must(err)
	for dir := w; dir != "/"; dir = filepath.Dir(dir) { // the sandbox user walks to the tools
		if fi, err := os.Stat(dir); err == nil && fi.Mode().Perm()&0o001 == 0 {
			os.Chmod(dir, fi.Mode().Perm()|0o011)
		}
	}
	if *sb == "auto" {
		*sb = "none"
		if exec.Command(d, "sandbox", "check").Run() == nil {
			*sb = "bwrap"
		}
	}
	fmt.Printf("load average at start: %s\n", loadAvg())
	fmt.Printf("fleet: %d nodes (%d per layer), %d worker daemons, sandbox %s, grants live %ds, %d cores\n", *nodes, *width, *workers, *sb, *ttl, numCPU())
	switch *mode {
	case "check":
		check(d, w, *sb, *nodes, *width, *workers, *kills, *ttl)
	case "bench":
		bench(d, w, *sb, *nodes, *width, *workers, *kills, *ttl)
	default:
		fail("-mode %q: want check or bench", *mode)
	}
	fmt.Printf("load average at end: %s\n", loadAvg())
}

// outcome is one run's figures.
type outcome struct {
	wall      time.Duration
	latencies []time.Duration
	topics    map[string]int
	killed    []string
}

// runNATS runs the world's queue on daemons through an embedded NATS
// server, killing kills daemons while they hold jobs (after a quarter of
// the attempts were claimed, then after a half).
func runNATS(dome, dir, sb string, w *fleetsim.World, workers, kills int) outcome {
	ns, err := natstest.Start(filepath.Join(dir, "nats"))
	must(err)
	defer ns.Stop()
	certs, err := tlstest.Write(mkdir(filepath.Join(dir, "tls")))
	must(err)
	addr := freeAddr()
	procs := map[string]*fleetsim.Proc{}
	stopAll := func() {
		for _, p := range procs {
			p.Stop()
		}
	}
	defer stopAll()
	cleanup = append(cleanup, stopAll, ns.Stop)
	for i := 1; i <= workers; i++ {
		id := fmt.Sprintf("w%d", i)
		cmd := exec.Command(dome, "worker", "--nats", ns.URL(), "--gateway", "https://"+addr, "--gateway-ca", certs.CA, "--sandbox", sb,
			"--tools", w.Tools, "--id", id)
		cmd.Dir, cmd.Env = dir, env()
		p, err := fleetsim.Start(id, cmd)
		must(err)
		procs[id] = p
	}
	cmd := exec.Command(dome, "run", "start", w.Queue, "--dispatch", ns.URL(), "--gateway-listen", addr, "--gateway-cert", certs.Cert,
		"--gateway-key", certs.Key, "--ack-grace", "2s", "--no-promote", "-q")
	cmd.Dir, cmd.Env = w.Repo, env()
	t0 := time.Now()
	coord, err := fleetsim.Start("coordinator", cmd)
	must(err)
	var o outcome
	for k := 0; k < kills; k++ {
		at := w.Spec.Nodes * (k + 1) / (kills + 2)
		for {
			if err := coord.Wait(0); err == nil || !strings.Contains(err.Error(), "did not end") {
				break
			}
			cs, _ := w.Claims("fleet")
			if len(cs) >= at {
				victim := cs[len(cs)-1].Daemon
				if p := procs[victim]; p != nil {
					p.Kill()
					delete(procs, victim)
					o.killed = append(o.killed, victim)
					break
				}
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	if err := coord.Wait(time.Hour); err != nil {
		st := exec.Command(dome, "run", "status", "fleet")
		st.Dir, st.Env = w.Repo, env()
		out, _ := st.CombinedOutput()
		fmt.Print(tailOf(coord.Log(), 4000), tailOf(string(out), 6000))
		fail("the coordinator: %v", err)
	}
	o.wall = time.Since(t0)
	o.latencies = latencies(w, "on worker daemon")
	return o
}

// runLocal runs the queue with the local dispatcher.
func runLocal(dome, sb string, w *fleetsim.World) outcome {
	cmd := exec.Command(dome, "run", "start", w.Queue, "--sandbox", sb, "--tools", w.Tools, "--no-promote", "-q")
	cmd.Dir, cmd.Env = w.Repo, env()
	t0 := time.Now()
	if out, err := cmd.CombinedOutput(); err != nil {
		fail("dome run start (local): %v\n%s", err, tailOf(string(out), 4000))
	}
	return outcome{wall: time.Since(t0), latencies: latencies(w, "running (")}
}

// latencies are, per attempt, task.dispatched to its worker running (the
// task.progress the dispatcher records), from the ledger.
func latencies(w *fleetsim.World, mark string) []time.Duration {
	evs, err := w.Events("fleet")
	must(err)
	disp := map[string]time.Time{}
	var out []time.Duration
	for _, e := range evs {
		var p stack.TaskPayload
		switch e.Topic {
		case stack.TopicTaskDispatched:
			must(decode(e, &p))
			disp[p.TaskID] = ts(e)
		case stack.TopicTaskProgress:
			must(decode(e, &p))
			if t, ok := disp[p.TaskID]; ok && strings.Contains(p.Detail, mark) {
				out = append(out, ts(e).Sub(t))
				delete(disp, p.TaskID)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

func check(dome, dir, sb string, nodes, width, workers, kills, ttl int) {
	root := runtest.Root()
	w, err := fleetsim.Write(root, mkdir(filepath.Join(dir, "check")), fleetsim.Spec{Nodes: nodes, Width: width, TTLSeconds: ttl, MaxConcurrency: workers, MaxAttempts: 3})
	must(err)
	o := runNATS(dome, filepath.Join(dir, "check"), sb, w, workers, kills)
	topics, err := w.Check("fleet")
	if err != nil {
		fail("the fleet run: %v", err)
	}
	rep := exec.Command(dome, "run", "replay", "fleet")
	rep.Dir, rep.Env = w.Repo, env()
	if out, err := rep.CombinedOutput(); err != nil {
		fail("dome run replay: %v\n%s", err, out)
	}
	fmt.Printf("check: %d nodes in %s on %d daemons, killed %v mid-run: constraints_met, %d notes in the integration tree, each once; the ledger replays\n",
		nodes, round(o.wall), workers, o.killed, nodes)
	fmt.Printf("  ledger: %d task.dispatched, %d task.completed, %d task.timeout, %d task.ack, %d dead letters, %d late calls refused\n",
		topics["task.dispatched"], topics["task.completed"], topics["task.timeout"], topics["task.ack"], topics["run.dispatch.dead_letter"], topics["gateway.late_call"])
	if topics["task.timeout"] < len(o.killed) {
		fail("%d kills but %d task.timeout events", len(o.killed), topics["task.timeout"])
	}
}

func bench(dome, dir, sb string, nodes, width, workers, kills, ttl int) {
	root := runtest.Root()
	spec := fleetsim.Spec{Nodes: nodes, Width: width, NoOp: true, TTLSeconds: ttl, MaxConcurrency: workers, MaxAttempts: 3}
	wl, err := fleetsim.Write(root, mkdir(filepath.Join(dir, "local")), spec)
	must(err)
	local := runLocal(dome, sb, wl)
	_, err = wl.Check("fleet")
	must(err)
	wn, err := fleetsim.Write(root, mkdir(filepath.Join(dir, "nats")), spec)
	must(err)
	nats := runNATS(dome, filepath.Join(dir, "nats"), sb, wn, workers, 0)
	_, err = wn.Check("fleet")
	must(err)
	wk, err := fleetsim.Write(root, mkdir(filepath.Join(dir, "kill")), spec)
	must(err)
	killed := runNATS(dome, filepath.Join(dir, "kill"), sb, wk, workers, kills)
	_, err = wk.Check("fleet")
	must(err)
	rate := func(o outcome) string { return fmt.Sprintf("%.1f tasks/s", float64(nodes)/o.wall.Seconds()) }
	fmt.Printf("%-62s | %14s | %14s | %8s\n", "workload", fmt.Sprintf("nats, %d daemons", workers), "local", "ratio")
	fmt.Printf("%-62s | %14s | %14s | %7.2fx\n", fmt.Sprintf("%d no-op nodes, %d at once: wall", nodes, workers), round(nats.wall), round(local.wall),
		nats.wall.Seconds()/local.wall.Seconds())
	fmt.Printf("%-62s | %14s | %14s |\n", "  throughput", rate(nats), rate(local))
	fmt.Printf("%-62s | %14s | %14s |\n", "  dispatch latency p50 (task.dispatched to running)", round(pct(nats.latencies, 50)), round(pct(local.latencies, 50)))
	fmt.Printf("%-62s | %14s | %14s |\n", "  dispatch latency p99", round(pct(nats.latencies, 99)), round(pct(local.latencies, 99)))
	fmt.Printf("%-62s | %14s | %14s |\n", fmt.Sprintf("  with %d daemons killed mid-run (%v): wall", kills, killed.killed), round(killed.wall), "-")
	fmt.Printf("%-62s | %14s | %14s |\n", "  cost of the kills (wall against the run without)", round(killed.wall-nats.wall), "-")
}

func pct(ds []time.Duration, p int) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	i := (len(ds)*p + 99) / 100
	if i > 0 {
		i--
	}
	return ds[i]
}

func decode(e ledger.Event, v any) error { return jsonUnmarshal(e.Payload, v) }

func ts(e ledger.Event) time.Time {
	t, _ := time.Parse(time.RFC3339Nano, e.TS)
	return t
}

func env() []string {
	return append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
}

func mkdir(p string) string {
	must(os.MkdirAll(p, 0o755))
	return p
}

func tailOf(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

func round(d time.Duration) string {
	switch {
	case d >= time.Second:
		return d.Round(10 * time.Millisecond).String()
	case d >= time.Millisecond:
		return d.Round(100 * time.Microsecond).String()
	}
	return d.Round(time.Microsecond).String()
}
