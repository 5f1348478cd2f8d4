package stack

import (
	"fmt"
	"strconv"
	"unicode/utf8"

	"github.com/dome-registry/dome/pkg/canonical"
	"github.com/dome-registry/dome/pkg/patch"
)

// Partitionings of a split (the patch splitting protocol).
const (
	ByFile = "by_file"
	ByHunk = "by_hunk"
)

// split is step 2 of the conflict policy: when the policy
// allows splitting and the proposal declares atomic_file (or hunk_ok), the
// files (or hunks) that apply onto the head become a derived proposal with
// its own diff, digest and artifact, linked to its parent; the derived
// proposal is applied as a layer and the parent is marked split. It returns
// nil when the proposal is not split (not allowed, or nothing applies).
func (s *stacker) split(f failedAttempt) (*SplitOutcome, AppliedOutcome, error) {
	q := f.lp.state
	mode := s.splitMode(q)
	if mode == AtomicProposal || q.DerivedFrom != "" {
		return nil, AppliedOutcome{}, nil
	}
	part, included, excluded, err := s.partition(f.lp.patch, mode)
	if err != nil || len(part.Files) == 0 {
		return nil, AppliedOutcome{}, err
	}
	canon, dp, err := patch.CanonicalDiff(patch.Format(part), "derived diff of "+q.ProposalID)
	if err != nil {
		return nil, AppliedOutcome{}, fmt.Errorf("split %s: %w", q.ProposalID, err)
	}
	partitioning := ByFile
	if mode == HunkOK {
		partitioning = ByHunk
	}
	st := &s.r.State
	derivedID := q.ProposalID + ".split-" + strconv.Itoa(q.Attempts+1)
	// the derived proposal: the parent's declarations with the part's diff
	pp := f.lp.proposal
	pp.ProposalID = derivedID
	pp.DiffDigest = canonical.Digest(canon)
	pp.DiffUnified, pp.DiffRef = "", ""
	if utf8.Valid(canon) {
		pp.DiffUnified = string(canon)
	} else {
		id, err := s.repo.WriteBlob(canon)
		if err != nil {
			return nil, AppliedOutcome{}, err
		}
		pp.DiffRef = DiffRefPrefix + id.String()
	}
	pp.TouchedFiles = patch.FileTouches(dp)
	pp.HunkFingerprints = patch.Fingerprints(dp, pp.BaseRef)
	if pp.HunkFingerprints == nil {
		pp.HunkFingerprints = []patch.Fingerprint{}
	}
	pp.DeclaredConstraints.Atomicity = AtomicProposal
	pp.IdempotencyKey = q.IdempotencyKey + ".split-" + strconv.Itoa(q.Attempts+1)
	h := NewHeader(KindPatchProposal, derivedID, st.RunID, q.WaveID, pp.BaseRef, s.opts.CreatedAt, s.opts.Producer)
	h.BaseTreeHash, h.InputsHash = pp.BaseTreeHash, pp.DiffDigest
	doc, _, err := Seal(h, pp, nil)
	if err != nil {
		return nil, AppliedOutcome{}, err
	}
	digest, rel, err := s.r.WriteArtifact(s.r.Layout.ProposalPath(derivedID), doc)
	if err != nil {
		return nil, AppliedOutcome{}, err
	}
	fp := f.fingerprint(st.RunID)
	cd := ConflictDecision{RunID: st.RunID, WaveID: st.WaveID, StackPlanID: st.Plan.StackPlanID, ConflictFingerprint: fp, ProposalID: q.ProposalID,
		Against: s.against(f), PolicyPrecedence: s.position(q), TieBreakOrder: ConflictTieBreakOrder, Action: ActionSplit, Attempt: q.Attempts + 1,
		ConflictSummary: f.conflicts, DerivedProposalID: derivedID}
	cd.DecisionID = "conflict-" + fp[len("sha256:"):][:16] + "-" + ActionSplit
	cdoc, _, err := Seal(NewHeader(KindConflictDecision, cd.DecisionID, st.RunID, st.WaveID, f.parent.String(), s.opts.CreatedAt, s.opts.Producer), cd, nil)
	if err != nil {
		return nil, AppliedOutcome{}, err
	}
	if _, _, err := s.r.WriteArtifact(s.r.Layout.ConflictDecisionPath(cd.DecisionID), cdoc); err != nil {
		return nil, AppliedOutcome{}, err
	}
	if _, err := s.r.Record(TopicProposalSplit, s.opts.CreatedAt, ProposalSplitPayload{ParentProposalID: q.ProposalID, DerivedProposalID: derivedID,
		Partitioning: partitioning, DiffDigest: pp.DiffDigest, Path: rel, ArtifactDigest: digest, Included: included, Excluded: excluded,
		DecisionID: cd.DecisionID}); err != nil {
		return nil, AppliedOutcome{}, err
	}
	dq := st.Proposals[derivedID]
	lp, err := s.cache.get(dq)
	if err != nil {
		return nil, AppliedOutcome{}, err
	}
	res, conflicts, err := s.try(lp, patch.PartialNone)
	if err != nil {
		return nil, AppliedOutcome{}, err
	}
	if conflicts != nil {
		return nil, AppliedOutcome{}, fmt.Errorf("split %s: the derived proposal %s does not apply: %v", q.ProposalID, derivedID, conflicts[0])
	}
	out, err := s.layer(lp, res)
	if err != nil {
		return nil, AppliedOutcome{}, err
	}
	return &SplitOutcome{ProposalID: q.ProposalID, DerivedProposalID: derivedID, Partitioning: partitioning, Included: included, Excluded: excluded}, out, nil
}

