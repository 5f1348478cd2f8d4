package stack

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/dome-registry/dome/pkg/canonical"
	"github.com/dome-registry/dome/pkg/ledger"
)

// StateSchema is the schema_version of state.json.
const StateSchema = "dome.stack_state/v1"

// Proposal statuses.
const (
	StatusSubmitted  = "submitted"   // verified, not yet planned
	StatusPlanned    = "planned"     // in the current plan
	StatusDeferred   = "deferred"    // did not apply; retried later (reorder)
	StatusApplied    = "applied"     // a layer of the integration head
	StatusRejected   = "rejected"    // refused (submit, plan or apply); terminal
	StatusRolledBack = "rolled_back" // was applied, taken off by a rollback; plannable again
	StatusSplit      = "split"       // replaced by a derived proposal
	StatusSuperseded = "superseded"  // its wave ended before it was applied
	StatusWithdrawn  = "withdrawn"   // taken back by the coordinator: the attempt that made it did not pass; terminal
)

// pending reports whether a proposal in status s may still be applied.
func pending(s string) bool {
	return s == StatusSubmitted || s == StatusPlanned || s == StatusDeferred || s == StatusRolledBack
}

// plannable reports whether a plan considers q: pending, or rejected by an
// earlier plan (plan rejections are provisional: every plan decides again).
func plannable(q *ProposalState) bool {
	return pending(q.Status) || q.Status == StatusRejected && q.RejectedStage == StagePlan
}

// State is what the events of a run amount to. It is written to state.json
// (canonical JSON) after every event and re-derived by Replay.
type State struct {
	SchemaVersion   string `json:"schema_version"`
	RunID           string `json:"run_id"`
	Sequence        int64  `json:"sequence"` // last event folded
	LastEventID     string `json:"last_event_id"`
	Initialized     bool   `json:"initialized"`
	Wave            int    `json:"wave"`
	WaveID          string `json:"wave_id"`
	BaseRef         string `json:"base_ref"`
	BaseTreeHash    string `json:"base_tree_hash"`
	TargetRef       string `json:"target_ref"`
	IntegrationRef  string `json:"integration_ref"`
	IntegrationHead string `json:"integration_head"`
	DeterminismSeed string `json:"determinism_seed"`
	PolicyDigest    string `json:"policy_digest"`
	// PolicySequence is the event that set PolicyDigest: stack.initialized
	// or the last stack.policy.changed. Plans and validations recorded
	// before it were made under another policy.
	PolicySequence int64                     `json:"policy_sequence"`
	PolicyChanges  []PolicyChangeState       `json:"policy_changes"`
	Waves          []WaveState               `json:"waves"`
	Proposals      map[string]*ProposalState `json:"proposals"`
	// ProposalsByStatus is derived from Proposals by Fold and Marshal;
	// Apply clears it. Read it through ByStatus.
	ProposalsByStatus map[string][]string       `json:"proposals_by_status"`
	IdempotencyKeys   map[string]IdempotencyUse `json:"idempotency_keys"`
	Plan              *PlanState                `json:"plan"`
	Applied           []AppliedLayer            `json:"applied"` // layers of the integration head, bottom first
	Rejections        []RejectionState          `json:"rejections"`
	Validations       []ValidationState         `json:"validations"`
	Gates             []GateComputedPayload     `json:"gates"`
	Promotions        []PromotionState          `json:"promotions"`
	Promoted          *PromotedPayload          `json:"promoted"`
	Tasks             map[string]*TaskState     `json:"tasks"`
}

// WaveState is one wave of the run.
type WaveState struct {
	Wave         int    `json:"wave"`
	WaveID       string `json:"wave_id"`
	BaseRef      string `json:"base_ref"`
	BaseTreeHash string `json:"base_tree_hash"`
	Sequence     int64  `json:"sequence"` // event that started it
}

