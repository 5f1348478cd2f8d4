package workflow

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// sim drives an engine the way a coordinator does: take decisions, finish
// the oldest running attempt with outcome(), repeat until done.
type sim struct {
	t       *testing.T
	e       *Engine
	log     []Decision
	queue   []Decision // running attempts, oldest first
	outcome func(d Decision) Outcome
	wave    int
	// maxRunning is the most attempts seen running at once.
	maxRunning int
	// succeededAt records, per node, the decision sequence when it passed.
	succeeded map[string]bool
}

func newSim(t *testing.T, g *Graph, p Policy, outcome func(Decision) Outcome) *sim {
	t.Helper()
	e, err := NewEngine(g, p, Options{RunID: "run-1", Seed: "seed-1"})
	if err != nil {
		t.Fatal(err)
	}
	if outcome == nil {
		outcome = func(Decision) Outcome { return Outcome{Status: OutcomeSucceeded} }
	}
	return &sim{t: t, e: e, outcome: outcome, succeeded: map[string]bool{}}
}

func (s *sim) take(ds []Decision) {
	for _, d := range ds {
		s.log = append(s.log, d)
		switch d.Action {
		case ActDispatch, ActRetry, ActDuplicate:
			// INV-PE-002: a node starts only once its dependencies passed.
			i, _ := s.e.g.Index(d.NodeID)
			for _, dep := range s.e.g.Deps(i) {
				if _, _, in := s.e.g.LoopOf(i); in {
					continue
				}
				if !s.succeeded[s.e.g.Node(dep).ID] {
					s.t.Fatalf("%s started before its dependency %s passed", d.NodeID, s.e.g.Node(dep).ID)
				}
			}
			s.queue = append(s.queue, d)
		case ActCancel:
			for k, q := range s.queue {
				if q.NodeExecutionID == d.NodeExecutionID {
					s.queue = append(s.queue[:k:k], s.queue[k+1:]...)
					s.report(q, Outcome{Status: OutcomeCancelled, Reason: "cancelled"})
					break
				}
			}
		case ActCompensate:
			if err := s.e.ReportCompensation(d.NodeID, true); err != nil {
				s.t.Fatal(err)
			}
		}
	}
	s.maxRunning = max(s.maxRunning, s.e.Running())
}

func (s *sim) report(d Decision, o Outcome) {
	ds, err := s.e.Report(d.NodeExecutionID, o)
	if err != nil {
		s.t.Fatal(err)
	}
	if o.Status == OutcomeSucceeded {
		if st, _, _ := s.e.NodeStatus(d.NodeID); st == StatusSucceeded {
			s.succeeded[d.NodeID] = true
		}
		// a loop's nodes pass together
		for i := 0; i < s.e.g.Len(); i++ {
			if st, _, _ := s.e.NodeStatus(s.e.g.Node(i).ID); st == StatusSucceeded {
				s.succeeded[s.e.g.Node(i).ID] = true
			}
		}
	}
	s.take(ds)
}

// step makes one scheduling call and finishes one attempt; false when done.
func (s *sim) step() bool {
	s.wave++
	s.take(s.e.Next(fmt.Sprintf("w%d", s.wave)))
	if len(s.queue) == 0 {
		if !s.e.Done() {
			// compensation may still be pending
			if ds := s.e.Next("w"); len(ds) > 0 {
				s.take(ds)
				return true
			}
			s.t.Fatalf("stalled: nothing runs, nothing ready, not done: %+v", s.e.Summary())
		}
		return false
	}
	d := s.queue[0]
	s.queue = s.queue[1:]
	s.report(d, s.outcome(d))
	return true
}

func (s *sim) run() *sim {
	for i := 0; s.step(); i++ {
		if i > 1e6 {
			s.t.Fatal("no end")
		}
	}
	return s
}

func (s *sim) actions() string {
	var parts []string
	for _, d := range s.log {
		p := d.Action + " " + d.NodeID
		if d.Attempt > 1 {
			p += fmt.Sprintf("#%d", d.Attempt)
		}
		if d.Iteration > 0 {
			p += fmt.Sprintf("@%d", d.Iteration)
		}
		parts = append(parts, p)
	}
	return strings.Join(parts, ", ")
}

