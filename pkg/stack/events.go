package stack

import (
	"encoding/json"
	"strings"

	"github.com/dome-registry/dome/pkg/patch"
)

// Event topics. The seed's control-event taxonomy (section 10) and the
// coordinator's own stack.* topics. Every topic has one payload type below;
// Fold refuses unknown topics and payloads with unknown members.
const (
	TopicTaskDispatched    = "task.dispatched"
	TopicTaskProgress      = "task.progress"
	TopicTaskCompleted     = "task.completed"
	TopicTaskAck           = "task.ack"
	TopicTaskTimeout       = "task.timeout"
	TopicGateComputed      = "gate.computed"
	TopicPromotionComputed = "promotion.computed"
	// the stacking loop
	TopicInitialized          = "stack.initialized"
	TopicProposalSubmitted    = "stack.proposal.submitted"
	TopicProposalDeduplicated = "stack.proposal.deduplicated"
	TopicProposalRejected     = "stack.proposal.rejected"
	TopicPlanComputed         = "stack.plan.computed"
	TopicProposalApplied      = "stack.proposal.applied"
	TopicProposalApplyFailed  = "stack.proposal.apply_failed"
	TopicProposalSplit        = "stack.proposal.split"
	TopicValidationRecorded   = "stack.validation.recorded"
	TopicRolledBack           = "stack.rolled_back"
	TopicWaveAdvanced         = "stack.wave.advanced"
	TopicPromoted             = "stack.promoted"
	TopicPolicyChanged        = "stack.policy.changed"
	TopicProposalWithdrawn    = "stack.proposal.withdrawn"
)

// ForeignTopicPrefixes are the topics of the run's ledger that other
// packages own and fold (package orchestrate: run.*, the gateway's
// gateway.*). Fold checks their envelope and sequence and passes over
// their payload.
var ForeignTopicPrefixes = []string{"run.", "gateway."}

// IsForeignTopic reports whether topic belongs to another package's fold.
func IsForeignTopic(topic string) bool {
	for _, p := range ForeignTopicPrefixes {
		if strings.HasPrefix(topic, p) {
			return true
		}
	}
	return false
}

// Topics lists every topic Fold knows, sorted.
func Topics() []string {
	return []string{
		TopicGateComputed, TopicPromotionComputed,
		TopicInitialized, TopicPlanComputed, TopicPolicyChanged, TopicPromoted,
		TopicProposalApplied, TopicProposalApplyFailed, TopicProposalDeduplicated, TopicProposalRejected,
		TopicProposalSplit, TopicProposalSubmitted, TopicProposalWithdrawn, TopicRolledBack, TopicValidationRecorded, TopicWaveAdvanced,
		TopicTaskAck, TopicTaskCompleted, TopicTaskDispatched, TopicTaskProgress, TopicTaskTimeout,
	}
}

// InitializedPayload is stack.initialized: the run, its first wave and its
// integration ref, created at the base.
type InitializedPayload struct {
	RunID           string `json:"run_id"`
	WaveID          string `json:"wave_id"`
	BaseRef         string `json:"base_ref"`
	BaseTreeHash    string `json:"base_tree_hash"`
	TargetRef       string `json:"target_ref"`
	IntegrationRef  string `json:"integration_ref"`
	DeterminismSeed string `json:"determinism_seed"`
	PolicyDigest    string `json:"policy_digest"`
	Producer        string `json:"producer"`
}

// PolicyChangedPayload is stack.policy.changed: the run's stack policy was
// replaced on purpose. Plans and validations recorded before it no longer
// count: apply wants a plan made under the new policy, promotion
// validations run under it.
type PolicyChangedPayload struct {
	FromDigest string `json:"from_digest"`
	ToDigest   string `json:"to_digest"`
	Path       string `json:"path"` // the new policy's file, relative to the run directory
	Source     string `json:"source"`
	Reason     string `json:"reason"`
	Producer   string `json:"producer"`
}

// ProposalSubmittedPayload is stack.proposal.submitted: a proposal passed
// verification and the policy pre-filter and was kept at Path.
type ProposalSubmittedPayload struct {
	ProposalID     string      `json:"proposal_id"`
	WaveID         string      `json:"wave_id"`
	Path           string      `json:"path"`            // relative to the run directory
	ArtifactDigest string      `json:"artifact_digest"` // sha256 of the file's bytes
	PayloadDigest  string      `json:"payload_digest"`
	DiffDigest     string      `json:"diff_digest"`
	PatchID        string      `json:"patch_id"` // git patch-id --stable of the diff
	BaseRef        string      `json:"base_ref"`
	IdempotencyKey string      `json:"idempotency_key"`
	WorkerID       string      `json:"worker_id"`
	CreatedAt      string      `json:"created_at"`
	KID            string      `json:"kid,omitempty"`
	TouchedFiles   []string    `json:"touched_files"`
	IntentTags     []string    `json:"intent_tags"`
	Risk           Risk        `json:"risk"` // as the coordinator assessed it
	DeclaredRisk   string      `json:"declared_risk_class"`
	Constraints    Constraints `json:"constraints"`
}

// Constraints is what the plan needs from a proposal's declarations.
type Constraints struct {
	Atomicity    string `json:"atomicity"`
	CriticalPath bool   `json:"critical_path"`
	Dependency   bool   `json:"dependency"` // touches dependency files: planned late
}

// ProposalDeduplicatedPayload is stack.proposal.deduplicated: the same
// proposal was submitted again under its idempotency key; nothing changed.
type ProposalDeduplicatedPayload struct {
	ProposalID     string `json:"proposal_id"`
	IdempotencyKey string `json:"idempotency_key"`
	ArtifactDigest string `json:"artifact_digest"`
}

// Rejection stages.
const (
	StageSubmit = "submit"
	StagePlan   = "plan"
	StageApply  = "apply"
)

// ProposalRejectedPayload is stack.proposal.rejected: a submission refused
// (the bytes kept at Path), with its reason.
type ProposalRejectedPayload struct {
	ProposalID     string `json:"proposal_id"` // "" when the submission has none readable
	WaveID         string `json:"wave_id"`
	Stage          string `json:"stage"` // submit
	Path           string `json:"path"`
	ArtifactDigest string `json:"artifact_digest"`
	DiffDigest     string `json:"diff_digest,omitempty"`
	IdempotencyKey string `json:"idempotency_key,omitempty"`
	WorkerID       string `json:"worker_id,omitempty"`
	ReasonClass    string `json:"reason_class"`
	ReasonCode     string `json:"reason_code"`
	Detail         string `json:"detail"`
}

// PlanComputedPayload is stack.plan.computed: the StackPlan kept at Path.
type PlanComputedPayload struct {
	StackPlanID         string               `json:"stack_plan_id"`
	WaveID              string               `json:"wave_id"`
	Path                string               `json:"path"`
	ArtifactDigest      string               `json:"artifact_digest"`
	PayloadDigest       string               `json:"payload_digest"`
	StartRef            string               `json:"start_ref"`
	OrderedProposals    []string             `json:"ordered_proposals"`
	Rejected            []RejectedRef        `json:"rejected"`
	CheckpointStrategy  string               `json:"checkpoint_strategy"`
	ExpectedValidations []ExpectedValidation `json:"expected_validations"`
	DeterminismSeed     string               `json:"determinism_seed"`
	FinalTree           string               `json:"final_tree"`
	Decisions           []DecisionRef        `json:"decisions"`
}

// RejectedRef is a rejection as events and state record it.
type RejectedRef struct {
	ProposalID  string `json:"proposal_id"`
	ReasonClass string `json:"reason_class"`
	ReasonCode  string `json:"reason_code"`
}

// ProposalAppliedPayload is stack.proposal.applied: a checkpoint commit
// holding the proposal is the new integration head.
type ProposalAppliedPayload struct {
	ProposalID     string `json:"proposal_id"`
	DiffDigest     string `json:"diff_digest"`
	StackPlanID    string `json:"stack_plan_id"`
	Position       int    `json:"position"`
	ParentRef      string `json:"parent_ref"`    // integration head before
	HeadRef        string `json:"head_ref"`      // integration head after
	CheckpointID   string `json:"checkpoint_id"` // the checkpoint commit
	Tree           string `json:"tree"`
	Mode           string `json:"mode"`
	ApplyResultID  string `json:"apply_result_id"`
	Path           string `json:"path"` // the ApplyResult
	ArtifactDigest string `json:"artifact_digest"`
	Recovered      bool   `json:"recovered"` // recorded after a crash from the ref and the commit trailers
}

// ProposalApplyFailedPayload is stack.proposal.apply_failed: the proposal
// did not apply onto ParentRef; Action says what the conflict policy did:
// reorder (it stays pending, retried later) or drop (it is rejected).
type ProposalApplyFailedPayload struct {
	ProposalID      string           `json:"proposal_id"`
	DiffDigest      string           `json:"diff_digest"`
	StackPlanID     string           `json:"stack_plan_id"`
	ParentRef       string           `json:"parent_ref"`
	ApplyResultID   string           `json:"apply_result_id"`
	Path            string           `json:"path"`
	ArtifactDigest  string           `json:"artifact_digest"`
	ReasonCode      string           `json:"reason_code"`
	ConflictSummary []patch.Conflict `json:"conflict_summary"`
	Action          string           `json:"action"` // reorder, drop, resolver, human
	DecisionID      string           `json:"decision_id,omitempty"`
}

