package gateway_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dome-registry/dome/internal/runtest"
	"github.com/dome-registry/dome/pkg/gateway"
	"github.com/dome-registry/dome/pkg/grant"
	"github.com/dome-registry/dome/pkg/stack"
)

func callErr(t *testing.T, err error) *gateway.CallError {
	t.Helper()
	var ce *gateway.CallError
	if !errors.As(err, &ce) {
		t.Fatalf("want a gateway error answer, got %v", err)
	}
	return ce
}

func wantRefusal(t *testing.T, err error, status int, code, reason string) {
	t.Helper()
	ce := callErr(t, err)
	if ce.Status != status || ce.Info.Code != code || ce.Info.Details["reason"] != reason {
		t.Fatalf("got %d %s %q (%s), want %d %s %q", ce.Status, ce.Info.Code, ce.Info.Details["reason"], ce.Info.Message, status, code, reason)
	}
}

func TestReads(t *testing.T) {
	f := runtest.New(t, runtest.Options{})
	a := f.Attempt("docs", 1)
	_, c := f.Serve(a, f.Issue(a, runtest.IssueOptions{}), nil)
	ctx := context.Background()

	fc, err := c.ReadFile(ctx, gateway.ReadFileRequest{Path: "README.md"})
	if err != nil || fc.Content != runtest.GreetFiles["README.md"] || fc.Encoding != "utf-8" || fc.Truncated || fc.Size != 24 {
		t.Fatalf("read_file: %+v %v", fc, err)
	}
	two := int64(2)
	fc, err = c.ReadFile(ctx, gateway.ReadFileRequest{Path: "README.md", Offset: &two, MaxBytes: &two})
	if err != nil || fc.Content != "gr" || !fc.Truncated {
		t.Fatalf("read_file window: %+v %v", fc, err)
	}
	_, err = c.ReadFile(ctx, gateway.ReadFileRequest{Path: "deploy/prod.pem"})
	wantRefusal(t, err, 403, gateway.CodePermissionDenied, "PATH_DENIED")
	_, err = c.ReadFile(ctx, gateway.ReadFileRequest{Path: "nope.txt"})
	wantRefusal(t, err, 404, gateway.CodeNotFound, "")
	_, err = c.ReadFile(ctx, gateway.ReadFileRequest{Path: "docs/../README.md"})
	wantRefusal(t, err, 400, gateway.CodeInvalidArgument, "")
	_, err = c.ReadFile(ctx, gateway.ReadFileRequest{Path: ".git/config"})
	wantRefusal(t, err, 403, gateway.CodePermissionDenied, "PATH_DENIED")

	ls, err := c.ListTree(ctx, gateway.ListTreeRequest{Recursive: true})
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, e := range ls.Entries {
		paths = append(paths, e.Type+":"+e.Path)
	}
	if got := strings.Join(paths, " "); got != "tree:deploy blob:docs/guide.md blob:README.md tree:docs blob:go.mod tree:greet blob:greet/greet.go" &&
		got != "blob:README.md tree:deploy tree:docs blob:docs/guide.md blob:go.mod tree:greet blob:greet/greet.go" {
		t.Fatalf("list_tree: %s", got)
	}
	var gr gateway.GrepResult
	if err := c.Call(ctx, "grep", gateway.GrepRequest{Pattern: "KEY|Hello"}, &gr); err != nil {
		t.Fatal(err)
	}
	if len(gr.Matches) != 4 || gr.Matches[0].Path != "docs/guide.md" || gr.Matches[2].Path != "greet/greet.go" || gr.Matches[2].Line != 4 {
		t.Fatalf("grep (the .pem file must not be searched): %+v", gr)
	}
	br, err := c.GetBaseRef(ctx)
	if err != nil || br.BaseRef != f.Base || br.RunID != "run-1" {
		t.Fatalf("get_base_ref: %+v %v", br, err)
	}
	var ds gateway.DiffStats
	err = c.Call(ctx, "get_diff_stats", gateway.DiffStatsRequest{ToRef: strings.Repeat("1", 40)}, &ds)
	wantRefusal(t, err, 404, gateway.CodeNotFound, "")
	if err := c.Call(ctx, "get_diff_stats", gateway.DiffStatsRequest{ToRef: f.Base}, &ds); err != nil || len(ds.Files) != 0 {
		t.Fatalf("diff stats against itself: %+v %v", ds, err)
	}
	if err := c.Call(ctx, "nope", struct{}{}, nil); err == nil {
		t.Fatal("an unknown operation answered")
	}
}

