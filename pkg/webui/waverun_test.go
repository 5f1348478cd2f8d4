package webui

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dome-registry/dome/internal/gittest"
	"github.com/dome-registry/dome/internal/runtest"
	"github.com/dome-registry/dome/pkg/gateway"
	"github.com/dome-registry/dome/pkg/gitstore"
	"github.com/dome-registry/dome/pkg/ledger"
	"github.com/dome-registry/dome/pkg/orchestrate"
	"github.com/dome-registry/dome/pkg/registry"
	"github.com/dome-registry/dome/pkg/runspec"
	"github.com/dome-registry/dome/pkg/sandbox"
	"github.com/dome-registry/dome/pkg/stack"
	"github.com/dome-registry/dome/pkg/worker"
)

// TestMain makes this test binary a wave run's worker when the
// coordinator's local dispatcher runs it (it sets the gateway's socket and
// the attempt's ids): the wave runs below are real runs of dome run's
// coordinator, with real grants, a real gateway and real proposals.
func TestMain(m *testing.M) {
	if os.Getenv("DOME_GATEWAY_SOCKET") != "" && os.Getenv("DOME_NODE_EXECUTION_ID") != "" {
		os.Exit(testWorker())
	}
	os.Exit(m.Run())
}

// workerParams is what a test task's worker does (its action_spec params).
type workerParams struct {
	Read   []string          `json:"read,omitempty"`   // paths read through the gateway first
	Write  map[string]string `json:"write,omitempty"`  // files written, then submitted as a proposal
	Intent []string          `json:"intent,omitempty"` // the proposal's intent tags
	Stderr string            `json:"stderr,omitempty"` // written to stderr
	Exit   int               `json:"exit,omitempty"`
}

func testWorker() int {
	var p workerParams
	if err := json.Unmarshal([]byte(os.Getenv("DOME_ACTION_PARAMS")), &p); err != nil {
		fmt.Fprintln(os.Stderr, "params:", err)
		return 2
	}
	ctx := context.Background()
	c := gateway.NewUnixClient(os.Getenv("DOME_GATEWAY_SOCKET"), []byte(os.Getenv("DOME_GRANT")))
	for _, r := range p.Read {
		c.ReadFile(ctx, gateway.ReadFileRequest{Path: r})
	}
	fmt.Fprint(os.Stderr, p.Stderr)
	dir := os.Getenv("DOME_WORKDIR")
	for name, content := range p.Write {
		path := filepath.Join(dir, filepath.FromSlash(name))
		os.MkdirAll(filepath.Dir(path), 0o755)
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
	}
	if len(p.Write) > 0 {
		_, err := worker.Submit(ctx, c, worker.Options{Dir: dir, IntentTags: p.Intent, Now: time.Now(),
			Attempt: worker.Attempt{RunID: os.Getenv("DOME_RUN_ID"), WaveID: os.Getenv("DOME_WAVE_ID"), NodeID: os.Getenv("DOME_NODE_ID"),
				NodeExecutionID: os.Getenv("DOME_NODE_EXECUTION_ID"), WorkerID: os.Getenv("DOME_WORKER_ID")}})
		if err != nil {
			fmt.Fprintln(os.Stderr, "submit:", err)
			return 4
		}
	}
	return p.Exit
}

// waveTask writes one task of a test queue.
func waveTask(t *testing.T, id, title string, deps []string, p workerParams, argv ...string) map[string]any {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	params, _ := json.Marshal(p)
	outputs := []any{map[string]any{"kind": "patch_proposal"}}
	task := map[string]any{"node_id": id, "title": title,
		"containers":            []any{map[string]any{"container_ref": "sha256:" + strings.Repeat("a", 64), "command": append([]string{exe}, argv...)}},
		"required_capabilities": []string{"repo.read", "repo.propose"}, "required_outputs": outputs,
		"action_spec": map[string]any{"intent": title, "params": json.RawMessage(params)}}
	if deps != nil {
		task["dependencies"] = deps
	}
	return task
}

