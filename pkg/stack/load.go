package stack

import (
	"encoding/json"
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
	// The bytes are the ones submit verified (ParseProposal) before it
	// recorded their digest, so decoding them is enough: verifying them
	// again was a tenth of each stacked layer.
	pp, err := decodeAccepted(doc)
	if err != nil {
		return nil, fmt.Errorf("proposal %s: %s: %w", id, path, err)
	}
	raw, rej := diffBytes(repo, pp)
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
	return &LoadedProposal{State: q, Proposal: pp, Doc: doc, Canon: canon, Patch: p}, nil
}

// decodeAccepted decodes the payload of a document ParseProposal accepted
// (strict JSON, so no duplicate members to disagree about): the same
// PatchProposal, without checking the document again.
func decodeAccepted(doc []byte) (PatchProposal, error) {
	var d struct {
		Payload PatchProposal `json:"payload"`
	}
	err := json.Unmarshal(doc, &d)
	return d.Payload, err
}
