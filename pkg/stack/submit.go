package stack

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/dome-registry/dome/pkg/artifact"
	"github.com/dome-registry/dome/pkg/canonical"
	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/dome-registry/dome/pkg/gitpath"
	"github.com/dome-registry/dome/pkg/gitstore"
	"github.com/dome-registry/dome/pkg/patch"
	"github.com/dome-registry/dome/pkg/signing"
)

// SubmitOptions is what the coordinator checks proposals with.
type SubmitOptions struct {
	Policy           *Policy
	Trusted          *signing.TrustedKeys // verifies signatures; nil leaves them unchecked unless required
	RequireSignature bool                 // also required when the policy says so
	At               time.Time            // the events' ts
}

// Outcomes of a submission.
const (
	OutcomeAccepted  = "accepted"
	OutcomeDuplicate = "duplicate" // same proposal under its idempotency key: a no-op
	OutcomeRejected  = "rejected"
)

// SubmitOutcome is what happened to one submitted document.
type SubmitOutcome struct {
	Source         string `json:"source"`
	ProposalID     string `json:"proposal_id"`
	Outcome        string `json:"outcome"`
	ReasonClass    string `json:"reason_class,omitempty"`
	ReasonCode     string `json:"reason_code,omitempty"`
	Detail         string `json:"detail,omitempty"`
	IdempotencyKey string `json:"idempotency_key,omitempty"`
	RiskClass      string `json:"risk_class,omitempty"`
	Sequence       int64  `json:"sequence"` // the event recording the decision
	Path           string `json:"path"`     // where the document is kept, relative to the run
}

// checked is a proposal that passed every check.
type checked struct {
	parsed  *ParsedProposal
	canon   []byte
	patch   *patch.Patch
	facts   Facts
	patchID string
}

// Submit verifies one proposal document, runs the policy
// pre-filter and the apply-check on the clean base, and records the
// decision: stack.proposal.submitted (the document kept under
// stack/proposals/), stack.proposal.deduplicated (the same proposal under
// its idempotency key: nothing changes) or stack.proposal.rejected (kept
// under stack/rejected/, with its reason code). Only failures to record are
// errors; a rejection is an outcome.
func (r *Run) Submit(repo *gitstore.Repo, source string, data []byte, opts SubmitOptions) (SubmitOutcome, error) {
	pol, err := r.usePolicy(opts.Policy)
	if err != nil {
		return SubmitOutcome{Source: source}, err
	}
	opts.Policy = pol
	out := SubmitOutcome{Source: source}
	pp, rej := ParseProposal(data)
	if pp != nil {
		out.ProposalID = pp.Proposal.ProposalID
		out.IdempotencyKey = pp.Proposal.IdempotencyKey
	}
	if rej == nil {
		// A replay of an accepted proposal is a no-op whatever happened since.
		if u, ok := r.State.IdempotencyKeys[pp.Proposal.IdempotencyKey]; ok {
			if u.PayloadDigest == pp.Sealed.Header.PayloadDigest && u.ProposalID == pp.Proposal.ProposalID {
				ev, err := r.Record(TopicProposalDeduplicated, opts.At, ProposalDeduplicatedPayload{ProposalID: u.ProposalID,
					IdempotencyKey: pp.Proposal.IdempotencyKey, ArtifactDigest: canonical.Digest(data)})
				if err != nil {
					return out, err
				}
				out.Outcome, out.Sequence, out.Path = OutcomeDuplicate, ev.Sequence, r.State.Proposals[u.ProposalID].Path
				out.Detail = fmt.Sprintf("idempotency_key %q already submitted %s: no-op", pp.Proposal.IdempotencyKey, u.ProposalID)
				return out, nil
			}
			rej = reject(ClassVerification, ReasonIdempotencyConflict, "idempotency_key %q is already used by proposal %s (a different proposal)",
				pp.Proposal.IdempotencyKey, u.ProposalID)
		}
	}
	var c *checked
	if rej == nil {
		c, rej = r.verify(repo, pp, opts)
	}
	if rej != nil {
		return r.recordRejection(out, data, pp, rej, opts.At)
	}
	path := r.Layout.ProposalPath(pp.Proposal.ProposalID)
	digest, rel, err := r.WriteArtifact(path, data)
	if err != nil {
		return out, err
	}
	p := pp.Proposal
	ev, err := r.Record(TopicProposalSubmitted, opts.At, ProposalSubmittedPayload{ProposalID: p.ProposalID, WaveID: r.State.WaveID,
		Path: rel, ArtifactDigest: digest, PayloadDigest: pp.Sealed.Header.PayloadDigest, DiffDigest: p.DiffDigest, PatchID: c.patchID,
		BaseRef: p.BaseRef, IdempotencyKey: p.IdempotencyKey, WorkerID: p.WorkerRunMeta.WorkerID, CreatedAt: pp.Sealed.Header.CreatedAt,
		KID: pp.Sealed.Header.KID, TouchedFiles: c.facts.Touched, IntentTags: nonNil(p.IntentTags), Risk: c.facts.Risk,
		DeclaredRisk: p.Risk.Class, Constraints: Constraints{Atomicity: p.DeclaredConstraints.Atomicity, CriticalPath: p.DeclaredConstraints.CriticalPath,
			Dependency: c.facts.Dependency}})
	if err != nil {
		return out, err
	}
	out.Outcome, out.Sequence, out.Path, out.RiskClass = OutcomeAccepted, ev.Sequence, rel, c.facts.Risk.Class
	return out, nil
}

