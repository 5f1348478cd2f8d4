package stack

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/dome-registry/dome/pkg/canonical"
	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/dome-registry/dome/pkg/gitstore"
	"github.com/dome-registry/dome/pkg/gitstore/gitworktree"
	"github.com/dome-registry/dome/pkg/ledger"
	"github.com/dome-registry/dome/pkg/readlimit"
	"github.com/dome-registry/dome/pkg/signing"
)

// PromoteOptions controls Promote.
type PromoteOptions struct {
	ApplyOptions
	ToRef      string              // the ref to fast-forward ("" is the run's target)
	ApprovedBy string              // who approved, where the policy wants a human
	Key        *signing.PrivateKey // signs the gate and promotion decisions (nil: unsigned)
}

// PromoteResult is what Promote did.
type PromoteResult struct {
	Decision   PromotionDecision `json:"decision"`
	Path       string            `json:"path"`
	Digest     string            `json:"artifact_digest"`
	Promoted   bool              `json:"promoted"`
	Already    bool              `json:"already"` // the run was promoted before, to the same ref at the same head
	Reconciled ReconcileReport   `json:"reconciled"`
	// Worktrees had the target checked out and were brought to the
	// promoted commit with it (they were clean).
	Worktrees []string `json:"worktrees,omitempty"`
}