// ProposalState is one proposal as the run knows it.
type ProposalState struct {
	ProposalID     string      `json:"proposal_id"`
	WaveID         string      `json:"wave_id"`
	Status         string      `json:"status"`
	Path           string      `json:"path"`
	ArtifactDigest string      `json:"artifact_digest"`
	DiffDigest     string      `json:"diff_digest"`
	PatchID        string      `json:"patch_id"`
	BaseRef        string      `json:"base_ref"`
	IdempotencyKey string      `json:"idempotency_key"`
	WorkerID       string      `json:"worker_id"`
	CreatedAt      string      `json:"created_at"`
	TouchedFiles   []string    `json:"touched_files"`
	IntentTags     []string    `json:"intent_tags"`
	Risk           Risk        `json:"risk"`
	Constraints    Constraints `json:"constraints"`
	DerivedFrom    string      `json:"derived_from,omitempty"`
	CheckpointID   string      `json:"checkpoint_id,omitempty"`
	ReasonCode     string      `json:"reason_code,omitempty"`
	RejectedStage  string      `json:"rejected_stage,omitempty"` // submit is never a proposal; plan or apply
	Attempts       int         `json:"attempts"`                 // failed applies
	SubmittedSeq   int64       `json:"submitted_sequence"`
}

// IdempotencyUse is what an idempotency key was used for.
type IdempotencyUse struct {
	ProposalID     string `json:"proposal_id"`
	ArtifactDigest string `json:"artifact_digest"`
	PayloadDigest  string `json:"payload_digest"`
}

// PlanState is the current plan.
type PlanState struct {
	PlanComputedPayload
	Sequence int64 `json:"sequence"`
}

// AppliedLayer is one layer of the integration head.
type AppliedLayer struct {
	ProposalID     string `json:"proposal_id"`
	WaveID         string `json:"wave_id"`
	DiffDigest     string `json:"diff_digest"`
	StackPlanID    string `json:"stack_plan_id"`
	ParentRef      string `json:"parent_ref"`
	CheckpointID   string `json:"checkpoint_id"`
	Tree           string `json:"tree"`
	ApplyResultID  string `json:"apply_result_id"`
	Path           string `json:"path"`
	ArtifactDigest string `json:"artifact_digest"`
	Sequence       int64  `json:"sequence"`
}

// RejectionState is one rejection, in event order.
type RejectionState struct {
	ProposalID     string `json:"proposal_id"`
	Stage          string `json:"stage"`
	ReasonClass    string `json:"reason_class"`
	ReasonCode     string `json:"reason_code"`
	Detail         string `json:"detail"`
	Path           string `json:"path,omitempty"`
	ArtifactDigest string `json:"artifact_digest,omitempty"`
	Sequence       int64  `json:"sequence"`
}

// ValidationState is one recorded validation.
type ValidationState struct {
	ValidationRecordedPayload
	Sequence int64 `json:"sequence"`
}

// PromotionState is one promotion decision.
type PromotionState struct {
	PromotionComputedPayload
	Sequence int64 `json:"sequence"`
}

// TaskState is the last word on one task.
type TaskState struct {
	TaskID          string   `json:"task_id"`
	Status          string   `json:"status"` // dispatched, progress, completed, ack, timeout
	WaveID          string   `json:"wave_id,omitempty"`
	NodeID          string   `json:"node_id,omitempty"`
	NodeExecutionID string   `json:"node_execution_id,omitempty"`
	Attempt         int      `json:"attempt,omitempty"`
	WorkerID        string   `json:"worker_id,omitempty"`
	Reason          string   `json:"reason,omitempty"`
	Detail          string   `json:"detail,omitempty"`
	ArtifactRefs    []string `json:"artifact_refs,omitempty"`
	Sequence        int64    `json:"sequence"`
}

// NewState returns the state of a run with no events.
func NewState(runID string) State {
	s := State{SchemaVersion: StateSchema, RunID: runID}
	s.normalize()
	return s
}

// normalize makes empty collections non-nil (so state.json shows [] and {})
// and recomputes proposals_by_status.
func (s *State) normalize() {
	s.ensure()
	s.ProposalsByStatus = s.byStatus()
}

// ByStatus returns proposals_by_status: the proposal ids under each status,
// sorted. Apply leaves it to be recomputed, at the end of a Fold or here.
func (s *State) ByStatus() map[string][]string {
	if s.ProposalsByStatus == nil {
		s.ProposalsByStatus = s.byStatus()
	}
	return s.ProposalsByStatus
}

func (s *State) byStatus() map[string][]string {
	by := map[string][]string{}
	for id, p := range s.Proposals {
		by[p.Status] = append(by[p.Status], id)
	}
	for _, ids := range by {
		sort.Strings(ids)
	}
	return by
}

