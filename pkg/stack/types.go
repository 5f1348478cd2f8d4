package stack

import (
	"github.com/dome-registry/dome/pkg/patch"
)

// Artifact kinds (the artifact_kind of each sealed document's header).
const (
	KindPatchProposal     = "dome.patch_proposal/v1"
	KindStackPlan         = "dome.stack_plan/v1"
	KindSelectionDecision = "dome.selection_decision/v1"
	KindConflictDecision  = "dome.conflict_decision/v1"
	KindApplyResult       = "dome.apply_result/v1"
	KindValidationReport  = "dome.validation_report/v1"
	KindPromotionDecision = "dome.promotion_decision/v1"
	KindGateDecision      = "dome.gate_decision/v1"
)

// DiffCanonicalization names the canonical form diff_digest is taken over:
// the diff parsed by package patch (git format, strip 1) and written back by
// patch.Format: no mail or commit header, file diffs in their order, git's
// header lines, hunk headers recomputed, binary patches re-encoded (see
// patch.CanonicalDiff).
const DiffCanonicalization = patch.DiffCanonicalization

// Atomicity policies.
const (
	AtomicProposal = "atomic_proposal" // all or nothing (default)
	AtomicFile     = "atomic_file"     // file by file
	HunkOK         = "hunk_ok"         // hunk split, with validation escalation
)

// Risk classes.
const (
	RiskLow    = "low"
	RiskMedium = "medium"
	RiskHigh   = "high"
)

// PatchProposal is the worker's artifact, the payload of a
// sealed dome.patch_proposal/v1 document whose header carries object_id =
// proposal_id, run_id, wave_id, base_ref, base_tree_hash, created_at,
// producer, inputs_hash (= diff_digest) and, when signed, kid and signature.
type PatchProposal struct {
	ProposalID           string              `json:"proposal_id"`
	BaseRef              string              `json:"base_ref"`       // full commit SHA, the wave base
	BaseTreeHash         string              `json:"base_tree_hash"` // tree of base_ref
	DiffCanonicalization string              `json:"diff_canonicalization"`
	DiffDigest           string              `json:"diff_digest"`            // sha256 of the canonical diff
	DiffRef              string              `json:"diff_ref,omitempty"`     // "git-blob:<40 hex>": the canonical diff as a blob
	DiffUnified          string              `json:"diff_unified,omitempty"` // the canonical diff inline (UTF-8 diffs only)
	TouchedFiles         []string            `json:"touched_files"`          // old and new paths, sorted
	IntentTags           []string            `json:"intent_tags"`            // tests, docs, refactor, bugfix, ... sorted
	Risk                 Risk                `json:"risk"`
	HunkFingerprints     []patch.Fingerprint `json:"hunk_fingerprints,omitempty"`
	DeclaredConstraints  DeclaredConstraints `json:"declared_constraints"`
	WorkerRunMeta        WorkerRunMeta       `json:"worker_run_meta"`
	IdempotencyKey       string              `json:"idempotency_key"`
}

// Risk is a proposal's risk (seed: surface area, deps touched, migration
// flags), with the class and score the plan orders by.
type Risk struct {
	Class            string      `json:"class"` // low, medium, high
	Score            int         `json:"score"` // higher is riskier
	SurfaceArea      SurfaceArea `json:"surface_area"`
	DepsTouched      bool        `json:"deps_touched"`      // dependency manifests or lockfiles
	LockfilesTouched bool        `json:"lockfiles_touched"` // lockfiles
	Migration        bool        `json:"migration"`         // migration paths (policy)
	Binary           bool        `json:"binary"`            // binary diffs
}

// SurfaceArea is the size of a change.
type SurfaceArea struct {
	Files        int   `json:"files"`
	Hunks        int   `json:"hunks"`
	LinesAdded   int   `json:"lines_added"`
	LinesRemoved int   `json:"lines_removed"`
	Bytes        int64 `json:"bytes"` // of the canonical diff
}

// DeclaredConstraints is what the worker promises about its change.
type DeclaredConstraints struct {
	NoDeps       bool   `json:"no_deps"`       // touches no dependency manifest or lockfile
	NoAPIChange  bool   `json:"no_api_change"` // touches no API surface (policy api_globs)
	Atomicity    string `json:"atomicity"`     // atomic_proposal, atomic_file or hunk_ok
	CriticalPath bool   `json:"critical_path"` // unblocks other work: planned early
}

// WorkerRunMeta binds a proposal to the worker that made it.
type WorkerRunMeta struct {
	WorkerID        string      `json:"worker_id"`
	ToolProfileID   string      `json:"tool_profile_id,omitempty"`
	RunID           string      `json:"run_id"`
	WaveID          string      `json:"wave_id"`
	NodeID          string      `json:"node_id,omitempty"`
	NodeExecutionID string      `json:"node_execution_id,omitempty"`
	BudgetsUsed     BudgetsUsed `json:"budgets_used"`
}

// BudgetsUsed is what the worker spent.
type BudgetsUsed struct {
	Calls  int64 `json:"calls"`
	WallMS int64 `json:"wall_ms"`
	Tokens int64 `json:"tokens"`
}

// Reason classes of rejections (seed: policy/conflict/redundant), plus the
// verification failures of submit.
const (
	ClassVerification = "verification"
	ClassPolicy       = "policy"
	ClassConflict     = "conflict"
	ClassRedundant    = "redundant"
)

// Reason codes. Each rejection carries one, with its class.
const (
	// verification
	ReasonMalformed            = "malformed"          // not a sealed document, bad JSON, digest of the payload wrong
	ReasonUnknownField         = "unknown_field"      // a member the format does not have
	ReasonMissingField         = "missing_field"      // a required member is absent or empty
	ReasonInvalidField         = "invalid_field"      // a member with a bad value
	ReasonHeaderMismatch       = "header_mismatch"    // header and payload disagree (object_id, base_ref, ...)
	ReasonRunMismatch          = "run_mismatch"       // run_id is not this run
	ReasonWaveMismatch         = "wave_mismatch"      // wave_id is not the current wave
	ReasonBaseRefNotSHA        = "base_ref_not_sha"   // base_ref is not a full commit SHA
	ReasonBaseRefMismatch      = "base_ref_mismatch"  // base_ref is not the wave base
	ReasonBaseTreeMismatch     = "base_tree_mismatch" // base_tree_hash is not the tree of base_ref
	ReasonDiffCanonicalization = "diff_canonicalization_unsupported"
	ReasonDiffUnreadable       = "diff_unreadable"        // diff_ref missing, diff does not parse
	ReasonInvalidPath          = "invalid_path"           // the diff names a path git refuses (pkg/gitpath)
	ReasonDiffDigestMismatch   = "diff_digest_mismatch"   // re-canonicalized diff hashes differently
	ReasonTouchedFilesMismatch = "touched_files_mismatch" // touched_files is not what the diff touches
	ReasonFingerprintMismatch  = "fingerprint_mismatch"   // hunk_fingerprints are not the diff's
	ReasonSignatureRequired    = "signature_required"     // policy requires a signature
	ReasonSignatureUntrusted   = "signature_untrusted"    // kid not in the trusted keys
	ReasonSignatureInvalid     = "signature_invalid"      // the signature does not verify
	ReasonIdempotencyConflict  = "idempotency_conflict"   // a different proposal under a used idempotency_key
	ReasonDuplicateProposalID  = "duplicate_proposal_id"  // a different proposal under a used proposal_id
	ReasonApplyCheckFailed     = "apply_check_failed"     // does not apply on the clean base
	ReasonConstraintViolated   = "constraint_violated"    // declared_constraints do not hold
	ReasonRunClosed            = "run_closed"             // the run was promoted
	// policy (stack_policy.json)
	ReasonForbiddenPath       = "forbidden_path"
	ReasonSizeLimit           = "size_limit"
	ReasonDependencyGated     = "dependency_gated"     // dependency change without the required intent tag
	ReasonDependencyForbidden = "dependency_forbidden" // dependency changes are not allowed
	ReasonBinaryNotAllowed    = "binary_not_allowed"
	ReasonIntentNotAllowed    = "intent_not_allowed"
	ReasonAtomicityNotAllowed = "atomicity_not_allowed"
	// plan and apply
	ReasonConflict        = "conflict"         // does not apply after the proposals before it
	ReasonDuplicateChange = "duplicate_change" // same change (patch id) as a proposal before it
	ReasonAlreadyApplied  = "already_applied"  // the change is already in the integration head
)

// PlannedProposal is one layer of a StackPlan.
type PlannedProposal struct {
	Position      int    `json:"position"` // 1-based layer
	ProposalID    string `json:"proposal_id"`
	DiffDigest    string `json:"diff_digest"`
	PriorityGroup string `json:"priority_group"`
	Mode          string `json:"mode"`          // atomicity the apply uses
	ExpectedTree  string `json:"expected_tree"` // tree after this layer in the plan's simulation
}

// Rejected is one entry of StackPlan.rejected[].
type Rejected struct {
	ProposalID      string           `json:"proposal_id"`
	DiffDigest      string           `json:"diff_digest"`
	ReasonClass     string           `json:"reason_class"` // policy, conflict, redundant
	ReasonCode      string           `json:"reason_code"`
	Detail          string           `json:"detail"`
	ConflictSummary []patch.Conflict `json:"conflict_summary,omitempty"`
	DecisionID      string           `json:"decision_id,omitempty"`
}

// ExpectedValidation is a validation the plan expects to run.
type ExpectedValidation struct {
	Tier                 string `json:"tier"` // fast, full
	When                 string `json:"when"` // per_layer, final
	RequiredForPromotion bool   `json:"required_for_promotion"`
	TimeoutSeconds       int    `json:"timeout_seconds"`
}

// TieBreak is the proposal-selection tie-break tuple, persisted.
type TieBreak struct {
	ProposalID string `json:"proposal_id"`
	CreatedAt  string `json:"created_at"`
	DiffDigest string `json:"diff_digest"`
}

// SelectionScore is how the plan ranked one proposal.
type SelectionScore struct {
	ProposalID    string   `json:"proposal_id"`
	Rank          int      `json:"rank"`           // 1-based order before simulation
	PriorityGroup string   `json:"priority_group"` // critical_path, independent, overlapping, dependencies
	GroupOrder    int      `json:"group_order"`    // 0..3, the primary key
	RiskScore     int      `json:"risk_score"`     // the secondary key
	OverlapDegree int      `json:"overlap_degree"` // proposals it overlaps at hunk level
	Score         int      `json:"score"`          // group_order*1000000 + risk_score
	TieBreak      TieBreak `json:"tie_break"`
	Selected      bool     `json:"selected"`
}

// OverlapEdge is one pair of overlapping proposals (a < b).
type OverlapEdge struct {
	A     string              `json:"a"`
	B     string              `json:"b"`
	Level string              `json:"level"` // file, hunk
	Files []string            `json:"files"`
	Hunks []patch.HunkOverlap `json:"hunks"`
}

// OverlapGraph is the plan's overlap graph.
type OverlapGraph struct {
	Nodes []string      `json:"nodes"`
	Edges []OverlapEdge `json:"edges"`
}

// DecisionRef points at a decision artifact.
type DecisionRef struct {
	Kind     string `json:"kind"` // artifact kind
	ID       string `json:"id"`
	Digest   string `json:"digest"` // sha256 of the file's bytes
	Path     string `json:"path"`   // relative to the run directory
	Proposal string `json:"proposal_id,omitempty"`
}

// StackPlan is the coordinator's plan.
type StackPlan struct {
	StackPlanID         string               `json:"stack_plan_id"`
	RunID               string               `json:"run_id"`
	WaveID              string               `json:"wave_id"`
	BaseRef             string               `json:"base_ref"`
	BaseTreeHash        string               `json:"base_tree_hash"`
	StartRef            string               `json:"start_ref"` // the integration head the plan stacks onto
	OrderedProposals    []PlannedProposal    `json:"ordered_proposals"`
	Rejected            []Rejected           `json:"rejected"`
	CheckpointStrategy  string               `json:"checkpoint_strategy"` // per_layer, per_batch
	ExpectedValidations []ExpectedValidation `json:"expected_validations"`
	DeterminismSeed     string               `json:"determinism_seed"`
	SelectionScores     []SelectionScore     `json:"selection_scores"`
	OverlapGraph        OverlapGraph         `json:"overlap_graph"`
	TieBreakOrder       []string             `json:"tie_break_order"` // proposal_id, created_at, diff_digest
	PolicyDigest        string               `json:"policy_digest"`
	Decisions           []DecisionRef        `json:"decisions"`
	FinalTree           string               `json:"final_tree"` // tree after every layer in the simulation
}

// SelectionTieBreakOrder and ConflictTieBreakOrder are the tie-break
// contracts (section 10), persisted in decision artifacts.
var (
	SelectionTieBreakOrder = []string{"proposal_id", "created_at", "diff_digest"}
	ConflictTieBreakOrder  = []string{"policy_precedence", "proposal_id", "conflict_fingerprint"}
)

// SelectionEntry is one proposal in a SelectionDecision.
type SelectionEntry struct {
	ProposalID    string   `json:"proposal_id"`
	Accepted      bool     `json:"accepted"`
	Rank          int      `json:"rank"`
	PriorityGroup string   `json:"priority_group"`
	RiskScore     int      `json:"risk_score"`
	TieBreak      TieBreak `json:"tie_break"`
	ReasonClass   string   `json:"reason_class,omitempty"`
	ReasonCode    string   `json:"reason_code,omitempty"`
	Reason        string   `json:"reason"`
}

// SelectionDecision says why proposals were accepted or rejected.
type SelectionDecision struct {
	DecisionID      string           `json:"decision_id"`
	RunID           string           `json:"run_id"`
	WaveID          string           `json:"wave_id"`
	StackPlanID     string           `json:"stack_plan_id"`
	DeterminismSeed string           `json:"determinism_seed"`
	TieBreakOrder   []string         `json:"tie_break_order"`
	Entries         []SelectionEntry `json:"entries"` // in rank order
}

// Conflict actions (reorder, split, resolver, drop) plus
// human.
const (
	ActionReorder  = "reorder"
	ActionSplit    = "split"
	ActionResolver = "resolver"
	ActionHuman    = "human"
	ActionDrop     = "drop"
)

// ConflictDecision records how one conflict was arbitrated.
type ConflictDecision struct {
	DecisionID          string           `json:"decision_id"`
	RunID               string           `json:"run_id"`
	WaveID              string           `json:"wave_id"`
	StackPlanID         string           `json:"stack_plan_id,omitempty"`
	ConflictFingerprint string           `json:"conflict_fingerprint"` // digest of the conflict summary and parties
	ProposalID          string           `json:"proposal_id"`          // the proposal that did not apply
	Against             []string         `json:"against"`              // placed proposals touching the same paths
	PolicyPrecedence    int              `json:"policy_precedence"`    // the proposal's rank: lower wins
	TieBreakOrder       []string         `json:"tie_break_order"`
	Action              string           `json:"action"` // reorder, split, resolver, human, drop
	Attempt             int              `json:"attempt"`
	ConflictSummary     []patch.Conflict `json:"conflict_summary"`
	DerivedProposalID   string           `json:"derived_proposal_id,omitempty"`
}

// ApplyResult is the outcome of applying one proposal.
type ApplyResult struct {
	ApplyResultID   string             `json:"apply_result_id"`
	RunID           string             `json:"run_id"`
	WaveID          string             `json:"wave_id"`
	StackPlanID     string             `json:"stack_plan_id"`
	Position        int                `json:"position"`
	ProposalID      string             `json:"proposal_id"`
	DiffDigest      string             `json:"diff_digest"`
	BaseRef         string             `json:"base_ref"`   // the proposal's base
	ParentRef       string             `json:"parent_ref"` // integration head before
	Applied         bool               `json:"applied"`
	HeadRef         string             `json:"head_ref"`      // integration head after (parent_ref when not applied)
	CheckpointID    string             `json:"checkpoint_id"` // the checkpoint commit ("" when not applied)
	Tree            string             `json:"tree"`
	Mode            string             `json:"mode"`
	ThreeWay        bool               `json:"three_way"`
	Files           []patch.FileResult `json:"files"`
	ConflictSummary []patch.Conflict   `json:"conflict_summary"`
	DerivedFrom     string             `json:"derived_from,omitempty"`
}

