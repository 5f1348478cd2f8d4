package agent

import (
	"context"
	"strings"
	"testing"
)

// TestINV_DT_001_MaxDepth: a chain never grows beyond maxDepth (5 unless
// set); CanDelegate says so before, and a delegation past it is an error
// result naming the limit.
func TestINV_DT_001_MaxDepth(t *testing.T) {
	if DefaultMaxDepth != 5 || profile("x").MaxDepth() != 5 {
		t.Fatal("the default maxDepth is not 5")
	}
	c := NewChain("a0", DefaultMaxDepth)
	for i := 1; i <= 5; i++ {
		if !c.CanDelegate() {
			t.Fatalf("depth %d: CanDelegate false", c.Depth())
		}
		next, err := c.Delegate("a"+string(rune('0'+i)), 5)
		if err != nil {
			t.Fatalf("delegation %d: %v", i, err)
		}
		c = next
	}
	if c.Depth() != 5 || c.CanDelegate() {
		t.Fatalf("depth %d, CanDelegate %v", c.Depth(), c.CanDelegate())
	}
	_, err := c.Delegate("a6", 5)
	if err == nil || err.Code != CodeDelegationDepth || !strings.Contains(err.Message, "over maxDepth 5") {
		t.Fatalf("past the limit: %v", err)
	}
	// The smallest maxDepth on the chain bounds it: a delegate's own
	// limit counts too.
	short := NewChain("root", 5)
	mid, _ := short.Delegate("mid", 1)
	if _, err := mid.Delegate("leaf", 5); err == nil || err.Code != CodeDelegationDepth {
		t.Fatalf("the delegate's maxDepth 1 was ignored: %v", err)
	}
	// At run time: a delegate step past the limit fails with the code.
	one := 1
	a := profile("a")
	a.Delegation = &Delegation{MaxDepth: &one, AllowedDelegates: []string{"b"}}
	a.Workflow = &Workflow{Steps: []Step{{ID: "go", Delegate: &DelegateCall{Agent: "b", Task: "{{task}}"}}}}
	b := profile("b")
	b.Delegation = &Delegation{AllowedDelegates: []string{"c"}}
	b.Workflow = &Workflow{Steps: []Step{{ID: "go", Delegate: &DelegateCall{Agent: "c", Task: "{{task}}"}}}}
	cc := profile("c")
	// LoadCatalog refuses this chain statically; build the set by hand to
	// see the run-time check.
	cat := catalogOf(t, nil)
	for _, p := range []*Profile{a, b, cc} {
		if err := cat.Agents.Create(p.ID, p); err != nil {
			t.Fatal(err)
		}
	}
	res, rerr := runnerWith(cat, &fakeModel{}, nil).Start(context.Background(), StartOptions{RunID: "r", Agent: "a", Task: "t"})
	if rerr != nil || res.Status != StatusFailed || !strings.Contains(res.Summary.Failures[0].Reason, CodeDelegateFailed) {
		t.Fatalf("%v %+v", rerr, res)
	}
	d := runnerWith(cat, &fakeModel{}, nil).Delegate(context.Background(), NewChain("a", 1).mustDelegate(t, "b", 5), "b", "c", "t", "r", "s", false)
	if d.Error == nil || d.Error.Code != CodeDelegationDepth {
		t.Fatalf("%+v", d)
	}
}

func (c Chain) mustDelegate(t *testing.T, to string, max int) Chain {
	t.Helper()
	n, err := c.Delegate(to, max)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestINV_DT_002_NoCircularDelegation: delegating to oneself or an
// ancestor is an error result (DELEGATION_CYCLE), never a panic.
func TestINV_DT_002_NoCircularDelegation(t *testing.T) {
	c := NewChain("a", 5).mustDelegate(t, "b", 5).mustDelegate(t, "c", 5)
	if !c.IsInChain("a") || !c.IsInChain("c") || c.IsInChain("d") {
		t.Fatal("IsInChain")
	}
	for _, to := range []string{"c", "b", "a"} {
		next, err := c.Delegate(to, 5)
		if err == nil || err.Code != CodeDelegationCycle || next.Depth() != c.Depth() {
			t.Fatalf("to %s: %v", to, err)
		}
	}
	// At run time, through profiles built by hand (LoadCatalog refuses
	// the cycle before any run).
	a := profile("a")
	a.Delegation = &Delegation{AllowedDelegates: []string{"b"}}
	a.Workflow = &Workflow{Steps: []Step{{ID: "go", Delegate: &DelegateCall{Agent: "b", Task: "{{task}}"}}}}
	b := profile("b")
	b.Delegation = &Delegation{AllowedDelegates: []string{"a"}}
	b.Workflow = &Workflow{Steps: []Step{{ID: "back", Delegate: &DelegateCall{Agent: "a", Task: "{{task}}"}}}}
	cat := catalogOf(t, nil)
	cat.Agents.Create("a", a)
	cat.Agents.Create("b", b)
	r := runnerWith(cat, &fakeModel{}, nil)
	d := r.Delegate(context.Background(), NewChain("a", 5).mustDelegate(t, "b", 5), "b", "a", "t", "r", "s", false)
	if d.Success || d.Error == nil || d.Error.Code != CodeDelegationCycle {
		t.Fatalf("%+v", d)
	}
	res, err := r.Start(context.Background(), StartOptions{RunID: "r", Agent: "a", Task: "t"})
	if err != nil || res.Status != StatusFailed {
		t.Fatalf("%v %+v", err, res)
	}
	// Not allowed, unknown and disabled delegates are results too.
	off := profile("off")
	off.Enabled = false
	cat.Agents.Create("off", off)
	for to, code := range map[string]string{"ghost": CodeDelegateNotFound, "off": CodeDelegateDisabled, "standard": CodeDelegateNotAllowed} {
		d := r.Delegate(context.Background(), NewChain("a", 5), "a", to, "t", "r", "s", false)
		if d.Error == nil || d.Error.Code != code {
			t.Errorf("to %s: %+v, want %s", to, d.Error, code)
		}
	}
}
