package grant_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/dome-registry/dome/internal/grantstoretest"
	"github.com/dome-registry/dome/pkg/artifact"
	"github.com/dome-registry/dome/pkg/canonical"
	"github.com/dome-registry/dome/pkg/grant"
	"github.com/dome-registry/dome/pkg/signing"
)

func verifier(t testing.TB, f *fixture, s grant.Store) *grant.Verifier {
	v, err := grant.NewVerifier(f.trusted, grant.Options{Store: s})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestIssue_Deterministic(t *testing.T) {
	f := newFixture(t)
	a, g := f.issue(t, grant.Binding{})
	b, _ := f.issue(t, grant.Binding{})
	if !bytes.Equal(a, b) {
		t.Fatal("issuing twice with the same inputs gave different bytes")
	}
	c, err := canonical.Transform(a)
	if err != nil || !bytes.Equal(c, a) {
		t.Fatal("a grant is not its canonical bytes")
	}
	// Any artifact reader can open it.
	if _, err := artifact.Open(a, artifact.OpenOptions{Kind: grant.ArtifactKind, Trusted: f.trusted, RequireSignature: true}); err != nil {
		t.Fatalf("artifact.Open: %v", err)
	}
	if g.Payload.ExpiresAt != "2026-01-02T03:19:05Z" || g.Header.ObjectID != "jti-0001" || g.Header.InputsHash == "" {
		t.Fatalf("grant: %+v %+v", g.Payload, g.Header)
	}
}

func TestVerify_Order(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	tok, _ := f.issue(t, grant.Binding{})
	now := t0.Add(time.Minute)
	cases := []struct {
		name string
		mod  func(r *grant.Request)
		code grant.Code
	}{
		{"ok", func(r *grant.Request) {}, ""},
		{"not yet valid", func(r *grant.Request) { r.Now = t0.Add(-31 * time.Second) }, grant.CodeNotYetValid},
		{"within the skew", func(r *grant.Request) { r.Now = t0.Add(-29 * time.Second) }, ""},
		{"expired", func(r *grant.Request) { r.Now = t0.Add(15*time.Minute + 30*time.Second) }, grant.CodeExpired},
		{"expired but within the skew", func(r *grant.Request) { r.Now = t0.Add(15*time.Minute + 29*time.Second) }, ""},
		{"wrong audience", func(r *grant.Request) { r.Audience = "coordinator" }, grant.CodeWrongAudience},
		{"wrong run", func(r *grant.Request) { r.RunID = "run-2" }, grant.CodeWrongRun},
		{"wrong wave", func(r *grant.Request) { r.WaveID = "wave-2" }, grant.CodeWrongWave},
		{"wrong worker", func(r *grant.Request) { r.WorkerID = "worker-8" }, grant.CodeWrongWorker},
		{"no worker", func(r *grant.Request) { r.WorkerID = "" }, grant.CodeWrongWorker},
		{"wrong node execution", func(r *grant.Request) { r.NodeExecutionID = "ne-2" }, grant.CodeWrongNodeExecution},
		{"expired and wrong run: time first", func(r *grant.Request) { r.Now = t0.Add(time.Hour); r.RunID = "x" }, grant.CodeExpired},
		{"method not granted", func(r *grant.Request) { r.Call = &grant.Call{Method: "repo-admin/promote"} }, grant.CodeMethodNotGranted},
		{"read inside the roots", func(r *grant.Request) {
			r.Call = &grant.Call{Method: "repo-read/read_file", ReadPaths: []string{"src/main.go"}}
		}, ""},
		{"read a denied glob", func(r *grant.Request) {
			r.Call = &grant.Call{Method: "repo-read/read_file", ReadPaths: []string{"deploy/prod.pem"}}
		}, grant.CodePathDenied},
		{"read inside .git", func(r *grant.Request) {
			r.Call = &grant.Call{Method: "repo-read/read_file", ReadPaths: []string{".git/config"}}
		}, grant.CodePathDenied},
		{"read escaping the tree", func(r *grant.Request) {
			r.Call = &grant.Call{Method: "repo-read/read_file", ReadPaths: []string{"../etc/passwd"}}
		}, grant.CodePathOutsideRoots},
		{"read an absolute path", func(r *grant.Request) {
			r.Call = &grant.Call{Method: "repo-read/read_file", ReadPaths: []string{"/etc/passwd"}}
		}, grant.CodePathOutsideRoots},
		{"write outside the write roots", func(r *grant.Request) {
			r.Call = &grant.Call{Method: "patch-proposal/submit_patch", WritePaths: []string{"../src/main.go"}}
		}, grant.CodePathOutsideRoots},
		{"write inside the write roots", func(r *grant.Request) {
			r.Call = &grant.Call{Method: "patch-proposal/submit_patch", WritePaths: []string{"ops/runs/run-1/p.json"}}
		}, ""},
		{"host not allowed", func(r *grant.Request) {
			r.Call = &grant.Call{Method: "repo-read/read_file", Hosts: []string{"example.com"}}
		}, grant.CodeHostNotAllowed},
		{"budget exhausted", func(r *grant.Request) {
			r.Call = &grant.Call{Method: "patch-proposal/submit_patch", Usage: &grant.Usage{Calls: 3, CallsByCapability: map[string]int64{"repo.propose": 20}}}
		}, grant.CodeBudgetExhausted},
		{"total budget exhausted", func(r *grant.Request) {
			r.Call = &grant.Call{Method: "repo-read/grep", Usage: &grant.Usage{Calls: 1020}}
		}, grant.CodeBudgetExhausted},
		{"wall time exhausted", func(r *grant.Request) {
			r.Call = &grant.Call{Method: "repo-read/grep", Usage: &grant.Usage{Calls: 1, Started: r.Now.Add(-301 * time.Second)}}
		}, grant.CodeBudgetExhausted},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			store := grantstoretest.NewMemStore()
			v := verifier(t, f, store)
			r := req(now)
			c.mod(&r)
			_, err := v.Verify(ctx, tok, r)
			if grant.CodeOf(err) != c.code {
				t.Fatalf("Verify = %v, want %q", err, c.code)
			}
			if c.code != "" && c.code.Input() {
				t.Errorf("%s is a failed verification, not bad input", c.code)
			}
			// Nothing is ever spent by a failed verification, nor by Verify.
			_, err = v.Spend(ctx, tok, r)
			if c.code != "" && grant.CodeOf(err) != c.code {
				t.Fatalf("Spend = %v, want %q", err, c.code)
			}
			st, _ := store.Lookup(ctx, "coordinator-1", "jti-0001", "")
			if (st.Spent != nil) != (c.code == "") {
				t.Fatalf("spent = %v after %v", st.Spent != nil, err)
			}
		})
	}
}

