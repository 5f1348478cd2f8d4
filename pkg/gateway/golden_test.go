package gateway_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dome-registry/dome/internal/gittest"
	"github.com/dome-registry/dome/internal/runtest"
	"github.com/dome-registry/dome/pkg/codegen"
	"github.com/dome-registry/dome/pkg/contracttest"
	"github.com/dome-registry/dome/pkg/gateway"
	"github.com/dome-registry/dome/pkg/gitstore"
	"github.com/dome-registry/dome/pkg/grant"
	"github.com/dome-registry/dome/pkg/registry"
	"github.com/dome-registry/dome/pkg/stack"
)

var update = flag.Bool("update", false, "rewrite the skills' golden contract cases from the gateway's answers")

// The golden cases of the repo-read and patch-proposal skills are
// transcripts of this gateway on the greet module: goldenCases says what
// each asks in which state, the files hold the request and the answer, and
// -update writes them from the gateway. The placeholder grant of the files
// stands for the real grant each case's session is issued.
const placeholderGrant = "dome.tool_profile.v0.1.example-grant"

// goldenAttempt is the attempt every golden case's session serves.
func goldenAttempt(base string) gateway.Attempt {
	return gateway.Attempt{RunID: "run-1", WaveID: "wave-1", NodeID: "w1", NodeExecutionID: "ne-1", TaskID: "w1.1", WorkerID: "worker-7", BaseRef: base}
}

type goldenCase struct {
	tool, name, description, op string
	body                        func(g *goldenFixture) any
	issue                       runtest.IssueOptions
	other                       bool                   // present another worker's grant
	setup                       func(g *goldenFixture) // prior calls
	at                          time.Duration          // the gateway's clock after runtest.T0 (default one minute)
}

// goldenFixture is a fixture in the state one golden case needs.
type goldenFixture struct {
	*runtest.Fixture
	a       gateway.Attempt
	tok     []byte
	session *gateway.Session
	readme  []byte // a proposal changing README.md
	guide   []byte // a proposal changing docs/guide.md
	applied string // a checkpoint of the run (the README change applied)
}

func submitPatchBody(g *goldenFixture, key string, doc []byte) any {
	return map[string]any{"idempotency_key": key, "node_execution_id": g.a.NodeExecutionID, "proposal": json.RawMessage(doc)}
}

func firstSubmit(g *goldenFixture) {
	g.call("submit_patch", submitPatchBody(g, "ne-1:submit_patch:1", g.readme))
}

