// Package orchestrate is dome run: a work queue (pkg/runspec) scheduled in
// waves by the pure engine of pkg/workflow, each attempt a sandboxed worker
// (pkg/sandbox) that can only read the wave's base and propose patches
// through the gateway (pkg/gateway), and the proposals stacked by the
// existing coordinator (pkg/stack): submit at the gateway, then per wave
// plan, apply, and at the end validate, gate and promote.
//
// Per attempt the coordinator mints the node_execution_id (the engine
// derives it from the seed, the run, the node and the attempt), derives
// the grant (policy ∩ resolver(required capabilities) ∩ the task's runtime
// card, narrowed by the task's constraints) and issues it bound to the run,
// wave, worker and attempt, builds and validates the SpawnSpec, and hands
// the job to a Dispatcher (Local: a scratch copy of the base made from git
// objects holding only what the grant may read, the gateway's socket, the
// dome binary and the user's tools bound read-only, the grant's wall time).
// A wave ends when nothing runs and nothing more may start; its proposals
// are planned and applied onto the integration ref, a node whose proposal
// did not hold is reopened (it runs again on the next wave's base), and the
// wave baseline advances to the integration head. The engine's wave
// barrier keeps a node from starting before the wave after its
// dependencies passed, so it always sees their changes.
//
// The run's ledger (ops/runs/<run>/events, shared with the stack and the
// gateway) is the source of truth. Every engine input is an event
// (task.completed with its outcome, run.integrated with its reopens,
// run.halt) and every decision is recorded right after the input that
// produced it (task.dispatched for starts, run.decision for cancels, skips
// and reopens), so Replay re-derives each SchedulingDecision from the
// queue, the run policy, the seed and the ledger, byte for byte, and folds
// the run's State (run.state.json: the engine's state, the tasks, the waves
// and the have/need view of every node). A coordinator killed at any point
// resumes from the ledger: decisions derived but not yet recorded are
// recorded, attempts that were running are reported lost (run again without
// being charged, their proposals withdrawn and their grants revoked),
// results completed but not acknowledged are written and acknowledged, and
// an interrupted integration is finished by the stack's reconciliation, so
// no acknowledged result is lost and no layer is applied twice.
//
// The package reads its inputs through the values it is given and the
// run's folder; it prints nothing. Time comes from Config.Now.
package orchestrate