// testResolver maps the three repo capabilities only (the registry here
// holds the skills, not the example tools the shipped resolver names).
const testResolver = `{
  "schema_version": "dome.resolver_spec/v1",
  "capabilities": {
    "repo.read": {"class": "read", "tool": "repo-read", "families": ["repo.read"],
      "constraints_template": {"io": {"read_roots": ["."], "deny_globs": ["**/.git/**", "**/*.pem", "**/.env"]}, "budgets": {"max_calls": 1000}}},
    "repo.propose": {"class": "write", "tool": "patch-proposal", "families": ["patch.propose"],
      "constraints_template": {"io": {"read_roots": ["."], "write_roots": ["."], "deny_globs": ["**/.git/**"]}, "budgets": {"max_calls": 20}}},
    "repo.integrate": {"class": "admin", "tool": "repo-admin", "families": ["integration", "validation", "promotion"],
      "constraints_template": {"io": {"read_roots": ["."], "write_roots": ["."]}, "budgets": {"max_calls": 200, "max_wall_seconds": 1800}}}
  }
}
`

// waveWorld is a repository with the registry's skills and a small module.
type waveWorld struct {
	git  *gittest.Repo
	repo *gitstore.Repo
	base string
	runs string
}

func newWaveWorld(t *testing.T) *waveWorld {
	t.Helper()
	gittest.Need(t)
	w := &waveWorld{git: gittest.New(t)}
	files := map[string]string{"README.md": "# greet\n\nA tiny module.\n", "VERSION": "0.1.0\n",
		"greet/greet.go": "package greet\n\nfunc Hello(name string) string { return \"Hello, \" + name }\n"}
	root := runtest.Root()
	for _, top := range []string{"registry/tools/repo-read", "registry/tools/patch-proposal", "registry/tools/repo-admin", "registry/a2a", "policy/policy_spec.json"} {
		base := filepath.Join(root, filepath.FromSlash(top))
		err := filepath.WalkDir(base, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			b, err := os.ReadFile(p)
			rel, _ := filepath.Rel(root, p)
			files[filepath.ToSlash(rel)] = string(b)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	files["policy/resolver_spec.json"] = testResolver
	w.git.Write(files)
	w.base = w.git.Commit("module and registry")
	var err error
	if w.repo, err = gitstore.Open(w.git.Dir); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.repo.Close() })
	w.runs = filepath.Join(w.git.Dir, "ops", "runs")
	return w
}