func TestSpend_ReplayAndRevoke(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	tok, g := f.issue(t, grant.Binding{})
	store := grantstoretest.NewMemStore()
	v := verifier(t, f, store)
	now := t0.Add(time.Minute)
	if _, err := v.Spend(ctx, tok, req(now)); err != nil {
		t.Fatal(err)
	}
	if _, err := v.Spend(ctx, tok, req(now)); grant.CodeOf(err) != grant.CodeReplayed {
		t.Fatalf("second spend: %v", err)
	}
	if _, err := v.Verify(ctx, tok, req(now)); grant.CodeOf(err) != grant.CodeReplayed {
		t.Fatalf("verify after spend: %v", err)
	}
	// Revocation is checked before replay.
	if err := store.Revoke(ctx, grant.Revocation{Issuer: "coordinator-1", Kind: grant.RevokeProfile, Value: g.Payload.ProfileID, Until: t0.Add(time.Hour), RevokedAt: now}); err != nil {
		t.Fatal(err)
	}
	if _, err := v.Verify(ctx, tok, req(now)); grant.CodeOf(err) != grant.CodeRevoked {
		t.Fatalf("verify after revoke: %v", err)
	}
	// A new grant of the same profile (a new jti) is revoked too.
	tok2, _ := f.issue(t, grant.Binding{RunID: "run-1", WaveID: "wave-1", WorkerID: "worker-7", NodeExecutionID: "ne-1", Issuer: "coordinator-1", JTI: "jti-0002"})
	if _, err := v.Spend(ctx, tok2, req(now)); grant.CodeOf(err) != grant.CodeRevoked {
		t.Fatalf("spend of a revoked profile: %v", err)
	}
	// Once the revocation's until passes, it no longer matters (the grant
	// expired long before).
	if _, err := v.Verify(ctx, tok2, req(t0.Add(2*time.Hour))); grant.CodeOf(err) != grant.CodeExpired {
		t.Fatalf("much later: %v", err)
	}
}