func TestGrantRefusals(t *testing.T) {
	f := runtest.New(t, runtest.Options{})
	ctx := context.Background()
	a := f.Attempt("docs", 1)
	b := f.Attempt("tests", 1)
	tokA, tokB := f.Issue(a, runtest.IssueOptions{}), f.Issue(b, runtest.IssueOptions{})
	_, c := f.Serve(a, nil, nil)
	_, err := c.ReadFile(ctx, gateway.ReadFileRequest{Path: "README.md"})
	wantRefusal(t, err, 401, gateway.CodeUnauthenticated, "MALFORMED")
	// Another worker's grant on this worker's socket.
	_, cb := f.Serve(a, tokB, nil)
	_, err = cb.ReadFile(ctx, gateway.ReadFileRequest{Path: "README.md"})
	wantRefusal(t, err, 401, gateway.CodeUnauthenticated, "WRONG_WORKER")
	// A grant past its lifetime.
	_, ca := f.Serve(a, tokA, nil)
	f.SetNow(runtest.T0.Add(2 * time.Hour))
	_, err = ca.ReadFile(ctx, gateway.ReadFileRequest{Path: "README.md"})
	wantRefusal(t, err, 401, gateway.CodeUnauthenticated, "EXPIRED")
	f.SetNow(runtest.T0.Add(time.Minute))
	// A method the grant does not hold: a read-only grant writing.
	ro := f.Attempt("review", 1)
	_, cr := f.Serve(ro, f.Issue(ro, runtest.IssueOptions{Caps: []string{"repo.read"}}), nil)
	_, err = cr.SubmitPatch(ctx, gateway.SubmitPatchRequest{IdempotencyKey: ro.NodeExecutionID + ":1", NodeExecutionID: ro.NodeExecutionID,
		Proposal: f.Proposal(map[string]string{"README.md": "x\n"}, "p")})
	wantRefusal(t, err, 403, gateway.CodePermissionDenied, "METHOD_NOT_GRANTED")
	// Reads outside narrowed roots; a listing shows only what may be read.
	nr := f.Attempt("narrow", 1)
	_, cn := f.Serve(nr, f.Issue(nr, runtest.IssueOptions{Narrow: &grant.Template{IO: &grant.IOTemplate{ReadRoots: []string{"docs"}}}}), nil)
	_, err = cn.ReadFile(ctx, gateway.ReadFileRequest{Path: "README.md"})
	wantRefusal(t, err, 403, gateway.CodePermissionDenied, "PATH_OUTSIDE_ROOTS")
	ls, err := cn.ListTree(ctx, gateway.ListTreeRequest{Recursive: true})
	if err != nil || len(ls.Entries) != 2 || ls.Entries[0].Path != "docs" || ls.Entries[1].Path != "docs/guide.md" {
		t.Fatalf("narrowed listing: %+v %v", ls, err)
	}
	g := "greet"
	_, err = cn.ListTree(ctx, gateway.ListTreeRequest{Path: &g})
	wantRefusal(t, err, 403, gateway.CodePermissionDenied, "PATH_OUTSIDE_ROOTS")
}

func TestBudgetAndFlood(t *testing.T) {
	f := runtest.New(t, runtest.Options{MaxRefusals: 5})
	ctx := context.Background()
	a := f.Attempt("flood", 1)
	three := int64(3)
	var flooded atomic.Int32
	s, c := f.Serve(a, f.Issue(a, runtest.IssueOptions{Narrow: &grant.Template{Budgets: &grant.BudgetsTemplate{MaxCalls: &three}}}), func() { flooded.Add(1) })
	// A refused call is not charged: the budget still allows three.
	if _, err := c.ReadFile(ctx, gateway.ReadFileRequest{Path: "deploy/prod.pem"}); err == nil {
		t.Fatal("denied read answered")
	}
	for i := 0; i < 3; i++ {
		if _, err := c.ReadFile(ctx, gateway.ReadFileRequest{Path: "README.md"}); err != nil {
			t.Fatalf("call %d: %v", i+1, err)
		}
	}
	_, err := c.ReadFile(ctx, gateway.ReadFileRequest{Path: "README.md"})
	wantRefusal(t, err, 429, gateway.CodeBudgetExhausted, "BUDGET_EXHAUSTED")
	for i := 0; i < 10; i++ {
		c.ReadFile(ctx, gateway.ReadFileRequest{Path: "README.md"})
	}
	_, err = c.ReadFile(ctx, gateway.ReadFileRequest{Path: "README.md"})
	wantRefusal(t, err, 429, gateway.CodeBudgetExhausted, "CALL_FLOOD")
	time.Sleep(50 * time.Millisecond)
	if flooded.Load() != 1 {
		t.Fatalf("onFlood called %d times", flooded.Load())
	}
	sum, err := s.Close()
	if err != nil {
		t.Fatal(err)
	}
	if sum.Calls != 16 || sum.Charged != 3 || !sum.Flooded {
		t.Fatalf("summary %+v", sum)
	}
	// Every call is in the ledger: listed, or counted once flooded.
	listed, omitted := 0, 0
	for _, e := range f.Events(gateway.TopicCalls) {
		var p gateway.CallsPayload
		json.Unmarshal(e.Payload, &p)
		listed += len(p.Calls)
		omitted += p.Omitted
	}
	if listed+omitted != 16 || omitted == 0 {
		t.Fatalf("ledger: %d listed, %d omitted", listed, omitted)
	}
}