func (r *Run) recordRejection(out SubmitOutcome, data []byte, pp *ParsedProposal, rej *Rejection, at time.Time) (SubmitOutcome, error) {
	digest := canonical.Digest(data)
	_, rel, err := r.WriteArtifact(r.Layout.RejectedPath(strings.TrimPrefix(digest, "sha256:")), data)
	if err != nil {
		return out, err
	}
	pl := ProposalRejectedPayload{ProposalID: out.ProposalID, WaveID: r.State.WaveID, Stage: StageSubmit, Path: rel, ArtifactDigest: digest,
		IdempotencyKey: out.IdempotencyKey, ReasonClass: rej.Class, ReasonCode: rej.Code, Detail: rej.Detail}
	if pp != nil {
		pl.DiffDigest, pl.WorkerID = pp.Proposal.DiffDigest, pp.Proposal.WorkerRunMeta.WorkerID
	}
	ev, err := r.Record(TopicProposalRejected, at, pl)
	if err != nil {
		return out, err
	}
	out.Outcome, out.ReasonClass, out.ReasonCode, out.Detail, out.Sequence, out.Path = OutcomeRejected, rej.Class, rej.Code, rej.Detail, ev.Sequence, rel
	return out, nil
}

// verify runs the proposal checks and the policy pre-filter.
func (r *Run) verify(repo *gitstore.Repo, pp *ParsedProposal, opts SubmitOptions) (*checked, *Rejection) {
	st := &r.State
	p, h := pp.Proposal, pp.Sealed.Header
	pol := opts.Policy
	if st.Promoted != nil {
		return nil, reject(ClassVerification, ReasonRunClosed, "the run was promoted; start a new run")
	}
	// Header and payload must agree.
	for _, m := range []struct{ field, header, payload string }{
		{"object_id/proposal_id", h.ObjectID, p.ProposalID},
		{"run_id", h.RunID, p.WorkerRunMeta.RunID},
		{"wave_id", h.WaveID, p.WorkerRunMeta.WaveID},
		{"base_ref", h.BaseRef, p.BaseRef},
	} {
		if m.header != m.payload {
			return nil, reject(ClassVerification, ReasonHeaderMismatch, "header %s %q, payload %q", m.field, m.header, m.payload)
		}
	}
	if h.BaseTreeHash != "" && h.BaseTreeHash != p.BaseTreeHash {
		return nil, reject(ClassVerification, ReasonHeaderMismatch, "header base_tree_hash %q, payload %q", h.BaseTreeHash, p.BaseTreeHash)
	}
	if h.InputsHash != "" && h.InputsHash != p.DiffDigest {
		return nil, reject(ClassVerification, ReasonHeaderMismatch, "header inputs_hash %q, payload diff_digest %q", h.InputsHash, p.DiffDigest)
	}
	if q := st.Proposals[p.ProposalID]; q != nil {
		return nil, reject(ClassVerification, ReasonDuplicateProposalID, "proposal_id %s is already used by a different proposal (%s)", p.ProposalID, q.Path)
	}
	if p.WorkerRunMeta.RunID != st.RunID {
		return nil, reject(ClassVerification, ReasonRunMismatch, "run_id %q, this run is %q", p.WorkerRunMeta.RunID, st.RunID)
	}
	if p.WorkerRunMeta.WaveID != st.WaveID {
		return nil, reject(ClassVerification, ReasonWaveMismatch, "wave_id %q, the run is in %s", p.WorkerRunMeta.WaveID, st.WaveID)
	}
	if !IsFullSHA(p.BaseRef) {
		return nil, reject(ClassVerification, ReasonBaseRefNotSHA, "base_ref %q is not a full commit SHA", p.BaseRef)
	}
	if p.BaseRef != st.BaseRef {
		return nil, reject(ClassVerification, ReasonBaseRefMismatch, "base_ref %s is not the wave base %s", p.BaseRef, st.BaseRef)
	}
	base, _ := gitstore.ParseHash(p.BaseRef)
	tree, err := repo.CommitTree(base)
	if err != nil {
		return nil, reject(ClassVerification, ReasonBaseRefMismatch, "base_ref %s: %v", p.BaseRef, err)
	}
	if tree.String() != p.BaseTreeHash {
		return nil, reject(ClassVerification, ReasonBaseTreeMismatch, "base_tree_hash %s, but the tree of %s is %s", p.BaseTreeHash, p.BaseRef[:12], tree)
	}
	if rej := checkSignature(h, opts, pol); rej != nil {
		return nil, rej
	}
	if p.DiffCanonicalization != DiffCanonicalization {
		return nil, reject(ClassVerification, ReasonDiffCanonicalization, "diff_canonicalization %q, this coordinator knows %q", p.DiffCanonicalization, DiffCanonicalization)
	}
	raw, rej := diffBytes(repo, p)
	if rej != nil {
		return nil, rej
	}
	canon, parsed, err := patch.CanonicalDiff(raw, "diff of "+p.ProposalID)
	if err != nil {
		if isPathRefusal(err) {
			return nil, reject(ClassVerification, ReasonInvalidPath, "%v", err)
		}
		return nil, reject(ClassVerification, ReasonDiffUnreadable, "%v", err)
	}
	if d := canonical.Digest(canon); d != p.DiffDigest {
		return nil, reject(ClassVerification, ReasonDiffDigestMismatch, "the re-canonicalized diff hashes to %s, diff_digest says %s", d, p.DiffDigest)
	}
	facts := Assess(parsed, int64(len(canon)), pol)
	if strings.Join(facts.Touched, "\x00") != strings.Join(p.TouchedFiles, "\x00") {
		return nil, reject(ClassVerification, ReasonTouchedFilesMismatch, "touched_files %v, the diff touches %v", p.TouchedFiles, facts.Touched)
	}
	if p.HunkFingerprints != nil {
		want, _ := canonical.Marshal(patch.Fingerprints(parsed, p.BaseRef))
		have, _ := canonical.Marshal(p.HunkFingerprints)
		if len(p.HunkFingerprints) == 0 {
			have = []byte("null")
		}
		if !bytes.Equal(want, have) {
			return nil, reject(ClassVerification, ReasonFingerprintMismatch, "hunk_fingerprints are not those of the diff (%s)", patch.FingerprintVersion)
		}
	}
	if rej := prefilter(p, facts, pol); rej != nil {
		return nil, rej
	}
	// Apply-check on the clean base, in memory.
	res, err := patch.Apply(patch.NewMemStore(patch.NewRepoStore(repo)), patch.OID(tree), parsed, patch.Options{})
	if err != nil {
		var ce *patch.ConflictError
		if errors.As(err, &ce) {
			return nil, reject(ClassVerification, ReasonApplyCheckFailed, "does not apply on the base %s: %s", p.BaseRef[:12], conflictList(ce.Conflicts))
		}
		if isPathRefusal(err) { // a path whose mode comes from the base tree
			return nil, reject(ClassVerification, ReasonInvalidPath, "%v", err)
		}
		return nil, reject(ClassVerification, ReasonApplyCheckFailed, "does not apply on the base %s: %v", p.BaseRef[:12], err)
	}
	_ = res
	ids := patch.PatchIDs(canon)
	pid := ""
	if len(ids) > 0 {
		pid = ids[0].ID.String()
	}
	return &checked{parsed: pp, canon: canon, patch: parsed, facts: facts, patchID: pid}, nil
}