var goldenCases = []goldenCase{
	{tool: "repo-read", name: "get-base-ref", description: "The run's base commit and its tree.", op: "get_base_ref",
		body: func(*goldenFixture) any { return map[string]any{} }},
	{tool: "repo-read", name: "get-diff-stats", description: "What a layer of the run changed against the base.", op: "get_diff_stats",
		body: func(g *goldenFixture) any { return map[string]any{"to_ref": g.applied} }},
	{tool: "repo-read", name: "get-diff-stats-bad-ref", description: "A commit the run does not hold: 404, not retryable.", op: "get_diff_stats",
		body: func(*goldenFixture) any { return map[string]any{"to_ref": "1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e"} }},
	{tool: "repo-read", name: "grep", description: "Find a symbol.", op: "grep",
		body: func(*goldenFixture) any { return map[string]any{"pattern": "func Hello", "paths": []string{"**/*.go"}} }},
	{tool: "repo-read", name: "list-tree", description: "List the root folder (what the grant may read).", op: "list_tree",
		body: func(*goldenFixture) any { return map[string]any{"path": ".", "recursive": false} }},
	{tool: "repo-read", name: "read-file", description: "Read a text file at base_ref.", op: "read_file",
		body: func(*goldenFixture) any { return map[string]any{"path": "README.md", "max_bytes": 4096} }},
	{tool: "repo-read", name: "read-file-denied", description: "A path the grant's deny globs cover: 403 with the grant's reason code.", op: "read_file",
		body: func(*goldenFixture) any { return map[string]any{"path": "deploy/prod.pem"} }},
	{tool: "repo-read", name: "read-file-expired-grant", description: "A grant past its expires_at: 401, not retryable with this grant.", op: "read_file",
		body: func(*goldenFixture) any { return map[string]any{"path": "README.md"} }, at: time.Hour},
	{tool: "repo-read", name: "read-file-other-worker", description: "Another worker's grant on this worker's socket: 401 WRONG_WORKER.", op: "read_file",
		body: func(*goldenFixture) any { return map[string]any{"path": "README.md"} }, other: true},
	{tool: "patch-proposal", name: "submit-patch", description: "Submit a sealed proposal with an idempotency key rooted at the attempt; the gateway re-seals it as the task's proposal.", op: "submit_patch",
		body: func(g *goldenFixture) any { return submitPatchBody(g, "ne-1:submit_patch:1", g.readme) }},
	{tool: "patch-proposal", name: "submit-patch-replayed", description: "The same request under the same key: the first answer, replayed.", op: "submit_patch",
		body: func(g *goldenFixture) any { return submitPatchBody(g, "ne-1:submit_patch:1", g.readme) }, setup: firstSubmit},
	{tool: "patch-proposal", name: "submit-patch-key-conflict", description: "The same key with another proposal: 409 IDEMPOTENCY_CONFLICT.", op: "submit_patch",
		body: func(g *goldenFixture) any { return submitPatchBody(g, "ne-1:submit_patch:1", g.guide) }, setup: firstSubmit},
	{tool: "patch-proposal", name: "submit-patch-spent", description: "A single-use grant already spent by a write: 401 REPLAYED.", op: "submit_patch",
		body: func(g *goldenFixture) any { return submitPatchBody(g, "ne-1:submit_patch:2", g.guide) }, setup: firstSubmit},
	{tool: "patch-proposal", name: "submit-patch-outside-roots", description: "A diff touching a path outside the grant's write roots: 403, nothing spent.", op: "submit_patch",
		body:  func(g *goldenFixture) any { return submitPatchBody(g, "ne-1:submit_patch:1", g.readme) },
		issue: runtest.IssueOptions{Narrow: &grant.Template{IO: &grant.IOTemplate{WriteRoots: []string{"docs"}}}}},
	{tool: "patch-proposal", name: "submit-metadata", description: "Attach intent tags and evidence to the attempt's proposal (a grant that is not single-use).", op: "submit_metadata",
		body: func(g *goldenFixture) any {
			return map[string]any{"idempotency_key": "ne-1:submit_metadata:1", "node_execution_id": "ne-1", "proposal_id": "w1.1",
				"meta": map[string]any{"intent_tags": []string{"docs"}, "evidence": []string{"sha256:" + strings.Repeat("5", 64)}}}
		}, issue: runtest.IssueOptions{NotSingle: true}, setup: firstSubmit},
}

// newGoldenFixture builds the run and the session of case k.
func newGoldenFixture(t *testing.T, k goldenCase) *goldenFixture {
	t.Helper()
	f := runtest.New(t, runtest.Options{})
	g := &goldenFixture{Fixture: f, a: goldenAttempt(f.Base)}
	g.readme = f.ProposalAs(map[string]string{"README.md": "# greet\n\nA tiny module that greets.\n"}, "w1.1", &g.a)
	g.guide = f.ProposalAs(map[string]string{"docs/guide.md": "# Guide\n\nCall greet.Hello(name).\n"}, "w1.1", &g.a)
	if k.name == "get-diff-stats" {
		g.applied = applyThroughTheStack(t, f, g.readme)
	}
	o := k.issue
	o.JTI = "jti-0001"
	g.tok = f.Issue(g.a, o)
	s, err := f.GW.Open(g.a, nil)
	if err != nil {
		t.Fatal(err)
	}
	g.session = s
	if k.setup != nil {
		k.setup(g)
	}
	if k.other {
		b := g.a
		b.WorkerID, b.NodeExecutionID = "worker-8", "ne-2"
		g.tok = f.Issue(b, runtest.IssueOptions{JTI: "jti-0002"})
	}
	f.SetNow(runtest.T0.Add(time.Minute))
	if k.at != 0 {
		f.SetNow(runtest.T0.Add(k.at))
	}
	return g
}

