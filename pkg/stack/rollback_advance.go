package stack

import (
	"fmt"
	"strings"

	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/dome-registry/dome/pkg/gitstore"
)

// RollbackResult is what Rollback did.
type RollbackResult struct {
	RunID       string          `json:"run_id"`
	FromHeadRef string          `json:"from_head_ref"`
	To          string          `json:"to_checkpoint"`
	Removed     []string        `json:"removed"` // top first
	Reconciled  ReconcileReport `json:"reconciled"`
}

// ResolveCheckpoint reads a --to value: "base" (the wave base), a proposal
// id of a layer (its checkpoint), or a checkpoint commit of the head or the
// wave base by full SHA or a prefix of at least 7 hex digits.
func ResolveCheckpoint(st *State, to string) (string, error) {
	if to == "base" {
		return st.BaseRef, nil
	}
	var cands []string
	for _, l := range st.Applied {
		if l.ProposalID == to {
			return l.CheckpointID, nil
		}
		cands = append(cands, l.CheckpointID)
	}
	cands = append(cands, st.BaseRef)
	var hits []string
	if len(to) >= gitstore.MinShortSHA && gitstore.IsHex(to) {
		seen := map[string]bool{}
		for _, c := range cands {
			if strings.HasPrefix(c, strings.ToLower(to)) && !seen[c] {
				seen[c] = true
				hits = append(hits, c)
			}
		}
	}
	switch len(hits) {
	case 1:
		return hits[0], nil
	case 0:
		return "", &errkind.InputError{Source: "--to", Field: to, Problem: "not a checkpoint of the integration head, a layer's proposal id, nor \"base\"",
			Hint: "dome stack status --run " + st.RunID + " lists the layers and their checkpoints"}
	}
	return "", &errkind.InputError{Source: "--to", Field: to, Problem: fmt.Sprintf("ambiguous: %d checkpoints start with it", len(hits)), Hint: "write more digits"}
}

// Rollback moves the integration ref back to a checkpoint of the head in
// the current wave (or the wave base) by compare-and-swap, then records
// stack.rolled_back; the proposals of the layers taken off become
// plannable again (apply re-applies them from the plan). A crash between
// the two steps is finished by the next command's reconciliation.
func Rollback(repo *gitstore.Repo, r *Run, to string, opts ApplyOptions) (*RollbackResult, error) {
	s, err := newStacker(repo, r, opts)
	if err != nil {
		return nil, err
	}
	st := &r.State
	res := &RollbackResult{RunID: st.RunID, Removed: []string{}}
	if st.Promoted != nil {
		return res, &errkind.CheckError{Problem: fmt.Sprintf("run %s was promoted; its head is no longer rolled back", st.RunID)}
	}
	if res.Reconciled, err = s.reconcile(); err != nil {
		return res, err
	}
	target, err := ResolveCheckpoint(st, to)
	if err != nil {
		return res, err
	}
	res.FromHeadRef, res.To = s.head.String(), target
	if target == res.FromHeadRef {
		return res, nil
	}
	removed, ok := s.layersAbove(target)
	if !ok {
		return res, &errkind.InputError{Source: "--to", Field: to, Problem: "the checkpoint belongs to an earlier wave; a rollback stays within the current wave " + st.WaveID}
	}
	th, _ := gitstore.ParseHash(target)
	if err := repo.UpdateRef(s.ref, th, s.head); err != nil {
		return res, &errkind.CheckError{Problem: fmt.Sprintf("move %s back to %s: %v", s.ref, th.Short(), err), Hint: "another process moved the integration ref; run the command again"}
	}
	if err := s.recordRollback(th, removed); err != nil {
		return res, err
	}
	res.Removed = removed
	return res, nil
}

// AdvanceResult is what Advance did.
type AdvanceResult struct {
	RunID          string          `json:"run_id"`
	PreviousWaveID string          `json:"previous_wave_id"`
	WaveID         string          `json:"wave_id"`
	BaseRef        string          `json:"base_ref"`
	BaseTreeHash   string          `json:"base_tree_hash"`
	Superseded     []string        `json:"superseded"`
	Reconciled     ReconcileReport `json:"reconciled"`
}

// Advance starts the next wave with base := the integration head (seed
// section 8, step 7): proposals of the old wave still pending are
// superseded; workers propose against the new base.
func Advance(repo *gitstore.Repo, r *Run, opts ApplyOptions) (*AdvanceResult, error) {
	s, err := newStacker(repo, r, opts)
	if err != nil {
		return nil, err
	}
	st := &r.State
	res := &AdvanceResult{RunID: st.RunID, Superseded: []string{}}
	if st.Promoted != nil {
		return res, &errkind.CheckError{Problem: fmt.Sprintf("run %s was promoted; start a new run for a new wave", st.RunID)}
	}
	if res.Reconciled, err = s.reconcile(); err != nil {
		return res, err
	}
	res.PreviousWaveID, res.WaveID = st.WaveID, WaveIDFor(st.Wave+1)
	res.BaseRef, res.BaseTreeHash = s.head.String(), s.headTree.String()
	if sup := st.PendingProposals(); sup != nil {
		res.Superseded = sup
	}
	if _, err := r.Record(TopicWaveAdvanced, s.opts.CreatedAt, WaveAdvancedPayload{PreviousWaveID: res.PreviousWaveID, WaveID: res.WaveID,
		BaseRef: res.BaseRef, BaseTreeHash: res.BaseTreeHash, Superseded: res.Superseded}); err != nil {
		return res, err
	}
	return res, nil
}