// isPathRefusal reports whether err refuses a path git would refuse.
func isPathRefusal(err error) bool {
	var ge *gitpath.Error
	return errors.As(err, &ge)
}

func conflictList(cs []patch.Conflict) string {
	var parts []string
	for _, c := range cs {
		parts = append(parts, c.String())
	}
	return strings.Join(parts, "; ")
}

func checkSignature(h artifact.Header, opts SubmitOptions, pol *Policy) *Rejection {
	required := opts.RequireSignature || pol.Signatures.Required
	if h.Signature == "" {
		if required {
			return reject(ClassVerification, ReasonSignatureRequired, "the proposal is not signed and the policy requires signatures")
		}
		return nil
	}
	if opts.Trusted == nil {
		if required {
			return reject(ClassVerification, ReasonSignatureUntrusted, "signed by %q, but no trusted keys were given", h.KID)
		}
		return nil
	}
	if err := artifact.VerifyHeader(h, opts.Trusted); err != nil {
		if errors.Is(err, signing.ErrUnknownKeyID) {
			return reject(ClassVerification, ReasonSignatureUntrusted, "signed by %q, which is not a trusted key", h.KID)
		}
		return reject(ClassVerification, ReasonSignatureInvalid, "%v", err)
	}
	return nil
}

// diffBytes returns the diff a proposal carries (inline or as a blob).
func diffBytes(repo *gitstore.Repo, p PatchProposal) ([]byte, *Rejection) {
	var ref []byte
	if p.DiffRef != "" {
		id, ok := gitstore.ParseHash(strings.TrimPrefix(p.DiffRef, DiffRefPrefix))
		if !ok || !strings.HasPrefix(p.DiffRef, DiffRefPrefix) {
			return nil, reject(ClassVerification, ReasonDiffUnreadable, "diff_ref %q: want %s<40 hex>", p.DiffRef, DiffRefPrefix)
		}
		b, err := repo.ReadBlob(id)
		if err != nil {
			return nil, reject(ClassVerification, ReasonDiffUnreadable, "diff_ref %s: %v", p.DiffRef, err)
		}
		ref = b
	}
	switch {
	case p.DiffUnified != "" && ref != nil && !bytes.Equal(ref, []byte(p.DiffUnified)):
		return nil, reject(ClassVerification, ReasonDiffDigestMismatch, "diff_ref and diff_unified hold different diffs")
	case ref != nil:
		return ref, nil
	}
	return []byte(p.DiffUnified), nil
}