// Promote fast-forwards the target ref to the integration head, by
// compare-and-swap, only on the complete evidence chain:
// the StackPlan of every layer, an ApplyResult for every applied proposal
// (files present and matching the ledger's digests, checkpoints matching
// the ref's history), passing ValidationReports of the head for the tiers
// the policy requires for the head's risk class (every tier when a layer
// came from a split), a human approval where the policy wants one, and a
// fast-forward. It always records the PromotionDecision (promotion.computed)
// and, when allowed, moves the ref and records stack.promoted; otherwise it
// returns a failed check listing what is missing.
func Promote(repo *gitstore.Repo, r *Run, opts PromoteOptions) (*PromoteResult, error) {
	s, err := newStacker(repo, r, opts.ApplyOptions)
	if err != nil {
		return nil, err
	}
	res := &PromoteResult{}
	st := &r.State
	to := opts.ToRef
	if to == "" {
		to = st.TargetRef
	}
	if err := gitstore.CheckRefName(to); err != nil || !strings.HasPrefix(to, "refs/") || strings.HasPrefix(to, "refs/dome/") {
		return res, &errkind.InputError{Source: "--to", Field: to, Problem: "not a full ref name outside refs/dome/", Hint: "write refs/heads/<branch>"}
	}
	if st.Promoted != nil {
		if st.Promoted.ToRef == to && st.Promoted.FromHeadRef == st.IntegrationHead {
			res.Promoted, res.Already = true, true
			res.Decision.DecisionID, res.Decision.FromHeadRef, res.Decision.ToRef, res.Decision.Allowed = st.Promoted.DecisionID, st.Promoted.FromHeadRef, to, true
			return res, nil
		}
		return res, &errkind.CheckError{Problem: fmt.Sprintf("run %s was promoted to %s at %s", st.RunID, st.Promoted.ToRef, st.Promoted.FromHeadRef)}
	}
	if res.Reconciled, err = s.reconcile(); err != nil {
		return res, err
	}
	head := s.head
	old, err := repo.Ref(to)
	if err != nil && !errors.Is(err, gitstore.ErrNotFound) {
		return res, err
	}
	// A target checked out in a worktree moves with it, or not at all:
	// refused here, before any decision is recorded, when the worktree has
	// changes or untracked files in the way.
	move, err := gitworktree.PrepareBranchMove(repo, to, old, head)
	if err != nil {
		if errors.Is(err, gitworktree.ErrWorktreeBusy) {
			return res, &errkind.InputError{Source: "--to", Field: to, Problem: err.Error(),
				Hint: "commit or stash the changes there (or move the untracked files away), or promote to a ref that is not checked out"}
		}
		return res, err
	}
	d := PromotionDecision{RunID: st.RunID, FromHeadRef: head.String(), ToRef: to, PolicyVersion: s.opts.Policy.Version + " " + s.opts.Policy.Digest(),
		RiskClass: RiskLow, RequiredTiers: []string{}, Missing: []string{}, Evidence: []EvidenceRef{}, ApprovedBy: opts.ApprovedBy,
		ProposalIDs: st.AppliedIDs(), IntegrationRef: s.ref}
	if !old.IsZero() {
		d.OldTarget = old.String()
	}
	if st.Plan != nil {
		d.StackPlanID = st.Plan.StackPlanID
	}
	gate := s.evidence(&d, r.log.Events())
	if s.opts.Policy.Promotion.Signature[d.RiskClass] {
		d.SignatureRequired = true
		if opts.Key == nil {
			d.Missing = append(d.Missing, fmt.Sprintf("signature: the policy wants the promotion decision signed for risk class %s (--sign-key KEY)", d.RiskClass))
		}
	}
	gateRef, err := s.recordGate(gate, st.Sequence+1, opts.Key)
	if err != nil {
		return res, err
	}
	d.Evidence = append(d.Evidence, gateRef)
	if evs := r.log.Events(); len(evs) > 0 {
		d.LedgerSequence, d.LedgerDigest = evs[len(evs)-1].Sequence, LedgerDigest(evs)
	}
	sort.SliceStable(d.Evidence, func(i, j int) bool { return d.Evidence[i].Kind < d.Evidence[j].Kind })
	if !old.IsZero() {
		if ok, err := IsAncestor(repo, old, head, maxChain); err != nil {
			return res, err
		} else if !ok {
			d.Missing = append(d.Missing, fmt.Sprintf("fast-forward: %s is at %s, which is not an ancestor of the head %s", to, old.Short(), head.Short()))
		}
	}
	d.Allowed = len(d.Missing) == 0
	b, _ := canonical.Marshal(map[string]any{"run_id": st.RunID, "from_head_ref": d.FromHeadRef, "to_ref": to, "sequence": st.Sequence + 1})
	d.DecisionID = "promotion-" + canonical.Digest(b)[len("sha256:"):][:16]
	doc, _, err := Seal(NewHeader(KindPromotionDecision, d.DecisionID, st.RunID, st.WaveID, d.FromHeadRef, s.opts.CreatedAt, s.opts.Producer), d, opts.Key)
	if err != nil {
		return res, err
	}
	// each decision keeps its own file; promotion.decision.json is the latest
	path := filepath.Join(filepath.Dir(r.Layout.PromotionDecisionPath()), d.DecisionID+".promotion_decision.json")
	digest, rel, err := r.WriteArtifact(path, doc)
	if err != nil {
		return res, err
	}
	if _, _, err := r.WriteArtifact(r.Layout.PromotionDecisionPath(), doc); err != nil {
		return res, err
	}
	res.Decision, res.Path, res.Digest = d, rel, digest
	if _, err := r.Record(TopicPromotionComputed, s.opts.CreatedAt, PromotionComputedPayload{DecisionID: d.DecisionID, FromHeadRef: d.FromHeadRef,
		ToRef: to, Allowed: d.Allowed, Missing: d.Missing, Path: rel, ArtifactDigest: digest}); err != nil {
		return res, err
	}
	if !d.Allowed {
		return res, &errkind.CheckError{Problem: fmt.Sprintf("promotion of %s to %s refused: the evidence chain is incomplete (%d missing)", head.Short(), to, len(d.Missing)),
			Details: d.Missing, Hint: "run the missing steps (dome stack validate --run " + st.RunID + " --tier ...), then promote again"}
	}
	if err := gitworktree.MoveBranch(repo, move); err != nil {
		if errors.Is(err, gitstore.ErrRefChanged) || errors.Is(err, gitstore.ErrRefExists) {
			return res, &errkind.CheckError{Problem: fmt.Sprintf("fast-forward %s to %s: %v", to, head.Short(), err), Hint: "the target moved while promoting; run the command again"}
		}
		return res, fmt.Errorf("fast-forward %s to %s: %w", to, head.Short(), err)
	}
	for _, wt := range move.Worktrees {
		res.Worktrees = append(res.Worktrees, wt.Dir)
	}
	if _, err := r.Record(TopicPromoted, s.opts.CreatedAt, PromotedPayload{DecisionID: d.DecisionID, FromHeadRef: d.FromHeadRef, ToRef: to,
		OldTarget: d.OldTarget}); err != nil {
		return res, err
	}
	res.Promoted = true
	return res, nil
}

