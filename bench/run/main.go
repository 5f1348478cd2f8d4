// Command run benchmarks the parts of dome run that schedule and confine
// workers (issue 21):
//
//	schedule: a random 10,000-node DAG (up to 4 dependencies per node, 3
//	          confidence classes, a scarce resource, risk, priority groups,
//	          endgame on) built, checked and scheduled to the end by
//	          pkg/workflow, every attempt passing; the floor is a bare Kahn
//	          topological order of the same edges (the least any scheduler
//	          does). Also a hostile 100,000-task queue (one long chain closed
//	          into a cycle) parsed and refused by pkg/runspec, and
//	          "dome run plan" on a 10,000-task queue file, end to end.
//	dispatch: one sandboxed worker ("true") per dispatch: sandbox.Run on a
//	          prepared scratch folder (bwrap with the same namespaces and
//	          mounts, the limits, pipes, the wall-time watch) against the bare
//	          "bwrap ... true" with the same arguments (the floor), runs
//	          interleaved, medians; and a dispatch with its scratch folder
//	          made and filled from git objects (a 50-file tree) and removed;
//	          and a whole attempt through orchestrate.Local, the dispatcher
//	          of dome run (scratch tree filtered by the grant, a gateway
//	          session on its socket, binds, the outputs collected).
//	gateway:  read_file through pkg/gateway on a worker's Unix socket, the
//	          grant verified on every call, against git cat-file --batch
//	          reading the same blobs (the peer); see gateway.go.
//	wave:     a 200-node wave end to end, dome run start (bubblewrap, and
//	          --sandbox=none) against xargs -P running the same workers then
//	          dome stack submit/plan/apply (the peer); see wave.go.
//
// It prints "workload | dome | floor | dome/floor" rows (schedule, dispatch)
// and "workload | dome | peer | peer/dome" rows (gateway, wave), dome beside
// its floor or peer in alternating runs: medians with their ranges
// [min-max], and the load average at the start and the end.
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/dome-registry/dome/pkg/gitstore"
	"github.com/dome-registry/dome/pkg/runspec"
	"github.com/dome-registry/dome/pkg/sandbox"
	"github.com/dome-registry/dome/pkg/stack"
	"github.com/dome-registry/dome/pkg/workflow"
)

func main() {
	dome := flag.String("dome", os.Getenv("DOME_BIN"), "dome binary")
	work := flag.String("work", "bench/.work/run", "work directory")
	nodes := flag.Int("nodes", 10000, "nodes of the random DAG")
	dispatches := flag.Int("dispatches", 40, "sandboxed dispatches per side")
	only := flag.String("only", "", "run only one part: schedule, dispatch, gateway or wave")
	calls := flag.Int("calls", 100000, "gateway read_file calls")
	clients := flag.Int("clients", 4, "concurrent gateway clients")
	waveNodes := flag.Int("wave", 200, "nodes of the end-to-end wave")
	waveConc := flag.Int("wave-concurrency", 4, "workers at once in the end-to-end wave (both sides)")
	rounds := flag.Int("rounds", 3, "rounds of the gateway measurement, alternating with its peer")
	waveRounds := flag.Int("wave-rounds", 2, "rounds of the end-to-end wave, alternating with its peer")
	flag.Parse()
	must(os.RemoveAll(*work))
	must(os.MkdirAll(*work, 0o755))
	w, err := filepath.Abs(*work)
	must(err)
	fmt.Printf("load average at start: %s\n", loadAvg())
	if *only == "" || *only == "schedule" || *only == "dispatch" {
		fmt.Printf("%-68s | %-28s | %-28s | %s\n", "workload", "dome", "floor", "dome/floor")
	}
	if *only == "" || *only == "schedule" {
		schedule(*nodes)
		hostile(100000)
		if *dome != "" {
			d, err := filepath.Abs(*dome)
			must(err)
			planCLI(d, w, *nodes)
		}
	}
	if *only == "" || *only == "dispatch" {
		dispatch(w, *dispatches)
	}
	if *only == "" || *only == "gateway" {
		fmt.Printf("%-68s | %-28s | %-28s | %s\n", "workload", "dome", "peer", "peer/dome (time)")
		gatewayReads(*calls, *clients, *rounds)
	}
	if (*only == "" || *only == "wave") && *dome != "" {
		d, err := filepath.Abs(*dome)
		must(err)
		fmt.Printf("%-68s | %-28s | %-28s | %s\n", "workload", "dome", "peer", "peer/dome (time)")
		wave(d, w, *waveNodes, *waveConc, *waveRounds)
	}
	fmt.Printf("(medians, ranges in brackets; load average at the end: %s)\n", loadAvg())
}

