package stack

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/dome-registry/dome/pkg/errkind"
)

// Init keeps the policy in the run; every step works under it, and another
// policy is refused (exit 2) instead of being used silently.
func TestPolicy_PinnedAtInit(t *testing.T) {
	f := newAfix(t, afixFiles())
	r := f.open()
	p, err := r.Policy()
	if err != nil {
		t.Fatal(err)
	}
	if p.Digest() != DefaultPolicy().Digest() || r.State.PolicySequence != 1 {
		t.Fatalf("pinned %s at %d, want the built-in policy at event 1", p.Digest(), r.State.PolicySequence)
	}
	other := testPolicy(t)
	for name, step := range map[string]func() error{
		"plan":   func() error { _, err := r.Plan(f.repo, PlanOptions{Policy: other, At: testAt}); return err },
		"submit": func() error { _, err := r.Submit(f.repo, "x", []byte("{}"), SubmitOptions{Policy: other}); return err },
		"apply": func() error {
			o := f.applyOpts()
			o.Policy = other
			_, err := ApplyPlan(f.repo, r, o)
			return err
		},
		"promote": func() error {
			o := f.applyOpts()
			o.Policy = other
			_, err := Promote(f.repo, r, PromoteOptions{ApplyOptions: o})
			return err
		},
	} {
		err := step()
		if !errkind.IsInput(err) || !strings.Contains(err.Error(), "works under the stack policy "+p.Digest()) ||
			!strings.Contains(errkind.HintOf(err), "dome stack policy --run r1 --policy FILE --reason TEXT") {
			t.Errorf("%s with another policy: %v (hint %q)", name, err, errkind.HintOf(err))
		}
	}
	// The kept file is what the ledger names; an edit is caught.
	path := f.l.PolicyFile(p.Digest())
	if err := os.WriteFile(path, append(p.Canonical(), ' '), 0o644); err != nil {
		t.Fatal(err)
	}
	r.policy = nil
	if _, err := r.Policy(); !errkind.IsCheck(err) || !strings.Contains(err.Error(), "the ledger recorded "+p.Digest()) {
		t.Errorf("edited policy file: %v", err)
	}
	os.Remove(path)
	if _, err := r.Policy(); !errors.Is(err, ErrPolicyNotKept) || !strings.Contains(errkind.HintOf(err), "--policy FILE") {
		t.Errorf("missing policy file: %v", err)
	}
	// A run started before the policy was kept works when given its policy.
	if got, err := r.usePolicy(DefaultPolicy()); err != nil || got.Digest() != p.Digest() {
		t.Errorf("the run's own policy given: %v", err)
	}
	// Init again with the same inputs is a no-op; with another policy it is refused.
	r.Close()
	if _, err := keepPolicy(f.l, p); err != nil {
		t.Fatal(err)
	}
	if _, err := Init(f.repo, f.l, InitOptions{Base: f.base, CreatedAt: testAt}); err != nil {
		t.Errorf("init again: %v", err)
	}
	if _, err := Init(f.repo, f.l, InitOptions{Base: f.base, Policy: other, CreatedAt: testAt}); !errkind.IsInput(err) {
		t.Errorf("init again with another policy: %v", err)
	}
}

// A policy change is an event with a reason; the plan and the validations
// before it no longer count; replay re-derives it.
func TestPolicy_Change(t *testing.T) {
	f := newAfix(t, afixFiles())
	pa := f.diff(map[string]string{"a.txt": lines("a", 31)})
	r := f.open()
	defer r.Close()
	f.propose(r, "pa", pa, AtomicProposal, "a.txt")
	f.plan(r, "pa")
	if _, err := r.ChangePolicy(testPolicy(t), "p.json", " ", testAt, "test"); !errkind.IsInput(err) {
		t.Fatalf("a change without a reason: %v", err)
	}
	ch, err := r.ChangePolicy(testPolicy(t), "p.json", "the test's tiers", testAt, "test")
	if err != nil || !ch.Changed || ch.FromDigest != DefaultPolicy().Digest() || ch.ToDigest != testPolicy(t).Digest() {
		t.Fatalf("change: %+v %v", ch, err)
	}
	if again, err := r.ChangePolicy(testPolicy(t), "p.json", "again", testAt, "test"); err != nil || again.Changed {
		t.Fatalf("changing to the same policy: %+v %v", again, err)
	}
	if p, err := r.Policy(); err != nil || p.Digest() != ch.ToDigest {
		t.Fatalf("policy after the change: %v", err)
	}
	// the plan predates the change
	o := f.applyOpts()
	if _, err := ApplyPlan(f.repo, r, o); !errkind.IsInput(err) || !strings.Contains(err.Error(), "computed before the run's stack policy changed") {
		t.Fatalf("apply of the old plan: %v", err)
	}
	f.plan(r, "pa")
	if _, err := ApplyPlan(f.repo, r, o); err != nil {
		t.Fatal(err)
	}
	f.replayEqual()
	if n := len(r.State.PolicyChanges); n != 1 || r.State.PolicyChanges[0].Reason != "the test's tiers" {
		t.Fatalf("policy changes %+v", r.State.PolicyChanges)
	}
}