// ensure makes empty collections non-nil.
func (s *State) ensure() {
	if s.Waves == nil {
		s.Waves = []WaveState{}
	}
	if s.Proposals == nil {
		s.Proposals = map[string]*ProposalState{}
	}
	if s.IdempotencyKeys == nil {
		s.IdempotencyKeys = map[string]IdempotencyUse{}
	}
	if s.Applied == nil {
		s.Applied = []AppliedLayer{}
	}
	if s.Rejections == nil {
		s.Rejections = []RejectionState{}
	}
	if s.Validations == nil {
		s.Validations = []ValidationState{}
	}
	if s.PolicyChanges == nil {
		s.PolicyChanges = []PolicyChangeState{}
	}
	if s.Gates == nil {
		s.Gates = []GateComputedPayload{}
	}
	if s.Promotions == nil {
		s.Promotions = []PromotionState{}
	}
	if s.Tasks == nil {
		s.Tasks = map[string]*TaskState{}
	}
}

// Marshal returns the canonical bytes of s: the content of state.json.
func (s State) Marshal() ([]byte, error) {
	s.normalize()
	return canonical.Marshal(s)
}

// Fold derives the state of a run from its events, in order.
func Fold(runID string, events []ledger.Event) (State, error) {
	return foldOnto(NewState(runID), events)
}

// foldOnto folds events into s, the state of the events before them.
func foldOnto(s State, events []ledger.Event) (State, error) {
	for _, e := range events {
		if err := s.Apply(e); err != nil {
			s.normalize()
			return s, err
		}
	}
	s.normalize()
	return s, nil
}

// FoldError reports an event that does not fold: a payload that does not
// parse or a transition the state does not allow.
type FoldError struct {
	Sequence int64
	Topic    string
	Problem  string
}

func (e *FoldError) Error() string {
	return fmt.Sprintf("event %d (%s): %s", e.Sequence, e.Topic, e.Problem)
}

// Apply folds one event into s. It checks the event before changing s, so
// on error s is unchanged.
func (s *State) Apply(e ledger.Event) error {
	fail := func(format string, a ...any) error {
		return &FoldError{Sequence: e.Sequence, Topic: e.Topic, Problem: fmt.Sprintf(format, a...)}
	}
	if e.RunID != s.RunID {
		return fail("run_id %q, want %q", e.RunID, s.RunID)
	}
	if e.Sequence != s.Sequence+1 {
		return fail("sequence %d does not follow %d", e.Sequence, s.Sequence)
	}
	var err error
	switch {
	case e.Topic == TopicInitialized:
		err = s.initialized(e)
	case strings.HasPrefix(e.Topic, "task."):
		err = s.task(e)
	case IsForeignTopic(e.Topic):
		// another package's event: only its place in the sequence is ours
	case e.Topic == TopicGateComputed:
		var p GateComputedPayload
		if err = decode(e, &p); err == nil {
			s.Gates = append(s.Gates, p)
		}
	case e.Topic == TopicPromotionComputed:
		var p PromotionComputedPayload
		if err = decode(e, &p); err == nil {
			s.Promotions = append(s.Promotions, PromotionState{p, e.Sequence})
		}
	case !s.Initialized:
		err = fmt.Errorf("the run has no %s event before it", TopicInitialized)
	default:
		h, ok := handlers[e.Topic]
		if !ok {
			return fail("unknown topic (known: %s)", strings.Join(Topics(), ", "))
		}
		err = h(s, e)
	}
	if err != nil {
		return fail("%v", err)
	}
	s.Sequence = e.Sequence
	s.LastEventID = e.EventID
	// proposals_by_status is recomputed once, not after every event: a
	// fold of a run's events was quadratic in its proposals
	s.ensure()
	s.ProposalsByStatus = nil
	return nil
}

var handlers = map[string]func(*State, ledger.Event) error{
	TopicProposalSubmitted:    (*State).submitted,
	TopicProposalDeduplicated: (*State).deduplicated,
	TopicProposalRejected:     (*State).rejected,
	TopicPlanComputed:         (*State).planned,
	TopicProposalApplied:      (*State).applied,
	TopicProposalApplyFailed:  (*State).applyFailed,
	TopicProposalSplit:        (*State).split,
	TopicValidationRecorded:   (*State).validation,
	TopicRolledBack:           (*State).rolledBack,
	TopicWaveAdvanced:         (*State).waveAdvanced,
	TopicPromoted:             (*State).promoted,
	TopicPolicyChanged:        (*State).policyChanged,
	TopicProposalWithdrawn:    (*State).withdrawn,
}