// row prints dome's samples beside its floor's (nil: none) and dome/floor.
func row(name string, dome, floor []time.Duration) {
	ratio, fl := "-", "-"
	if len(floor) > 0 {
		ratio, fl = fmt.Sprintf("%.2fx", float64(median(dome))/float64(median(floor))), spread(floor)
	}
	fmt.Printf("%-68s | %-28s | %-28s | %s\n", name, spread(dome), fl, ratio)
}

// peerRow prints dome's samples beside its peer's and peer/dome in time.
func peerRow(name string, dome, peer []time.Duration) {
	fmt.Printf("%-68s | %-28s | %-28s | %.2fx\n", name, spread(dome), spread(peer), float64(median(peer))/float64(median(dome)))
}

// spread is the median with its range.
func spread(ds []time.Duration) string {
	if len(ds) == 1 {
		return round(ds[0])
	}
	return fmt.Sprintf("%s [%s-%s]", round(median(ds)), round(slices.Min(ds)), round(slices.Max(ds)))
}

func round(d time.Duration) string {
	switch {
	case d >= time.Second:
		return d.Round(time.Millisecond).String()
	case d >= time.Millisecond:
		return d.Round(10 * time.Microsecond).String()
	}
	return d.Round(time.Microsecond).String()
}

// randomDAG is the benchmark graph: edges point to earlier nodes.
func randomDAG(n int) []workflow.Node {
	r := rand.New(rand.NewPCG(42, 7))
	ns := make([]workflow.Node, n)
	for i := range ns {
		ns[i] = workflow.Node{ID: fmt.Sprintf("task-%05d", i), Digest: fmt.Sprintf("sha256:%064x", i), Class: fmt.Sprintf("card:c%d", r.IntN(3)), Risk: r.IntN(300)}
		if r.IntN(10) == 0 {
			ns[i].Needs = []string{"resource:gpu"}
		}
		if r.IntN(5) == 0 {
			ns[i].Group = "critical"
		}
		seen := map[int]bool{}
		for k := r.IntN(5); k > 0 && i > 0; k-- {
			d := r.IntN(i)
			if !seen[d] {
				seen[d] = true
				ns[i].Deps = append(ns[i].Deps, ns[d].ID)
			}
		}
	}
	return ns
}

func schedule(n int) {
	ns := randomDAG(n)
	edges := 0
	for _, nd := range ns {
		edges += len(nd.Deps)
	}
	p := workflow.DefaultPolicy()
	p.MaxConcurrency, p.MaxAttempts = 16, 2
	p.Capacity = map[string]int{"resource:gpu": 2}
	p.Endgame = workflow.Endgame{Remaining: 8, MaxDuplicates: 1}
	var totals, builds, floors []time.Duration
	decisions := 0
	for rep := 0; rep < 5; rep++ {
		t0 := time.Now()
		g, err := workflow.Build(workflow.Spec{Nodes: ns, Groups: []string{"critical"}})
		must(err)
		tb := time.Since(t0)
		e, err := workflow.NewEngine(g, p, workflow.Options{RunID: "bench", Seed: "42"})
		must(err)
		decisions = 0
		var running []string
		for !e.Done() {
			for _, d := range e.Next("w") {
				decisions++
				if d.Action == workflow.ActDispatch || d.Action == workflow.ActRetry || d.Action == workflow.ActDuplicate {
					running = append(running, d.NodeExecutionID)
				}
			}
			id := running[0]
			running = running[1:]
			more, err := e.Report(id, workflow.Outcome{Status: workflow.OutcomeSucceeded})
			if err != nil {
				continue // an endgame loser already cancelled
			}
			for _, m := range more {
				decisions++
				if m.Action == workflow.ActCancel {
					for k, r := range running {
						if r == m.NodeExecutionID {
							running = append(running[:k], running[k+1:]...)
							e.Report(r, workflow.Outcome{Status: workflow.OutcomeCancelled})
							break
						}
					}
				}
			}
		}
		total := time.Since(t0)
		if s := e.Summary(); s.ByStatus[workflow.StatusSucceeded] != n {
			fail("not every node succeeded: %+v", s.ByStatus)
		}
		t1 := time.Now()
		kahn(ns)
		tf := time.Since(t1)
		totals, builds, floors = append(totals, total), append(builds, tb), append(floors, tf)
	}
	row(fmt.Sprintf("schedule a %d-node random DAG (%d edges; 5 runs)", n, edges), totals, floors)
	row("  of which graph checks and static scores", builds, nil)
	fmt.Printf("  %d decisions (dispatches, endgame duplicates and cancels), target < 1s\n", decisions)
}

