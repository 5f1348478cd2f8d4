package stack

import (
	"fmt"
	"os"
	"strings"

	"github.com/dome-registry/dome/pkg/artifact"
	"github.com/dome-registry/dome/pkg/canonical"
	"github.com/dome-registry/dome/pkg/errkind"
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

// loadProposal reads the artifact the run kept for q, checks that its bytes
// are still those the ledger recorded (artifact_digest) and parses its diff.
func loadProposal(repo *gitstore.Repo, l Layout, q *ProposalState) (*loadedProposal, error) {
	path := l.Abs(q.Path)
	doc, err := os.ReadFile(path)
	if err != nil {
		return nil, &errkind.CheckError{Problem: fmt.Sprintf("proposal %s: cannot read %s: %v", q.ProposalID, path, err),
			Hint: "the run directory lost a file the ledger names; restore ops/runs/" + l.RunID + " from a copy"}
	}
	if d := canonical.Digest(doc); d != q.ArtifactDigest {
		return nil, &errkind.CheckError{Problem: fmt.Sprintf("proposal %s: %s hashes to %s, the ledger recorded %s", q.ProposalID, path, d, q.ArtifactDigest),
			Hint: "the file was edited after it was submitted; restore it, or submit the change as a new proposal"}
	}
	sealed, err := artifact.Open(doc, artifact.OpenOptions{Kind: KindPatchProposal})
	if err != nil {
		return nil, fmt.Errorf("proposal %s: %s: %w", q.ProposalID, path, err)
	}
	lp := &loadedProposal{state: q}
	if err := strictUnmarshal(sealed.Payload, &lp.proposal); err != nil {
		return nil, fmt.Errorf("proposal %s: %s: payload: %w", q.ProposalID, path, err)
	}
	switch {
	case lp.proposal.DiffUnified != "":
		lp.diff = []byte(lp.proposal.DiffUnified)
	case strings.HasPrefix(lp.proposal.DiffRef, "git-blob:"):
		h, ok := gitstore.ParseHash(strings.TrimPrefix(lp.proposal.DiffRef, "git-blob:"))
		if !ok {
			return nil, fmt.Errorf("proposal %s: diff_ref %q is not git-blob:<40 hex>", q.ProposalID, lp.proposal.DiffRef)
		}
		if lp.diff, err = repo.ReadBlob(h); err != nil {
			return nil, fmt.Errorf("proposal %s: diff_ref %s: %w", q.ProposalID, lp.proposal.DiffRef, err)
		}
	default:
		return nil, fmt.Errorf("proposal %s: neither diff_unified nor a git-blob diff_ref", q.ProposalID)
	}
	ps, err := patch.Parse(lp.diff, patch.ParseOptions{Source: path, Strip: patch.DefaultStrip})
	if err != nil {
		return nil, fmt.Errorf("proposal %s: %w", q.ProposalID, err)
	}
	lp.patch = &patch.Patch{}
	for _, p := range ps {
		lp.patch.Files = append(lp.patch.Files, p.Files...)
	}
	return lp, nil
}

// proposalCache loads each proposal once per command.
type proposalCache struct {
	repo *gitstore.Repo
	l    Layout
	m    map[string]*loadedProposal
}

func newProposalCache(repo *gitstore.Repo, l Layout) *proposalCache {
	return &proposalCache{repo: repo, l: l, m: map[string]*loadedProposal{}}
}

func (c *proposalCache) get(q *ProposalState) (*loadedProposal, error) {
	if lp, ok := c.m[q.ProposalID]; ok && lp.state.ArtifactDigest == q.ArtifactDigest {
		lp.state = q
		return lp, nil
	}
	lp, err := loadProposal(c.repo, c.l, q)
	if err != nil {
		return nil, err
	}
	c.m[q.ProposalID] = lp
	return lp, nil
}