// decode reads an event's payload strictly: no unknown members.
func decode(e ledger.Event, v any) error {
	dec := json.NewDecoder(bytes.NewReader(e.Payload))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("payload: %w", err)
	}
	return nil
}

func isSHA(s string) bool {
	if len(s) != 40 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// IsFullSHA reports whether s is a full lowercase 40-hex object id.
func IsFullSHA(s string) bool { return isSHA(s) }

// WaveIDFor returns the id of wave n.
func WaveIDFor(n int) string { return "wave-" + strconv.Itoa(n) }

func (s *State) initialized(e ledger.Event) error {
	var p InitializedPayload
	if err := decode(e, &p); err != nil {
		return err
	}
	switch {
	case s.Initialized:
		return fmt.Errorf("the run is already initialized")
	case p.RunID != s.RunID:
		return fmt.Errorf("payload run_id %q, want %q", p.RunID, s.RunID)
	case !isSHA(p.BaseRef) || !isSHA(p.BaseTreeHash):
		return fmt.Errorf("base_ref and base_tree_hash must be full SHAs")
	case p.WaveID != WaveIDFor(1):
		return fmt.Errorf("wave_id %q, want %q", p.WaveID, WaveIDFor(1))
	case p.IntegrationRef != IntegrationRef(s.RunID):
		return fmt.Errorf("integration_ref %q, want %q", p.IntegrationRef, IntegrationRef(s.RunID))
	}
	s.Initialized = true
	s.Wave, s.WaveID = 1, p.WaveID
	s.BaseRef, s.BaseTreeHash = p.BaseRef, p.BaseTreeHash
	s.TargetRef, s.IntegrationRef, s.IntegrationHead = p.TargetRef, p.IntegrationRef, p.BaseRef
	s.DeterminismSeed, s.PolicyDigest, s.PolicySequence = p.DeterminismSeed, p.PolicyDigest, e.Sequence
	s.Waves = append(s.Waves, WaveState{Wave: 1, WaveID: p.WaveID, BaseRef: p.BaseRef, BaseTreeHash: p.BaseTreeHash, Sequence: e.Sequence})
	return nil
}

func (s *State) task(e ledger.Event) error {
	status := strings.TrimPrefix(e.Topic, "task.")
	switch e.Topic {
	case TopicTaskDispatched, TopicTaskProgress, TopicTaskCompleted, TopicTaskAck, TopicTaskTimeout:
	default:
		return fmt.Errorf("unknown task topic")
	}
	var p TaskPayload
	if err := decode(e, &p); err != nil {
		return err
	}
	if p.TaskID == "" {
		return fmt.Errorf("task_id is empty")
	}
	s.Tasks[p.TaskID] = &TaskState{TaskID: p.TaskID, Status: status, WaveID: p.WaveID, NodeID: p.NodeID, NodeExecutionID: p.NodeExecutionID,
		Attempt: p.Attempt, WorkerID: p.WorkerID, Reason: p.Reason, Detail: p.Detail, ArtifactRefs: p.ArtifactRefs, Sequence: e.Sequence}
	return nil
}

func (s *State) closed() error {
	if s.Promoted != nil {
		return fmt.Errorf("the run was promoted at %s", s.Promoted.FromHeadRef)
	}
	return nil
}

func (s *State) submitted(e ledger.Event) error {
	var p ProposalSubmittedPayload
	if err := decode(e, &p); err != nil {
		return err
	}
	if err := s.closed(); err != nil {
		return err
	}
	switch {
	case p.ProposalID == "":
		return fmt.Errorf("proposal_id is empty")
	case s.Proposals[p.ProposalID] != nil:
		return fmt.Errorf("proposal %s is already in the run", p.ProposalID)
	case p.WaveID != s.WaveID:
		return fmt.Errorf("proposal %s is for %s, the run is in %s", p.ProposalID, p.WaveID, s.WaveID)
	case p.BaseRef != s.BaseRef:
		return fmt.Errorf("proposal %s is based on %s, the wave base is %s", p.ProposalID, p.BaseRef, s.BaseRef)
	case p.IdempotencyKey == "":
		return fmt.Errorf("proposal %s has no idempotency_key", p.ProposalID)
	}
	if u, ok := s.IdempotencyKeys[p.IdempotencyKey]; ok {
		return fmt.Errorf("idempotency_key %q is already used by %s", p.IdempotencyKey, u.ProposalID)
	}
	s.Proposals[p.ProposalID] = &ProposalState{ProposalID: p.ProposalID, WaveID: p.WaveID, Status: StatusSubmitted, Path: p.Path,
		ArtifactDigest: p.ArtifactDigest, DiffDigest: p.DiffDigest, PatchID: p.PatchID, BaseRef: p.BaseRef, IdempotencyKey: p.IdempotencyKey,
		WorkerID: p.WorkerID, CreatedAt: p.CreatedAt, TouchedFiles: nonNil(p.TouchedFiles), IntentTags: nonNil(p.IntentTags),
		Risk: p.Risk, Constraints: p.Constraints, SubmittedSeq: e.Sequence}
	s.IdempotencyKeys[p.IdempotencyKey] = IdempotencyUse{ProposalID: p.ProposalID, ArtifactDigest: p.ArtifactDigest, PayloadDigest: p.PayloadDigest}
	return nil
}

// nonNil makes a nil slice empty, so that state.json says [] rather than null.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func (s *State) deduplicated(e ledger.Event) error {
	var p ProposalDeduplicatedPayload
	if err := decode(e, &p); err != nil {
		return err
	}
	u, ok := s.IdempotencyKeys[p.IdempotencyKey]
	if !ok || u.ProposalID != p.ProposalID {
		return fmt.Errorf("idempotency_key %q was not used for %s", p.IdempotencyKey, p.ProposalID)
	}
	return nil
}