// evidence fills d's risk class, required tiers, evidence and what is
// missing from the state, the events and the files of the run.
//
// It also returns the gate decision over the validation reports of the
// required tiers (gate/gate.decision.json): passed when every
// required tier has a passing, intact report on the head, with a reason
// code per tier that does not (validation_missing:<tier>,
// validation_failed:<tier>, validation_evidence_mismatch:<tier>).
func (s *stacker) evidence(d *PromotionDecision, events []ledger.Event) GateDecision {
	st := &s.r.State
	gate := GateDecision{RunID: st.RunID, HeadRef: d.FromHeadRef, ReasonCodes: []string{}, ReportIDs: []string{}}
	l := s.r.Layout
	present := func(rel, digest string) bool {
		b, err := readlimit.ReadFile(l.Abs(rel), MaxProposalBytes)
		return err == nil && canonical.Digest(b) == digest
	}
	if len(st.Applied) == 0 {
		d.Missing = append(d.Missing, "ApplyResult: the head holds no applied proposal (nothing to promote)")
	}
	// the plans of the layers
	plans := map[string]PlanComputedPayload{}
	for _, e := range events {
		if e.Topic == TopicPlanComputed {
			var p PlanComputedPayload
			if json.Unmarshal(e.Payload, &p) == nil {
				plans[p.StackPlanID] = p
			}
		}
	}
	seenPlan := map[string]bool{}
	split := false
	for _, layer := range st.Applied {
		q := st.Proposals[layer.ProposalID]
		if q != nil {
			if riskRank(q.Risk.Class) > riskRank(d.RiskClass) {
				d.RiskClass = q.Risk.Class
			}
			split = split || q.DerivedFrom != ""
		}
		if !seenPlan[layer.StackPlanID] {
			seenPlan[layer.StackPlanID] = true
			p, ok := plans[layer.StackPlanID]
			switch {
			case !ok:
				d.Missing = append(d.Missing, fmt.Sprintf("StackPlan %s: no stack.plan.computed event", layer.StackPlanID))
			case !present(p.Path, p.ArtifactDigest):
				d.Missing = append(d.Missing, fmt.Sprintf("StackPlan %s: %s is missing or does not match the ledger", p.StackPlanID, p.Path))
			default:
				d.Evidence = append(d.Evidence, EvidenceRef{Kind: KindStackPlan, ID: p.StackPlanID, Digest: p.ArtifactDigest, Path: p.Path})
			}
		}
		if present(layer.Path, layer.ArtifactDigest) {
			d.Evidence = append(d.Evidence, EvidenceRef{Kind: KindApplyResult, ID: layer.ApplyResultID, Digest: layer.ArtifactDigest, Path: layer.Path})
		} else {
			d.Missing = append(d.Missing, fmt.Sprintf("ApplyResult for %s: %s is missing or does not match the ledger", layer.ProposalID, layer.Path))
		}
	}
	// the ref's history is the layers' checkpoints
	if base, ok := gitstore.ParseHash(st.Waves[0].BaseRef); ok {
		chain, err := Chain(s.repo, base, s.head, len(st.Applied)+1)
		okChain := err == nil && len(chain) == len(st.Applied)
		for i := 0; okChain && i < len(chain); i++ {
			okChain = chain[i].Commit.String() == st.Applied[i].CheckpointID
		}
		if !okChain {
			d.Missing = append(d.Missing, "checkpoints: the integration ref's history from the run base is not the recorded layers")
		}
	}
	// validations
	tiers := map[string]bool{}
	for _, t := range s.opts.Policy.Validation.RequiredForPromotion[d.RiskClass] {
		tiers[t] = true
	}
	if split { // a split escalates validation to every tier
		for t := range s.opts.Policy.Validation.Tiers {
			tiers[t] = true
		}
	}
	d.RequiredTiers = sortedKeys(tiers)
	applied := strings.Join(st.AppliedIDs(), "\x00")
	for _, t := range d.RequiredTiers {
		var last *ValidationState
		for i := range st.Validations {
			v := &st.Validations[i]
			// A validation recorded before the last policy change ran
			// under another policy: it does not count.
			if v.Tier == t && v.HeadRef == d.FromHeadRef && strings.Join(v.ProposalIDs, "\x00") == applied && v.Sequence > st.PolicySequence {
				last = v
			}
		}
		switch {
		case last == nil:
			d.Missing = append(d.Missing, fmt.Sprintf("ValidationReport: tier %s has not run on the head %s%s", t, short(d.FromHeadRef), sincePolicy(st)))
			gate.ReasonCodes = append(gate.ReasonCodes, "validation_missing:"+t)
		case !last.Passed:
			d.Missing = append(d.Missing, fmt.Sprintf("ValidationReport: tier %s failed on the head %s (%s)", t, short(d.FromHeadRef), last.ReportID))
			gate.ReasonCodes = append(gate.ReasonCodes, "validation_failed:"+t)
			gate.ReportIDs = append(gate.ReportIDs, last.ReportID)
		case !present(last.Path, last.ArtifactDigest):
			d.Missing = append(d.Missing, fmt.Sprintf("ValidationReport %s: %s is missing or does not match the ledger", last.ReportID, last.Path))
			gate.ReasonCodes = append(gate.ReasonCodes, "validation_evidence_mismatch:"+t)
			gate.ReportIDs = append(gate.ReportIDs, last.ReportID)
		default:
			d.Evidence = append(d.Evidence, EvidenceRef{Kind: KindValidationReport, ID: last.ReportID, Digest: last.ArtifactDigest, Path: last.Path})
			gate.ReportIDs = append(gate.ReportIDs, last.ReportID)
		}
	}
	if s.opts.Policy.Promotion.HumanApproval[d.RiskClass] {
		d.HumanApproval = true
		if d.ApprovedBy == "" {
			d.Missing = append(d.Missing, fmt.Sprintf("human approval: the policy requires one for risk class %s (--approved-by NAME)", d.RiskClass))
		}
	}
	sort.SliceStable(d.Evidence, func(i, j int) bool { return d.Evidence[i].Kind < d.Evidence[j].Kind })
	gate.Passed = len(gate.ReasonCodes) == 0
	return gate
}