func mustBuild(t *testing.T, spec Spec) *Graph {
	t.Helper()
	g, err := Build(spec)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func policy(conc int) Policy {
	p := DefaultPolicy()
	p.MaxConcurrency = conc
	return p
}

func TestNext_CriticalPathFirstThenTieBreaks(t *testing.T) {
	g := mustBuild(t, Spec{Nodes: []Node{{ID: "zeta"}, {ID: "alpha"}, {ID: "chain1"}, {ID: "chain2", Deps: []string{"chain1"}},
		{ID: "urgent", Group: "critical"}}, Groups: []string{"critical", "normal"}})
	s := newSim(t, g, policy(1), nil).run()
	// chain1 first (the longest chain); then all tie on score: the
	// critical group first, then node ids.
	want := "dispatch chain1, dispatch urgent, dispatch alpha, dispatch chain2, dispatch zeta"
	if got := s.actions(); got != want {
		t.Fatalf("order %s\nwant  %s", got, want)
	}
	d := s.log[1]
	if d.TieBreak.NodePriorityGroup != "critical" || d.TieBreak.GroupRank != 0 || !reflect.DeepEqual(d.TieBreakOrder, TieBreakOrder) {
		t.Fatalf("tie-break fields %+v %v", d.TieBreak, d.TieBreakOrder)
	}
	if s.log[0].Scores.CriticalPath != 2 || s.log[0].Scores.Critical != 1000 || s.log[0].Scores.Descendants != 1 {
		t.Fatalf("scores of chain1 %+v", s.log[0].Scores)
	}
}

func TestNext_ConcurrencyLimit(t *testing.T) {
	g := mustBuild(t, Spec{Nodes: nodes("a b c d e f g")})
	s := newSim(t, g, policy(3), nil)
	first := s.e.Next("w1")
	if len(first) != 3 || first[2].Rank != 3 || first[0].Candidates != 7 || first[2].Running != 3 {
		t.Fatalf("first call: %d decisions %+v", len(first), first)
	}
	s.take(first)
	if more := s.e.Next("w1"); len(more) != 0 {
		t.Fatalf("dispatched past the limit: %+v", more)
	}
	s.run()
	if s.maxRunning != 3 { // INV-PE-001
		t.Fatalf("max running %d, want 3", s.maxRunning)
	}
}

func TestNext_CapacityAndRarity(t *testing.T) {
	g := mustBuild(t, Spec{Nodes: []Node{{ID: "a"}, {ID: "b"}, {ID: "g1", Needs: []string{"gpu"}}, {ID: "g2", Needs: []string{"gpu"}}}})
	p := policy(4)
	p.Capacity = map[string]int{"gpu": 1}
	s := newSim(t, g, p, nil)
	ds := s.e.Next("w1")
	var got []string
	for _, d := range ds {
		got = append(got, d.NodeID)
	}
	if strings.Join(got, " ") != "g1 a b" {
		t.Fatalf("dispatched %v, want the scarce node first and one gpu at a time", got)
	}
	if ds[0].Scores.Rarity != 1000 || !reflect.DeepEqual(ds[0].Holds, []string{"gpu"}) || ds[1].Scores.Rarity != 0 {
		t.Fatalf("rarity/holds %+v %+v", ds[0], ds[1])
	}
	s.take(ds)
	s.run()
	if !strings.Contains(s.actions(), "dispatch g2") {
		t.Fatalf("g2 never ran: %s", s.actions())
	}
}

func TestNext_ConfidenceFromOutcomes(t *testing.T) {
	g := mustBuild(t, Spec{Nodes: []Node{{ID: "a1", Class: "flaky"}, {ID: "a2", Class: "flaky"}, {ID: "a3", Class: "flaky"},
		{ID: "b1", Class: "steady"}, {ID: "b2", Class: "steady"}}})
	p := policy(1)
	s := newSim(t, g, p, func(d Decision) Outcome {
		if strings.HasPrefix(d.NodeID, "a") {
			return Outcome{Status: OutcomeFailed, Reason: "exit_nonzero"}
		}
		return Outcome{Status: OutcomeSucceeded}
	}).run()
	// a1 goes first by id; once it fails, the flaky class drops below steady.
	want := "dispatch a1, dispatch b1, dispatch b2, dispatch a2, dispatch a3"
	if got := s.actions(); got != want {
		t.Fatalf("order %s\nwant  %s", got, want)
	}
	if c := s.log[1].Scores.Confidence; c != 500 {
		t.Fatalf("steady confidence before any outcome: %d, want 500", c)
	}
	if c := s.log[2].Scores.Confidence; c != 666 {
		t.Fatalf("steady confidence after one success: %d, want 666", c)
	}
	if c := s.log[3].Scores.Confidence; c != 333 {
		t.Fatalf("flaky confidence after one failure: %d, want 333", c)
	}
}

func TestNext_RiskPenalty(t *testing.T) {
	g := mustBuild(t, Spec{Nodes: []Node{{ID: "a", Risk: 800}, {ID: "b"}}})
	s := newSim(t, g, policy(1), nil).run()
	if got := s.actions(); got != "dispatch b, dispatch a" {
		t.Fatalf("order %s", got)
	}
	if sc := s.log[1].Scores; sc.Risk != 800 || sc.Priority != 4*1000+sc.Confidence-2*800 {
		t.Fatalf("risk scores %+v vs %+v", s.log[1].Scores, s.log[0].Scores)
	}
}

func TestReport_RetryThenSkipDependents(t *testing.T) {
	g := mustBuild(t, Spec{Nodes: nodes("a b:a c:b d")})
	p := policy(2)
	p.MaxAttempts = 2
	s := newSim(t, g, p, func(d Decision) Outcome {
		if d.NodeID == "a" {
			return Outcome{Status: OutcomeFailed, Reason: "timeout"}
		}
		return Outcome{Status: OutcomeSucceeded}
	}).run()
	want := "dispatch a, dispatch d, retry a#2, skip b, skip c"
	if got := s.actions(); got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	if s.log[2].NodeExecutionID == s.log[0].NodeExecutionID || !strings.Contains(s.log[2].Reason, "attempt 2 of 2 after timeout") {
		t.Fatalf("retry decision %+v", s.log[2])
	}
	if !strings.Contains(s.log[3].Reason, "dependency_failed: a (2 failed attempt(s), max_attempts 2: timeout)") {
		t.Fatalf("skip reason %q", s.log[3].Reason)
	}
	sum := s.e.Summary()
	if !sum.Done || sum.ByStatus[StatusFailed] != 1 || sum.ByStatus[StatusSkipped] != 2 || sum.ByStatus[StatusSucceeded] != 1 || len(sum.Failures) != 3 {
		t.Fatalf("summary %+v", sum)
	}
}

func TestEndgame_DuplicatesFirstPassWins(t *testing.T) {
	g := mustBuild(t, Spec{Nodes: nodes("a b c:a,b")})
	p := policy(4)
	p.Endgame = Endgame{Remaining: 3, MaxDuplicates: 1}
	e, _ := NewEngine(g, p, Options{RunID: "r", Seed: "s"})
	ds := e.Next("w1")
	var acts []string
	for _, d := range ds {
		acts = append(acts, d.Action+" "+d.NodeID)
	}
	if strings.Join(acts, ", ") != "dispatch a, dispatch b, duplicate a, duplicate b" {
		t.Fatalf("got %v", acts)
	}
	if !strings.Contains(ds[2].Reason, "endgame: 3 node(s) unfinished") || ds[2].Attempt != 2 {
		t.Fatalf("duplicate %+v", ds[2])
	}
	// The duplicate of a passes first: the original is cancelled.
	out, err := e.Report(ds[2].NodeExecutionID, Outcome{Status: OutcomeSucceeded})
	if err != nil || len(out) != 1 || out[0].Action != ActCancel || out[0].NodeExecutionID != ds[0].NodeExecutionID ||
		!strings.Contains(out[0].Reason, "first passing result accepted: attempt 2") {
		t.Fatalf("after the first pass: %+v %v", out, err)
	}
	// The loser's late success changes nothing.
	if out, err := e.Report(ds[0].NodeExecutionID, Outcome{Status: OutcomeSucceeded}); err != nil || len(out) != 0 {
		t.Fatalf("late result: %+v %v", out, err)
	}
	// b: the original fails, the duplicate passes: the node passes.
	if out, _ := e.Report(ds[1].NodeExecutionID, Outcome{Status: OutcomeFailed}); len(out) != 0 {
		t.Fatalf("%+v", out)
	}
	if st, _, _ := e.NodeStatus("b"); st != StatusRunning {
		t.Fatalf("b is %s while its duplicate runs", st)
	}
	e.Report(ds[3].NodeExecutionID, Outcome{Status: OutcomeSucceeded})
	// c is the last node: it runs with a duplicate at once.
	next := e.Next("w2")
	if len(next) != 2 || next[0].NodeID != "c" || next[1].Action != ActDuplicate || next[1].NodeID != "c" {
		t.Fatalf("then c: %+v", next)
	}
	if _, err := e.Report(ds[0].NodeExecutionID, Outcome{Status: OutcomeSucceeded}); err == nil {
		t.Fatal("a closed attempt reported twice was accepted")
	}
}

func TestStrategy_FailFast(t *testing.T) {
	g := mustBuild(t, Spec{Nodes: nodes("a b c d:c")})
	p := policy(2)
	p.Strategy = FailFast
	s := newSim(t, g, p, func(d Decision) Outcome {
		if d.NodeID == "a" {
			return Outcome{Status: OutcomeFailed, Reason: "exit_nonzero"}
		}
		return Outcome{Status: OutcomeSucceeded}
	}).run()
	want := "dispatch c, dispatch a, dispatch b, cancel b, skip d"
	if got := s.actions(); got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	sum := s.e.Summary()
	if !strings.Contains(sum.Halted, `fail_fast: node "a" failed`) || sum.ByStatus[StatusCancelled] != 1 || sum.ByStatus[StatusSkipped] != 1 {
		t.Fatalf("summary %+v", sum)
	}
}

func TestStrategy_RollbackCompensatesInReverse(t *testing.T) {
	g := mustBuild(t, Spec{Nodes: []Node{{ID: "s1", Compensable: true}, {ID: "s2"}, {ID: "s3", Compensable: true}, {ID: "s4"}, {ID: "s5"}}, Sequential: true})
	p := policy(4)
	p.Strategy = Rollback
	s := newSim(t, g, p, func(d Decision) Outcome {
		if d.NodeID == "s4" {
			return Outcome{Status: OutcomeFailed, Reason: "boom"}
		}
		return Outcome{Status: OutcomeSucceeded, Output: json.RawMessage(`{"step":"` + d.NodeID + `"}`)}
	}).run()
	want := "dispatch s1, dispatch s2, dispatch s3, dispatch s4, skip s5, compensate s3, compensate s1"
	if got := s.actions(); got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	if sum := s.e.Summary(); !reflect.DeepEqual(sum.Compensated, []string{"s3", "s1"}) || !sum.Done {
		t.Fatalf("summary %+v", sum)
	}
	if s.maxRunning != 1 { // INV-AGT-003: array order, one at a time
		t.Fatalf("a sequential workflow ran %d steps at once", s.maxRunning)
	}
}

func TestStrategy_ContinueOnErrorAggregates(t *testing.T) {
	g := mustBuild(t, Spec{Nodes: nodes("a b c:a d:b e:c,d f")})
	s := newSim(t, g, policy(2), func(d Decision) Outcome {
		if d.NodeID == "a" || d.NodeID == "f" {
			return Outcome{Status: OutcomeFailed, Reason: "exit_nonzero"}
		}
		return Outcome{Status: OutcomeSucceeded}
	}).run()
	sum := s.e.Summary()
	var got []string
	for _, f := range sum.Failures {
		got = append(got, f.NodeID+"="+string(f.Status))
	}
	if strings.Join(got, " ") != "a=failed c=skipped e=skipped f=failed" || sum.ByStatus[StatusSucceeded] != 2 || sum.Halted != "" {
		t.Fatalf("failures %v summary %+v", got, sum)
	}
}

func TestLoop_IteratesUntilConvergedWithinBound(t *testing.T) {
	spec := Spec{Nodes: nodes("spec impl:spec,review review:impl ship:review"),
		Loops: []Loop{{ID: "rl", Nodes: []string{"impl", "review"}, MaxIterations: 3}}}
	g := mustBuild(t, spec)
	reviews := 0
	s := newSim(t, g, policy(2), func(d Decision) Outcome {
		if d.NodeID == "review" {
			reviews++
			return Outcome{Status: OutcomeSucceeded, Repeat: reviews < 2}
		}
		return Outcome{Status: OutcomeSucceeded}
	}).run()
	want := "dispatch spec, dispatch impl@1, dispatch review@1, dispatch impl#2@2, dispatch review#2@2, dispatch ship"
	if got := s.actions(); got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	// A loop that never converges fails at its bound.
	s = newSim(t, g, policy(2), func(d Decision) Outcome { return Outcome{Status: OutcomeSucceeded, Repeat: true} }).run()
	if st, reason, _ := s.e.NodeStatus("review"); st != StatusFailed || !strings.Contains(reason, `iteration_limit: loop "rl" still asked for another iteration after 3`) {
		t.Fatalf("review %s %q", st, reason)
	}
	if st, _, _ := s.e.NodeStatus("ship"); st != StatusSkipped {
		t.Fatalf("ship %s", st)
	}
}

// randomGraph builds a random DAG of n nodes (edges point to earlier nodes).
func randomGraph(t testing.TB, n int, seed uint64) *Graph {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	ns := make([]Node, n)
	for i := range ns {
		ns[i] = Node{ID: fmt.Sprintf("n%05d", i), Digest: fmt.Sprintf("sha256:%064x", i), Class: fmt.Sprintf("c%d", r.IntN(3)),
			Risk: r.IntN(200)}
		if r.IntN(10) == 0 {
			ns[i].Needs = []string{"gpu"}
		}
		if r.IntN(7) == 0 {
			ns[i].Group = "critical"
		}
		seen := map[int]bool{}
		for k := 0; k < r.IntN(4) && i > 0; k++ {
			d := r.IntN(i)
			if !seen[d] {
				seen[d] = true
				ns[i].Deps = append(ns[i].Deps, ns[d].ID)
			}
		}
	}
	g, err := Build(Spec{Nodes: ns})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func flaky(d Decision) Outcome {
	h := 0
	for _, c := range d.NodeExecutionID {
		h = h*31 + int(c)
	}
	if h%5 == 0 {
		return Outcome{Status: OutcomeFailed, Reason: "exit_nonzero"}
	}
	return Outcome{Status: OutcomeSucceeded}
}

func richPolicy() Policy {
	p := policy(6)
	p.MaxAttempts = 3
	p.Capacity = map[string]int{"gpu": 2}
	p.Endgame = Endgame{Remaining: 4, MaxDuplicates: 1}
	return p
}

func TestDeterminism_TwoRunsSameBytes(t *testing.T) {
	var out [2][]byte
	for k := range out {
		g := randomGraph(t, 400, 7)
		s := newSim(t, g, richPolicy(), flaky).run()
		b, err := json.Marshal(s.log)
		if err != nil {
			t.Fatal(err)
		}
		st, _ := json.Marshal(s.e.State())
		out[k] = append(b, st...)
	}
	if !bytes.Equal(out[0], out[1]) {
		t.Fatal("two runs of the same graph, policy, seed and outcomes made different decisions")
	}
}

// TestResume_AnyPointSameFuture snapshots the state after every step,
// resumes a fresh engine from its JSON and checks that the rest of the run
// makes exactly the decisions the original made.
func TestResume_AnyPointSameFuture(t *testing.T) {
	g := randomGraph(t, 60, 3)
	p := richPolicy()
	ref := newSim(t, g, p, flaky).run()
	want, _ := json.Marshal(ref.log)
	steps := 0
	for cut := 0; ; cut++ {
		s := newSim(t, g, p, flaky)
		alive := true
		for k := 0; k < cut && alive; k++ {
			alive = s.step()
		}
		if !alive {
			break
		}
		snap, err := json.Marshal(s.e.State())
		if err != nil {
			t.Fatal(err)
		}
		var st State
		if err := json.Unmarshal(snap, &st); err != nil {
			t.Fatal(err)
		}
		e2, err := Resume(g, p, Options{RunID: "run-1", Seed: "seed-1"}, st)
		if err != nil {
			t.Fatalf("cut %d: %v", cut, err)
		}
		if again, _ := json.Marshal(e2.State()); !bytes.Equal(again, snap) {
			t.Fatalf("cut %d: the resumed state differs:\n%s\n%s", cut, snap, again)
		}
		s.e = e2
		s.run()
		got, _ := json.Marshal(s.log)
		if !bytes.Equal(got, want) {
			t.Fatalf("cut %d: the resumed run decided differently", cut)
		}
		steps++
	}
	if steps < 60 {
		t.Fatalf("only %d cut points", steps)
	}
}

func TestResume_RefusesStatesThatDoNotAddUp(t *testing.T) {
	g := mustBuild(t, Spec{Nodes: nodes("a b:a c")})
	p := policy(2)
	opt := Options{RunID: "run-1", Seed: "seed-1"}
	s := newSim(t, g, p, nil)
	s.take(s.e.Next("w1"))
	base := s.e.State()
	tests := []struct {
		name  string
		edit  func(*State)
		field string
	}{
		{"schema", func(s *State) { s.SchemaVersion = "x" }, "/schema_version"},
		{"run", func(s *State) { s.RunID = "other" }, "/run_id"},
		{"seed", func(s *State) { s.Seed = "other" }, "/determinism_seed"},
		{"node count", func(s *State) { s.Nodes = s.Nodes[:2] }, "/nodes"},
		{"node id", func(s *State) { s.Nodes[1].NodeID = "z" }, "/nodes/1/node_id"},
		{"status", func(s *State) { s.Nodes[0].Status = "done" }, "/nodes/0/status"},
		{"ready before its dependency", func(s *State) { s.Nodes[1].Status = StatusReady }, "/nodes/1/status"},
		{"running without attempts", func(s *State) { s.Nodes[0].Live = nil }, "/nodes/0/live"},
		{"forged execution id", func(s *State) { s.Nodes[0].Live[0].NodeExecutionID = "nx-forged" }, "/nodes/0/live/0"},
		{"failures above attempts", func(s *State) { s.Nodes[0].Failures = 5 }, "/nodes/0/attempts"},
		{"bad output", func(s *State) { s.Nodes[0].Output = json.RawMessage("{") }, "/nodes/0/output"},
		{"completed not succeeded", func(s *State) { s.Completed = []string{"a"} }, "/completed/0"},
		{"loop count", func(s *State) { s.Loops = []LoopState{{LoopID: "x", Iteration: 1}} }, "/loops"},
		{"class", func(s *State) { s.Classes[0].Failed = -1 }, "/classes/0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, _ := json.Marshal(base)
			var st State
			json.Unmarshal(b, &st)
			tt.edit(&st)
			_, err := Resume(g, p, opt, st)
			se, ok := err.(*StateError)
			if !ok || se.Field != tt.field {
				t.Fatalf("want a StateError at %s, got %v", tt.field, err)
			}
		})
	}
}

func TestCheckpoint_ResumeAfterTheCompletedStep(t *testing.T) {
	g := mustBuild(t, Spec{Nodes: nodes("fetch parse summarize publish"), Sequential: true})
	p := policy(1)
	opt := Options{RunID: "run-1", Seed: "seed-1"}
	e, _ := NewEngine(g, p, opt)
	runs := map[string]int{}
	for k := 0; k < 2; k++ {
		d := e.Next("w")[0]
		runs[d.NodeID]++
		e.Report(d.NodeExecutionID, Outcome{Status: OutcomeSucceeded, Output: json.RawMessage(fmt.Sprintf(`{"n":%d}`, k))})
	}
	cp, err := e.Checkpoint(json.RawMessage(`{"task":"t"}`), json.RawMessage(`[]`))
	if err != nil {
		t.Fatal(err)
	}
	if cp.StepIndex != 1 || cp.CompletedStepID != "parse" || string(cp.StepOutputs["fetch"]) != `{"n":0}` {
		t.Fatalf("checkpoint %+v", cp)
	}
	b, _ := json.Marshal(cp)
	if !strings.Contains(string(b), `"stepIndex":1,"completedStepId":"parse","stepOutputs":{`) {
		t.Fatalf("checkpoint JSON %s", b)
	}
	var back Checkpoint
	json.Unmarshal(b, &back)
	e2, err := ResumeCheckpoint(g, p, opt, back)
	if err != nil {
		t.Fatal(err)
	}
	for !e2.Done() {
		ds := e2.Next("w")
		if len(ds) != 1 {
			t.Fatalf("decisions %+v", ds)
		}
		runs[ds[0].NodeID]++
		if len(runs) == 3 && ds[0].NodeID != "summarize" {
			t.Fatalf("resumed at %s, want summarize (stepIndex+1)", ds[0].NodeID)
		}
		e2.Report(ds[0].NodeExecutionID, Outcome{Status: OutcomeSucceeded})
	}
	for id, n := range runs {
		if n != 1 {
			t.Fatalf("step %s ran %d times", id, n)
		}
	}
	if out, _ := e2.Output("parse"); string(out) != `{"n":1}` {
		t.Fatalf("restored output %s", out)
	}
}

func TestCheckpoint_Validate(t *testing.T) {
	g := mustBuild(t, Spec{Nodes: nodes("a b c"), Sequential: true})
	good := Checkpoint{StepIndex: 1, CompletedStepID: "b", StepOutputs: map[string]json.RawMessage{"a": json.RawMessage(`1`), "b": json.RawMessage(`2`)},
		Context: json.RawMessage(`{}`), MemorySnapshot: json.RawMessage(`{}`)}
	if err := good.Validate(g); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		edit  func(*Checkpoint)
		field string
	}{
		{"index out of range", func(c *Checkpoint) { c.StepIndex = 3 }, "stepIndex"},
		{"negative index", func(c *Checkpoint) { c.StepIndex = -1 }, "stepIndex"},
		{"wrong step id", func(c *Checkpoint) { c.CompletedStepID = "a" }, "completedStepId"},
		{"missing outputs", func(c *Checkpoint) { c.StepOutputs = nil }, "stepOutputs"},
		{"missing one output", func(c *Checkpoint) { delete(c.StepOutputs, "a") }, "stepOutputs"},
		{"output of a later step", func(c *Checkpoint) { c.StepOutputs["c"] = json.RawMessage(`3`) }, "stepOutputs"},
		{"bad output", func(c *Checkpoint) { c.StepOutputs["b"] = json.RawMessage(`{`) }, "stepOutputs/b"},
		{"no context", func(c *Checkpoint) { c.Context = nil }, "context"},
		{"truncated memory", func(c *Checkpoint) { c.MemorySnapshot = json.RawMessage(`{"x":`) }, "memorySnapshot"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := good
			c.StepOutputs = map[string]json.RawMessage{}
			for k, v := range good.StepOutputs {
				c.StepOutputs[k] = v
			}
			tt.edit(&c)
			err := c.Validate(g)
			se, ok := err.(*StateError)
			if !ok || se.Field != tt.field {
				t.Fatalf("want a StateError at %s, got %v", tt.field, err)
			}
			if _, err := ResumeCheckpoint(g, policy(1), Options{}, c); err == nil {
				t.Fatal("resumed from an invalid checkpoint")
			}
		})
	}
}

func TestReport_BadInput(t *testing.T) {
	g := mustBuild(t, Spec{Nodes: nodes("a")})
	e, _ := NewEngine(g, policy(1), Options{})
	d := e.Next("w")[0]
	if _, err := e.Report("nx-nope", Outcome{Status: OutcomeSucceeded}); err == nil {
		t.Fatal("unknown execution accepted")
	}
	if _, err := e.Report(d.NodeExecutionID, Outcome{Status: "great"}); err == nil {
		t.Fatal("unknown status accepted")
	}
	if _, err := e.Report(d.NodeExecutionID, Outcome{Status: OutcomeSucceeded, Output: json.RawMessage("{")}); err == nil {
		t.Fatal("invalid output accepted")
	}
	if e.Running() != 1 {
		t.Fatal("a refused report changed the state")
	}
}

func TestPolicy_Validate(t *testing.T) {
	for _, tt := range []struct {
		edit  func(*Policy)
		field string
	}{
		{func(p *Policy) { p.MaxConcurrency = 0 }, "max_concurrency"},
		{func(p *Policy) { p.MaxAttempts = 0 }, "max_attempts"},
		{func(p *Policy) { p.Strategy = "yolo" }, "strategy"},
		{func(p *Policy) { p.Weights.Risk = -1 }, "weights.risk"},
		{func(p *Policy) { p.Endgame.MaxDuplicates = 99 }, "endgame.max_duplicates"},
		{func(p *Policy) { p.Capacity = map[string]int{"gpu": 0} }, "capacity.gpu"},
	} {
		p := DefaultPolicy()
		tt.edit(&p)
		err := p.Validate()
		pe, ok := err.(*PolicyError)
		if !ok || pe.Field != tt.field {
			t.Fatalf("want a PolicyError at %s, got %v", tt.field, err)
		}
	}
}