func (s *State) rejected(e ledger.Event) error {
	var p ProposalRejectedPayload
	if err := decode(e, &p); err != nil {
		return err
	}
	if p.ReasonCode == "" || p.ReasonClass == "" {
		return fmt.Errorf("reason_class and reason_code are required")
	}
	if p.Stage != StageSubmit {
		return fmt.Errorf("stage %q: only submit rejections are events of their own (plan and apply record theirs)", p.Stage)
	}
	s.Rejections = append(s.Rejections, RejectionState{ProposalID: p.ProposalID, Stage: p.Stage, ReasonClass: p.ReasonClass,
		ReasonCode: p.ReasonCode, Detail: p.Detail, Path: p.Path, ArtifactDigest: p.ArtifactDigest, Sequence: e.Sequence})
	return nil
}

func (s *State) planned(e ledger.Event) error {
	var p PlanComputedPayload
	if err := decode(e, &p); err != nil {
		return err
	}
	if err := s.closed(); err != nil {
		return err
	}
	if p.WaveID != s.WaveID {
		return fmt.Errorf("plan for %s, the run is in %s", p.WaveID, s.WaveID)
	}
	if p.StartRef != s.IntegrationHead {
		return fmt.Errorf("plan starts at %s, the integration head is %s", p.StartRef, s.IntegrationHead)
	}
	seen := map[string]bool{}
	check := func(id string) error {
		q := s.Proposals[id]
		if q == nil {
			return fmt.Errorf("plan names unknown proposal %s", id)
		}
		if !plannable(q) || q.WaveID != s.WaveID {
			return fmt.Errorf("plan names %s, which is %s in %s", id, q.Status, q.WaveID)
		}
		if seen[id] {
			return fmt.Errorf("plan names %s twice", id)
		}
		seen[id] = true
		return nil
	}
	for _, id := range p.OrderedProposals {
		if err := check(id); err != nil {
			return err
		}
	}
	for _, r := range p.Rejected {
		if err := check(r.ProposalID); err != nil {
			return err
		}
	}
	// Pending proposals the plan leaves out keep their status.
	for _, id := range p.OrderedProposals {
		q := s.Proposals[id]
		q.Status, q.ReasonCode, q.RejectedStage = StatusPlanned, "", ""
	}
	for _, r := range p.Rejected {
		q := s.Proposals[r.ProposalID]
		q.Status, q.ReasonCode, q.RejectedStage = StatusRejected, r.ReasonCode, StagePlan
		s.Rejections = append(s.Rejections, RejectionState{ProposalID: r.ProposalID, Stage: StagePlan, ReasonClass: r.ReasonClass,
			ReasonCode: r.ReasonCode, Path: p.Path, ArtifactDigest: p.ArtifactDigest, Sequence: e.Sequence})
	}
	p.OrderedProposals, p.Rejected = nonNil(p.OrderedProposals), nonNil(p.Rejected)
	s.Plan = &PlanState{p, e.Sequence}
	return nil
}

