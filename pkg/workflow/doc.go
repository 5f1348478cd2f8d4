// Package workflow is dome's pure, deterministic DAG engine, shared by the wave
// coordinator (dome run: work-queue tasks dispatched to sandboxed workers) and
// the agent domain (workflow steps of an agent profile). It owns graph
// integrity (duplicate, empty and unknown ids, self-dependencies and cycles,
// each refused with the nodes and the cycle's path; a cycle passes only as a
// declared loop with a bounded number of iterations), topological waves,
// priority scoring (critical path and blocking score, rarity of scarce
// capacity, confidence from earlier outcomes, risk penalty), the deterministic
// tie-breaks (priority group, node id, task spec digest), a concurrency
// limit and per-key capacities, retries, endgame duplicates (bounded extra
// attempts of the last blockers, the first passing result accepted and the
// others cancelled), the failure strategies fail_fast, continue_on_error and
// rollback (compensating steps in reverse completion order), a wave barrier
// (a node a success makes ready waits for the next wave, so that it starts
// from a base holding its dependencies' changes), attempts lost with their
// coordinator (run again without being charged), Reopen (a passed node whose
// result did not hold runs again, charged as a failure), and a state that
// can be snapshotted and resumed.
//
// It does no I/O, reads no clock and draws no random numbers: the caller
// feeds outcomes in, takes Decisions out and keeps them (as ledger events,
// checkpoints, SchedulingDecision artifacts). The same graph, policy, seed
// and sequence of outcomes always give the same Decisions byte for byte,
// which is what makes a run replayable.
package workflow
