package stack

import (
	"errors"
	"fmt"

	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/dome-registry/dome/pkg/gitstore"
	"github.com/dome-registry/dome/pkg/patch"
)

// maxChain bounds how far Reconcile walks from the ref back to the head.
const maxChain = 1 << 20

// ReconcileReport says what Reconcile recorded.
type ReconcileReport struct {
	// Recovered lists proposals whose checkpoint the ref already held
	// without their event (a coordinator killed between moving the ref and
	// recording the layer), bottom first.
	Recovered []string `json:"recovered"`
	// RolledBack is the checkpoint an interrupted rollback left the ref at.
	RolledBack string `json:"rolled_back,omitempty"`
}

// Reconcile brings the ledger of the open run r up to its integration ref.
// The ledger and the ref agree except after a crash in the one window each
// writer has between the two: apply moves the ref to a checkpoint, then
// records it; rollback moves the ref back, then records it. So:
//
//   - ref == the recorded head: nothing to do;
//   - ref ahead, every commit between a checkpoint of this run whose
//     trailers name a pending proposal with the same diff digest and whose
//     tree is what that proposal gives on its parent: each is recorded as
//     applied (recovered);
//   - ref back at a checkpoint of the head in this wave (or the wave
//     base): the rollback is recorded;
//   - anything else is a failed check: someone else moved the ref.
func Reconcile(repo *gitstore.Repo, r *Run, opts ApplyOptions) (ReconcileReport, error) {
	s, err := newStacker(repo, r, opts)
	if err != nil {
		return ReconcileReport{Recovered: []string{}}, err
	}
	return s.reconcile()
}

func (s *stacker) reconcile() (ReconcileReport, error) {
	rep := ReconcileReport{Recovered: []string{}}
	st := &s.r.State
	// The run's writer lock (held since OpenRun) means no other dome
	// updates this ref: a ref lock file is what a killed writer left.
	if _, err := s.repo.RemoveRefLock(s.ref); err != nil {
		return rep, err
	}
	cur, err := s.repo.Ref(s.ref)
	if errors.Is(err, gitstore.ErrNotFound) {
		return rep, &errkind.CheckError{Problem: fmt.Sprintf("run %s: the integration ref %s is missing (the ledger's head is %s)", st.RunID, s.ref, s.head),
			Hint: fmt.Sprintf("restore it: git update-ref %s %s", s.ref, s.head)}
	}
	if err != nil {
		return rep, err
	}
	if cur == s.head {
		return rep, nil
	}
	moved := func(problem string) error {
		return &errkind.CheckError{Problem: fmt.Sprintf("run %s: %s is at %s, the ledger's head is %s: %s", st.RunID, s.ref, cur.Short(), s.head.Short(), problem),
			Hint: fmt.Sprintf("something other than dome moved the ref; put it back with git update-ref %s %s", s.ref, s.head)}
	}
	chain, err := Chain(s.repo, s.head, cur, maxChain)
	switch {
	case err == nil:
		for _, c := range chain {
			ci := c.Checkpoint
			q := st.Proposals[ci.ProposalID]
			switch {
			case !c.IsDome || ci.RunID != st.RunID:
				return rep, moved(fmt.Sprintf("commit %s is not a checkpoint of this run", c.Commit.Short()))
			case q == nil:
				return rep, moved(fmt.Sprintf("checkpoint %s names proposal %q, which the run does not have", c.Commit.Short(), ci.ProposalID))
			case !pending(q.Status):
				return rep, moved(fmt.Sprintf("checkpoint %s names proposal %s, which is %s", c.Commit.Short(), q.ProposalID, q.Status))
			case q.DiffDigest != ci.DiffDigest:
				return rep, moved(fmt.Sprintf("checkpoint %s names %s with diff digest %s, the proposal has %s", c.Commit.Short(), q.ProposalID, ci.DiffDigest, q.DiffDigest))
			case st.Plan == nil:
				return rep, moved("the run has no plan the checkpoint could come from")
			}
			lp, err := s.cache.get(q)
			if err != nil {
				return rep, err
			}
			files, ok, err := s.reproduce(lp, c.Tree)
			if err != nil {
				return rep, err
			}
			if !ok {
				return rep, moved(fmt.Sprintf("checkpoint %s holds a tree %s that %s does not give on %s", c.Commit.Short(), c.Tree.Short(), q.ProposalID, s.head.Short()))
			}
			if _, err := s.recordApplied(lp, files, c.Commit, c.Tree, true); err != nil {
				return rep, err
			}
			rep.Recovered = append(rep.Recovered, q.ProposalID)
		}
		return rep, nil
	case !errors.Is(err, ErrNotAncestor):
		return rep, err
	}
	removed, ok := s.layersAbove(cur.String())
	if !ok {
		return rep, moved("the ref is neither ahead of the head by checkpoints of this run nor back at one of its checkpoints")
	}
	if err := s.recordRollback(cur, removed); err != nil {
		return rep, err
	}
	rep.RolledBack = cur.String()
	return rep, nil
}

// reproduce applies lp onto the head as apply would have (three-way as
// configured, then the other way) and reports whether it gives tree.
func (s *stacker) reproduce(lp *loadedProposal, tree gitstore.Hash) ([]patch.FileResult, bool, error) {
	saved := s.threeWay
	defer func() { s.threeWay = saved }()
	for _, tw := range []bool{saved, !saved} {
		s.threeWay = tw
		res, conflicts, err := s.try(lp, patch.PartialNone)
		if err != nil {
			return nil, false, err
		}
		got := res.Tree
		if conflicts == nil && got.IsZero() {
			if got, err = s.store.WriteTree(nil); err != nil {
				return nil, false, err
			}
		}
		if conflicts == nil && got == tree {
			return res.Files, true, nil
		}
	}
	return nil, false, nil
}

// layersAbove returns the proposals of the layers above checkpoint to, top
// first, when to is a checkpoint of the head in the current wave or the
// wave base (ok false otherwise).
func (s *stacker) layersAbove(to string) ([]string, bool) {
	st := &s.r.State
	removed := []string{}
	for i := len(st.Applied) - 1; i >= 0; i-- {
		l := st.Applied[i]
		if l.CheckpointID == to {
			return removed, true
		}
		if l.WaveID != st.WaveID {
			break
		}
		removed = append(removed, l.ProposalID)
	}
	return removed, to == st.BaseRef
}

// recordRollback records stack.rolled_back from the head to to (the ref is
// already there) and makes to the head.
func (s *stacker) recordRollback(to gitstore.Hash, removed []string) error {
	_, err := s.r.Record(TopicRolledBack, s.opts.CreatedAt, RolledBackPayload{FromHeadRef: s.head.String(), ToCheckpoint: to.String(), Removed: removed})
	if err != nil {
		return err
	}
	return s.setHead(to.String())
}