func (s *State) applied(e ledger.Event) error {
	var p ProposalAppliedPayload
	if err := decode(e, &p); err != nil {
		return err
	}
	if err := s.closed(); err != nil {
		return err
	}
	q := s.Proposals[p.ProposalID]
	switch {
	case q == nil:
		return fmt.Errorf("unknown proposal %s", p.ProposalID)
	case !pending(q.Status):
		return fmt.Errorf("proposal %s is %s", p.ProposalID, q.Status)
	case p.DiffDigest != q.DiffDigest:
		return fmt.Errorf("diff_digest %s, the proposal has %s", p.DiffDigest, q.DiffDigest)
	case p.ParentRef != s.IntegrationHead:
		return fmt.Errorf("applied onto %s, the integration head is %s", p.ParentRef, s.IntegrationHead)
	case !isSHA(p.HeadRef) || !isSHA(p.CheckpointID) || !isSHA(p.Tree):
		return fmt.Errorf("head_ref, checkpoint_id and tree must be full SHAs")
	}
	q.Status, q.CheckpointID, q.ReasonCode = StatusApplied, p.CheckpointID, ""
	s.IntegrationHead = p.HeadRef
	s.Applied = append(s.Applied, AppliedLayer{ProposalID: p.ProposalID, WaveID: q.WaveID, DiffDigest: p.DiffDigest, StackPlanID: p.StackPlanID,
		ParentRef: p.ParentRef, CheckpointID: p.CheckpointID, Tree: p.Tree, ApplyResultID: p.ApplyResultID, Path: p.Path,
		ArtifactDigest: p.ArtifactDigest, Sequence: e.Sequence})
	return nil
}

func (s *State) applyFailed(e ledger.Event) error {
	var p ProposalApplyFailedPayload
	if err := decode(e, &p); err != nil {
		return err
	}
	q := s.Proposals[p.ProposalID]
	switch {
	case q == nil:
		return fmt.Errorf("unknown proposal %s", p.ProposalID)
	case !pending(q.Status):
		return fmt.Errorf("proposal %s is %s", p.ProposalID, q.Status)
	case p.ReasonCode == "":
		return fmt.Errorf("reason_code is required")
	}
	switch p.Action {
	case ActionReorder:
		q.Status = StatusDeferred
	case ActionDrop, ActionResolver, ActionHuman:
		q.Status, q.RejectedStage = StatusRejected, StageApply
		s.Rejections = append(s.Rejections, RejectionState{ProposalID: p.ProposalID, Stage: StageApply, ReasonClass: ClassConflict,
			ReasonCode: p.ReasonCode, Detail: conflictDetail(p), Path: p.Path, ArtifactDigest: p.ArtifactDigest, Sequence: e.Sequence})
	default:
		return fmt.Errorf("action %q: want reorder, drop, resolver or human", p.Action)
	}
	q.Attempts++
	q.ReasonCode = p.ReasonCode
	return nil
}

func conflictDetail(p ProposalApplyFailedPayload) string {
	var parts []string
	for _, c := range p.ConflictSummary {
		parts = append(parts, c.String())
	}
	return strings.Join(parts, "; ")
}