func TestAuthorize_SpendsOnFirstWrite(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	tok, _ := f.issue(t, grant.Binding{})
	store := grantstoretest.NewMemStore()
	meter := grant.NewMeter()
	v, _ := grant.NewVerifier(f.trusted, grant.Options{Store: store, Meter: meter, CacheSize: 16})
	now := t0.Add(time.Minute)
	call := func(method string) error {
		r := req(now)
		r.Call = &grant.Call{Method: method}
		_, err := v.Authorize(ctx, tok, r)
		return err
	}
	for i := 0; i < 3; i++ {
		if err := call("repo-read/read_file"); err != nil {
			t.Fatalf("read %d: %v", i, err)
		}
	}
	if err := call("patch-proposal/submit_patch"); err != nil {
		t.Fatal(err)
	}
	if err := call("patch-proposal/submit_metadata"); grant.CodeOf(err) != grant.CodeReplayed {
		t.Fatalf("second write: %v", err)
	}
	if err := call("repo-read/read_file"); grant.CodeOf(err) != grant.CodeReplayed {
		t.Fatalf("read after the spend: %v", err)
	}
	if u := meter.Usage(mustParse(t, tok)); u.Calls != 4 || u.CallsByCapability["repo.read"] != 3 {
		t.Fatalf("meter: %+v (refused calls must not be charged)", u)
	}
}