// partition returns the part of p that applies onto the head: whole files
// in order (atomic_file), and with hunk_ok, for a file that does not apply
// whole, the hunks that apply (greedily, in order), with the new-side line
// numbers of the kept hunks recomputed.
func (s *stacker) partition(p *patch.Patch, mode string) (*patch.Patch, []string, []string, error) {
	part := &patch.Patch{}
	included, excluded := []string{}, []string{}
	applies := func(files []*patch.File) (bool, error) {
		_, conflicts, err := s.try(&loadedProposal{state: &ProposalState{}, patch: &patch.Patch{Files: files}}, patch.PartialNone)
		return err == nil && conflicts == nil, err
	}
	for _, f := range p.Files {
		ok, err := applies(append(append([]*patch.File{}, part.Files...), f))
		if err != nil {
			return nil, nil, nil, err
		}
		if ok {
			part.Files = append(part.Files, f)
			included = append(included, f.Path())
			continue
		}
		if mode != HunkOK || len(f.Hunks) < 2 {
			excluded = append(excluded, f.Path())
			continue
		}
		var keep []int
		for i := range f.Hunks {
			try := subsetFile(f, append(append([]int{}, keep...), i))
			ok, err := applies(append(append([]*patch.File{}, part.Files...), try))
			if err != nil {
				return nil, nil, nil, err
			}
			if ok {
				keep = append(keep, i)
				included = append(included, f.Path()+"#"+strconv.Itoa(i+1))
			} else {
				excluded = append(excluded, f.Path()+"#"+strconv.Itoa(i+1))
			}
		}
		if len(keep) > 0 {
			part.Files = append(part.Files, subsetFile(f, keep))
		}
	}
	return part, included, excluded, nil
}

// subsetFile is f with only the hunks keep (indexes, ascending), their
// new-side starts recomputed from the kept hunks before them. The index
// line is dropped: the postimage id no longer holds.
func subsetFile(f *patch.File, keep []int) *patch.File {
	c := *f
	c.OldOID, c.NewOID = "", ""
	c.Hunks = nil
	delta := 0
	for _, i := range keep {
		h := *f.Hunks[i]
		start := h.OldStart
		if h.OldLines == 0 {
			start++
		}
		h.NewStart = start + delta
		if h.NewLines == 0 {
			h.NewStart--
		}
		delta += h.NewLines - h.OldLines
		c.Hunks = append(c.Hunks, &h)
	}
	return &c
}