func TestSubmitPatch(t *testing.T) {
	f := runtest.New(t, runtest.Options{})
	ctx := context.Background()
	a := f.Attempt("docs", 1)
	tok := f.Issue(a, runtest.IssueOptions{})
	s, c := f.Serve(a, tok, nil)
	doc := f.Proposal(map[string]string{"README.md": "# greet\n\nA tiny module that greets.\n"}, "worker-picked-id")
	req := gateway.SubmitPatchRequest{IdempotencyKey: a.NodeExecutionID + ":submit_patch:1", NodeExecutionID: a.NodeExecutionID, Proposal: doc}
	// Keys not rooted at the attempt are refused before anything is spent.
	bad := req
	bad.IdempotencyKey = "ne-other:submit_patch:1"
	_, err := c.SubmitPatch(ctx, bad)
	wantRefusal(t, err, 400, gateway.CodeInvalidArgument, "")
	res, err := c.SubmitPatch(ctx, req)
	if err != nil || res.Status != gateway.StatusSubmitted || res.ProposalID != "docs.1" || res.Replayed {
		t.Fatalf("submit: %+v %v", res, err)
	}
	// The stack holds it, with the coordinator's facts, not the worker's.
	f.SR.Do(func(r *stack.Run) error {
		q := r.State.Proposals["docs.1"]
		if q == nil || q.WorkerID != a.WorkerID || q.IdempotencyKey != req.IdempotencyKey {
			t.Fatalf("stack proposal %+v", q)
		}
		return nil
	})
	lp, err := stack.LoadProposal(f.Repo, f.Layout, &f.Run.State, "docs.1")
	if err != nil {
		t.Fatal(err)
	}
	m := lp.Proposal.WorkerRunMeta
	if m.RunID != "run-1" || m.WaveID != "wave-1" || m.NodeID != "docs" || m.NodeExecutionID != a.NodeExecutionID || !strings.HasPrefix(m.ToolProfileID, "tp-") ||
		m.BudgetsUsed.Calls != 1 {
		t.Fatalf("worker_run_meta %+v", m)
	}
	// The same request again: the first answer, replayed.
	again, err := c.SubmitPatch(ctx, req)
	if err != nil || !again.Replayed || again.ProposalID != "docs.1" || again.Status != gateway.StatusSubmitted {
		t.Fatalf("replay: %+v %v", again, err)
	}
	// The same key for another request.
	other := req
	other.Proposal = f.Proposal(map[string]string{"README.md": "something else\n"}, "x")
	_, err = c.SubmitPatch(ctx, other)
	wantRefusal(t, err, 409, gateway.CodeIdempotencyConflict, "")
	// A new key: the single-use grant is spent.
	other.IdempotencyKey = a.NodeExecutionID + ":submit_patch:2"
	_, err = c.SubmitPatch(ctx, other)
	wantRefusal(t, err, 401, gateway.CodeUnauthenticated, "REPLAYED")
	sum, err := s.Close()
	if err != nil || len(sum.Proposals) != 1 || sum.Proposals[0].Status != gateway.StatusSubmitted {
		t.Fatalf("summary %+v %v", sum, err)
	}
	// Each write is its own event, recorded before its answer; a restarted
	// gateway answers the same request from them.
	writes := f.Events(gateway.TopicCall)
	if len(writes) != 3 { // submitted, conflict, spent grant (the invalid key is recorded with the reads)
		t.Fatalf("%d gateway.call events", len(writes))
	}
	g2, err := gateway.New(gateway.Config{Repo: f.Repo, Run: f.SR, Verifier: f.Verifier, Meter: f.Meter, Now: f.Clock})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range writes {
		if err := g2.Restore(e); err != nil {
			t.Fatal(err)
		}
	}
	s2, err := g2.Open(a, nil)
	if err != nil {
		t.Fatal(err)
	}
	sock := t.TempDir() + "/g2.sock"
	if err := s2.Listen(sock); err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	res, err = gateway.NewUnixClient(sock, tok).SubmitPatch(ctx, req)
	if err != nil || !res.Replayed || res.ProposalID != "docs.1" {
		t.Fatalf("replay after restart: %+v %v", res, err)
	}
}

