package stack

import (
	"fmt"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/dome-registry/dome/internal/lazyre"
	"github.com/dome-registry/dome/pkg/canonical"
	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/dome-registry/dome/pkg/gitstore"
	"github.com/dome-registry/dome/pkg/patch"
	"github.com/dome-registry/dome/pkg/signing"
)

// DiffRefPrefix starts a diff_ref: the canonical diff as a git blob of the
// repository.
const DiffRefPrefix = "git-blob:"

// The id and intent patterns are compiled on first use: a counted
// repetition such as {0,127} expands to a large regexp program, and compiling
// it at package init cost every dome command (even `dome --version`) ~0.4 ms.
var (
	idPattern     = lazyre.New(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)
	intentPattern = lazyre.New(`^[a-z][a-z0-9_-]{0,63}$`)
)

// ProposeOptions is what a worker knows when it proposes a change.
type ProposeOptions struct {
	RunID, WaveID  string
	BaseRef        string // full commit SHA (the wave base)
	Diff           []byte // a git diff against BaseRef (or nil with Files)
	Files          []patch.NewFile
	FromFiles      bool // diff BaseRef's tree against Files
	DiffSource     string
	ProposalID     string // "" derives one from the content
	IntentTags     []string
	Constraints    DeclaredConstraints
	Worker         WorkerRunMeta // run_id and wave_id are filled in
	IdempotencyKey string        // "" derives one from the worker and the diff
	UseDiffRef     bool          // keep the diff as a blob (diff_ref) instead of inline
	AssumeBaseTree string        // record this base_tree_hash unchecked (to test the coordinator's check)
	Policy         *Policy       // for the declared risk
	CreatedAt      time.Time
	Producer       string
	Key            *signing.PrivateKey
}

// ProposeResult is a sealed proposal.
type ProposeResult struct {
	Doc      []byte
	Proposal PatchProposal
}

// Propose builds and seals a PatchProposal.
func Propose(repo *gitstore.Repo, opts ProposeOptions) (ProposeResult, error) {
	if !IsFullSHA(opts.BaseRef) {
		return ProposeResult{}, &errkind.InputError{Source: "--base", Field: opts.BaseRef, Problem: "not a full commit SHA", Hint: "proposals must name the wave base by its full SHA"}
	}
	base, _ := gitstore.ParseHash(opts.BaseRef)
	tree, err := repo.CommitTree(base)
	if err != nil {
		return ProposeResult{}, &errkind.InputError{Source: "--base", Field: opts.BaseRef, Problem: "not a commit of the repository: " + err.Error()}
	}
	raw := opts.Diff
	if opts.FromFiles {
		p, err := patch.DiffTree(patch.NewRepoStore(repo), patch.OID(tree), opts.Files, patch.DiffOptions{})
		if err != nil {
			return ProposeResult{}, &errkind.InputError{Source: opts.DiffSource, Problem: err.Error()}
		}
		if len(p.Files) == 0 {
			return ProposeResult{}, &errkind.InputError{Source: opts.DiffSource, Problem: "no change against the base " + opts.BaseRef[:12], Hint: "edit files in the worktree first"}
		}
		raw = patch.Format(p)
	}
	return proposeDiff(repo, opts, tree.String(), raw)
}

// ProposeDiff builds and seals a PatchProposal from a diff against the base
// commit baseRef whose tree is baseTree, without a repository: what a worker
// does in its sandbox, where the base is known through the gateway. The
// diff goes inline (diff_unified), so it must be valid UTF-8.
func ProposeDiff(baseRef, baseTree string, raw []byte, opts ProposeOptions) (ProposeResult, error) {
	if !IsFullSHA(baseRef) || !IsFullSHA(baseTree) {
		return ProposeResult{}, &errkind.InputError{Source: "base", Field: baseRef, Problem: "base_ref and base_tree_hash must be full SHAs"}
	}
	opts.BaseRef, opts.UseDiffRef = baseRef, false
	return proposeDiff(nil, opts, baseTree, raw)
}

