package orchestrate

import (
	"github.com/dome-registry/dome/pkg/gateway"
	"github.com/dome-registry/dome/pkg/runspec"
	"github.com/dome-registry/dome/pkg/workflow"
)

// The run's own topics (the stack folds task.*, gate.computed and
// promotion.computed; package gateway owns gateway.*).
const (
	TopicStarted    = "run.started"    // the run's pinned inputs; the first session
	TopicResumed    = "run.resumed"    // a coordinator took the run over after another stopped or died
	TopicDecision   = "run.decision"   // a SchedulingDecision that starts nothing (cancel, skip, reopen)
	TopicHalt       = "run.halt"       // the run halts (cancelled, a budget spent): an engine input
	TopicIntegrated = "run.integrated" // a wave's proposals were planned and applied: an engine input (its reopens)
	TopicStopped    = "run.stopped"    // the run ended, and why
)

// Stop reasons of a run.
const (
	StopConstraintsMet   = "constraints_met"   // every node passed, the head validated (and promoted, unless not asked)
	StopConstraintsUnmet = "constraints_unmet" // a node failed, or the head did not validate
	StopHumanGate        = "human_gate"        // promotion needs a person's approval (--approved-by)
	StopBudgetExhausted  = "budget_exhausted"  // the queue's max_total_attempts or max_wall_seconds
	StopCancelled        = "cancelled"         // dome run cancel
)

// Reason codes of an attempt's outcome, beside the sandbox's (ok,
// exit_nonzero, signaled, timeout, process_limit, output_limit,
// file_size_limit, cancelled).
const (
	ReasonLost             = "lost"              // its coordinator died while it ran
	ReasonCallFlood        = "call_flood"        // it kept calling after its calls were refused: killed
	ReasonEndgameLost      = "endgame_lost"      // another attempt of the node passed first: cancelled
	ReasonHalted           = "halted"            // the run halted: cancelled
	ReasonMissingOutput    = "missing_output"    // it exited 0 without a required output
	ReasonProposalRejected = "proposal_rejected" // the stack refused its proposal
	ReasonPrepareFailed    = "prepare_failed"    // the attempt could not be set up (grant, spawn spec, scratch)
	ReasonConflict         = "conflict"          // its proposal did not apply onto the wave's head (reopened)
)

// KeyRef names the coordinator key that signs a session's grants.
type KeyRef struct {
	KID       string `json:"kid"`
	PublicKey string `json:"public_key"`
}

// StartedPayload is run.started.
type StartedPayload struct {
	ManifestDigest    string              `json:"manifest_digest"`
	QueueDigest       string              `json:"queue_digest"`
	RunPolicyDigest   string              `json:"run_policy_digest"`
	StackPolicyDigest string              `json:"stack_policy_digest"`
	BaseRef           string              `json:"base_ref"`
	RegistryCommit    string              `json:"registry_commit"`
	TargetRef         string              `json:"target_ref"`
	Promote           bool                `json:"promote"`
	Seed              string              `json:"determinism_seed"`
	MaxConcurrency    int                 `json:"max_concurrency"` // the --max-concurrency override (0: none)
	Sandbox           runspec.SandboxInfo `json:"sandbox"`
	Dispatcher        string              `json:"dispatcher"`
	Coordinator       KeyRef              `json:"coordinator"`
	WorkDir           string              `json:"work_dir,omitempty"` // the session's scratch folders (removed by the next session)
}

// ResumedPayload is run.resumed.
type ResumedPayload struct {
	Session     int      `json:"session"`
	Coordinator KeyRef   `json:"coordinator"`
	Lost        []string `json:"lost"`               // task ids that were running when the last coordinator stopped
	WorkDir     string   `json:"work_dir,omitempty"` // this session's scratch folders
	Removed     string   `json:"removed,omitempty"`  // earlier sessions', removed (space-separated)
}

// GrantRef is what the ledger keeps of an attempt's grant. The grant itself
// is a credential: only the worker's environment holds it, and the
// SpawnSpec names it by digest (tool_profile_ref).
type GrantRef struct {
	JTI       string `json:"jti"`
	ProfileID string `json:"profile_id"`
	Digest    string `json:"digest"`
	ExpiresAt string `json:"expires_at"`
	KID       string `json:"kid"`
}

// DispatchData is the data of task.dispatched.
type DispatchData struct {
	Decision    workflow.Decision `json:"decision"`
	TaskSpecRef string            `json:"task_spec_ref"`
	Grant       *GrantRef         `json:"grant,omitempty"`
	SpawnDigest string            `json:"spawn_spec_digest,omitempty"`
	WallSeconds int64             `json:"wall_seconds,omitempty"` // the attempt's wall-time limit
	Error       string            `json:"error,omitempty"`        // the attempt could not be set up: it completes failed
}

// SandboxSummary is how an attempt's process ended.
type SandboxSummary struct {
	Kind        string `json:"kind"` // bubblewrap, none
	Reason      string `json:"reason"`
	Detail      string `json:"detail,omitempty"`
	ExitCode    int    `json:"exit_code"`
	Signal      string `json:"signal,omitempty"`
	WallMS      int64  `json:"wall_ms"`
	StdoutBytes int64  `json:"stdout_bytes"`
	StderrBytes int64  `json:"stderr_bytes"`
	Processes   int    `json:"processes,omitempty"`
}

// OutputRef is one file an attempt left in its outputs (or its logs),
// kept under tasks/<task_id>/outputs/.
type OutputRef struct {
	Path   string `json:"path"` // relative to the task's outputs folder
	Kind   string `json:"kind"` // log, evidence
	Size   int64  `json:"size"`
	Digest string `json:"digest"`
}

// CompletedData is the data of task.completed: what the engine was told,
// and what the attempt did.
type CompletedData struct {
	Outcome   workflow.Outcome      `json:"outcome"`
	Detail    string                `json:"detail,omitempty"`
	Sandbox   *SandboxSummary       `json:"sandbox,omitempty"`
	Gateway   *gateway.Summary      `json:"gateway,omitempty"`
	Outputs   []OutputRef           `json:"outputs,omitempty"`
	Withdrawn []string              `json:"withdrawn,omitempty"` // its proposals taken back (it did not pass)
	Missing   []string              `json:"missing,omitempty"`   // required outputs it did not make
	Evidence  map[string]string     `json:"evidence,omitempty"`  // evidence kind -> output path
	Proposals []gateway.ProposalRef `json:"proposals,omitempty"`
}

// AckData is the data of task.ack: the task result, durable.
type AckData struct {
	Result string `json:"result"` // tasks/<task_id>/task.result.json
	Digest string `json:"digest"` // of its bytes
}

// DecisionPayload is run.decision.
type DecisionPayload struct {
	Decision workflow.Decision `json:"decision"`
}

// HaltPayload is run.halt.
type HaltPayload struct {
	Reason string `json:"reason"`
}

// TaskProposal names a task's proposal and what became of it.
type TaskProposal struct {
	TaskID     string `json:"task_id"`
	NodeID     string `json:"node_id"`
	ProposalID string `json:"proposal_id"`
	Checkpoint string `json:"checkpoint,omitempty"` // the layer holding it
	Reason     string `json:"reason,omitempty"`     // a reopen's reason code and detail
}

// IntegratedPayload is run.integrated: a wave's proposals on the canvas.
type IntegratedPayload struct {
	WaveID      string         `json:"wave_id"`
	BaseRef     string         `json:"base_ref"`
	HeadRef     string         `json:"head_ref"`
	StackPlanID string         `json:"stack_plan_id,omitempty"`
	Applied     []TaskProposal `json:"applied"`
	Redundant   []TaskProposal `json:"redundant"` // already on the canvas (the same change)
	Reopened    []TaskProposal `json:"reopened"`  // did not hold: the node runs again on the next base
	Dropped     []TaskProposal `json:"dropped"`   // did not hold, and the node (a loop's) cannot run again
}

// StoppedPayload is run.stopped.
type StoppedPayload struct {
	Reason    string           `json:"reason"`
	Detail    string           `json:"detail"`
	HeadRef   string           `json:"head_ref"`
	TargetRef string           `json:"target_ref,omitempty"`
	Promoted  bool             `json:"promoted"`
	Summary   workflow.Summary `json:"summary"`
}
