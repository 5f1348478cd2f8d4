package stack

import (
	"github.com/dome-registry/dome/pkg/gitstore"
	"github.com/dome-registry/dome/pkg/patch"
)

// loadedProposal is a proposal of the run read back for applying: its
// state, its payload and its parsed diff.
type loadedProposal struct {
	state    *ProposalState
	proposal PatchProposal
	diff     []byte
	patch    *patch.Patch
}

// loadProposal reads q back through LoadProposal (the file must be the one
// the ledger recorded, its diff must still hash to diff_digest).
func loadProposal(repo *gitstore.Repo, l Layout, st *State, q *ProposalState) (*loadedProposal, error) {
	lp, err := LoadProposal(repo, l, st, q.ProposalID)
	if err != nil {
		return nil, err
	}
	return &loadedProposal{state: q, proposal: lp.Proposal, diff: lp.Canon, patch: lp.Patch}, nil
}

// proposalCache loads each proposal once per command.
type proposalCache struct {
	repo *gitstore.Repo
	l    Layout
	st   *State
	m    map[string]*loadedProposal
}

func newProposalCache(repo *gitstore.Repo, l Layout, st *State) *proposalCache {
	return &proposalCache{repo: repo, l: l, st: st, m: map[string]*loadedProposal{}}
}

func (c *proposalCache) get(q *ProposalState) (*loadedProposal, error) {
	if lp, ok := c.m[q.ProposalID]; ok && lp.state.ArtifactDigest == q.ArtifactDigest {
		lp.state = q
		return lp, nil
	}
	lp, err := loadProposal(c.repo, c.l, c.st, q)
	if err != nil {
		return nil, err
	}
	c.m[q.ProposalID] = lp
	return lp, nil
}