func proposeDiff(repo *gitstore.Repo, opts ProposeOptions, baseTree string, raw []byte) (ProposeResult, error) {
	canon, p, err := patch.CanonicalDiff(raw, opts.DiffSource)
	if err != nil {
		return ProposeResult{}, err
	}
	policy := opts.Policy
	if policy == nil {
		policy = DefaultPolicy()
	}
	facts := Assess(p, int64(len(canon)), policy)
	tags := append([]string{}, opts.IntentTags...)
	sort.Strings(tags)
	tags = dedupe(tags)
	for _, t := range tags {
		if !intentPattern().MatchString(t) {
			return ProposeResult{}, &errkind.InputError{Source: "--intent", Field: t, Problem: "an intent tag is a lowercase word (a-z, 0-9, _ -)"}
		}
	}
	c := opts.Constraints
	if c.Atomicity == "" {
		c.Atomicity = AtomicProposal
	}
	w := opts.Worker
	w.RunID, w.WaveID = opts.RunID, opts.WaveID
	if w.WorkerID == "" {
		return ProposeResult{}, &errkind.InputError{Source: "--worker", Problem: "the worker id is required"}
	}
	pp := PatchProposal{
		BaseRef: opts.BaseRef, BaseTreeHash: baseTree, DiffCanonicalization: DiffCanonicalization,
		DiffDigest: canonical.Digest(canon), TouchedFiles: facts.Touched, IntentTags: nonNil(tags), Risk: facts.Risk,
		HunkFingerprints: patch.Fingerprints(p, opts.BaseRef), DeclaredConstraints: c, WorkerRunMeta: w,
		IdempotencyKey: opts.IdempotencyKey,
	}
	if opts.AssumeBaseTree != "" {
		pp.BaseTreeHash = opts.AssumeBaseTree
	}
	if pp.HunkFingerprints == nil {
		pp.HunkFingerprints = []patch.Fingerprint{}
	}
	if (opts.UseDiffRef || !utf8.Valid(canon)) && repo == nil {
		return ProposeResult{}, &errkind.InputError{Source: opts.DiffSource, Problem: "the diff is not valid UTF-8 (a text file in another encoding?): it cannot go inline",
			Hint: "propose it with dome stack propose, which keeps such a diff as a blob (diff_ref)"}
	}
	if opts.UseDiffRef || !utf8.Valid(canon) {
		id, err := repo.WriteBlob(canon)
		if err != nil {
			return ProposeResult{}, fmt.Errorf("store the diff: %w", err)
		}
		pp.DiffRef = DiffRefPrefix + id.String()
	} else {
		pp.DiffUnified = string(canon)
	}
	if pp.IdempotencyKey == "" {
		pp.IdempotencyKey = "idem-" + digestHex(opts.RunID + "\x00" + opts.WaveID + "\x00" + w.WorkerID + "\x00" + pp.DiffDigest)[:24]
	}
	pp.ProposalID = opts.ProposalID
	if pp.ProposalID == "" {
		b, err := canonical.Marshal(pp)
		if err != nil {
			return ProposeResult{}, err
		}
		pp.ProposalID = "p-" + digestHex(string(b))[:16]
	}
	if !idPattern().MatchString(pp.ProposalID) {
		return ProposeResult{}, &errkind.InputError{Source: "--id", Field: pp.ProposalID, Problem: "a proposal id is 1 to 128 of A-Z a-z 0-9 . _ -, starting with a letter or digit"}
	}
	h := NewHeader(KindPatchProposal, pp.ProposalID, opts.RunID, opts.WaveID, opts.BaseRef, opts.CreatedAt, opts.Producer)
	h.BaseTreeHash, h.InputsHash = pp.BaseTreeHash, pp.DiffDigest
	doc, _, err := Seal(h, pp, opts.Key)
	if err != nil {
		return ProposeResult{}, err
	}
	return ProposeResult{Doc: doc, Proposal: pp}, nil
}

func digestHex(s string) string {
	return strings.TrimPrefix(canonical.Digest([]byte(s)), "sha256:")
}

func dedupe(sorted []string) []string {
	var out []string
	for i, s := range sorted {
		if i == 0 || s != sorted[i-1] {
			out = append(out, s)
		}
	}
	return out
}
