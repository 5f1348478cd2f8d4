package workflow

import "testing"

// BenchmarkSchedule10k builds a random 10,000-node DAG and schedules it to
// the end, every attempt passing (bench/run reports the same workload).
func BenchmarkSchedule10k(b *testing.B) {
	for b.Loop() {
		g := randomGraph(b, 10000, 1)
		e, err := NewEngine(g, richPolicy(), Options{RunID: "r", Seed: "s"})
		if err != nil {
			b.Fatal(err)
		}
		var running []string
		for !e.Done() {
			for _, d := range e.Next("w") {
				if d.Action == ActDispatch || d.Action == ActRetry || d.Action == ActDuplicate {
					running = append(running, d.NodeExecutionID)
				}
			}
			if len(running) == 0 {
				b.Fatal("stalled")
			}
			id := running[0]
			running = running[1:]
			ds, _ := e.Report(id, Outcome{Status: OutcomeSucceeded})
			for _, d := range ds {
				if d.Action == ActCancel {
					for k, r := range running {
						if r == d.NodeExecutionID {
							running = append(running[:k], running[k+1:]...)
							e.Report(r, Outcome{Status: OutcomeCancelled})
							break
						}
					}
				}
			}
		}
	}
}