// kahn is the floor: a topological order of the same graph by name, with a
// plain queue and no scoring.
func kahn(ns []workflow.Node) []string {
	idx := make(map[string]int, len(ns))
	for i, n := range ns {
		idx[n.ID] = i
	}
	indeg := make([]int, len(ns))
	out := make([][]int, len(ns))
	for i, n := range ns {
		for _, d := range n.Deps {
			j := idx[d]
			out[j] = append(out[j], i)
			indeg[i]++
		}
	}
	var q, order []int
	for i := range ns {
		if indeg[i] == 0 {
			q = append(q, i)
		}
	}
	for len(q) > 0 {
		v := q[0]
		q = q[1:]
		order = append(order, v)
		for _, r := range out[v] {
			if indeg[r]--; indeg[r] == 0 {
				q = append(q, r)
			}
		}
	}
	ids := make([]string, len(order))
	for k, i := range order {
		ids[k] = ns[i].ID
	}
	return ids
}

func queueJSON(n int, cycle bool) []byte {
	var b bytes.Buffer
	b.WriteString(`{"schema_version":"dome.work.queue/v1","tasks":[`)
	r := rand.New(rand.NewPCG(42, 7))
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		var deps []string
		if cycle {
			deps = []string{fmt.Sprintf(`"t%d"`, (i+n-1)%n)}
		} else {
			seen := map[int]bool{}
			for k := r.IntN(5); k > 0 && i > 0; k-- {
				if d := r.IntN(i); !seen[d] {
					seen[d] = true
					deps = append(deps, fmt.Sprintf(`"t%d"`, d))
				}
			}
		}
		dep := ""
		if len(deps) > 0 {
			dep = `,"dependencies":[` + strings.Join(deps, ",") + `]`
		}
		fmt.Fprintf(&b, `{"node_id":"t%d","containers":[{"container_ref":"sha256:%064d","command":["sh","w.sh"]}],"required_capabilities":["repo.read","repo.propose"],"required_outputs":[{"kind":"patch_proposal"}]%s}`, i, i%3, dep)
	}
	b.WriteString(`]}`)
	return b.Bytes()
}

func hostile(n int) {
	data := queueJSON(n, true)
	var ds []time.Duration
	for rep := 0; rep < 3; rep++ {
		t0 := time.Now()
		_, _, err := runspec.ParseQueue("hostile.json", data)
		ds = append(ds, time.Since(t0))
		if err == nil || !strings.Contains(err.Error(), "cycle") {
			fail("the hostile queue was not refused for its cycle: %v", err)
		}
	}
	row(fmt.Sprintf("refuse a %d-task queue, one cycle through all (%d MB; 3 runs)", n, len(data)>>20), ds, nil)
}

func planCLI(dome, work string, n int) {
	path := filepath.Join(work, "queue.json")
	must(os.WriteFile(path, queueJSON(n, false), 0o644))
	var ds []time.Duration
	for rep := 0; rep < 3; rep++ {
		t0 := time.Now()
		cmd := exec.Command(dome, "run", "plan", path, "--json")
		cmd.Dir = work
		var out bytes.Buffer
		cmd.Stdout = &out
		cmd.Stderr = os.Stderr
		must(cmd.Run())
		ds = append(ds, time.Since(t0))
		if lines := bytes.Count(out.Bytes(), []byte("\n")); lines < n {
			fail("dome run plan printed %d decisions for %d tasks", lines, n)
		}
	}
	row(fmt.Sprintf("dome run plan on a %d-task queue file, process end to end (3 runs)", n), ds, nil)
}