func TestHalt_CancelsAndSkips(t *testing.T) {
	g := mustBuild(t, Spec{Nodes: nodes("a b c:a")})
	s := newSim(t, g, policy(1), nil)
	s.take(s.e.Next("w1"))
	ds := s.e.Halt("cancelled by the user")
	var acts []string
	for _, d := range ds {
		acts = append(acts, d.Action+" "+d.NodeID)
	}
	if strings.Join(acts, ", ") != "cancel a, skip b, skip c" {
		t.Fatalf("halt: %v", acts)
	}
	if len(s.e.Next("w2")) != 0 || s.e.Done() {
		t.Fatal("still dispatching or done with an attempt running")
	}
	s.e.Report(s.queue[0].NodeExecutionID, Outcome{Status: OutcomeCancelled})
	if !s.e.Done() {
		t.Fatal("not done")
	}
	if len(s.e.Halt("again")) != 0 {
		t.Fatal("a second halt decided something")
	}
}

// TestEndgame_DuplicatesBoundedByAttempts: a node whose every attempt fails
// gets at most max_attempts + max_duplicates attempts, then fails.
func TestEndgame_DuplicatesBoundedByAttempts(t *testing.T) {
	g := mustBuild(t, Spec{Nodes: nodes("only")})
	p := policy(3)
	p.MaxAttempts = 2
	p.Endgame = Endgame{Remaining: 2, MaxDuplicates: 1}
	s := newSim(t, g, p, func(Decision) Outcome { return Outcome{Status: OutcomeFailed, Reason: "exit_nonzero"} }).run()
	if got := s.actions(); got != "dispatch only, duplicate only#2, duplicate only#3" {
		t.Fatalf("got %s", got)
	}
	if st, reason, _ := s.e.NodeStatus("only"); st != StatusFailed || reason != "3 failed attempt(s), max_attempts 2: exit_nonzero" {
		t.Fatalf("%s %q", st, reason)
	}
}
