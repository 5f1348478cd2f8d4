package workflow

import (
	"fmt"
	"testing"
)

// FuzzBuildAndRun reads bytes as a small graph (each byte pair a node's
// dependency), builds it and, when it holds, runs it with outcomes drawn
// from the bytes: every node ends final, no attempt is left running, and
// the policy's limits are never exceeded.
func FuzzBuildAndRun(f *testing.F) {
	f.Add([]byte{0, 1, 1, 2, 2, 0}, uint8(2), uint8(1))
	f.Add([]byte{3, 1, 4, 1, 5, 9, 2, 6}, uint8(1), uint8(3))
	f.Fuzz(func(t *testing.T, data []byte, conc, attempts uint8) {
		if len(data) > 64 {
			return
		}
		n := len(data)/2 + 1
		ns := make([]Node, n)
		for i := range ns {
			ns[i] = Node{ID: fmt.Sprintf("n%d", i), Class: fmt.Sprintf("c%d", i%2), Compensable: i%3 == 0}
			if i%4 == 1 {
				ns[i].Needs = []string{"k"}
			}
		}
		for k := 0; k+1 < len(data); k += 2 {
			a, b := int(data[k])%n, int(data[k+1])%n
			ns[a].Deps = append(ns[a].Deps, ns[b].ID)
		}
		g, err := Build(Spec{Nodes: ns})
		if err != nil {
			return
		}
		p := DefaultPolicy()
		p.MaxConcurrency = int(conc%4) + 1
		p.MaxAttempts = int(attempts%3) + 1
		p.Capacity = map[string]int{"k": 1}
		p.Endgame = Endgame{Remaining: 2, MaxDuplicates: 1}
		p.Strategy = []Strategy{ContinueOnError, FailFast, Rollback}[int(conc)%3]
		k := 0
		s := newSim(t, g, p, func(d Decision) Outcome {
			k++
			if len(data) > 0 && data[k%len(data)]%3 == 0 {
				return Outcome{Status: OutcomeFailed, Reason: "x"}
			}
			return Outcome{Status: OutcomeSucceeded}
		}).run()
		if !s.e.Done() || s.e.Running() != 0 || s.maxRunning > p.MaxConcurrency {
			t.Fatalf("done %v running %d max %d", s.e.Done(), s.e.Running(), s.maxRunning)
		}
		for i := 0; i < g.Len(); i++ {
			if st, _, _ := s.e.NodeStatus(g.Node(i).ID); !st.final() {
				t.Fatalf("node %d ends %s", i, st)
			}
		}
	})
}
