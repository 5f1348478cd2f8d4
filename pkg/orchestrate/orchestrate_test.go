package orchestrate_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dome-registry/dome/internal/gittest"
	"github.com/dome-registry/dome/internal/runtest"
	"github.com/dome-registry/dome/pkg/gateway"
	"github.com/dome-registry/dome/pkg/gitstore"
	"github.com/dome-registry/dome/pkg/grant/grantfile"
	"github.com/dome-registry/dome/pkg/ledger"
	"github.com/dome-registry/dome/pkg/orchestrate"
	"github.com/dome-registry/dome/pkg/registry"
	"github.com/dome-registry/dome/pkg/runspec"
	"github.com/dome-registry/dome/pkg/sandbox"
	"github.com/dome-registry/dome/pkg/stack"
	"github.com/dome-registry/dome/pkg/worker"
)

// dome returns the binary the workers run as dome: this test binary,
// which TestMain turns into dome worker submit when it is called by that
// name (a package test does not build cmd/dome).
func dome(t *testing.T) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return exe
}

func TestMain(m *testing.M) {
	if filepath.Base(os.Args[0]) == "dome" && len(os.Args) > 2 && os.Args[1] == "worker" && os.Args[2] == "submit" {
		os.Exit(workerSubmit(os.Args[3:]))
	}
	os.Exit(m.Run())
}

// workerSubmit is dome worker submit [--intent TAG]... as the workers of
// these tests call it: the scratch tree diffed and submitted through the
// gateway with the attempt's grant (pkg/worker, which the command runs).
func workerSubmit(args []string) int {
	var intents []string
	for i := 0; i+1 < len(args); i += 2 {
		if args[i] != "--intent" {
			fmt.Fprintln(os.Stderr, "unexpected argument", args[i])
			return 2
		}
		intents = append(intents, args[i+1])
	}
	c := gateway.NewUnixClient(os.Getenv("DOME_GATEWAY_SOCKET"), []byte(os.Getenv("DOME_GRANT")))
	_, err := worker.Submit(context.Background(), c, worker.Options{Dir: os.Getenv("DOME_WORKDIR"), IntentTags: intents, Now: time.Now(),
		Attempt: worker.Attempt{RunID: os.Getenv("DOME_RUN_ID"), WaveID: os.Getenv("DOME_WAVE_ID"), NodeID: os.Getenv("DOME_NODE_ID"),
			NodeExecutionID: os.Getenv("DOME_NODE_EXECUTION_ID"), WorkerID: os.Getenv("DOME_WORKER_ID")}})
	if err != nil {
		fmt.Fprintln(os.Stderr, "submit:", err)
		return 1
	}
	return 0
}

// testResolver maps the three repo capabilities only (the run's grants
// need nothing else).
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

// world is a repository with the registry's skills, a small module and
// tools for the workers.
type world struct {
	t     *testing.T
	git   *gittest.Repo
	repo  *gitstore.Repo
	base  string
	tools string
	sb    *sandbox.Sandbox
}

func newWorld(t *testing.T, module map[string]string, tools map[string]string) *world {
	t.Helper()
	w := &world{t: t, git: gittest.New(t)}
	files := map[string]string{}
	root := runtest.Root()
	for _, top := range []string{"registry/tools/repo-read", "registry/tools/patch-proposal", "registry/tools/repo-admin", "registry/a2a"} {
		base := filepath.Join(root, filepath.FromSlash(top))
		filepath.WalkDir(base, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			rel, _ := filepath.Rel(base, p)
			b, err := os.ReadFile(p)
			files[top+"/"+filepath.ToSlash(rel)] = string(b)
			return err
		})
	}
	pol, _ := os.ReadFile(filepath.Join(root, "policy/policy_spec.json"))
	files["policy/policy_spec.json"] = string(pol)
	files["policy/resolver_spec.json"] = testResolver
	for k, v := range module {
		files[k] = v
	}
	w.git.Write(files)
	w.base = w.git.Commit("module and registry")
	var err error
	if w.repo, err = gitstore.Open(w.git.Dir); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.repo.Close() })
	w.tools = filepath.Join(t.TempDir(), "tools")
	os.MkdirAll(w.tools, 0o755)
	for d := w.tools; d != "/"; d = filepath.Dir(d) {
		if fi, err := os.Stat(d); err == nil && fi.Mode().Perm()&0o001 == 0 {
			os.Chmod(d, fi.Mode().Perm()|0o011)
		}
	}
	for k, v := range tools {
		os.WriteFile(filepath.Join(w.tools, k), []byte(v), 0o755)
	}
	if w.sb, err = sandbox.NewUnconfined(sandbox.Options{}); err != nil {
		t.Fatal(err)
	}
	return w
}