// applyThroughTheStack submits, plans and applies a proposal the way the
// coordinator does, so that the run holds a checkpoint.
func applyThroughTheStack(t *testing.T, f *runtest.Fixture, doc []byte) string {
	t.Helper()
	w0 := f.Attempt("w0", 1)
	_, c := f.Serve(w0, f.Issue(w0, runtest.IssueOptions{JTI: "jti-w0"}), nil)
	if res, err := c.SubmitPatch(context.Background(), gateway.SubmitPatchRequest{IdempotencyKey: w0.NodeExecutionID + ":1",
		NodeExecutionID: w0.NodeExecutionID, Proposal: doc}); err != nil || res.Status != gateway.StatusSubmitted {
		t.Fatalf("submit: %+v %v", res, err)
	}
	var head string
	err := f.SR.Do(func(r *stack.Run) error {
		if _, err := r.Plan(f.Repo, stack.PlanOptions{At: runtest.T0, Producer: "test"}); err != nil {
			return err
		}
		sig := gitstore.Signature{Name: "dome", Email: "dome@example.com"}
		rep, err := stack.ApplyPlan(f.Repo, r, stack.ApplyOptions{CreatedAt: runtest.T0, Producer: "test", Author: sig, Committer: sig})
		if err != nil {
			return err
		}
		head = rep.HeadRef
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return head
}

// call makes one call through the session's handler with the case's grant.
func (g *goldenFixture) call(op string, body any) (int, []byte) {
	b, _ := json.Marshal(body)
	r := httptest.NewRequest(http.MethodPost, "/"+op, bytes.NewReader(b))
	r.Header.Set("Authorization", "Bearer "+string(g.tok))
	r.Header.Set("Content-Type", "application/json")
	w := httptest.NewRecorder()
	g.session.Handler().ServeHTTP(w, r)
	return w.Code, w.Body.Bytes()
}

// handler serves the case's request as a client sends it: with the
// placeholder grant, which it swaps for the case's real one.
func (g *goldenFixture) handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") == "Bearer "+placeholderGrant {
			r.Header.Set("Authorization", "Bearer "+string(g.tok))
		}
		g.session.Handler().ServeHTTP(w, r)
	})
}

func caseFile(k goldenCase) string {
	return filepath.Join("../../registry/tools", k.tool, "contract-tests/cases", k.name+".json")
}

type caseDoc struct {
	Description string `json:"description"`
	OperationID string `json:"operation_id"`
	Request     struct {
		Headers map[string]string `json:"headers"`
		Body    json.RawMessage   `json:"body"`
	} `json:"request"`
	Response struct {
		Status int             `json:"status"`
		Body   json.RawMessage `json:"body"`
	} `json:"response"`
}

func indent(b []byte) json.RawMessage {
	var out bytes.Buffer
	if err := json.Indent(&out, b, "    ", "  "); err != nil {
		return b
	}
	return out.Bytes()
}