// CommandResult is one validation command's outcome.
type CommandResult struct {
	Name         string   `json:"name"`
	Argv         []string `json:"argv"`
	ExitCode     int      `json:"exit_code"`
	TimedOut     bool     `json:"timed_out"`
	DurationMS   int64    `json:"duration_ms"`
	OutputDigest string   `json:"output_digest"`
	OutputTail   string   `json:"output_tail"`
	// added by stack validate: each stream's digest (output_digest is
	// both as they arrived), the time limit, and why a command did not
	// run to its end
	StdoutDigest string `json:"stdout_digest,omitempty"`
	StderrDigest string `json:"stderr_digest,omitempty"`
	TimeLimitMS  int64  `json:"time_limit_ms,omitempty"`
	Error        string `json:"error,omitempty"`
}

// Environment identifies where validation ran.
type Environment struct {
	Tools       map[string]string `json:"tools"`                  // name -> version
	ToolDigests map[string]string `json:"tool_digests,omitempty"` // name -> sha256 of the binary
	ImageDigest string            `json:"image_digest,omitempty"`
	OS          string            `json:"os"`
	Arch        string            `json:"arch"`
}

// ValidationReport is one validation of a head.
type ValidationReport struct {
	ReportID     string          `json:"report_id"`
	RunID        string          `json:"run_id"`
	WaveID       string          `json:"wave_id"`
	Tier         string          `json:"tier"`
	HeadRef      string          `json:"head_ref"`
	CheckpointID string          `json:"checkpoint_id,omitempty"`
	Tree         string          `json:"tree"`
	ProposalIDs  []string        `json:"proposal_ids"` // included in the head, in stack order
	Passed       bool            `json:"passed"`
	Commands     []CommandResult `json:"commands"`
	Environment  Environment     `json:"environment"`
	PolicyDigest string          `json:"policy_digest"`
}

// EvidenceRef names one piece of promotion evidence.
type EvidenceRef struct {
	Kind   string `json:"kind"` // artifact kind
	ID     string `json:"id"`
	Digest string `json:"digest"`
	Path   string `json:"path"`
}

// PromotionDecision states whether from_head_ref may be promoted to to_ref
// and on what evidence.
type PromotionDecision struct {
	DecisionID    string        `json:"decision_id"`
	RunID         string        `json:"run_id"`
	FromHeadRef   string        `json:"from_head_ref"`
	ToRef         string        `json:"to_ref"`
	OldTarget     string        `json:"old_target"` // what to_ref pointed at
	PolicyVersion string        `json:"policy_version"`
	RiskClass     string        `json:"risk_class"`
	RequiredTiers []string      `json:"required_tiers"`
	Allowed       bool          `json:"allowed"`
	Missing       []string      `json:"missing"`
	Evidence      []EvidenceRef `json:"evidence"`
	HumanApproval bool          `json:"human_approval_required"`
	ApprovedBy    string        `json:"approved_by,omitempty"`
	// SignatureRequired: the policy wants this decision signed by the
	// coordinator for its risk class (signed evidence chain).
	// A signed decision carries kid and signature in its header; it cites
	// every other artifact by digest, so the signature covers the chain.
	SignatureRequired bool `json:"signature_required"`
	// LedgerSequence and LedgerDigest commit the decision to the run's event
	// log as it stood when the decision was made (events 1..LedgerSequence;
	// LedgerDigest: see LedgerDigest), so a signed decision also covers the
	// ledger: dome stack verify recomputes it.
	LedgerSequence int64    `json:"ledger_sequence"`
	LedgerDigest   string   `json:"ledger_digest"`
	StackPlanID    string   `json:"stack_plan_id"`
	ProposalIDs    []string `json:"proposal_ids"`
	IntegrationRef string   `json:"integration_ref"`
}

// GateDecision is gate decision: pass or fail with reason codes.
type GateDecision struct {
	GateID      string   `json:"gate_id"`
	RunID       string   `json:"run_id"`
	HeadRef     string   `json:"head_ref"`
	Passed      bool     `json:"passed"`
	ReasonCodes []string `json:"reason_codes"`
	ReportIDs   []string `json:"report_ids"`
}
