package stack

import (
	"errors"
	"fmt"
	"strings"

	"github.com/dome-registry/dome/pkg/gitstore"
)

// Checkpoint commit trailers. Every checkpoint commit on an integration ref
// names its run, the proposal it applied and that proposal's diff digest,
// so the ref alone tells which proposals a head holds and a coordinator
// that died between moving the ref and writing the event can finish the
// record (see Reconcile).
const (
	TrailerRunID          = "Dome-Run-Id"
	TrailerProposalID     = "Dome-Proposal-Id"
	TrailerDiffDigest     = "Dome-Diff-Digest"
	TrailerParentProposal = "Dome-Parent-Proposal-Id" // set on a split's derived proposal
	TrailerWaveID         = "Dome-Wave-Id"
)

// CheckpointInfo is what a checkpoint commit's trailers say.
type CheckpointInfo struct {
	RunID            string
	ProposalID       string
	DiffDigest       string
	ParentProposalID string // non-empty for a derived (split) proposal
	WaveID           string
}

// CheckpointMessage is the commit message of a checkpoint: a subject and
// the trailers, in a fixed order.
func CheckpointMessage(ci CheckpointInfo, subject string) string {
	if subject == "" {
		subject = "dome stack: apply " + ci.ProposalID
	}
	subject = strings.ReplaceAll(strings.TrimSpace(subject), "\n", " ")
	var b strings.Builder
	b.WriteString(subject)
	b.WriteString("\n\n")
	w := func(k, v string) {
		if v != "" {
			b.WriteString(k + ": " + v + "\n")
		}
	}
	w(TrailerRunID, ci.RunID)
	w(TrailerWaveID, ci.WaveID)
	w(TrailerProposalID, ci.ProposalID)
	w(TrailerParentProposal, ci.ParentProposalID)
	w(TrailerDiffDigest, ci.DiffDigest)
	return b.String()
}

// ParseCheckpoint reads the trailers of a checkpoint commit message (the
// last paragraph); ok is false when the message carries no run id and
// proposal id.
func ParseCheckpoint(msg string) (CheckpointInfo, bool) {
	var ci CheckpointInfo
	paras := strings.Split(strings.TrimRight(msg, "\n"), "\n\n")
	last := paras[len(paras)-1]
	for _, l := range strings.Split(last, "\n") {
		k, v, ok := strings.Cut(l, ": ")
		if !ok {
			continue
		}
		v = strings.TrimSpace(v)
		if strings.IndexFunc(v, func(r rune) bool { return r < 0x20 || r == 0x7f }) >= 0 {
			continue // dome writes no control characters: not its trailer
		}
		switch k {
		case TrailerRunID:
			ci.RunID = v
		case TrailerProposalID:
			ci.ProposalID = v
		case TrailerDiffDigest:
			ci.DiffDigest = v
		case TrailerParentProposal:
			ci.ParentProposalID = v
		case TrailerWaveID:
			ci.WaveID = v
		}
	}
	return ci, ci.RunID != "" && ci.ProposalID != ""
}

// CommitWriter stores commits: a repository, or a pack being written.
type CommitWriter interface {
	WriteCommit(gitstore.CommitSpec) (gitstore.Hash, error)
}

// WriteCheckpoint stores the checkpoint commit of tree on parent.
func WriteCheckpoint(w CommitWriter, parent, tree gitstore.Hash, ci CheckpointInfo, subject string, author, committer gitstore.Signature) (gitstore.Hash, error) {
	return w.WriteCommit(gitstore.CommitSpec{Tree: tree, Parents: []gitstore.Hash{parent}, Author: author, Committer: committer,
		Message: CheckpointMessage(ci, subject)})
}

// ChainCommit is one commit of a first-parent chain.
type ChainCommit struct {
	Commit     gitstore.Hash
	Parent     gitstore.Hash
	Tree       gitstore.Hash
	Checkpoint CheckpointInfo
	IsDome     bool // the trailers name a run and a proposal
}

// ErrNotAncestor is returned by Chain when from is not on head's
// first-parent chain within the limit.
var ErrNotAncestor = errors.New("not an ancestor on the first-parent chain")

// Chain returns the commits after from up to head along first parents,
// oldest first (empty when head == from). It reads at most limit commits.
func Chain(repo *gitstore.Repo, from, head gitstore.Hash, limit int) ([]ChainCommit, error) {
	var out []ChainCommit
	for cur := head; cur != from; {
		if len(out) >= limit {
			return nil, fmt.Errorf("%s is not within %d first-parent commits of %s: %w", from.Short(), limit, head.Short(), ErrNotAncestor)
		}
		c, err := repo.Commit(cur)
		if err != nil {
			return nil, fmt.Errorf("read commit %s: %w", cur.Short(), err)
		}
		if len(c.Parents) == 0 {
			return nil, fmt.Errorf("%s is not on the first-parent chain of %s: %w", from.Short(), head.Short(), ErrNotAncestor)
		}
		ci, ok := ParseCheckpoint(c.Message)
		out = append(out, ChainCommit{Commit: cur, Parent: c.Parents[0], Tree: c.Tree, Checkpoint: ci, IsDome: ok})
		cur = c.Parents[0]
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out, nil
}

// IsAncestor reports whether anc is head or one of its ancestors (any
// parent), reading at most limit commits.
func IsAncestor(repo *gitstore.Repo, anc, head gitstore.Hash, limit int) (bool, error) {
	seen := map[gitstore.Hash]bool{head: true}
	queue := []gitstore.Hash{head}
	for len(queue) > 0 {
		cur := queue[0]
		queue = queue[1:]
		if cur == anc {
			return true, nil
		}
		if len(seen) > limit {
			return false, fmt.Errorf("%s: more than %d commits to search for %s", head.Short(), limit, anc.Short())
		}
		c, err := repo.Commit(cur)
		if err != nil {
			return false, fmt.Errorf("read commit %s: %w", cur.Short(), err)
		}
		for _, p := range c.Parents {
			if !seen[p] {
				seen[p] = true
				queue = append(queue, p)
			}
		}
	}
	return false, nil
}
