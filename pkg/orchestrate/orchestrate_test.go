package orchestrate_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dome-registry/dome/internal/gittest"
	"github.com/dome-registry/dome/internal/runtest"
	"github.com/dome-registry/dome/pkg/gitstore"
	"github.com/dome-registry/dome/pkg/ledger"
	"github.com/dome-registry/dome/pkg/orchestrate"
	"github.com/dome-registry/dome/pkg/registry"
	"github.com/dome-registry/dome/pkg/runspec"
	"github.com/dome-registry/dome/pkg/sandbox"
	"github.com/dome-registry/dome/pkg/stack"
)

var (
	domeOnce sync.Once
	domeBin  string
	domeErr  error
)

// dome builds the dome binary the workers run (dome worker submit).
func dome(t *testing.T) string {
	t.Helper()
	domeOnce.Do(func() {
		dir, err := os.MkdirTemp("", "dome-orchestrate-test-")
		if err != nil {
			domeErr = err
			return
		}
		os.Chmod(dir, 0o755)
		domeBin = filepath.Join(dir, "dome")
		cmd := exec.Command("go", "build", "-o", domeBin, "./cmd/dome")
		cmd.Dir = runtest.Root()
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			domeErr = fmt.Errorf("go build ./cmd/dome: %v\n%s", err, out)
		}
	})
	if domeErr != nil {
		t.Fatal(domeErr)
	}
	return domeBin
}

func TestMain(m *testing.M) {
	code := m.Run()
	if domeBin != "" {
		os.RemoveAll(filepath.Dir(domeBin))
	}
	os.Exit(code)
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
	// Each task's result is durable and acknowledged.
	for id, tk := range st.Tasks {
		if tk.Status != orchestrate.TaskAcked {
			t.Errorf("task %s is %s", id, tk.Status)
		}
		if _, err := os.Stat(filepath.Join(l.Root, tk.Result)); err != nil {
			t.Errorf("task %s: %v", id, err)
		}
	}
	// Starting it again does nothing more.
	again := start(t, w.config("r1", q, nil))
	if again.Stop.Reason != orchestrate.StopConstraintsMet {
		t.Fatalf("again: %+v", again.Stop)
	}
	evs, _ := ledger.Read(l.Root, "r1")
	if len(evs) != rr.Events {
		t.Fatalf("a stopped run recorded %d more events", len(evs)-rr.Events)
	}
}
