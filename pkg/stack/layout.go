package stack

import (
	"path/filepath"
	"strings"

	"github.com/dome-registry/dome/pkg/ledger"
)

// RunsDir is where runs live, relative to the repository's worktree.
const RunsDir = "ops/runs"

// Layout names the files of one run. Root is the run directory
// (<repo>/ops/runs/<run_id>).
type Layout struct {
	Root  string
	RunID string
}

// NewLayout returns the layout of run runID under opsRuns (<repo>/ops/runs).
func NewLayout(opsRuns, runID string) Layout {
	return Layout{Root: filepath.Join(opsRuns, runID), RunID: runID}
}

// Rel returns p relative to the run directory, slash-separated, as events
// record paths.
func (l Layout) Rel(p string) string {
	r, err := filepath.Rel(l.Root, p)
	if err != nil {
		return filepath.ToSlash(p)
	}
	return filepath.ToSlash(r)
}

// Abs turns a path recorded in an event back into a file path.
func (l Layout) Abs(rel string) string { return filepath.Join(l.Root, filepath.FromSlash(rel)) }

// EventsDir is the ledger folder.
func (l Layout) EventsDir() string { return filepath.Join(l.Root, ledger.EventsDir) }

// StatePath is state.json.
func (l Layout) StatePath() string { return filepath.Join(l.Root, "state.json") }

// ProposalPath is where an accepted proposal is kept.
func (l Layout) ProposalPath(proposalID string) string {
	return filepath.Join(l.Root, "stack", "proposals", proposalID+".patch_proposal.json")
}

// RejectedPath is where a refused submission is kept, by the hex of the
// digest of its bytes.
func (l Layout) RejectedPath(digestHex string) string {
	return filepath.Join(l.Root, "stack", "rejected", digestHex+".json")
}

// PlanPath is where a StackPlan is kept.
func (l Layout) PlanPath(planID string) string {
	return filepath.Join(l.Root, "stack", "plans", planID+".stack_plan.json")
}

// SelectionDecisionPath is where a SelectionDecision is kept.
func (l Layout) SelectionDecisionPath(id string) string {
	return filepath.Join(l.Root, "stack", "decisions", id+".selection_decision.json")
}

// ConflictDecisionPath is where a ConflictDecision is kept.
func (l Layout) ConflictDecisionPath(id string) string {
	return filepath.Join(l.Root, "stack", "decisions", id+".conflict_decision.json")
}

// ApplyResultPath is where an ApplyResult is kept.
func (l Layout) ApplyResultPath(id string) string {
	return filepath.Join(l.Root, "stack", "apply", id+".apply_result.json")
}

// ValidationReportPath is where a ValidationReport is kept.
func (l Layout) ValidationReportPath(id string) string {
	return filepath.Join(l.Root, "stack", "validation", id+".validation_report.json")
}

// GateDecisionPath is gate/gate.decision.json.
func (l Layout) GateDecisionPath() string { return filepath.Join(l.Root, "gate", "gate.decision.json") }

// PromotionDecisionPath is promotion/promotion.decision.json.
func (l Layout) PromotionDecisionPath() string {
	return filepath.Join(l.Root, "promotion", "promotion.decision.json")
}

// TaskResultPath is tasks/<task_id>/task.result.json.
func (l Layout) TaskResultPath(taskID string) string {
	return filepath.Join(l.Root, "tasks", taskID, "task.result.json")
}

// PolicyFile is where the run keeps the stack policy of the given digest
// (its canonical bytes, named by the digest's hex): the policy the run was
// started with, and each one a policy change brought in.
func (l Layout) PolicyFile(digest string) string {
	return filepath.Join(l.Root, "policy", strings.TrimPrefix(digest, "sha256:")+".stack_policy.json")
}

// IntegrationRef is the ref a run stacks onto.
func IntegrationRef(runID string) string { return "refs/dome/integration/" + runID }