// sincePolicy qualifies "has not run" after a policy change.
func sincePolicy(st *State) string {
	if len(st.PolicyChanges) == 0 {
		return ""
	}
	return fmt.Sprintf(" under the run's current stack policy (changed at event %d)", st.PolicySequence)
}

// LedgerDigest is "sha256:<hex>" of the canonical JSON array of the events'
// event_ids in order: since an event_id digests the event's content, it
// commits to every event, its order and its count.
func LedgerDigest(events []ledger.Event) string {
	ids := make([]string, len(events))
	for i, e := range events {
		ids[i] = e.EventID
	}
	b, _ := canonical.Marshal(ids)
	return canonical.Digest(b)
}

// recordGate seals gate (signed when key is not nil), writes it as gate/<gate_id>.gate_decision.json and
// as gate/gate.decision.json (the latest), and records
// gate.computed. It returns the evidence reference for the promotion.
func (s *stacker) recordGate(gate GateDecision, sequence int64, key *signing.PrivateKey) (EvidenceRef, error) {
	r := s.r
	b, _ := canonical.Marshal(map[string]any{"run_id": gate.RunID, "head_ref": gate.HeadRef, "sequence": sequence})
	gate.GateID = "gate-" + canonical.Digest(b)[len("sha256:"):][:16]
	doc, _, err := Seal(NewHeader(KindGateDecision, gate.GateID, r.State.RunID, r.State.WaveID, gate.HeadRef, s.opts.CreatedAt, s.opts.Producer), gate, key)
	if err != nil {
		return EvidenceRef{}, err
	}
	path := filepath.Join(filepath.Dir(r.Layout.GateDecisionPath()), gate.GateID+".gate_decision.json")
	digest, rel, err := r.WriteArtifact(path, doc)
	if err != nil {
		return EvidenceRef{}, err
	}
	if _, _, err := r.WriteArtifact(r.Layout.GateDecisionPath(), doc); err != nil {
		return EvidenceRef{}, err
	}
	if _, err := r.Record(TopicGateComputed, s.opts.CreatedAt, GateComputedPayload{GateID: gate.GateID, HeadRef: gate.HeadRef, Passed: gate.Passed,
		ReasonCodes: gate.ReasonCodes, ReportIDs: gate.ReportIDs, Path: rel, ArtifactDigest: digest}); err != nil {
		return EvidenceRef{}, err
	}
	return EvidenceRef{Kind: KindGateDecision, ID: gate.GateID, Digest: digest, Path: rel}, nil
}