func (s *State) split(e ledger.Event) error {
	var p ProposalSplitPayload
	if err := decode(e, &p); err != nil {
		return err
	}
	parent := s.Proposals[p.ParentProposalID]
	switch {
	case parent == nil:
		return fmt.Errorf("unknown parent proposal %s", p.ParentProposalID)
	case !pending(parent.Status):
		return fmt.Errorf("parent proposal %s is %s", p.ParentProposalID, parent.Status)
	case p.DerivedProposalID == "" || s.Proposals[p.DerivedProposalID] != nil:
		return fmt.Errorf("derived proposal id %q is empty or already used", p.DerivedProposalID)
	case p.Partitioning != "by_file" && p.Partitioning != "by_hunk":
		return fmt.Errorf("partitioning %q: want by_file or by_hunk", p.Partitioning)
	}
	d := *parent
	d.ProposalID, d.DerivedFrom, d.Status = p.DerivedProposalID, p.ParentProposalID, StatusPlanned
	d.Path, d.ArtifactDigest, d.DiffDigest, d.PatchID, d.IdempotencyKey = p.Path, p.ArtifactDigest, p.DiffDigest, "", ""
	d.Attempts, d.ReasonCode, d.SubmittedSeq = 0, "", e.Sequence
	s.Proposals[d.ProposalID] = &d
	parent.Status = StatusSplit
	return nil
}

func (s *State) validation(e ledger.Event) error {
	var p ValidationRecordedPayload
	if err := decode(e, &p); err != nil {
		return err
	}
	if p.ReportID == "" || p.Tier == "" || !isSHA(p.HeadRef) {
		return fmt.Errorf("report_id, tier and a full head_ref are required")
	}
	p.ProposalIDs = nonNil(p.ProposalIDs)
	s.Validations = append(s.Validations, ValidationState{p, e.Sequence})
	return nil
}

func (s *State) rolledBack(e ledger.Event) error {
	var p RolledBackPayload
	if err := decode(e, &p); err != nil {
		return err
	}
	if err := s.closed(); err != nil {
		return err
	}
	if p.FromHeadRef != s.IntegrationHead {
		return fmt.Errorf("rollback from %s, the integration head is %s", p.FromHeadRef, s.IntegrationHead)
	}
	keep := -1 // layers [0, keep] stay
	if p.ToCheckpoint != s.BaseRef {
		found := false
		for i, l := range s.Applied {
			if l.CheckpointID == p.ToCheckpoint {
				keep, found = i, true
			}
		}
		if !found {
			return fmt.Errorf("%s is not a checkpoint of the integration head nor the wave base", p.ToCheckpoint)
		}
	} else {
		// The wave base: keep the layers of earlier waves.
		for i, l := range s.Applied {
			if l.WaveID != s.WaveID {
				keep = i
			}
		}
	}
	if keep < len(s.Applied)-1 && s.Applied[keep+1].WaveID != s.WaveID {
		return fmt.Errorf("rolling back to %s would take off layers of an earlier wave", p.ToCheckpoint)
	}
	var removed []string
	for i := len(s.Applied) - 1; i > keep; i-- {
		removed = append(removed, s.Applied[i].ProposalID)
	}
	if strings.Join(removed, ",") != strings.Join(p.Removed, ",") {
		return fmt.Errorf("removed %v, the layers above %s are %v", p.Removed, p.ToCheckpoint, removed)
	}
	for _, id := range removed {
		q := s.Proposals[id]
		q.Status, q.CheckpointID = StatusRolledBack, ""
	}
	s.Applied = s.Applied[:keep+1]
	s.IntegrationHead = p.ToCheckpoint
	return nil
}

func (s *State) waveAdvanced(e ledger.Event) error {
	var p WaveAdvancedPayload
	if err := decode(e, &p); err != nil {
		return err
	}
	if err := s.closed(); err != nil {
		return err
	}
	var superseded []string
	for id, q := range s.Proposals {
		if pending(q.Status) {
			superseded = append(superseded, id)
		}
	}
	sort.Strings(superseded)
	switch {
	case p.PreviousWaveID != s.WaveID:
		return fmt.Errorf("previous_wave_id %q, the run is in %s", p.PreviousWaveID, s.WaveID)
	case p.WaveID != WaveIDFor(s.Wave+1):
		return fmt.Errorf("wave_id %q, want %q", p.WaveID, WaveIDFor(s.Wave+1))
	case p.BaseRef != s.IntegrationHead || !isSHA(p.BaseTreeHash):
		return fmt.Errorf("the new base must be the integration head %s (with its tree)", s.IntegrationHead)
	case strings.Join(superseded, ",") != strings.Join(p.Superseded, ","):
		return fmt.Errorf("superseded %v, the pending proposals are %v", p.Superseded, superseded)
	}
	for _, id := range superseded {
		s.Proposals[id].Status = StatusSuperseded
	}
	s.Wave++
	s.WaveID, s.BaseRef, s.BaseTreeHash = p.WaveID, p.BaseRef, p.BaseTreeHash
	s.Plan = nil
	s.Waves = append(s.Waves, WaveState{Wave: s.Wave, WaveID: p.WaveID, BaseRef: p.BaseRef, BaseTreeHash: p.BaseTreeHash, Sequence: e.Sequence})
	return nil
}