func dispatch(work string, n int) {
	ctx := context.Background()
	sb, err := sandbox.New(ctx, sandbox.Options{})
	if err != nil {
		fmt.Printf("dispatch: skipped: %v\n", err)
		return
	}
	repoDir := filepath.Join(work, "repo")
	files := map[string]string{}
	for i := 0; i < 50; i++ {
		files[fmt.Sprintf("pkg%d/file%d.go", i%5, i)] = fmt.Sprintf("package pkg%d\n\n// File %d.\nconst X%d = %d\n", i%5, i, i, i)
	}
	base := makeRepo(repoDir, files)
	repo, err := gitstore.Open(repoDir)
	must(err)
	defer repo.Close()
	h, _ := gitstore.ParseHash(base)
	fill := func(dir string) error { _, err := stack.Materialize(repo, h, dir); return err }

	sc, err := sb.NewScratch(fill)
	must(err)
	defer sc.Close()
	floorArgs := bareArgs(sc.Dir())
	la := newLocalAttempts(sb, files)
	defer la.close()
	var domeT, floorT, fullT, localT []time.Duration
	for i := 0; i < n+3; i++ {
		t0 := time.Now()
		res, err := sb.Run(ctx, sandbox.Spec{Argv: []string{"true"}, Scratch: sc})
		d := time.Since(t0)
		if err != nil || res.Reason != sandbox.ReasonOK {
			fail("sandbox.Run: %v %+v %s", err, res, res.Stderr)
		}
		t1 := time.Now()
		cmd := exec.Command("bwrap", floorArgs...)
		if os.Geteuid() == 0 {
			cmd.SysProcAttr = sandboxCred()
		}
		if out, err := cmd.CombinedOutput(); err != nil {
			fail("bare bwrap: %v %s", err, out)
		}
		f := time.Since(t1)
		t2 := time.Now()
		sc2, err := sb.NewScratch(fill)
		must(err)
		res, err = sb.Run(ctx, sandbox.Spec{Argv: []string{"true"}, Scratch: sc2})
		if err != nil || res.Reason != sandbox.ReasonOK {
			fail("sandbox.Run: %v %+v", err, res)
		}
		must(sc2.Close())
		full := time.Since(t2)
		local := la.run(ctx)
		if i >= 3 { // warm-up
			domeT, floorT, fullT, localT = append(domeT, d), append(floorT, f), append(fullT, full), append(localT, local)
		}
	}
	row(fmt.Sprintf("sandboxed dispatch of \"true\" (%d runs; floor: bare bwrap true)", n), domeT, floorT)
	row("  with its scratch made from git objects (50 files) and removed", fullT, floorT)
	row("  a whole attempt, orchestrate.Local (+ gateway session, outputs)", localT, floorT)
	fmt.Printf("  bwrap %s, sandbox user uid %d, limits by %s; target: dispatch at most 1.5x the floor\n", sb.Version(), uidOf(sb), sb.LimitsBy())
}

func uidOf(sb *sandbox.Sandbox) int { u, _ := sb.User(); return u }

// bareArgs is what sandbox.Run gives bwrap for "true", minus the limits,
// the info and block fds and the environment: the same namespaces and
// mounts.
func bareArgs(scratch string) []string {
	a := []string{"--unshare-all", "--unshare-user", "--disable-userns", "--die-with-parent", "--new-session",
		"--hostname", "dome-sandbox", "--ro-bind", "/usr", "/usr"}
	for _, d := range []string{"bin", "sbin", "lib", "lib32", "lib64", "libx32"} {
		p := "/" + d
		if fi, err := os.Lstat(p); err == nil {
			if fi.Mode()&os.ModeSymlink != 0 {
				t, _ := os.Readlink(p)
				a = append(a, "--symlink", t, p)
			} else if fi.IsDir() {
				a = append(a, "--ro-bind", p, p)
			}
		}
	}
	for _, p := range []string{"/etc/alternatives", "/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d"} {
		a = append(a, "--ro-bind-try", p, p)
	}
	return append(a, "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "--bind", scratch, "/work", "--chdir", "/work",
		"--clearenv", "--", "true")
}

func median(d []time.Duration) time.Duration {
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(a, b int) bool { return s[a] < s[b] })
	return s[len(s)/2]
}

func makeRepo(dir string, files map[string]string) string {
	must(os.MkdirAll(dir, 0o755))
	git(dir, "init", "-q", "-b", "main")
	for p, c := range files {
		full := filepath.Join(dir, p)
		must(os.MkdirAll(filepath.Dir(full), 0o755))
		must(os.WriteFile(full, []byte(c), 0o644))
	}
	git(dir, "add", "-A")
	git(dir, "-c", "user.name=bench", "-c", "user.email=bench@dome.invalid", "commit", "-q", "-m", "base")
	return strings.TrimSpace(git(dir, "rev-parse", "HEAD"))
}

func git(dir string, args ...string) string {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
	out, err := cmd.Output()
	if err != nil {
		fail("git %s: %v", strings.Join(args, " "), err)
	}
	return string(out)
}

func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

func must(err error) {
	if err != nil {
		fail("%v", err)
	}
}

func fail(format string, a ...any) {
	fmt.Fprintf(os.Stderr, "bench/run: "+format+"\n", a...)
	os.Exit(1)
}