// stackPolicy is the default stack policy with validation commands that
// need no toolchain.
func stackPolicy(t *testing.T) *stack.Policy {
	t.Helper()
	var m map[string]any
	json.Unmarshal(stack.DefaultPolicyJSON(), &m)
	m["validation"] = map[string]any{
		"tiers": map[string]any{
			"fast": map[string]any{"when": "final", "timeout_seconds": 60, "commands": []any{map[string]any{"name": "readme", "argv": []string{"test", "-f", "README.md"}}}},
		},
		"required_for_promotion": map[string]any{"low": []string{"fast"}, "medium": []string{"fast"}, "high": []string{"fast"}},
		"final_head_only":        true,
	}
	m["promotion"] = map[string]any{"human_approval": map[string]any{"low": false, "medium": false, "high": true},
		"signature": map[string]any{"low": false, "medium": false, "high": false}}
	b, _ := json.Marshal(m)
	p, err := stack.ParsePolicy("test stack policy", b)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func (w *world) config(runID string, queue string, mut func(*orchestrate.Config)) orchestrate.Config {
	w.t.Helper()
	q, _, err := runspec.ParseQueue("queue", []byte(queue))
	if err != nil {
		w.t.Fatal(err)
	}
	pb := runspec.DefaultPolicyJSON()
	rp, err := runspec.ParsePolicy("built-in", pb)
	if err != nil {
		w.t.Fatal(err)
	}
	cfg := orchestrate.Config{Repo: w.repo, Registry: registry.New(w.repo), OpsRuns: filepath.Join(w.git.Dir, "ops", "runs"), RunID: runID,
		Queue: q, QueueBytes: []byte(queue), RunPolicy: rp, RunPolicyBytes: pb, StackPolicy: stackPolicy(w.t), Base: w.base, RegistryCommit: w.base,
		Target: "refs/heads/waves/" + runID, Promote: true, Seed: "seed-1", Sandbox: w.sb, SandboxInfo: runspec.SandboxInfo{Kind: "none", Reason: "test"},
		DomeBinary: dome(w.t), Tools: w.tools, Now: time.Now, PollInterval: 20 * time.Millisecond, Environment: orchestrate.HostEnvironment("test"), ValidateEnv: os.Environ()}
	if mut != nil {
		mut(&cfg)
	}
	return cfg
}

// task writes one task of a queue.
func task(id, script string, deps []string, extra string) string {
	d, _ := json.Marshal(deps)
	if deps == nil {
		d = []byte("[]")
	}
	return fmt.Sprintf(`{"node_id": %q, "containers": [{"container_ref": "sha256:%s", "command": ["sh", "/run/dome/tools/%s"]}],
 "required_capabilities": ["repo.read", "repo.propose"], "required_outputs": [{"kind": "patch_proposal"}], "dependencies": %s%s}`,
		id, strings.Repeat("a", 64), script, d, extra)
}

func queue(tasks ...string) string {
	return `{"schema_version": "dome.work.queue/v1", "tasks": [` + strings.Join(tasks, ",") + `]}`
}

var greet = map[string]string{
	"README.md":      "# greet\n\nA tiny module.\n",
	"greet/greet.go": "package greet\n\n// Hello greets name.\nfunc Hello(name string) string {\n\treturn \"Hello, \" + name\n}\n",
	"VERSION":        "0.1.0\n",
}

// The workers: each edits the scratch tree and submits it.
var tools = map[string]string{
	"docs.sh":  "printf '# greet\\n\\nA tiny module that greets.\\n' > README.md\nexec dome worker submit --intent docs\n",
	"tests.sh": "printf 'package greet\\n\\nimport \"testing\"\\n\\nfunc TestHello(t *testing.T) {\\n\\tif Hello(\"x\") != \"Hello, x\" {\\n\\t\\tt.Fatal(\"no\")\\n\\t}\\n}\\n' > greet/greet_test.go\nexec dome worker submit --intent tests\n",
	// depends on docs: sees its README
	"changelog.sh": "grep -q greets README.md || exit 7\nprintf 'v0.1.0: first release\\n' > CHANGELOG.md\nexec dome worker submit --intent docs\n",
	"bump-a.sh":    "echo 0.2.0 > VERSION\nexec dome worker submit --intent chore\n",
	"bump-b.sh":    "echo 0.3.0 > VERSION\nexec dome worker submit --intent chore\n",
	"fail.sh":      "echo failing on purpose >&2\nexit 3\n",
	"nothing.sh":   "exit 0\n",
	"sleep.sh":     "sleep 600\n",
}

func start(t *testing.T, cfg orchestrate.Config) *orchestrate.Outcome {
	t.Helper()
	var mu sync.Mutex
	var log []string
	cfg.Progress = func(p orchestrate.Progress) {
		mu.Lock()
		log = append(log, fmt.Sprintf("%s %s %s %s", p.Kind, p.WaveID, p.TaskID, p.Detail))
		mu.Unlock()
	}
	out, err := orchestrate.Start(context.Background(), cfg)
	if err != nil {
		t.Fatalf("%v\n%s", err, strings.Join(log, "\n"))
	}
	t.Logf("progress:\n%s", strings.Join(log, "\n"))
	return out
}

func treeAt(t *testing.T, repo *gitstore.Repo, rev string) map[string]string {
	t.Helper()
	c, err := repo.ResolveCommit(rev)
	if err != nil {
		t.Fatal(err)
	}
	tree, _ := repo.CommitTree(c)
	files, err := repo.Walk(tree)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, f := range files {
		b, _ := repo.ReadBlob(f.Hash)
		out[f.Path] = string(b)
	}
	return out
}

func TestRun_WavesIntegrateAndPromote(t *testing.T) {
	w := newWorld(t, greet, tools)
	q := queue(task("docs", "docs.sh", nil, ""), task("tests", "tests.sh", nil, ""), task("changelog", "changelog.sh", []string{"docs"}, ""))
	out := start(t, w.config("r1", q, nil))
	if out.Stop.Reason != orchestrate.StopConstraintsMet || !out.Stop.Promoted {
		t.Fatalf("stopped: %+v", out.Stop)
	}
	tree := treeAt(t, w.repo, "refs/heads/waves/r1")
	if !strings.Contains(tree["README.md"], "greets") || tree["CHANGELOG.md"] == "" || tree["greet/greet_test.go"] == "" {
		t.Fatalf("promoted tree: %v", tree)
	}
	st := out.State
	if len(st.Waves) != 2 || st.Counters.Succeeded != 3 || len(st.Need) != 0 || len(st.Have) != 3 {
		t.Fatalf("state: waves %d counters %+v need %v have %v", len(st.Waves), st.Counters, st.Need, st.Have)
	}
	// The ledger replays: every decision, the state byte for byte.
	l := stack.NewLayout(filepath.Join(w.git.Dir, "ops", "runs"), "r1")
	rr, err := orchestrate.Replay(l)
	if err != nil {
		t.Fatal(err)
	}
	if !rr.Matches || rr.Decisions < 3 || rr.Unrecorded != 0 || !rr.Stack.Equal {
		t.Fatalf("replay: %+v", rr)
	}
	checkFollower(t, l, rr)
	// Each task's result is durable and acknowledged.
	for id, tk := range st.Tasks {
		if tk.Status != orchestrate.TaskAcked {
			t.Errorf("task %s is %s", id, tk.Status)
		}
		if _, err := os.Stat(filepath.Join(l.Root, tk.Result)); err != nil {
			t.Errorf("task %s: %v", id, err)
		}
	}
	// Starting it again does nothing more, but clears the work folder a
	// session killed after the run stopped left behind (named in work_dir).
	left := filepath.Join(os.TempDir(), "dome-run-r1-"+strings.Repeat("0", 16))
	if os.Geteuid() == 0 {
		left = filepath.Join("/tmp", filepath.Base(left))
	}
	if err := os.MkdirAll(filepath.Join(left, "scratch", "ro"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.Chmod(filepath.Join(left, "scratch", "ro"), 0o500)
	if err := os.WriteFile(filepath.Join(l.Root, orchestrate.WorkDirFile), []byte(left+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	again := start(t, w.config("r1", q, nil))
	if again.Stop.Reason != orchestrate.StopConstraintsMet {
		t.Fatalf("again: %+v", again.Stop)
	}
	if _, err := os.Lstat(left); err == nil {
		os.Chmod(filepath.Join(left, "scratch", "ro"), 0o700)
		os.RemoveAll(left)
		t.Fatalf("a session of a stopped run left %s, named in work_dir", left)
	}
	evs, _ := ledger.Read(l.Root, "r1")
	if len(evs) != rr.Events {
		t.Fatalf("a stopped run recorded %d more events", len(evs)-rr.Events)
	}
}

func TestRun_ConflictReopensOnTheNextBase(t *testing.T) {
	w := newWorld(t, greet, tools)
	q := queue(task("bump-a", "bump-a.sh", nil, ""), task("bump-b", "bump-b.sh", nil, ""))
	out := start(t, w.config("r2", q, func(c *orchestrate.Config) { c.Promote = false }))
	if out.Stop.Reason != orchestrate.StopConstraintsMet {
		t.Fatalf("stopped: %+v", out.Stop)
	}
	st := out.State
	if st.Counters.Reopened != 1 || len(st.Waves) < 2 {
		t.Fatalf("counters %+v waves %d", st.Counters, len(st.Waves))
	}
	reopened := st.Waves[0].Reopened
	if len(reopened) != 1 || !strings.HasPrefix(reopened[0].Reason, "conflict") {
		t.Fatalf("wave 1 reopened %+v", reopened)
	}
	// The reopened node ran again on the head holding the other's change:
	// its change is the last word.
	tree := treeAt(t, w.repo, st.IntegrationHead)
	want := map[string]string{"bump-a": "0.2.0\n", "bump-b": "0.3.0\n"}[reopened[0].NodeID]
	if tree["VERSION"] != want {
		t.Fatalf("VERSION %q, want %q (the reopened node's)", tree["VERSION"], want)
	}
	rr, err := orchestrate.Replay(stack.NewLayout(filepath.Join(w.git.Dir, "ops", "runs"), "r2"))
	if err != nil || !rr.Matches {
		t.Fatalf("replay: %+v %v", rr, err)
	}
}

func TestRun_FailuresAreContainedTheRestGoesOn(t *testing.T) {
	w := newWorld(t, greet, tools)
	wall := `, "constraints": {"max_wall_seconds": 1}`
	q := queue(task("docs", "docs.sh", nil, ""), task("broken", "fail.sh", nil, ""), task("after-broken", "docs.sh", []string{"broken"}, ""),
		task("lazy", "nothing.sh", nil, ""), task("forever", "sleep.sh", nil, wall))
	out := start(t, w.config("r3", q, func(c *orchestrate.Config) {
		c.Promote = false
	}))
	if out.Stop.Reason != orchestrate.StopConstraintsUnmet {
		t.Fatalf("stopped: %+v", out.Stop)
	}
	reasons := map[string]string{}
	for _, f := range out.Stop.Summary.Failures {
		reasons[f.NodeID] = string(f.Status) + " " + f.Reason
	}
	for node, want := range map[string]string{"broken": "exit_nonzero", "after-broken": "dependency_failed", "lazy": "missing_output", "forever": "timeout"} {
		if !strings.Contains(reasons[node], want) {
			t.Errorf("%s: %q, want %s", node, reasons[node], want)
		}
	}
	if out.State.Counters.Timeouts == 0 {
		t.Error("no task.timeout recorded")
	}
	// docs passed and is on the canvas.
	if tree := treeAt(t, w.repo, out.State.IntegrationHead); !strings.Contains(tree["README.md"], "greets") {
		t.Fatalf("docs' change is not on the canvas: %q", tree["README.md"])
	}
	l := stack.NewLayout(filepath.Join(w.git.Dir, "ops", "runs"), "r3")
	if b, err := os.ReadFile(filepath.Join(l.Root, "tasks", "broken.1", "outputs", "_logs", "stderr.log")); err != nil || !strings.Contains(string(b), "failing on purpose") {
		t.Fatalf("the failing worker's stderr: %q %v", b, err)
	}
}

func TestRun_InterruptedThenResumed(t *testing.T) {
	w := newWorld(t, greet, tools)
	q := queue(task("docs", "docs.sh", nil, ""), task("tests", "tests.sh", nil, ""), task("changelog", "changelog.sh", []string{"docs"}, ""))
	ctx, cancel := context.WithCancel(context.Background())
	cfg := w.config("r4", q, nil)
	cfg.Progress = func(p orchestrate.Progress) {
		if p.Kind == "running" {
			cancel() // interrupt as soon as a worker runs
		}
	}
	if _, err := orchestrate.Start(ctx, cfg); err != orchestrate.ErrInterrupted {
		t.Fatalf("interrupted run: %v", err)
	}
	out := start(t, w.config("r4", q, nil))
	if out.Stop.Reason != orchestrate.StopConstraintsMet || out.State.Counters.Lost == 0 || out.State.Sessions != 2 {
		t.Fatalf("resumed: %+v counters %+v sessions %d", out.Stop, out.State.Counters, out.State.Sessions)
	}
	rr, err := orchestrate.Replay(stack.NewLayout(filepath.Join(w.git.Dir, "ops", "runs"), "r4"))
	if err != nil || !rr.Matches {
		t.Fatalf("replay: %+v %v", rr, err)
	}
}

func TestRun_CancelAndBudgets(t *testing.T) {
	w := newWorld(t, greet, tools)
	q := queue(task("a", "sleep.sh", nil, ""), task("b", "sleep.sh", nil, ""))
	cfg := w.config("r5", q, nil)
	done := make(chan *orchestrate.Outcome, 1)
	running := make(chan bool, 4)
	cfg.Progress = func(p orchestrate.Progress) {
		if p.Kind == "running" {
			running <- true
		}
	}
	go func() {
		out, err := orchestrate.Start(context.Background(), cfg)
		if err != nil {
			t.Error(err)
		}
		done <- out
	}()
	<-running
	asked, _, err := orchestrate.Cancel(context.Background(), w.config("r5", q, nil), "enough")
	if err != nil || !asked {
		t.Fatalf("cancel: %v %v", asked, err)
	}
	select {
	case out := <-done:
		if out == nil || out.Stop.Reason != orchestrate.StopCancelled || !strings.Contains(out.Stop.Detail, "enough") {
			t.Fatalf("cancelled run: %+v", out)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("the run did not stop")
	}
	// max_total_attempts
	qb := `{"schema_version": "dome.work.queue/v1", "budgets": {"max_total_attempts": 1, "max_concurrency": 1}, "tasks": [` +
		task("docs", "docs.sh", nil, "") + "," + task("tests", "tests.sh", nil, "") + `]}`
	out := start(t, w.config("r6", qb, nil))
	if out.Stop.Reason != orchestrate.StopBudgetExhausted || out.State.Counters.Attempts != 1 {
		t.Fatalf("budget: %+v %+v", out.Stop, out.State.Counters)
	}
}

// checkFollower follows the run's ledger event by event: the state at the
// end is Replay's, byte for byte, and a state taken halfway does not change
// as later events are folded.
func checkFollower(t *testing.T, l stack.Layout, rr *orchestrate.ReplayResult) {
	t.Helper()
	q, rp, err := orchestrate.LoadRunFiles(l)
	if err != nil {
		t.Fatal(err)
	}
	evs, err := ledger.Read(l.Root, l.RunID)
	if err != nil {
		t.Fatal(err)
	}
	f := orchestrate.NewFollower(q, rp, l.RunID)
	var half orchestrate.State
	var halfBytes []byte
	for i, e := range evs {
		if err := f.Apply(e); err != nil {
			t.Fatalf("follow: %v", err)
		}
		if i == len(evs)/2 {
			half = f.State()
			halfBytes, _ = half.Marshal()
		}
	}
	end := f.State()
	got, _ := end.Marshal()
	want, _ := rr.State.Marshal()
	if !bytes.Equal(got, want) || f.Unrecorded() != 0 {
		t.Fatalf("the followed state is not Replay's (unrecorded %d):\n%s\n%s", f.Unrecorded(), got, want)
	}
	if again, _ := half.Marshal(); !bytes.Equal(again, halfBytes) {
		t.Fatal("a state taken halfway changed as later events were folded")
	}
}

// TestRun_GrantStoreGiven keeps the run's spent grants in the store the
// caller gives (a PostgreSQL store is shared by several coordinators the
// same way): the attempt's single-use grant is spent there, not under the
// run.
func TestRun_GrantStoreGiven(t *testing.T) {
	w := newWorld(t, greet, tools)
	dir := t.TempDir()
	st, err := grantfile.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := start(t, w.config("gs", queue(task("docs", "docs.sh", nil, "")), func(c *orchestrate.Config) { c.GrantStore = st; c.Promote = false }))
	if out.Stop.Reason != orchestrate.StopConstraintsMet {
		t.Fatalf("stopped: %+v", out.Stop)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "grants.log")); err != nil || !strings.Contains(string(b), "jti") {
		t.Fatalf("the given store holds no spend: %v %q", err, b)
	}
	if _, err := os.Stat(filepath.Join(w.git.Dir, "ops", "runs", "gs", "grants")); err == nil {
		t.Fatal("the run made its own grant store too")
	}
}