// prefilter applies the stack policy.
func prefilter(p PatchProposal, f Facts, pol *Policy) *Rejection {
	if len(f.Forbidden) > 0 {
		return reject(ClassPolicy, ReasonForbiddenPath, "touches forbidden path(s): %s", strings.Join(f.Forbidden, ", "))
	}
	lim := pol.SizeLimits
	switch {
	case f.Risk.SurfaceArea.Bytes > lim.MaxDiffBytes:
		return reject(ClassPolicy, ReasonSizeLimit, "the diff is %d bytes, over max_diff_bytes %d", f.Risk.SurfaceArea.Bytes, lim.MaxDiffBytes)
	case f.Risk.SurfaceArea.Files > lim.MaxFiles:
		return reject(ClassPolicy, ReasonSizeLimit, "the diff changes %d files, over max_files %d", f.Risk.SurfaceArea.Files, lim.MaxFiles)
	case f.LinesChange > lim.MaxLinesChanged:
		return reject(ClassPolicy, ReasonSizeLimit, "the diff changes %d lines, over max_lines_changed %d", f.LinesChange, lim.MaxLinesChanged)
	case lim.MaxHunks > 0 && f.Hunks > lim.MaxHunks:
		return reject(ClassPolicy, ReasonSizeLimit, "the diff has %d hunks, over max_hunks %d", f.Hunks, lim.MaxHunks)
	}
	if f.Risk.Binary && !pol.binaryAllowed() {
		return reject(ClassPolicy, ReasonBinaryNotAllowed, "the diff changes binary files and the policy does not allow them")
	}
	if len(pol.IntentTags) > 0 {
		allowed := map[string]bool{}
		for _, t := range pol.IntentTags {
			allowed[t] = true
		}
		for _, t := range p.IntentTags {
			if !allowed[t] {
				return reject(ClassPolicy, ReasonIntentNotAllowed, "intent tag %q is not one of %s", t, strings.Join(pol.IntentTags, ", "))
			}
		}
	}
	if !pol.atomicityAllowed(p.DeclaredConstraints.Atomicity) {
		return reject(ClassPolicy, ReasonAtomicityNotAllowed, "atomicity %q is not allowed by the policy", p.DeclaredConstraints.Atomicity)
	}
	if f.Dependency {
		switch pol.DependencyFiles.Mode {
		case DepForbid:
			return reject(ClassPolicy, ReasonDependencyForbidden, "the diff changes dependency files and the policy forbids it")
		case DepGated:
			has := false
			for _, t := range p.IntentTags {
				has = has || t == pol.DependencyFiles.RequiredIntent
			}
			if !has {
				return reject(ClassPolicy, ReasonDependencyGated, "the diff changes dependency files; the policy requires the intent tag %q", pol.DependencyFiles.RequiredIntent)
			}
		}
		if p.DeclaredConstraints.NoDeps {
			return reject(ClassVerification, ReasonConstraintViolated, "declared no_deps, but the diff changes dependency files")
		}
	}
	if f.API && p.DeclaredConstraints.NoAPIChange {
		return reject(ClassVerification, ReasonConstraintViolated, "declared no_api_change, but the diff changes API paths")
	}
	return nil
}

// LoadTrustedKeys parses a trusted key set for submit.
func LoadTrustedKeys(source string, data []byte) (*signing.TrustedKeys, error) {
	t, err := signing.ParseTrustedKeys(data)
	if err != nil {
		return nil, &errkind.InputError{Source: source, Problem: err.Error()}
	}
	return t, nil
}
