package workflow

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func barrierPolicy(conc int) Policy {
	p := policy(conc)
	p.WaveBarrier = true
	p.MaxAttempts = 2
	return p
}

func ids(ds []Decision) string {
	var s []string
	for _, d := range ds {
		s = append(s, d.Action+":"+d.NodeID)
	}
	return strings.Join(s, " ")
}

func mustReport(t *testing.T, e *Engine, d Decision, o Outcome) []Decision {
	t.Helper()
	ds, err := e.Report(d.NodeExecutionID, o)
	if err != nil {
		t.Fatal(err)
	}
	return ds
}

var pass = Outcome{Status: OutcomeSucceeded}

func TestWaveBarrier_DependentsWaitForTheNextWave(t *testing.T) {
	// a -> c, b independent, concurrency 1: after a passes in wave 1, c
	// must not start in wave 1 (its base does not hold a's change yet);
	// b, ready from the start, does.
	g := mustBuild(t, Spec{Nodes: []Node{{ID: "a"}, {ID: "b"}, {ID: "c", Deps: []string{"a"}}}})
	e, err := NewEngine(g, barrierPolicy(1), Options{RunID: "r", Seed: "s"})
	if err != nil {
		t.Fatal(err)
	}
	w1 := e.Next("w1")
	if ids(w1) != "dispatch:a" {
		t.Fatalf("w1 first: %s", ids(w1))
	}
	mustReport(t, e, w1[0], pass)
	next := e.Next("w1")
	if ids(next) != "dispatch:b" {
		t.Fatalf("w1 after a: %s, want only b", ids(next))
	}
	mustReport(t, e, next[0], pass)
	if got := e.Next("w1"); len(got) != 0 {
		t.Fatalf("w1 after b: %s, want nothing (c is held)", ids(got))
	}
	if st, _, _ := e.NodeStatus("c"); st != StatusReady {
		t.Fatalf("c is %s, want ready (held)", st)
	}
	w2 := e.Next("w2")
	if ids(w2) != "dispatch:c" || w2[0].WaveID != "w2" {
		t.Fatalf("w2: %s", ids(w2))
	}
	// Without the barrier c would have gone in w1.
	p := barrierPolicy(1)
	p.WaveBarrier = false
	e2, _ := NewEngine(g, p, Options{RunID: "r", Seed: "s"})
	for _, want := range []string{"dispatch:a", "dispatch:b", "dispatch:c"} {
		d := e2.Next("w1")
		if ids(d) != want {
			t.Fatalf("without the barrier: %s, want %s in the same wave", ids(d), want)
		}
		mustReport(t, e2, d[0], pass)
	}
}

func TestWaveBarrier_RetryStaysInTheWave(t *testing.T) {
	g := mustBuild(t, Spec{Nodes: []Node{{ID: "a"}}})
	e, _ := NewEngine(g, barrierPolicy(1), Options{RunID: "r", Seed: "s"})
	d := e.Next("w1")
	mustReport(t, e, d[0], Outcome{Status: OutcomeFailed, Reason: "exit_nonzero"})
	if got := e.Next("w1"); ids(got) != "retry:a" {
		t.Fatalf("retry: %s", ids(got))
	}
}

func TestOutcomeLost_ChargesNoAttempt(t *testing.T) {
	g := mustBuild(t, Spec{Nodes: []Node{{ID: "a"}}})
	p := barrierPolicy(1)
	p.MaxAttempts = 1
	e, _ := NewEngine(g, p, Options{RunID: "r", Seed: "s"})
	for k := 1; k <= 3; k++ {
		d := e.Next("w1")
		if len(d) != 1 || d[0].Attempt != k {
			t.Fatalf("round %d: %+v", k, d)
		}
		if k > 1 && d[0].Action != ActRetry {
			t.Fatalf("round %d: action %s", k, d[0].Action)
		}
		mustReport(t, e, d[0], Outcome{Status: OutcomeLost, Reason: "lost"})
	}
	st := e.State()
	if st.Nodes[0].Failures != 0 || st.Nodes[0].Status != StatusReady || st.Classes[0].Failed != 0 {
		t.Fatalf("after lost attempts: %+v %+v", st.Nodes[0], st.Classes[0])
	}
}