func (s *State) withdrawn(e ledger.Event) error {
	var p ProposalWithdrawnPayload
	if err := decode(e, &p); err != nil {
		return err
	}
	q := s.Proposals[p.ProposalID]
	switch {
	case q == nil:
		return fmt.Errorf("unknown proposal %s", p.ProposalID)
	case !pending(q.Status):
		return fmt.Errorf("proposal %s is %s: only a pending proposal is withdrawn", p.ProposalID, q.Status)
	case p.Reason == "":
		return fmt.Errorf("reason is required")
	}
	if s.Plan != nil {
		for _, id := range s.Plan.OrderedProposals {
			if id == p.ProposalID {
				return fmt.Errorf("proposal %s is in the current plan %s", p.ProposalID, s.Plan.StackPlanID)
			}
		}
	}
	q.Status, q.ReasonCode = StatusWithdrawn, p.Reason
	return nil
}

// PolicyChangeState is one stack.policy.changed event.
type PolicyChangeState struct {
	PolicyChangedPayload
	Sequence int64 `json:"sequence"`
}

func (s *State) policyChanged(e ledger.Event) error {
	var p PolicyChangedPayload
	if err := decode(e, &p); err != nil {
		return err
	}
	if err := s.closed(); err != nil {
		return err
	}
	switch {
	case p.FromDigest != s.PolicyDigest:
		return fmt.Errorf("the change replaces policy %s, the run's policy is %s", p.FromDigest, s.PolicyDigest)
	case p.ToDigest == p.FromDigest:
		return fmt.Errorf("the change keeps policy %s", p.ToDigest)
	case strings.TrimSpace(p.Reason) == "":
		return fmt.Errorf("a policy change needs a reason")
	}
	s.PolicyDigest, s.PolicySequence = p.ToDigest, e.Sequence
	s.PolicyChanges = append(s.PolicyChanges, PolicyChangeState{p, e.Sequence})
	return nil
}

func (s *State) promoted(e ledger.Event) error {
	var p PromotedPayload
	if err := decode(e, &p); err != nil {
		return err
	}
	if err := s.closed(); err != nil {
		return err
	}
	if p.FromHeadRef != s.IntegrationHead {
		return fmt.Errorf("promoted %s, the integration head is %s", p.FromHeadRef, s.IntegrationHead)
	}
	var dec *PromotionState
	for i := range s.Promotions {
		if s.Promotions[i].DecisionID == p.DecisionID {
			dec = &s.Promotions[i]
		}
	}
	if dec == nil || !dec.Allowed || dec.FromHeadRef != p.FromHeadRef || dec.ToRef != p.ToRef {
		return fmt.Errorf("no promotion.computed event allows %s -> %s under decision %s", p.FromHeadRef, p.ToRef, p.DecisionID)
	}
	s.Promoted = &p
	return nil
}

// PendingProposals returns the ids of proposals that may still be planned,
// sorted.
func (s *State) PendingProposals() []string {
	var out []string
	for id, q := range s.Proposals {
		if pending(q.Status) {
			out = append(out, id)
		}
	}
	sort.Strings(out)
	return out
}

// PlannableProposals returns the ids of proposals a plan considers, sorted:
// the pending ones and those an earlier plan rejected.
func (s *State) PlannableProposals() []string {
	var out []string
	for id, q := range s.Proposals {
		if plannable(q) && q.WaveID == s.WaveID {
			out = append(out, id)
		}
	}
	sort.Strings(out)
	return out
}

// AppliedIDs returns the proposal ids of the integration head's layers,
// bottom first.
func (s *State) AppliedIDs() []string {
	out := make([]string, 0, len(s.Applied))
	for _, l := range s.Applied {
		out = append(out, l.ProposalID)
	}
	return out
}
