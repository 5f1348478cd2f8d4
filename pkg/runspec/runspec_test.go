package runspec

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/dome-registry/dome/pkg/workflow"
)

func readGood(t testing.TB) []byte {
	b, err := os.ReadFile("testdata/good.queue.json")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// edit decodes the good queue, lets f change it and encodes it again.
func edit(t testing.TB, f func(m map[string]any)) []byte {
	var m map[string]any
	if err := json.Unmarshal(readGood(t), &m); err != nil {
		t.Fatal(err)
	}
	f(m)
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func task(m map[string]any, i int) map[string]any { return m["tasks"].([]any)[i].(map[string]any) }

func TestParseQueue_Good(t *testing.T) {
	q, g, err := ParseQueue("work.queue.json", readGood(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(q.Tasks) != 4 || g.Len() != 4 || q.Tasks[0].ActionSpec.Intent != "refactor" {
		t.Fatalf("parsed %+v", q)
	}
	if !strings.HasPrefix(q.Digest(), "sha256:") || !strings.HasPrefix(q.Tasks[1].Digest, "sha256:") {
		t.Fatalf("digests %q %q", q.Digest(), q.Tasks[1].Digest)
	}
	// The task spec digest is over canonical bytes: formatting and member
	// order do not change it, content does.
	var m map[string]any
	json.Unmarshal(readGood(t), &m)
	compact, _ := json.Marshal(m)
	q2, _, err := ParseQueue("compact", compact)
	if err != nil {
		t.Fatal(err)
	}
	for i := range q.Tasks {
		if q.Tasks[i].Digest != q2.Tasks[i].Digest {
			t.Fatalf("task %d digest changed with formatting", i)
		}
	}
	if q.Digest() != q2.Digest() {
		t.Fatal("queue digest changed with formatting")
	}
	q3, _, _ := ParseQueue("x", edit(t, func(m map[string]any) { task(m, 1)["title"] = "changed" }))
	if q3.Tasks[1].Digest == q.Tasks[1].Digest || q3.Tasks[0].Digest != q.Tasks[0].Digest {
		t.Fatal("a task's digest must follow its own content only")
	}
}

func TestParseQueue_Refusals(t *testing.T) {
	tests := []struct {
		name    string
		data    []byte
		field   string
		problem string
	}{
		{"not JSON", []byte(`{"schema_version":`), "", "unexpected end of JSON input"},
		{"duplicate key", []byte(`{"schema_version":"dome.work.queue/v1","tasks":[],"tasks":[]}`), "/tasks", "duplicate"},
		{"wrong schema version", edit(t, func(m map[string]any) { m["schema_version"] = "dome.work.queue/v2" }), "/schema_version", ""},
		{"a task naming methods", edit(t, func(m map[string]any) { task(m, 0)["methods"] = []any{"read_file"} }), "/tasks/0", "methods"},
		{"no containers", edit(t, func(m map[string]any) { delete(task(m, 1), "containers") }), "/tasks/1", "containers"},
		{"container by tag", edit(t, func(m map[string]any) {
			task(m, 0)["containers"].([]any)[0].(map[string]any)["container_ref"] = "alpine:latest"
		}), "/tasks/0/containers/0/container_ref", ""},
		{"evidence without its kind", edit(t, func(m map[string]any) {
			task(m, 1)["required_outputs"] = []any{map[string]any{"kind": "evidence"}}
		}), "/tasks/1/required_outputs/0", "evidence_kind"},
		{"an output twice", edit(t, func(m map[string]any) {
			task(m, 1)["required_outputs"] = []any{map[string]any{"kind": "patch_proposal"}, map[string]any{"kind": "patch_proposal", "optional": true}}
		}), "/tasks/1/required_outputs/1", "requires the output patch_proposal twice"},
		{"node id with a slash", edit(t, func(m map[string]any) { task(m, 0)["node_id"] = "a/b" }), "/tasks/0/node_id", ""},
		{"node id with dots", edit(t, func(m map[string]any) { task(m, 3)["node_id"] = "a..b" }), "/tasks/3/node_id", "must not contain '..'"},
		{"capability with spaces", edit(t, func(m map[string]any) { task(m, 0)["required_capabilities"] = []any{"read everything"} }), "/tasks/0/required_capabilities/0", ""},
		{"action params naming a method", edit(t, func(m map[string]any) {
			task(m, 0)["action_spec"] = map[string]any{"intent": "docs", "params": map[string]any{"method": "repo-read/read_file"}}
		}), "/tasks/0/action_spec/params/method", "methods come from the grant"},
		{"action params not an object", edit(t, func(m map[string]any) {
			task(m, 0)["action_spec"] = map[string]any{"intent": "docs", "params": []any{1}}
		}), "/tasks/0/action_spec/params", ""},
		{"unbounded cycle", edit(t, func(m map[string]any) {
			m["cycles"] = []any{map[string]any{"loop_id": "l", "nodes": []any{"a", "b"}}}
		}), "/cycles/0", "max_iterations"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := ParseQueue("work.queue.json", tt.data)
			var ie *errkind.InputError
			if !errors.As(err, &ie) {
				t.Fatalf("want an InputError, got %v", err)
			}
			if ie.Source != "work.queue.json" || !strings.HasPrefix(ie.Field, tt.field) || !strings.Contains(ie.Error(), tt.problem) {
				t.Fatalf("got %q (field %q), want field %q and %q", ie.Error(), ie.Field, tt.field, tt.problem)
			}
		})
	}
}

func TestParseQueue_GraphProblemsNameFields(t *testing.T) {
	tests := []struct {
		name   string
		data   []byte
		fields []string
		msg    string
	}{
		{"duplicate node id", edit(t, func(m map[string]any) { task(m, 2)["node_id"] = "tests-parser" }),
			[]string{"/tasks/2/node_id", "/tasks/3/dependencies/1"}, `duplicate node id "tests-parser" (nodes 1 and 2)`},
		{"unknown dependency", edit(t, func(m map[string]any) { task(m, 1)["dependencies"] = []any{"refactor-parsr"} }),
			[]string{"/tasks/1/dependencies/0"}, `node "tests-parser" depends on "refactor-parsr", which is not a node (did you mean "refactor-parser"?)`},
		{"self dependency", edit(t, func(m map[string]any) { task(m, 3)["dependencies"] = []any{"review"} }),
			[]string{"/tasks/3/dependencies/0"}, `node "review" depends on itself`},
		{"cycle", edit(t, func(m map[string]any) { task(m, 0)["dependencies"] = []any{"review"} }),
			[]string{"/tasks/0/dependencies/0"}, "cycle refactor-parser -> review -> tests-parser -> refactor-parser"},
		{"unknown group", edit(t, func(m map[string]any) { task(m, 2)["priority_group"] = "urgent" }),
			[]string{"/tasks/2/priority_group"}, `priority group "urgent" is not declared (declared: critical, normal)`},
		{"loop that is not a cycle", edit(t, func(m map[string]any) {
			m["cycles"] = []any{map[string]any{"loop_id": "l", "nodes": []any{"docs-readme", "tests-parser"}, "max_iterations": 2}}
		}), []string{"/cycles/0"}, "do not form one cycle"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := ParseQueue("q.json", tt.data)
			var ge *GraphError
			if !errors.As(err, &ge) {
				t.Fatalf("want a GraphError, got %v", err)
			}
			if strings.Join(ge.Fields, " ") != strings.Join(tt.fields, " ") || !strings.Contains(err.Error(), tt.msg) {
				t.Fatalf("got %v (fields %v)", err, ge.Fields)
			}
			if !errkind.IsInput(err) || errkind.HintOf(err) == "" {
				t.Fatal("a graph error must be an input error with a hint (exit 2)")
			}
		})
	}
}

func TestParseQueue_DeclaredCyclePasses(t *testing.T) {
	data := edit(t, func(m map[string]any) {
		task(m, 0)["dependencies"] = []any{"tests-parser"}
		m["cycles"] = []any{map[string]any{"loop_id": "refine", "nodes": []any{"refactor-parser", "tests-parser"}, "max_iterations": 3, "reason": "tests drive the refactor"}}
	})
	q, g, err := ParseQueue("q.json", data)
	if err != nil {
		t.Fatal(err)
	}
	if len(q.Cycles) != 1 || len(g.Loops()) != 1 || g.Loops()[0].MaxIterations != 3 {
		t.Fatalf("loops %+v", g.Loops())
	}
}

func TestQueue_CheckCapabilities(t *testing.T) {
	q, _, _ := ParseQueue("q.json", readGood(t))
	if err := q.CheckCapabilities("q.json", []string{"repo.read", "repo.propose"}); err != nil {
		t.Fatal(err)
	}
	err := q.CheckCapabilities("q.json", []string{"repo.read"})
	var ie *errkind.InputError
	if !errors.As(err, &ie) || ie.Field != "/tasks/0/required_capabilities/1" || !strings.Contains(ie.Problem, `"repo.propose"`) {
		t.Fatalf("got %v", err)
	}
}

func TestSchedule_PolicyQueueAndOverridesNarrow(t *testing.T) {
	q, _, _ := ParseQueue("q.json", readGood(t))
	p, err := ParsePolicy("p.json", []byte(`{"schema_version":"dome.run_policy/v1",
	  "scheduling":{"max_concurrency":8,"max_attempts":5,"strategy":"fail_fast","endgame":{"remaining":1,"max_duplicates":2}},
	  "scarce":{"resources":{"gpu":1},"runtime_cards":{"sh-worker":2}},
	  "risk":{"levels":{"medium":300},"capabilities":{"repo.propose":100}}}`))
	if err != nil {
		t.Fatal(err)
	}
	g, wp, err := Schedule("q.json", q, p, Overrides{})
	if err != nil {
		t.Fatal(err)
	}
	if wp.MaxConcurrency != 3 || wp.MaxAttempts != 2 || wp.Strategy != workflow.FailFast || wp.Endgame.MaxDuplicates != 2 {
		t.Fatalf("policy %+v", wp)
	}
	if wp.Capacity["resource:gpu"] != 1 || wp.Capacity["card:sh-worker"] != 2 || wp.Weights != workflow.DefaultWeights() {
		t.Fatalf("capacity/weights %+v", wp)
	}
	if n := g.Node(0); n.Risk != 400 || n.Class != "card:sh-worker" || strings.Join(n.Needs, " ") != "capability:repo.propose capability:repo.read card:sh-worker" {
		t.Fatalf("node %+v", n)
	}
	if _, wp, _ = Schedule("q.json", q, p, Overrides{MaxConcurrency: 1}); wp.MaxConcurrency != 1 {
		t.Fatalf("override %d", wp.MaxConcurrency)
	}
	e, _ := workflow.NewEngine(g, wp, workflow.Options{RunID: "demo-1", Seed: "s"})
	ds := e.Next("w1")
	if len(ds) != 1 || ds[0].NodeID != "refactor-parser" {
		t.Fatalf("first dispatch %+v", ds)
	}
}

func TestPolicy_DefaultAndRefusals(t *testing.T) {
	p := DefaultPolicy()
	if p.Scheduling.MaxConcurrency != 4 || p.Sandbox.MaxProcesses == 0 || !strings.HasPrefix(p.Digest(), "sha256:") {
		t.Fatalf("default %+v", p)
	}
	repo, err := os.ReadFile("../../policy/run_policy.json")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(repo, DefaultPolicyJSON()) {
		t.Fatal("policy/run_policy.json and the built-in policy differ")
	}
	for _, tt := range []struct{ data, field string }{
		{`{"schema_version":"dome.run_policy/v1","scheduling":{"max_concurrency":0}}`, "/scheduling/max_concurrency"},
		{`{"schema_version":"dome.run_policy/v1","scheduling":{"max_concurrency":1,"strategy":"yolo"}}`, "/scheduling/strategy"},
		{`{"schema_version":"dome.run_policy/v1","scheduling":{"max_concurrency":1},"scarce":{"resources":{"gpu":0}}}`, "/scarce/resources/gpu"},
		{`{"schema_version":"dome.run_policy/v1","scheduling":{"max_concurrency":1},"risk":{"levels":{"extreme":5}}}`, "/risk/levels"},
	} {
		_, err := ParsePolicy("p.json", []byte(tt.data))
		var ie *errkind.InputError
		if !errors.As(err, &ie) || !strings.HasPrefix(ie.Field, tt.field) {
			t.Fatalf("%s: want field %s, got %v", tt.data, tt.field, err)
		}
	}
}

func manifest() Manifest {
	return Manifest{
		RunID: "demo-1", BaseCommit: strings.Repeat("a", 40), RegistryCommit: strings.Repeat("b", 40),
		QueueDigest: "sha256:" + strings.Repeat("c", 64),
		Policies: []PinnedFile{{Path: "policy/run_policy.json", Digest: "sha256:" + strings.Repeat("d", 64), Source: "git:" + strings.Repeat("b", 40)},
			{Path: "policy/policy_spec.json", Digest: "sha256:" + strings.Repeat("e", 64), Source: "built-in"}},
		Cards:           []PinnedCard{{CardID: "sh-worker", Kind: "runtime", Commit: strings.Repeat("b", 40), Path: "registry/a2a/cards/runtime/sh-worker.card.json", Digest: "sha256:" + strings.Repeat("f", 64)}},
		DeterminismSeed: "seed-1",
		Environment: Environment{DomeVersion: "0.1.0", GoVersion: "go1.26", OS: "linux", Arch: "amd64", Kernel: "6.1.0",
			Sandbox: SandboxInfo{Kind: "bubblewrap", Version: "0.8.0"}},
	}
}

func TestManifest_SealOpenDeterministic(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	a, err := manifest().Seal(at, "dome/test")
	if err != nil {
		t.Fatal(err)
	}
	m2 := manifest()
	m2.Policies[0], m2.Policies[1] = m2.Policies[1], m2.Policies[0]
	b, _ := m2.Seal(at, "dome/test")
	if !bytes.Equal(a, b) {
		t.Fatal("sealing the same manifest twice (lists in another order) gave different bytes")
	}
	m, h, err := OpenManifest("run.manifest.json", a)
	if err != nil {
		t.Fatal(err)
	}
	if m.Policies[0].Path != "policy/policy_spec.json" || h.ArtifactKind != ManifestKind || h.RunID != "demo-1" || m.PolicyDigest == "" {
		t.Fatalf("opened %+v %+v", m, h)
	}
	tampered := bytes.Replace(a, []byte(`"kernel":"6.1.0"`), []byte(`"kernel":"6.1.1"`), 1)
	if _, _, err := OpenManifest("run.manifest.json", tampered); err == nil || !strings.Contains(err.Error(), "payload digest mismatch") {
		t.Fatalf("tampered manifest: %v", err)
	}
}

func TestManifest_Refusals(t *testing.T) {
	at := time.Unix(0, 0)
	for _, tt := range []struct {
		name  string
		edit  func(*Manifest)
		field string
	}{
		{"short base commit", func(m *Manifest) { m.BaseCommit = "abc" }, "/base_commit"},
		{"sandbox none without a reason", func(m *Manifest) { m.Environment.Sandbox = SandboxInfo{Kind: "none"} }, "/environment/sandbox"},
		{"no policies", func(m *Manifest) { m.Policies = nil }, "/policies"},
		{"bad card kind", func(m *Manifest) { m.Cards[0].Kind = "agent" }, "/cards/0/kind"},
	} {
		m := manifest()
		tt.edit(&m)
		_, err := m.Seal(at, "t")
		var ie *errkind.InputError
		if !errors.As(err, &ie) || !strings.HasPrefix(ie.Field, tt.field) {
			t.Fatalf("%s: want field %s, got %v", tt.name, tt.field, err)
		}
	}
	m := manifest()
	m.Environment.Sandbox = SandboxInfo{Kind: "none", Reason: "--sandbox=none"}
	if _, err := m.Seal(at, "t"); err != nil {
		t.Fatalf("sandbox none with a reason: %v", err)
	}
}

// TestParseQueue_HostileChain: a queue of 10,000 tasks in one long chain
// closed into a cycle is refused in bounded time with the whole path
// (bench/run times 100,000).
func TestParseQueue_HostileChain(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	data := bigQueue(10000, true)
	start := time.Now()
	_, _, err := ParseQueue("big.json", data)
	var ge *GraphError
	if !errors.As(err, &ge) || ge.Problems[0].Code != workflow.ProblemCycle {
		t.Fatalf("want the cycle, got %v", err)
	}
	if d := time.Since(start); d > 60*time.Second {
		t.Fatalf("took %v", d)
	}
	if len(ge.Problems[0].Nodes) != 10001 {
		t.Fatalf("cycle path of %d nodes", len(ge.Problems[0].Nodes))
	}
	t.Logf("10,000 tasks with a cycle through all: %v", time.Since(start))
}

func bigQueue(n int, cycle bool) []byte {
	var b bytes.Buffer
	b.WriteString(`{"schema_version":"dome.work.queue/v1","tasks":[`)
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		dep := ""
		if i > 0 {
			dep = fmt.Sprintf(`,"dependencies":["t%d"]`, i-1)
		} else if cycle {
			dep = fmt.Sprintf(`,"dependencies":["t%d"]`, n-1)
		}
		fmt.Fprintf(&b, `{"node_id":"t%d","containers":[{"container_ref":"sha256:%064d","command":["true"]}],"required_capabilities":["repo.read"],"required_outputs":[{"kind":"patch_proposal"}]%s}`, i, 0, dep)
	}
	b.WriteString(`]}`)
	return b.Bytes()
}
