// Package stack is the stacking coordinator of the orchestration seed
// (sections 6 to 8 and 10): workers' PatchProposals are verified, planned,
// applied layer by layer onto one integration ref with a checkpoint commit
// per layer, validated, rolled back and promoted, and every decision is an
// event in the run's ledger (package ledger) from which the run's State is
// folded. It owns the artifact payload types (PatchProposal, StackPlan,
// SelectionDecision, ConflictDecision, ApplyResult, ValidationReport,
// PromotionDecision, each sealed with the standard header of package
// artifact), the event topics and their payloads, the State and Fold, the
// stack policy (policy/stack_policy.json) and the run directory layout.
// It prints nothing and reads no clock: times are inputs.
//
// Run directory layout (under <repo>/ops/runs/<run_id>/):
//
//	events/event.<sequence>.json      the ledger: the source of truth (package ledger)
//	events/.lock                      the single writer's flock(2) lock
//	state.json                        canonical JSON of State after the last event;
//	                                  a view re-derived by Replay, byte for byte
//	stack/proposals/<proposal_id>.patch_proposal.json
//	                                  accepted PatchProposals, as submitted (sealed)
//	stack/rejected/<sha256 hex>.json  submissions refused at submit, as received
//	stack/plans/<stack_plan_id>.stack_plan.json
//	                                  every StackPlan computed (sealed)
//	stack/decisions/<decision_id>.selection_decision.json
//	stack/decisions/<decision_id>.conflict_decision.json
//	stack/apply/<apply_result_id>.apply_result.json
//	stack/validation/<report_id>.validation_report.json
//	gate/gate.decision.json           the last gate decision (seed layout)
//	promotion/promotion.decision.json the last PromotionDecision (seed layout)
//	tasks/<task_id>/task.result.json  task results of task.* events (seed layout)
//
// Every file is written with a temporary file, fsync, rename and fsync of
// its folder; every artifact file is bound to its event by the digest of its
// bytes, so a file edited after the fact no longer matches the ledger.
// Integration refs are refs/dome/integration/<run_id>, moved only by
// compare-and-swap.
package stack