func TestReopen_RunsAgainInTheNextWaveThenFails(t *testing.T) {
	g := mustBuild(t, Spec{Nodes: []Node{{ID: "a"}, {ID: "b", Deps: []string{"a"}}}})
	e, _ := NewEngine(g, barrierPolicy(2), Options{RunID: "r", Seed: "s"})
	d := e.Next("w1")
	mustReport(t, e, d[0], pass)
	// b is held; a's patch conflicts at integration.
	ds, err := e.Reopen("a", "conflict: README.md")
	if err != nil {
		t.Fatal(err)
	}
	if ids(ds) != "reopen:a" || ds[0].Reason != "conflict: README.md" {
		t.Fatalf("reopen: %+v", ds)
	}
	if st, _, _ := e.NodeStatus("b"); st != StatusPending {
		t.Fatalf("b is %s after a was reopened, want pending", st)
	}
	if got := e.Next("w1"); len(got) != 0 {
		t.Fatalf("w1 after reopen: %s, want nothing (a is held for the next wave)", ids(got))
	}
	w2 := e.Next("w2")
	if ids(w2) != "retry:a" || w2[0].Attempt != 2 {
		t.Fatalf("w2: %+v", w2)
	}
	mustReport(t, e, w2[0], pass)
	// The second reopen spends the last attempt: a fails, b is skipped.
	ds, err = e.Reopen("a", "conflict again")
	if err != nil {
		t.Fatal(err)
	}
	if ids(ds) != "reopen:a skip:b" {
		t.Fatalf("second reopen: %s", ids(ds))
	}
	if st, reason, _ := e.NodeStatus("a"); st != StatusFailed || !strings.Contains(reason, "conflict again") {
		t.Fatalf("a: %s %s", st, reason)
	}
	if !e.Done() {
		t.Fatal("not done")
	}
}

func TestReopen_Refusals(t *testing.T) {
	g := mustBuild(t, Spec{Nodes: []Node{{ID: "a"}, {ID: "b", Deps: []string{"a"}}, {ID: "c"}}})
	e, _ := NewEngine(g, barrierPolicy(3), Options{RunID: "r", Seed: "s"})
	w1 := e.Next("w1")
	for _, d := range w1 {
		mustReport(t, e, d, pass)
	}
	w2 := e.Next("w2") // b starts
	if ids(w2) != "dispatch:b" {
		t.Fatalf("w2: %s", ids(w2))
	}
	for _, tc := range []struct{ id, want string }{
		{"a", "its dependent \"b\" has started"},
		{"b", "is running"},
		{"zz", "no node"},
	} {
		_, err := e.Reopen(tc.id, "x")
		if !errors.Is(err, ErrNotReopenable) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Reopen(%s): %v, want %q", tc.id, err, tc.want)
		}
	}
	if _, err := e.Reopen("c", "x"); err != nil {
		t.Errorf("c has no dependents: %v", err)
	}
}

func TestWaveBarrier_StateResumeSameFuture(t *testing.T) {
	g := randomGraph(t, 60, 7)
	p := barrierPolicy(4)
	p.Endgame = Endgame{Remaining: 3, MaxDuplicates: 1}
	opt := Options{RunID: "r", Seed: "s"}
	drive := func(e *Engine, from int, log *bytes.Buffer, stopAt int) (State, int) {
		var running []Decision
		wave := from
		for step := 0; !e.Done(); step++ {
			if step == stopAt {
				return e.State(), wave
			}
			ds := e.Next("w" + string(rune('0'+wave%10)) + string(rune('a'+wave/10)))
			for _, d := range ds {
				b, _ := json.Marshal(d)
				log.Write(b)
				if d.NodeExecutionID != "" && d.Action != ActCancel {
					running = append(running, d)
				}
			}
			if len(ds) == 0 && len(running) == 0 {
				wave++
				continue
			}
			if len(running) == 0 {
				continue
			}
			d := running[0]
			running = running[1:]
			o := flaky(d)
			more, err := e.Report(d.NodeExecutionID, o)
			if err != nil && !errors.Is(err, ErrUnknownExecution) {
				t.Fatal(err)
			}
			for _, m := range more {
				b, _ := json.Marshal(m)
				log.Write(b)
			}
			if len(running) == 0 {
				wave++
			}
		}
		return e.State(), wave
	}
	var full bytes.Buffer
	e, _ := NewEngine(g, p, opt)
	drive(e, 1, &full, -1)
	_ = full
	// A snapshot with held nodes resumes.
	e2, _ := NewEngine(g, p, opt)
	var part bytes.Buffer
	st, _ := drive(e2, 1, &part, 7)
	b, _ := json.Marshal(st)
	var back State
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	r, err := Resume(g, p, opt, back)
	if err != nil {
		t.Fatal(err)
	}
	b2, _ := json.Marshal(r.State())
	if !bytes.Equal(b, b2) {
		t.Fatalf("resumed state differs:\n%s\n%s", b, b2)
	}
}