// TestGoldenCases_AreTheGatewaysAnswers: every golden case of the two
// skills is what the gateway answers to its request, in its state.
func TestGoldenCases_AreTheGatewaysAnswers(t *testing.T) {
	want := map[string]bool{}
	for _, tool := range []string{"repo-read", "patch-proposal"} {
		ents, _ := os.ReadDir(filepath.Join("../../registry/tools", tool, "contract-tests/cases"))
		for _, e := range ents {
			want[tool+"/"+strings.TrimSuffix(e.Name(), ".json")] = true
		}
	}
	for _, k := range goldenCases {
		delete(want, k.tool+"/"+k.name)
		t.Run(k.name, func(t *testing.T) {
			g := newGoldenFixture(t, k)
			body := k.body(g)
			status, answer := g.call(k.op, body)
			reqBody, _ := json.Marshal(body)
			var doc caseDoc
			doc.Description, doc.OperationID = k.description, k.op
			doc.Request.Headers = map[string]string{"Authorization": "Bearer " + placeholderGrant}
			doc.Request.Body = reqBody
			doc.Response.Status, doc.Response.Body = status, answer
			if *update {
				out, err := json.MarshalIndent(doc, "", "  ")
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(caseFile(k), append(out, '\n'), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			b, err := os.ReadFile(caseFile(k))
			if err != nil {
				t.Fatalf("%v (write it with go test ./pkg/gateway -run GoldenCases -update)", err)
			}
			var have caseDoc
			if err := json.Unmarshal(b, &have); err != nil {
				t.Fatal(err)
			}
			if !jsonEqual(have.Request.Body, reqBody) || have.Response.Status != status || !jsonEqual(have.Response.Body, answer) {
				t.Fatalf("%s is not the gateway's transcript (go test ./pkg/gateway -run GoldenCases -update):\nrequest %s\nanswer %d %s\nfile    %d %s",
					caseFile(k), reqBody, status, answer, have.Response.Status, have.Response.Body)
			}
		})
	}
	if len(want) > 0 && !*update {
		t.Errorf("golden cases without a gateway scenario: %v", want)
	}
}

func jsonEqual(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return bytes.Equal(xa, ya)
}

// TestGoldenCases_GeneratedClients drives the clients dome gen makes of
// both skills (Go, TypeScript, Python: those whose toolchain is here)
// against the gateway: the contract test of each skill with the gateway in
// place of the mock server.
func TestGoldenCases_GeneratedClients(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the generated clients")
	}
	for _, tool := range []string{"repo-read", "patch-proposal"} {
		t.Run(tool, func(t *testing.T) {
			reg, tr, clients, g := generate(t, tool)
			cases, err := contracttest.LoadCases(reg, tr)
			if err != nil {
				t.Fatal(err)
			}
			pr, _ := reg.ProfileAt(tool, "default", tr.Pin)
			filtered, err := g.Filter(tr, pr)
			if err != nil {
				t.Fatal(err)
			}
			byName := map[string]goldenCase{}
			for _, k := range goldenCases {
				if k.tool == tool {
					byName[k.name] = k
				}
			}
			opts := toolchains(t)
			opts.Server = func(name string) (http.Handler, error) {
				k, ok := byName[name]
				if !ok {
					return nil, fmt.Errorf("no gateway scenario for case %s", name)
				}
				return newGoldenFixture(t, k).handler(), nil
			}
			rep, err := contracttest.Run(context.Background(), opts, tool, "default", filtered, cases, clients)
			if err != nil {
				t.Fatal(err)
			}
			ran := 0
			for _, c := range rep.Checks {
				if strings.HasPrefix(c.Name, "golden cases against the server") && c.Status == contracttest.Pass {
					ran++
				}
			}
			if !rep.OK() || ran == 0 {
				var b strings.Builder
				for _, c := range rep.Cases {
					fmt.Fprintf(&b, "case %s %s %v\n", c.Name, c.Status, c.Problems)
				}
				for _, c := range rep.Checks {
					fmt.Fprintf(&b, "%s %s %s %v\n", c.Language, c.Name, c.Status, c.Problems)
				}
				t.Fatalf("contract test of %s against the gateway:\n%s", tool, b.String())
			}
		})
	}
}

// generate commits the repository's registry and generator bundles into a
// fresh repository and generates tool's default-profile clients.
func generate(t *testing.T, tool string) (*registry.Registry, *registry.ToolResolution, []*codegen.Client, *codegen.Generator) {
	t.Helper()
	r := gittest.New(t)
	files := map[string]string{}
	for _, top := range []string{"registry/tools", "generators"} {
		base := filepath.Join("../..", filepath.FromSlash(top))
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
	r.Write(files)
	r.Commit("registry")
	repo, err := gitstore.Open(r.Dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { repo.Close() })
	reg := registry.New(repo)
	g := &codegen.Generator{Reg: reg, DomeVersion: "test"}
	ctx := context.Background()
	tr, err := reg.ResolveTool(ctx, registry.Ref{ID: tool, Rev: "HEAD"}, registry.PinOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pr, err := reg.ProfileAt(tool, "default", tr.Pin)
	if err != nil {
		t.Fatal(err)
	}
	var jobs []codegen.Job
	for _, l := range codegen.Languages {
		jobs = append(jobs, codegen.Job{Tool: tr, Profile: pr, Language: l})
	}
	clients, err := g.GenerateAll(ctx, jobs, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	return reg, tr, clients, g
}

// toolchains finds go, python3, node and the repository's tsc; under
// CI=true a missing one fails its check.
func toolchains(t *testing.T) contracttest.Options {
	look := func(n string) string { p, _ := exec.LookPath(n); return p }
	o := contracttest.Options{Go: look("go"), Python: look("python3"), Node: look("node"), CI: os.Getenv("CI") == "true", Env: os.Environ()}
	if p, _ := filepath.Abs("../../contract-tests/ts/node_modules/.bin/tsc"); fileExists(p) {
		o.TSC = p
	} else if p := os.Getenv("DOME_TSC"); p != "" {
		o.TSC = p
	}
	return o
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }
