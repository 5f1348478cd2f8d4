package stack

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dome-registry/dome/pkg/artifact"
	"github.com/dome-registry/dome/pkg/canonical"
	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/dome-registry/dome/pkg/gitstore"
	"github.com/dome-registry/dome/pkg/ledger"
	"github.com/dome-registry/dome/pkg/signing"
)

// testPolicy is the default policy with quick tiers: fast checks a file of
// the materialized head, full fails when the head has FAIL in a.txt.
func testPolicy(t *testing.T) *Policy {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(DefaultPolicyJSON(), &m); err != nil {
		t.Fatal(err)
	}
	v := m["validation"].(map[string]any)
	v["tiers"] = map[string]any{
		"fast": map[string]any{"when": "per_layer", "timeout_seconds": 30, "commands": []any{map[string]any{"name": "has-a", "argv": []any{"sh", "-c", "test -f a.txt"}}}},
		"full": map[string]any{"when": "final", "timeout_seconds": 30, "commands": []any{map[string]any{"name": "no-fail", "argv": []any{"sh", "-c", "! grep -q FAIL a.txt"}}}},
	}
	b, _ := json.Marshal(m)
	p, err := ParsePolicy("test policy", b)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestValidatePromote(t *testing.T) {
	f := newAfix(t, afixFiles())
	pa := f.diff(map[string]string{"a.txt": lines("a", 31)})
	pb := f.diff(map[string]string{"b.txt": lines("b", 31)})
	r := f.open()
	f.changePolicy(r, testPolicy(t))
	f.propose(r, "pa", pa, AtomicProposal, "a.txt")
	f.propose(r, "pb", pb, AtomicProposal, "b.txt")
	f.plan(r, "pa", "pb")
	opts := f.applyOpts()
	opts.Policy = testPolicy(t)
	if _, err := ApplyPlan(f.repo, r, opts); err != nil {
		t.Fatal(err)
	}
	head := f.ref()
	f.git.Git("update-ref", "refs/heads/main", f.base)

	// refused before validation, with the reason
	_, err := Promote(f.repo, r, PromoteOptions{ApplyOptions: opts})
	var ce *errkind.CheckError
	if !errors.As(err, &ce) || len(ce.Details) != 1 || !strings.Contains(ce.Details[0], "tier fast has not run") {
		t.Fatalf("promote before validation: %v %+v", err, ce)
	}
	if got := f.git.Git("rev-parse", "refs/heads/main"); got != f.base {
		t.Fatalf("main moved to %s", got)
	}
	env := []string{"PATH=/usr/bin:/bin"}
	vr, err := ValidateHead(context.Background(), f.repo, r, ValidateOptions{ApplyOptions: opts, Tier: "fast", Env: env, TempDir: t.TempDir()})
	if err != nil || !vr.Report.Passed || vr.Report.HeadRef != head.String() || strings.Join(vr.Report.ProposalIDs, ",") != "pa,pb" {
		t.Fatalf("validate: %+v %v", vr, err)
	}
	if vr.Report.Environment.Tools["sh"] == "" || vr.Report.Commands[0].StdoutDigest == "" {
		t.Errorf("environment %+v commands %+v", vr.Report.Environment, vr.Report.Commands)
	}
	if _, err := ValidateHead(context.Background(), f.repo, r, ValidateOptions{ApplyOptions: opts, Tier: "nope", Env: env}); !errkind.IsInput(err) {
		t.Errorf("unknown tier: %v", err)
	}
	pr, err := Promote(f.repo, r, PromoteOptions{ApplyOptions: opts})
	if err != nil || !pr.Promoted || !pr.Decision.Allowed {
		t.Fatalf("promote: %+v %v", pr, err)
	}
	kinds := map[string]int{}
	for _, e := range pr.Decision.Evidence {
		kinds[e.Kind]++
	}
	if kinds[KindApplyResult] != 2 || kinds[KindValidationReport] != 1 || kinds[KindStackPlan] != 1 {
		t.Errorf("evidence %+v", pr.Decision.Evidence)
	}
	if got := f.git.Git("rev-parse", "refs/heads/main"); got != head.String() {
		t.Fatalf("main at %s, want %s", got, head)
	}
	// again: already promoted; apply is closed
	if pr, err := Promote(f.repo, r, PromoteOptions{ApplyOptions: opts}); err != nil || !pr.Already {
		t.Fatalf("again: %+v %v", pr, err)
	}
	if _, err := ApplyPlan(f.repo, r, opts); !errkind.IsCheck(err) {
		t.Errorf("apply after promotion: %v", err)
	}
	r.Close()
	f.replayEqual()
}

// TestPromoteSigned: where the policy wants a signed promotion, promote
// without a key is refused (and says so); with one, the gate and promotion
// decisions carry a signature that verifies with the coordinator's key and
// fails with another.
func TestPromoteSigned(t *testing.T) {
	f := newAfix(t, afixFiles())
	pa := f.diff(map[string]string{"a.txt": lines("a", 31)})
	r := f.open()
	f.changePolicy(r, testPolicy(t))
	f.propose(r, "pa", pa, AtomicProposal, "a.txt")
	f.plan(r, "pa")
	opts := f.applyOpts()
	opts.Policy = testPolicy(t) // edited below, digest kept: the test's stand-in for a policy with these settings
	opts.Policy.Validation.RequiredForPromotion = map[string][]string{}
	opts.Policy.Promotion.Signature = map[string]bool{RiskLow: true, RiskMedium: true, RiskHigh: true}
	opts.Policy.Promotion.HumanApproval = map[string]bool{}
	if _, err := ApplyPlan(f.repo, r, opts); err != nil {
		t.Fatal(err)
	}
	f.git.Git("update-ref", "refs/heads/main", f.base)

	_, err := Promote(f.repo, r, PromoteOptions{ApplyOptions: opts})
	var ce *errkind.CheckError
	if !errors.As(err, &ce) || len(ce.Details) != 1 || !strings.Contains(ce.Details[0], "signature: the policy wants the promotion decision signed") {
		t.Fatalf("unsigned promote: %v %+v", err, ce)
	}
	if got := f.git.Git("rev-parse", "refs/heads/main"); got != f.base {
		t.Fatalf("main moved to %s", got)
	}

	key, err := signing.GenerateKey("coordinator-1", rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	pr, err := Promote(f.repo, r, PromoteOptions{ApplyOptions: opts, Key: &key})
	if err != nil || !pr.Promoted || !pr.Decision.SignatureRequired {
		t.Fatalf("signed promote: %+v %v", pr, err)
	}
	trusted, _ := signing.NewTrustedKeys(key.Public())
	other, _ := signing.GenerateKey("coordinator-1", rand.Reader)
	impostor, _ := signing.NewTrustedKeys(other.Public())
	for _, path := range []string{r.Layout.PromotionDecisionPath(), r.Layout.GateDecisionPath()} {
		doc, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		sealed, err := artifact.Open(doc, artifact.OpenOptions{Trusted: trusted, RequireSignature: true})
		if err != nil || sealed.Header.KID != "coordinator-1" {
			t.Fatalf("%s: %v", path, err)
		}
		if _, err := artifact.Open(doc, artifact.OpenOptions{Trusted: impostor, RequireSignature: true}); err == nil {
			t.Fatalf("%s verifies with another key", path)
		}
	}
	r.Close()
	f.replayEqual()

	// after the fact: the chain verifies with the key, and not with another
	l := r.Layout
	v, err := VerifyPromotion(f.repo, l, VerifyPromotionOptions{Trusted: trusted})
	if err != nil || !v.OK() || v.SignedBy != "coordinator-1" || v.Evidence < 3 {
		t.Fatalf("verify: %+v %v", v, err)
	}
	if v, _ := VerifyPromotion(f.repo, l, VerifyPromotionOptions{Trusted: impostor}); v.OK() {
		t.Fatal("verified with another key")
	}
	if v, _ := VerifyPromotion(f.repo, l, VerifyPromotionOptions{}); v.OK() || !strings.Contains(strings.Join(v.Problems, "\n"), "no trusted keys") {
		t.Fatalf("without keys: %+v", v.Problems)
	}
	// an evidence file changed, then the target moved off the promoted head
	var applyResult string
	for _, e := range pr.Decision.Evidence {
		if e.Kind == KindApplyResult {
			applyResult = l.Abs(e.Path)
		}
	}
	orig, err := os.ReadFile(applyResult)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(applyResult, append(orig, ' '), 0o644)
	if v, _ := VerifyPromotion(f.repo, l, VerifyPromotionOptions{Trusted: trusted}); v.OK() || !strings.Contains(v.Problems[0], "changed since the promotion") {
		t.Fatalf("tampered evidence: %+v", v.Problems)
	}
	os.WriteFile(applyResult, orig, 0o644)
	// an early event rewritten with a valid event_id and state.json re-derived:
	// only the decision's ledger digest can tell
	evPath := filepath.Join(l.EventsDir(), ledger.FileName(2))
	evOrig, err := os.ReadFile(evPath)
	if err != nil {
		t.Fatal(err)
	}
	ev, err := ledger.Decode(evOrig)
	if err != nil {
		t.Fatal(err)
	}
	ev.TS = "2020-01-01T00:00:00Z"
	if ev.EventID, err = ledger.ComputeID(ev); err != nil {
		t.Fatal(err)
	}
	forged, _ := canonical.Marshal(ev)
	os.WriteFile(evPath, forged, 0o644)
	st, _, err := LoadState(l)
	if err != nil {
		t.Fatalf("the forged ledger does not load: %v", err)
	}
	stBytes, _ := st.Marshal()
	stOrig, _ := os.ReadFile(l.StatePath())
	os.WriteFile(l.StatePath(), stBytes, 0o644)
	if v, _ := VerifyPromotion(f.repo, l, VerifyPromotionOptions{Trusted: trusted}); v.OK() || !strings.Contains(strings.Join(v.Problems, "\n"), "are not the ones PromotionDecision") {
		t.Fatalf("forged ledger: %+v", v.Problems)
	}
	os.WriteFile(evPath, evOrig, 0o644)
	os.WriteFile(l.StatePath(), stOrig, 0o644)
	if v, _ := VerifyPromotion(f.repo, l, VerifyPromotionOptions{Trusted: trusted}); !v.OK() {
		t.Fatalf("restored: %+v", v.Problems)
	}
	f.git.Git("update-ref", "refs/heads/main", f.base)
	if v, _ := VerifyPromotion(f.repo, l, VerifyPromotionOptions{Trusted: trusted}); v.OK() || !strings.Contains(v.Problems[0], "does not contain the promoted head") {
		t.Fatalf("target moved back: %+v", v.Problems)
	}
}

func TestRollbackReapplyAdvance(t *testing.T) {
	f := newAfix(t, afixFiles())
	pa := f.diff(map[string]string{"a.txt": lines("a", 31)})
	pb := f.diff(map[string]string{"b.txt": lines("b", 31)})
	pc := f.diff(map[string]string{"c.txt": lines("c", 31)})
	r := f.open()
	defer r.Close()
	f.propose(r, "pa", pa, AtomicProposal, "a.txt")
	f.propose(r, "pb", pb, AtomicProposal, "b.txt")
	f.propose(r, "pc", pc, AtomicProposal, "c.txt")
	f.plan(r, "pa", "pb", "pc")
	opts := f.applyOpts()
	first, err := ApplyPlan(f.repo, r, opts)
	if err != nil {
		t.Fatal(err)
	}
	rb, err := Rollback(f.repo, r, "pa", opts)
	if err != nil || strings.Join(rb.Removed, ",") != "pc,pb" || rb.To != first.Applied[0].CheckpointID {
		t.Fatalf("rollback: %+v %v", rb, err)
	}
	if f.ref().String() != rb.To || r.State.Proposals["pb"].Status != StatusRolledBack {
		t.Fatalf("after rollback: ref %s", f.ref())
	}
	again, err := ApplyPlan(f.repo, r, opts)
	if err != nil || len(again.Applied) != 2 {
		t.Fatalf("re-apply: %+v %v", again, err)
	}
	for i, a := range again.Applied {
		if a.Tree != first.Applied[i+1].Tree || a.CheckpointID != first.Applied[i+1].CheckpointID {
			t.Errorf("layer %s: tree %s checkpoint %s, first time %s %s", a.ProposalID, a.Tree, a.CheckpointID, first.Applied[i+1].Tree, first.Applied[i+1].CheckpointID)
		}
	}
	for _, bad := range []string{"nope", "0000000"} {
		if _, err := Rollback(f.repo, r, bad, opts); !errkind.IsInput(err) {
			t.Errorf("rollback to %s: %v", bad, err)
		}
	}
	adv, err := Advance(f.repo, r, opts)
	if err != nil || adv.WaveID != "wave-2" || adv.BaseRef != f.ref().String() {
		t.Fatalf("advance: %+v %v", adv, err)
	}
	// a rollback stays in the wave: the base of wave 2 is its lowest point
	if _, err := Rollback(f.repo, r, "pa", opts); !errkind.IsInput(err) {
		t.Errorf("rollback into wave 1: %v", err)
	}
	if rb, err := Rollback(f.repo, r, "base", opts); err != nil || len(rb.Removed) != 0 {
		t.Errorf("rollback to the wave base: %+v %v", rb, err)
	}
	_ = gitstore.ZeroHash
}

// changePolicy makes p the run's policy (a stack.policy.changed event).
func (f *afix) changePolicy(r *Run, p *Policy) {
	f.t.Helper()
	if _, err := r.ChangePolicy(p, "test policy", "the test's tiers", testAt, "test"); err != nil {
		f.t.Fatal(err)
	}
}