// ProposalSplitPayload is stack.proposal.split: the coordinator derived a
// proposal from part of a parent (atomic_file or hunk_ok), kept at Path.
type ProposalSplitPayload struct {
	ParentProposalID  string   `json:"parent_proposal_id"`
	DerivedProposalID string   `json:"derived_proposal_id"`
	Partitioning      string   `json:"partitioning"` // by_file, by_hunk
	DiffDigest        string   `json:"diff_digest"`
	Path              string   `json:"path"`
	ArtifactDigest    string   `json:"artifact_digest"`
	Included          []string `json:"included"` // files or "path#hunk"
	Excluded          []string `json:"excluded"`
	DecisionID        string   `json:"decision_id,omitempty"`
}

// ValidationRecordedPayload is stack.validation.recorded: a
// ValidationReport kept at Path.
type ValidationRecordedPayload struct {
	ReportID       string   `json:"report_id"`
	Tier           string   `json:"tier"`
	HeadRef        string   `json:"head_ref"`
	Tree           string   `json:"tree"`
	ProposalIDs    []string `json:"proposal_ids"`
	Passed         bool     `json:"passed"`
	Path           string   `json:"path"`
	ArtifactDigest string   `json:"artifact_digest"`
}

// RolledBackPayload is stack.rolled_back: the integration ref moved back to
// a checkpoint (or the wave base); Removed lists the layers taken off, top
// first.
type RolledBackPayload struct {
	FromHeadRef  string   `json:"from_head_ref"`
	ToCheckpoint string   `json:"to_checkpoint"`
	Removed      []string `json:"removed"`
}

// WaveAdvancedPayload is stack.wave.advanced: a new wave whose base is the
// integration head; pending proposals of the old wave are superseded.
type WaveAdvancedPayload struct {
	PreviousWaveID string   `json:"previous_wave_id"`
	WaveID         string   `json:"wave_id"`
	BaseRef        string   `json:"base_ref"`
	BaseTreeHash   string   `json:"base_tree_hash"`
	Superseded     []string `json:"superseded"`
}

// PromotionComputedPayload is promotion.computed: a PromotionDecision kept
// at Path, allowed or not.
type PromotionComputedPayload struct {
	DecisionID     string   `json:"decision_id"`
	FromHeadRef    string   `json:"from_head_ref"`
	ToRef          string   `json:"to_ref"`
	Allowed        bool     `json:"allowed"`
	Missing        []string `json:"missing"`
	Path           string   `json:"path"`
	ArtifactDigest string   `json:"artifact_digest"`
}

// PromotedPayload is stack.promoted: to_ref was fast-forwarded (by
// compare-and-swap) from OldTarget to the head.
type PromotedPayload struct {
	DecisionID  string `json:"decision_id"`
	FromHeadRef string `json:"from_head_ref"`
	ToRef       string `json:"to_ref"`
	OldTarget   string `json:"old_target"`
}

// GateComputedPayload is gate.computed: a gate decision over validation
// reports.
type GateComputedPayload struct {
	GateID         string   `json:"gate_id"`
	HeadRef        string   `json:"head_ref"`
	Passed         bool     `json:"passed"`
	ReasonCodes    []string `json:"reason_codes"`
	ReportIDs      []string `json:"report_ids"`
	Path           string   `json:"path,omitempty"`
	ArtifactDigest string   `json:"artifact_digest,omitempty"`
}

// TaskPayload is the payload of every task.* topic (dispatched, progress,
// completed, ack, timeout), with correlation keys (run_id is the
// envelope's).
type TaskPayload struct {
	TaskID          string   `json:"task_id"`
	WaveID          string   `json:"wave_id,omitempty"`
	NodeID          string   `json:"node_id,omitempty"`
	NodeExecutionID string   `json:"node_execution_id,omitempty"`
	Attempt         int      `json:"attempt,omitempty"`
	WorkerID        string   `json:"worker_id,omitempty"`
	Reason          string   `json:"reason,omitempty"` // a reason code (task.completed, task.timeout)
	Detail          string   `json:"detail,omitempty"`
	ArtifactRefs    []string `json:"artifact_refs,omitempty"` // proposal ids, artifact paths
	// Data is what the coordinator that recorded the event needs to replay
	// it (for dome run, package orchestrate: the SchedulingDecision of a
	// dispatch, the outcome of a completion, the task result of an ack).
	// The stack keeps the other members.
	Data json.RawMessage `json:"data,omitempty"`
}

// ProposalWithdrawnPayload is stack.proposal.withdrawn: the coordinator
// took back a pending proposal because the attempt that submitted it did
// not pass (it failed, was lost with a crashed coordinator, or lost an
// endgame race). It is never planned.
type ProposalWithdrawnPayload struct {
	ProposalID string `json:"proposal_id"`
	Reason     string `json:"reason"` // a reason code
	Detail     string `json:"detail,omitempty"`
}