func TestMeter_Budget(t *testing.T) {
	f := newFixture(t)
	d, _ := grant.Derive(f.workerSources(), grant.Need{Capabilities: []string{"repo.read"}, Role: "worker", Narrow: &grant.Template{Budgets: &grant.BudgetsTemplate{MaxCalls: ptr(3)}}})
	tok, g, err := grant.Issue(d, grant.Binding{RunID: "run-1", WaveID: "wave-1", Issuer: "c", IssuedAt: t0, JTI: "m1"}, f.key, nil)
	if err != nil {
		t.Fatal(err)
	}
	meter := grant.NewMeter()
	v, _ := grant.NewVerifier(f.trusted, grant.Options{Meter: meter})
	r := req(t0)
	r.Call = &grant.Call{Method: "repo-read/grep"}
	for i := 0; i < 3; i++ {
		if _, err := v.Authorize(context.Background(), tok, r); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := v.Authorize(context.Background(), tok, r); grant.CodeOf(err) != grant.CodeBudgetExhausted {
		t.Fatalf("fourth call: %v", err)
	}
	if meter.Prune(t0.Add(time.Hour)) != 1 || meter.Usage(g).Calls != 0 {
		t.Fatal("prune")
	}
}

func ptr(n int64) *int64 { return &n }

func mustParse(t testing.TB, tok []byte) *grant.Grant {
	g, err := grant.Parse(tok)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func TestVerify_BadKeysAndSignatures(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	tok, _ := f.issue(t, grant.Binding{})
	now := t0.Add(time.Minute)
	v := verifier(t, f, nil)
	// Signed by a key nobody trusts under a trusted kid: bad signature.
	d, _ := grant.Derive(f.workerSources(), grant.Need{NodeID: "node-1", Capabilities: []string{"repo.read", "repo.propose"}, Role: "worker"})
	forged, _, _ := grant.Issue(d, grant.Binding{RunID: "run-1", WaveID: "wave-1", WorkerID: "worker-7", NodeExecutionID: "ne-1", Issuer: "coordinator-1", IssuedAt: t0, JTI: "jti-0001"}, f.other, nil)
	if _, err := v.Verify(ctx, forged, req(now)); grant.CodeOf(err) != grant.CodeBadSignature {
		t.Fatalf("forged: %v", err)
	}
	// An unknown kid.
	unknown := f.other
	unknown.KID = "stranger"
	u, _, _ := grant.Issue(d, grant.Binding{RunID: "run-1", WaveID: "wave-1", Issuer: "coordinator-1", IssuedAt: t0, JTI: "j"}, unknown, nil)
	if _, err := v.Verify(ctx, u, req(now)); grant.CodeOf(err) != grant.CodeUnknownKeyID {
		t.Fatalf("unknown kid: %v", err)
	}
	// Signatures of the wrong length, and a well-formed one of the wrong bytes.
	for _, sig := range []string{"base64:AAAA", "base64:" + strings.Repeat("A", 87) + "=", "base64:" + strings.Repeat("A", 86) + "==", strings.Repeat("A", 95), "base64:" + strings.Repeat("A", 88)} {
		bad := replaceHeader(t, tok, "signature", sig)
		if _, err := v.Verify(ctx, bad, req(now)); grant.CodeOf(err) != grant.CodeBadSignature {
			t.Errorf("signature %q: %v", sig, err)
		}
	}
	// A key of the wrong length never enters a trusted key set.
	if _, err := signing.NewTrustedKeys(signing.PublicKey{KID: "k", Alg: "ed25519", Key: make([]byte, 31)}); err == nil {
		t.Error("a 31-byte key was trusted")
	}
}

func TestVerify_AnotherKindsSignature(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	v := verifier(t, f, nil)
	now := t0.Add(time.Minute)
	tok, _ := f.issue(t, grant.Binding{})
	// A stack plan signed by the same key, presented as a grant.
	plan, _, err := artifact.SealValue(artifact.Header{ArtifactKind: "dome.stack_plan/v1", Version: "1", ObjectID: "p", CreatedAt: "2026-01-02T03:04:05Z", Producer: "x"}, map[string]any{"a": 1}, &f.key)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := v.Verify(ctx, plan, req(now)); grant.CodeOf(err) != grant.CodeWrongKind {
		t.Fatalf("a stack plan: %v", err)
	}
	// The grant's own header, with the signature the same key made over
	// this very header bytes as another kind: the PAE binds the kind.
	var doc struct{ Header artifact.Header }
	json.Unmarshal(tok, &doc)
	signed, _ := artifact.SigningPayload(doc.Header)
	other, err := signing.Sign(f.key, "dome.stack_plan/v1", signed)
	if err != nil {
		t.Fatal(err)
	}
	bad := replaceHeader(t, tok, "signature", other.Sig)
	if _, err := v.Verify(ctx, bad, req(now)); grant.CodeOf(err) != grant.CodeBadSignature {
		t.Fatalf("another kind's signature: %v", err)
	}
}

// replaceHeader sets one header member and returns canonical bytes.
func replaceHeader(t testing.TB, tok []byte, name, value string) []byte {
	var doc map[string]map[string]any
	if err := json.Unmarshal(tok, &doc); err != nil {
		t.Fatal(err)
	}
	doc["header"][name] = value
	b, err := canonical.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestVerify_EveryFieldTampered changes, adds or removes every member of a
// grant, one at a time: each is refused with a reason code, nothing spent.
func TestVerify_EveryFieldTampered(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	tok, _ := f.issue(t, grant.Binding{BaseRef: strings.Repeat("a", 40), RunID: "run-1", WaveID: "wave-1", WorkerID: "worker-7", NodeExecutionID: "ne-1", Issuer: "coordinator-1", JTI: "jti-0001"})
	var doc any
	dec := json.NewDecoder(bytes.NewReader(tok))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		t.Fatal(err)
	}
	store := grantstoretest.NewMemStore()
	v := verifier(t, f, store)
	now := t0.Add(time.Minute)
	n := 0
	codes := map[grant.Code]int{}
	for _, m := range mutations(doc, "") {
		b, err := canonical.Marshal(m.doc)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Equal(b, tok) {
			continue
		}
		n++
		_, err = v.Spend(ctx, b, req(now))
		code := grant.CodeOf(err)
		if code == "" {
			t.Errorf("%s: accepted", m.what)
			continue
		}
		codes[code]++
	}
	if st, _ := store.Lookup(ctx, "coordinator-1", "jti-0001", ""); st.Spent != nil {
		t.Fatal("a tampered grant was spent")
	}
	if n < 100 {
		t.Fatalf("only %d mutations", n)
	}
	t.Logf("%d mutations refused: %v", n, codes)
	// Formatting is not a grant: the wire form is the canonical bytes.
	var pretty bytes.Buffer
	json.Indent(&pretty, tok, "", "  ")
	if _, err := v.Verify(ctx, pretty.Bytes(), req(now)); grant.CodeOf(err) != grant.CodeMalformed {
		t.Fatalf("indented: %v", err)
	}
	// Duplicated members, also spelled with escapes.
	dup := bytes.Replace(tok, []byte(`"audience":"worker_runtime",`), []byte(`"audience":"worker_runtime","audience":"coordinator",`), 1)
	if _, err := v.Verify(ctx, dup, req(now)); grant.CodeOf(err) != grant.CodeMalformed {
		t.Fatalf("duplicate: %v", err)
	}
	esc := bytes.Replace(tok, []byte(`"audience":"worker_runtime",`), []byte(`"audience":"worker_runtime","audienc\u0065":"coordinator",`), 1)
	if _, err := v.Verify(ctx, esc, req(now)); grant.CodeOf(err) != grant.CodeMalformed {
		t.Fatalf("escaped duplicate: %v", err)
	}
}

type mutation struct {
	what string
	doc  any
}

// mutations returns copies of v, each with one change: every member
// removed, every value changed (strings, numbers, booleans, arrays), and an
// unknown member added to every object.
func mutations(v any, at string) []mutation {
	var out []mutation
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		add := clone(x).(map[string]any)
		add["zz_extra"] = "x"
		out = append(out, mutation{at + "+zz_extra", add})
		for _, k := range keys {
			del := clone(x).(map[string]any)
			delete(del, k)
			out = append(out, mutation{at + "/" + k + " removed", del})
			for _, m := range mutations(x[k], at+"/"+k) {
				c := clone(x).(map[string]any)
				c[k] = m.doc
				out = append(out, mutation{m.what, c})
			}
		}
	case []any:
		out = append(out, mutation{at + " emptied", []any{}})
		if len(x) > 0 {
			out = append(out, mutation{at + " +dup", append(slices.Clone(x), x[0])})
		}
		for i := range x {
			for _, m := range mutations(x[i], fmt.Sprintf("%s[%d]", at, i)) {
				c := slices.Clone(x)
				c[i] = m.doc
				out = append(out, mutation{m.what, c})
			}
		}
	case string:
		out = append(out, mutation{at + " changed", x + "x"}, mutation{at + " emptied", ""}, mutation{at + " to a number", json.Number("1")})
	case json.Number:
		out = append(out, mutation{at + " +1", json.Number(x.String() + "1")}, mutation{at + " to a string", x.String()})
	case bool:
		out = append(out, mutation{at + " flipped", !x})
	}
	return out
}

func clone(v any) any {
	switch x := v.(type) {
	case map[string]any:
		c := make(map[string]any, len(x))
		for k, e := range x {
			c[k] = clone(e)
		}
		return c
	case []any:
		c := make([]any, len(x))
		for i, e := range x {
			c[i] = clone(e)
		}
		return c
	}
	return v
}

func TestVerifier_FailsClosed(t *testing.T) {
	f := newFixture(t)
	tok, _ := f.issue(t, grant.Binding{})
	v := verifier(t, f, nil)
	for _, r := range []grant.Request{{RunID: "run-1", WaveID: "wave-1", Now: t0}, {Audience: "worker_runtime", WaveID: "wave-1", Now: t0}, {Audience: "worker_runtime", RunID: "run-1", Now: t0}, {Audience: "worker_runtime", RunID: "run-1", WaveID: "wave-1"}} {
		if _, err := v.Check(tok, r); grant.CodeOf(err) != grant.CodeBadRequest {
			t.Errorf("%+v: %v", r, err)
		}
	}
	if _, err := grant.NewVerifier(f.trusted, grant.Options{ClockSkew: time.Hour}); err == nil {
		t.Error("an hour of clock skew was accepted")
	}
	if _, err := v.Spend(context.Background(), tok, req(t0)); grant.CodeOf(err) != grant.CodeStoreFailed {
		t.Errorf("spend without a store")
	}
}