// run runs a queue of tasks to its end with dome run's coordinator.
func (w *waveWorld) run(t *testing.T, runID string, tasks ...map[string]any) *orchestrate.Outcome {
	t.Helper()
	qb, _ := json.Marshal(map[string]any{"schema_version": "dome.work.queue/v1", "description": "<i>the test queue</i>", "tasks": tasks})
	q, _, err := runspec.ParseQueue("queue", qb)
	if err != nil {
		t.Fatal(err)
	}
	var pol map[string]any
	json.Unmarshal(runspec.DefaultPolicyJSON(), &pol)
	pol["scheduling"].(map[string]any)["max_concurrency"] = 2
	pb, _ := json.Marshal(pol)
	rp, err := runspec.ParsePolicy("run policy", pb)
	if err != nil {
		t.Fatal(err)
	}
	var sp map[string]any
	json.Unmarshal(stack.DefaultPolicyJSON(), &sp)
	sp["validation"] = map[string]any{
		"tiers":                  map[string]any{"fast": map[string]any{"when": "final", "timeout_seconds": 60, "commands": []any{map[string]any{"name": "readme", "argv": []string{"test", "-f", "README.md"}}}}},
		"required_for_promotion": map[string]any{"low": []string{"fast"}, "medium": []string{"fast"}, "high": []string{"fast"}},
		"final_head_only":        true,
	}
	sp["promotion"] = map[string]any{"human_approval": map[string]any{"low": false, "medium": false, "high": true},
		"signature": map[string]any{"low": false, "medium": false, "high": false}}
	spb, _ := json.Marshal(sp)
	stackPol, err := stack.ParsePolicy("stack policy", spb)
	if err != nil {
		t.Fatal(err)
	}
	sb, err := sandbox.NewUnconfined(sandbox.Options{})
	if err != nil {
		t.Fatal(err)
	}
	out, err := orchestrate.Start(context.Background(), orchestrate.Config{Repo: w.repo, Registry: registry.New(w.repo), OpsRuns: w.runs, RunID: runID,
		Queue: q, QueueBytes: qb, RunPolicy: rp, RunPolicyBytes: pb, StackPolicy: stackPol, Base: w.base, RegistryCommit: w.base,
		Target: "refs/heads/waves/" + runID, Promote: true, Seed: "seed-1", Sandbox: sb, SandboxInfo: runspec.SandboxInfo{Kind: "none", Reason: "test"},
		Now: time.Now, PollInterval: 20 * time.Millisecond, Environment: orchestrate.HostEnvironment("test"), ValidateEnv: os.Environ()})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// The wave run of a hostile queue: titles, commands, paths read, intent
// tags and logs carry markup, and the pages show it as text.
func TestWaveRunPages_HostileRunRendersAsText(t *testing.T) {
	w := newWaveWorld(t)
	out := w.run(t, "hostile",
		waveTask(t, "docs", "document <b>bold</b>", nil, workerParams{Read: []string{"README.md", "<script>window.__domePwned='path'</script>"},
			Write: map[string]string{"README.md": "# greet\n\nA module that greets.\n"}, Intent: []string{"docs"}}),
		waveTask(t, "bump-a", "bump the version", nil, workerParams{Write: map[string]string{"VERSION": "0.2.0\n"}, Intent: []string{"chore"}}),
		waveTask(t, "bump-b", "bump it too", nil, workerParams{Write: map[string]string{"VERSION": "0.3.0\n"}, Intent: []string{"chore"}}),
		waveTask(t, "changelog", "the changelog", []string{"docs", "bump-a", "bump-b"}, workerParams{Write: map[string]string{"CHANGELOG.md": "v0.3.0\n"}, Intent: []string{"docs"}}),
		waveTask(t, "evil", "<script>window.__domePwned='title'</script><h1>injected</h1>", nil,
			workerParams{Write: map[string]string{"EVIL.md": "x\n"}, Intent: []string{"<img src=x onerror=\"window.__domePwned='intent'\">"},
				Stderr: "<svg onload=\"window.__domePwned='log'\"></svg><iframe src=x>\n"}, "<img src=x onerror=\"window.__domePwned='argv'\">"),
		waveTask(t, "crash", "fails", nil, workerParams{Stderr: "<h1>injected</h1> failing on purpose\n", Exit: 3}),
	)
	if out.Stop.Reason != orchestrate.StopConstraintsUnmet {
		t.Fatalf("stopped: %+v", out.Stop)
	}
	st := out.State
	last := st.Sequence
	srv := newRunServer(t, Options{RunsDir: w.runs, Repo: w.repo})
	at := "/ui/runs/hostile/at/" + strconv.FormatInt(last, 10) + "/"
	var evil, docs orchestrate.TaskView
	for _, tk := range st.Tasks {
		switch {
		case tk.NodeID == "evil" && tk.Attempt == 1:
			evil = tk
		case tk.NodeID == "docs":
			docs = tk
		}
	}
	if evil.Grant == nil || docs.Grant == nil {
		t.Fatalf("tasks without grants: %+v %+v", evil, docs)
	}
	for _, tc := range []struct {
		path string
		want []string
	}{
		{"/ui/runs/", []string{"hostile", "wave"}},
		{"/ui/runs/hostile/", []string{"stopped: constraints_unmet", "crash", "evil", "need", "graph.mmd", `class="box failed"`, `class="box succeeded"`,
			"reopened", "conflict", `href="` + at + `nodes/evil/"`, "Still needed"}},
		{at, []string{"stopped: constraints_unmet", "wave-1", "wave-2", "plan-"}},
		{at + "nodes/evil/", []string{"&lt;script&gt;window.__domePwned=&#39;title&#39;&lt;/script&gt;&lt;h1&gt;injected&lt;/h1&gt;", "&lt;img src=x onerror=",
			"evil.1", "evil.2", "jti <code>" + evil.Grant.JTI + "</code>", evil.Grant.ProfileID, evil.Grant.Digest, evil.Grant.KID, evil.Grant.ExpiresAt,
			"&lt;svg onload=", "exit_nonzero", "digest matches the ledger", "not made"}},
		{at + "nodes/docs/", []string{"&lt;script&gt;window.__domePwned=&#39;path&#39;&lt;/script&gt;", "repo-read/read_file", "patch-proposal/submit_patch", "docs.1 submitted",
			"applied at", docs.Grant.JTI}},
		{at + "nodes/crash/", []string{"&lt;h1&gt;injected&lt;/h1&gt; failing on purpose", "exit 3", "crash.2", "retry"}},
		{at + "nodes/changelog/", []string{"depends on", `href="` + at + `nodes/bump-a/"`, "changelog.1"}},
		{at + "waves/wave-1/", []string{"Plans", "reopened", "conflict", "applied", "bump-a", "docs.1"}},
		{at + "waves/wave-2/", []string{"bump-b", "Integration"}},
		{at + "tasks/", []string{"evil.1", "crash.2", "changelog.1", evil.Grant.JTI}},
		{at + "graph.mmd", []string{"flowchart TD", "subgraph wave1"}},
		{at + "events/", []string{"run.started", "run.stopped", "gateway.calls", "task.ack"}},
		{at + "checkpoints/", []string{"The ref points at this head."}},
	} {
		code, body, hdr := get(t, srv, tc.path)
		if code != 200 {
			t.Errorf("%s: status %d\n%.800s", tc.path, code, body)
			continue
		}
		for _, want := range tc.want {
			if !strings.Contains(body, want) {
				t.Errorf("%s: no %q in\n%.3000s", tc.path, want, body)
			}
		}
		if strings.HasPrefix(hdr.Get("Content-Type"), "text/html") {
			checkEscaped(t, tc.path, body)
		}
	}
	// The grants are named, never shown: no page carries a grant's token.
	for _, id := range []string{"evil.1", "docs.1"} {
		spec, err := os.ReadFile(filepath.Join(w.runs, "hostile", "tasks", id, orchestrate.SpawnSpecFile))
		if err != nil {
			t.Fatal(err)
		}
		var ss struct {
			ToolProfileRef string `json:"tool_profile_ref"`
		}
		json.Unmarshal(spec, &ss)
		if ss.ToolProfileRef == "" {
			t.Fatalf("%s: spawn spec without a grant digest: %s", id, spec)
		}
	}
	for _, p := range []string{at + "nodes/evil/", at + "nodes/docs/", at + "run.json", at + "events/"} {
		_, body, _ := get(t, srv, p)
		if strings.Contains(body, "dome.tool_profile/v0.1") && strings.Contains(body, `"signature"`) {
			t.Errorf("%s carries a grant", p)
		}
	}
	// run.json holds the coordinator's state: the run.state.json bytes
	// dome run status --json prints, re-derived from the ledger.
	_, body, _ := get(t, srv, at+"run.json")
	var v struct {
		Kind string `json:"kind"`
		Wave struct {
			State json.RawMessage `json:"state"`
			Error string          `json:"error"`
		} `json:"wave_run"`
	}
	if err := json.Unmarshal([]byte(body), &v); err != nil {
		t.Fatal(err)
	}
	stored, err := orchestrate.LoadState(stack.NewLayout(w.runs, "hostile"))
	if err != nil {
		t.Fatal(err)
	}
	var fromPage orchestrate.State
	json.Unmarshal(v.Wave.State, &fromPage)
	a, _ := fromPage.Marshal()
	b, _ := stored.Marshal()
	if v.Kind != kindWave || v.Wave.Error != "" || string(a) != string(b) {
		t.Errorf("run.json's state is not run.state.json (kind %q, error %q):\n%s\n%s", v.Kind, v.Wave.Error, a, b)
	}
	// An earlier sequence shows the run as it was: running, the changelog
	// not dispatched yet; a stopped run's latest page carries no script.
	early := last
	for _, tk := range st.Tasks {
		if tk.NodeID == "changelog" {
			early = min(early, tk.Dispatched-1)
		}
	}
	_, body, _ = get(t, srv, "/ui/runs/hostile/at/"+strconv.FormatInt(early, 10)+"/")
	if !strings.Contains(body, "running") || strings.Contains(body, "changelog.1") || strings.Contains(body, "<script") {
		t.Errorf("the run at event %d (running %v, changelog.1 %v, script %v):\n%.3000s", early, strings.Contains(body, "running"), strings.Contains(body, "changelog.1"), strings.Contains(body, "<script"), body)
	}
	if _, body, _ := get(t, srv, "/ui/runs/hostile/"); strings.Contains(body, "<script") {
		t.Error("a stopped run's page carries the live script")
	}
	for _, p := range []string{at + "nodes/nosuch/", at + "waves/wave-9/", "/ui/runs/hostile/at/1/nodes/docs/"} {
		if code, _, _ := get(t, srv, p); code != 404 && !(strings.HasSuffix(p, "docs/") && code == 200) {
			t.Errorf("%s: status %d", p, code)
		}
	}
}

// A wave run followed live: the page of a run whose ledger is still being
// written carries the script, its stream sends the events appended, then
// "end" when run.stopped arrives.
func TestWaveRunLive_EndsWhenStopped(t *testing.T) {
	w := newWaveWorld(t)
	w.run(t, "r", waveTask(t, "docs", "docs", nil, workerParams{Write: map[string]string{"README.md": "# greet\n\nGreets.\n"}, Intent: []string{"docs"}}))
	// A copy of the run folder whose ledger stops halfway.
	src := filepath.Join(w.runs, "r")
	runs := t.TempDir()
	dst := filepath.Join(runs, "r")
	evs, err := ledger.Read(src, "r")
	if err != nil {
		t.Fatal(err)
	}
	half := len(evs) / 2
	err = filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		if filepath.Dir(rel) == ledger.EventsDir && strings.HasPrefix(d.Name(), "event.") {
			if n, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(d.Name(), "event."), ".json")); n > half {
				return nil
			}
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	srv := newRunServer(t, Options{RunsDir: runs, Poll: 10 * time.Millisecond, Heartbeat: time.Hour})
	if _, body, _ := get(t, srv, "/ui/runs/r/"); !strings.Contains(body, "live.js") || !strings.Contains(body, "running") {
		t.Fatalf("the page of a running wave run:\n%.2000s", body)
	}
	resp, err := http.Get(srv.URL + "/ui/runs/r/live?after=" + strconv.Itoa(half))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	for n := half + 1; n <= len(evs); n++ {
		name := ledger.FileName(int64(n))
		b, err := os.ReadFile(filepath.Join(src, ledger.EventsDir, name))
		if err != nil {
			t.Fatal(err)
		}
		// As the ledger writes: a whole file renamed into place.
		tmp := filepath.Join(dst, ledger.EventsDir, "."+name+".tmp-test")
		os.WriteFile(tmp, b, 0o644)
		if err := os.Rename(tmp, filepath.Join(dst, ledger.EventsDir, name)); err != nil {
			t.Fatal(err)
		}
	}
	sc := bufio.NewScanner(resp.Body)
	var got []string
	done := make(chan struct{})
	go func() {
		defer close(done)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "event: ") {
				got = append(got, strings.TrimPrefix(sc.Text(), "event: "))
			}
			if strings.HasPrefix(sc.Text(), "data: {\"error") {
				got = append(got, sc.Text())
			}
		}
	}()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("the stream did not end")
	}
	if len(got) == 0 || got[len(got)-1] != "end" || got[0] != "ledger" {
		t.Fatalf("stream events %v", got)
	}
	if _, body, _ := get(t, srv, "/ui/runs/r/"); strings.Contains(body, "<script") || !strings.Contains(body, "stopped: constraints_met") {
		t.Errorf("the page of the stopped run:\n%.2000s", body)
	}
}