func TestSubmitPatch_OutsideWriteRootsSpendsNothing(t *testing.T) {
	f := runtest.New(t, runtest.Options{})
	ctx := context.Background()
	a := f.Attempt("docs", 1)
	tok := f.Issue(a, runtest.IssueOptions{Narrow: &grant.Template{IO: &grant.IOTemplate{WriteRoots: []string{"docs"}}}})
	_, c := f.Serve(a, tok, nil)
	outside := f.Proposal(map[string]string{"go.mod": "module evil\n"}, "p")
	_, err := c.SubmitPatch(ctx, gateway.SubmitPatchRequest{IdempotencyKey: a.NodeExecutionID + ":1", NodeExecutionID: a.NodeExecutionID, Proposal: outside})
	wantRefusal(t, err, 403, gateway.CodePermissionDenied, "PATH_OUTSIDE_ROOTS")
	inside := f.Proposal(map[string]string{"docs/guide.md": "# Guide\n\nUse greet.Hello(name).\n"}, "p")
	res, err := c.SubmitPatch(ctx, gateway.SubmitPatchRequest{IdempotencyKey: a.NodeExecutionID + ":2", NodeExecutionID: a.NodeExecutionID, Proposal: inside})
	if err != nil || res.Status != gateway.StatusSubmitted {
		t.Fatalf("inside the roots: %+v %v", res, err)
	}
	// The stack's pre-filter still decides: a forbidden path is rejected.
	b := f.Attempt("sneaky", 1)
	_, cb := f.Serve(b, f.Issue(b, runtest.IssueOptions{}), nil)
	res, err = cb.SubmitPatch(ctx, gateway.SubmitPatchRequest{IdempotencyKey: b.NodeExecutionID + ":1", NodeExecutionID: b.NodeExecutionID,
		Proposal: f.Proposal(map[string]string{"policy/x.json": "{}\n"}, "p")})
	if err != nil || res.Status != gateway.StatusRejected || res.ReasonCode != stack.ReasonForbiddenPath {
		t.Fatalf("forbidden path: %+v %v", res, err)
	}
}

func TestSubmitMetadata(t *testing.T) {
	f := runtest.New(t, runtest.Options{})
	ctx := context.Background()
	a := f.Attempt("docs", 1)
	_, c := f.Serve(a, f.Issue(a, runtest.IssueOptions{NotSingle: true}), nil)
	meta := gateway.SubmitMetadataRequest{IdempotencyKey: a.NodeExecutionID + ":meta:1", NodeExecutionID: a.NodeExecutionID, ProposalID: "docs.1",
		Meta: gateway.ProposalMeta{IntentTags: []string{"docs"}, Evidence: []string{"sha256:" + strings.Repeat("5", 64)}}}
	err := c.Call(ctx, "submit_metadata", meta, nil)
	wantRefusal(t, err, 404, gateway.CodeNotFound, "")
	if _, err := c.SubmitPatch(ctx, gateway.SubmitPatchRequest{IdempotencyKey: a.NodeExecutionID + ":1", NodeExecutionID: a.NodeExecutionID,
		Proposal: f.Proposal(map[string]string{"README.md": "hi\n"}, "p")}); err != nil {
		t.Fatal(err)
	}
	var res gateway.SubmitResult
	if err := c.Call(ctx, "submit_metadata", meta, &res); err != nil || res.ProposalID != "docs.1" || res.Status != "submitted" {
		t.Fatalf("%+v %v", res, err)
	}
}

func TestRequestsAreBounded(t *testing.T) {
	f := runtest.New(t, runtest.Options{})
	ctx := context.Background()
	a := f.Attempt("docs", 1)
	_, c := f.Serve(a, f.Issue(a, runtest.IssueOptions{}), nil)
	huge := strings.Repeat("a", gateway.MaxReadRequestBytes)
	_, err := c.ReadFile(ctx, gateway.ReadFileRequest{Path: huge})
	wantRefusal(t, err, 413, gateway.CodePayloadTooLarge, "")
	err = c.Call(ctx, "read_file", json.RawMessage(`{"path":"README.md","path":"x"}`), nil)
	wantRefusal(t, err, 400, gateway.CodeInvalidArgument, "")
	err = c.Call(ctx, "read_file", map[string]any{"path": "README.md", "follow": true}, nil)
	wantRefusal(t, err, 400, gateway.CodeInvalidArgument, "")
	err = c.Call(ctx, "grep", gateway.GrepRequest{Pattern: "("}, nil)
	wantRefusal(t, err, 400, gateway.CodeInvalidArgument, "")
}
