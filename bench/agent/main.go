// Command agent benchmarks the agent domain (issue 22):
//
//	select:   Selector.Select among 1,000 and 10,000 generated profiles
//	          (each with example tasks, exclusions, abilities), against the
//	          floor of a bare scan: normalize the task and test it against
//	          every example task with strings.Contains, nothing else. Also
//	          the one-off costs: parsing and validating the profiles
//	          (LoadCatalog) and preparing the selector, and dome agent select
//	          end to end on a git registry of 1,000 agent files.
//	workflow: a 200-step sequential workflow of no-op prompt steps (an
//	          in-process model that answers at once), every step's events and
//	          checkpoint written to the run's ledger and durable before the
//	          next step starts; per step, against calling the step function
//	          directly (the floor), and the same run without a ledger.
//
// No tool does what these do, so there is no peer: each row puts dome
// beside its floor, the two interleaved (sample by sample, or run by run),
// with medians and their ranges [min-max], dome / floor, and the load
// average at the start and the end.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/dome-registry/dome/pkg/agent"
	"github.com/dome-registry/dome/pkg/agent/provider"
	"github.com/dome-registry/dome/pkg/ledger"
)

func main() {
	dome := flag.String("dome", os.Getenv("DOME_BIN"), "dome binary")
	work := flag.String("work", "bench/.work/agent", "work directory")
	flag.Parse()
	must(os.RemoveAll(*work))
	must(os.MkdirAll(*work, 0o755))
	w, err := filepath.Abs(*work)
	must(err)
	fmt.Printf("load average at start: %s\n", loadAvg())
	fmt.Printf("%-72s | %-30s | %-30s | %s\n", "workload (no peer)", "dome", "floor", "dome/floor")
	for _, n := range []int{1000, 10000} {
		selection(n)
	}
	if *dome != "" {
		d, err := filepath.Abs(*dome)
		must(err)
		selectCLI(d, w, 1000)
	}
	engine(w, 200)
	fmt.Printf("(medians, ranges in brackets; load average at the end: %s)\n", loadAvg())
}

// row prints the medians and ranges of dome's and the floor's samples
// (floor nil: none).
func row(name string, dome, floor []time.Duration) {
	ratio, fl := "-", "-"
	if len(floor) > 0 {
		ratio, fl = fmt.Sprintf("%.1fx", float64(median(dome))/float64(median(floor))), spread(floor)
	}
	fmt.Printf("%-72s | %-30s | %-30s | %s\n", name, spread(dome), fl, ratio)
}

func spread(ds []time.Duration) string {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	if len(s) == 1 {
		return round(s[0])
	}
	return fmt.Sprintf("%s [%s-%s]", round(median(s)), round(s[0]), round(s[len(s)-1]))
}

func round(d time.Duration) string {
	switch {
	case d >= time.Second:
		return d.Round(time.Millisecond).String()
	case d >= time.Millisecond:
		return d.Round(10 * time.Microsecond).String()
	case d >= time.Microsecond:
		return d.Round(10 * time.Nanosecond).String()
	}
	return d.String()
}

var words = strings.Fields(`api audit auth backup bench billing build cache canary cli cluster config contract cost
dashboard data deploy design docs email error event export feature flag fuzz gateway grant graph incident index infra
invoice kafka lint load log metric migration mobile model monitor network oauth onboarding openapi parser patch payment
pipeline plan policy profile queue rate release report review rollback schema search security session sql stack storage
stream test ticket token trace upgrade user vault webhook workflow`)

var verbs = strings.Fields(`write review plan design fix migrate document profile tune audit test deploy refactor explain`)

// profiles generates n enabled agent profiles and the standard agent,
// deterministically.
func profiles(n int) []agent.File {
	r := rand.New(rand.NewPCG(22, uint64(n)))
	pick := func(s []string) string { return s[r.IntN(len(s))] }
	task := func() string { return pick(verbs) + " the " + pick(words) + " " + pick(words) }
	var out []agent.File
	add := func(p map[string]any) {
		b, _ := json.Marshal(p)
		out = append(out, agent.File{Path: "registry/agents/" + p["id"].(string) + ".agent.json", Data: b})
	}
	base := func(id string) map[string]any {
		return map[string]any{"schemaVersion": "dome.agent/v1", "id": id, "name": "Agent " + id, "systemPrompt": "You are " + id + ".",
			"enabled": true, "provider": map[string]any{"runtime": "bench", "model": "m"}}
	}
	std := base("standard")
	std["description"] = "the fallback"
	add(std)
	for i := 0; i < n; i++ {
		p := base(fmt.Sprintf("agent-%05d", i))
		p["description"] = "Handles " + pick(words) + " and " + pick(words) + " work for the " + pick(words) + " team."
		var ex, nf []string
		for k := 0; k < 5; k++ {
			ex = append(ex, task())
		}
		for k := 0; k < 2; k++ {
			t := task()
			if !contains(ex, t) {
				nf = append(nf, t)
			}
		}
		p["exampleTasks"], p["notForTasks"] = ex, nf
		add(p)
	}
	return out
}

func contains(s []string, x string) bool {
	for _, y := range s {
		if y == x {
			return true
		}
	}
	return false
}

func runtimeFile() agent.File {
	return agent.File{Path: "registry/agents/runtimes/bench.runtime.json",
		Data: []byte(`{"schemaVersion":"dome.agent_runtime/v1","id":"bench","kind":"exec","models":["m"],"timeoutSeconds":10}`)}
}

var tasks = []string{"review the payment webhook", "write the docs for the openapi parser", "calibrate the flux capacitor",
	"plan the release rollback", "tune the sql index and the cache"}

func selection(n int) {
	files := profiles(n)
	start := time.Now()
	cat, err := agent.LoadCatalog("bench", files, []agent.File{runtimeFile()}, nil, agent.LoadOptions{})
	must(err)
	load := time.Since(start)
	start = time.Now()
	sel, err := agent.NewSelector(cat.Agents)
	must(err)
	prep := time.Since(start)
	// The floor: the least a selector does, a substring test of the
	// normalized task against every example task.
	var examples []string
	for _, f := range files {
		var p struct {
			ExampleTasks []string `json:"exampleTasks"`
		}
		json.Unmarshal(f.Data, &p)
		for _, e := range p.ExampleTasks {
			examples = append(examples, strings.ToLower(e))
		}
	}
	floor := func(task string) int {
		t := strings.ToLower(task)
		hits := 0
		for _, e := range examples {
			if strings.Contains(t, e) || strings.Contains(e, t) {
				hits++
			}
		}
		return hits
	}
	var domeT, floorT []time.Duration
	for round := 0; round < 21; round++ {
		for _, t := range tasks {
			s := time.Now()
			if _, err := sel.Select(t); err != nil {
				panic(err)
			}
			domeT = append(domeT, time.Since(s))
			s = time.Now()
			sink += floor(t)
			floorT = append(floorT, time.Since(s))
		}
	}
	row(fmt.Sprintf("select among %d profiles (%d selections; floor: a bare substring scan)", n, len(domeT)), domeT, floorT)
	row(fmt.Sprintf("  load and validate %d profile files (LoadCatalog, once)", n), []time.Duration{load}, nil)
	row(fmt.Sprintf("  prepare the selector (NewSelector, %d profiles, once)", n), []time.Duration{prep}, nil)
}

var sink int

// selectCLI times dome agent select on a git registry of n agent files.
func selectCLI(dome, work string, n int) {
	repo := filepath.Join(work, "registry-repo")
	for _, f := range append(profiles(n), runtimeFile()) {
		p := filepath.Join(repo, f.Path)
		must(os.MkdirAll(filepath.Dir(p), 0o755))
		must(os.WriteFile(p, f.Data, 0o644))
	}
	git := func(args ...string) {
		cmd := exec.Command("git", args...)
		cmd.Dir = repo
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=b", "GIT_AUTHOR_EMAIL=b@b", "GIT_COMMITTER_NAME=b", "GIT_COMMITTER_EMAIL=b@b")
		out, err := cmd.CombinedOutput()
		if err != nil {
			panic(fmt.Sprintf("git %v: %v\n%s", args, err, out))
		}
	}
	git("init", "-q", "-b", "main")
	git("add", "-A")
	git("commit", "-q", "-m", "agents")
	run := func(args ...string) time.Duration {
		cmd := exec.Command(dome, args...)
		cmd.Dir = repo
		s := time.Now()
		out, err := cmd.CombinedOutput()
		if err != nil {
			panic(fmt.Sprintf("dome %v: %v\n%s", args, err, out))
		}
		return time.Since(s)
	}
	var sel, ver []time.Duration
	for i := 0; i < 9; i++ {
		sel = append(sel, run("agent", "select", tasks[i%len(tasks)]))
		ver = append(ver, run("version"))
	}
	row(fmt.Sprintf("dome agent select, %d agent files in git (floor: dome version)", n), sel, ver)
}

// nopModel answers at once.
type nopModel struct{}

func (nopModel) Kind() string { return "exec" }
func (nopModel) Complete(context.Context, provider.Request) (provider.Response, error) {
	return provider.Response{Text: "ok"}, nil
}

func engine(work string, steps int) {
	var ss []map[string]any
	for i := 0; i < steps; i++ {
		ss = append(ss, map[string]any{"id": fmt.Sprintf("s%03d", i), "prompt": "step {{task}}"})
	}
	p := map[string]any{"schemaVersion": "dome.agent/v1", "id": "long", "name": "Long", "description": "many steps", "systemPrompt": "s",
		"enabled": true, "provider": map[string]any{"runtime": "bench", "model": "m"}, "workflow": map[string]any{"steps": ss}}
	b, _ := json.Marshal(p)
	files := append(profiles(0), agent.File{Path: "registry/agents/long.agent.json", Data: b})
	cat, err := agent.LoadCatalog("bench", files, []agent.File{runtimeFile()}, nil, agent.LoadOptions{})
	must(err)
	r := agent.NewRunner(agent.Env{Catalog: cat, Provider: func(*provider.Runtime) (provider.Provider, error) { return nopModel{}, nil }})
	var withLog, noLog, floor []time.Duration
	m := nopModel{}
	for round := 0; round < 5; round++ {
		dir := filepath.Join(work, fmt.Sprintf("runs/r%d", round))
		l, err := ledger.Open(dir, "bench")
		must(err)
		j := &agent.LedgerJournal{Log: l, Now: func() time.Time { return time.Unix(1767225600, 0) }}
		s := time.Now()
		res, err := r.Start(context.Background(), agent.StartOptions{RunID: "bench", Agent: "long", Task: "t", Journal: j})
		must(err)
		withLog = append(withLog, time.Since(s)/time.Duration(steps))
		l.Close()
		if res.Status != agent.StatusSucceeded {
			panic("the run failed")
		}
		s = time.Now()
		_, err = r.Start(context.Background(), agent.StartOptions{RunID: "bench", Agent: "long", Task: "t"})
		must(err)
		noLog = append(noLog, time.Since(s)/time.Duration(steps))
		// The floor: call the step function directly, as often.
		s = time.Now()
		for k := 0; k < steps; k++ {
			resp, _ := m.Complete(context.Background(), provider.Request{Prompt: "step t"})
			sink += len(resp.Text)
		}
		floor = append(floor, time.Since(s)/time.Duration(steps))
	}
	row(fmt.Sprintf("workflow step, events + checkpoint durable (fsync) (%d steps x 5 runs)", steps), withLog, floor)
	row(fmt.Sprintf("workflow step, no ledger: engine, abilities, templates (%d steps x 5 runs)", steps), noLog, floor)
}

func median(ds []time.Duration) time.Duration {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
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
		panic(err)
	}
}
