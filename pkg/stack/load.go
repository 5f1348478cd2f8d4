package stack

import (
	"fmt"

	"github.com/dome-registry/dome/pkg/canonical"
	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/dome-registry/dome/pkg/gitstore"
	"github.com/dome-registry/dome/pkg/patch"
	"github.com/dome-registry/dome/pkg/readlimit"
)

// LoadedProposal is an accepted proposal read back from the run directory.
type LoadedProposal struct {
	State    *ProposalState
	Proposal PatchProposal
	Doc      []byte // the file's bytes
	Canon    []byte // the canonical diff
	Patch    *patch.Patch
}

// LoadProposal reads an accepted proposal of the run, checks that its file
// is the one the ledger recorded (the digest of its bytes) and parses its
// canonical diff.
func LoadProposal(repo *gitstore.Repo, l Layout, st *State, id string) (*LoadedProposal, error) {
	q := st.Proposals[id]
	if q == nil {
		return nil, &errkind.InputError{Source: "--run " + l.RunID, Field: id, Problem: "no such proposal in the run"}
	}
	path := l.Abs(q.Path)
	doc, err := readlimit.ReadFile(path, MaxProposalBytes)
	if err != nil {
		return nil, &errkind.CheckError{Problem: fmt.Sprintf("proposal %s: cannot read %s: %v", id, path, err), Hint: "the run directory lost evidence; restore it from a copy"}
	}
	if d := canonical.Digest(doc); d != q.ArtifactDigest {
		return nil, &errkind.CheckError{Problem: fmt.Sprintf("proposal %s: %s hashes to %s, the ledger recorded %s", id, path, d, q.ArtifactDigest),
			Hint: "the file was changed after it was submitted; restore it from a copy"}
	}
	pp, rej := ParseProposal(doc)
	if rej != nil {
		return nil, fmt.Errorf("proposal %s: %v", id, rej)
	}
	raw, rej := diffBytes(repo, pp.Proposal)
	if rej != nil {
		return nil, fmt.Errorf("proposal %s: %v", id, rej)
	}
	canon, p, err := patch.CanonicalDiff(raw, "diff of "+id)
	if err != nil {
		return nil, fmt.Errorf("proposal %s: %w", id, err)
	}
	if canonical.Digest(canon) != q.DiffDigest {
		return nil, fmt.Errorf("proposal %s: the diff no longer hashes to %s", id, q.DiffDigest)
	}
	return &LoadedProposal{State: q, Proposal: pp.Proposal, Doc: doc, Canon: canon, Patch: p}, nil
}
