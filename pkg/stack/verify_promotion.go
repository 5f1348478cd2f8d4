package stack

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/dome-registry/dome/pkg/artifact"
	"github.com/dome-registry/dome/pkg/canonical"
	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/dome-registry/dome/pkg/gitstore"
	"github.com/dome-registry/dome/pkg/readlimit"
	"github.com/dome-registry/dome/pkg/signing"
)

// VerifyPromotionOptions controls VerifyPromotion.
type VerifyPromotionOptions struct {
	// Trusted verifies the decisions' signatures (nil: signatures are not
	// checked, which is a problem when one is required).
	Trusted *signing.TrustedKeys
	// RequireSignature requires a signed promotion decision even where the
	// policy did not.
	RequireSignature bool
}

// PromotionVerification is what VerifyPromotion found.
type PromotionVerification struct {
	RunID       string   `json:"run_id"`
	DecisionID  string   `json:"decision_id"`
	FromHeadRef string   `json:"from_head_ref"`
	ToRef       string   `json:"to_ref"`
	ToRefAt     string   `json:"to_ref_at"` // where to_ref points now
	SignedBy    string   `json:"signed_by,omitempty"`
	Evidence    int      `json:"evidence"` // artifacts checked
	Events      int      `json:"events"`
	Problems    []string `json:"problems"`
}

// OK reports whether nothing is wrong.
func (v *PromotionVerification) OK() bool { return len(v.Problems) == 0 }

// VerifyPromotion checks, after the fact, the evidence chain a promotion
// stood on, as an auditor or a release pipeline would before trusting the
// promoted ref: the ledger replays to state.json and its events up to the
// decision are those the decision committed to; the promotion decision the
// ledger names is the file on disk (by digest), well-formed, allowed, about
// this head and ref, and signed by a trusted key where required; every
// artifact it cites is present with its digest (a signed gate decision's
// signature verifies too); and to_ref still contains the promoted head.
func VerifyPromotion(repo *gitstore.Repo, l Layout, opts VerifyPromotionOptions) (*PromotionVerification, error) {
	st, evs, err := LoadState(l)
	if err != nil {
		return nil, err
	}
	v := &PromotionVerification{RunID: st.RunID, Events: len(evs), Problems: []string{}}
	problem := func(format string, a ...any) { v.Problems = append(v.Problems, fmt.Sprintf(format, a...)) }
	if st.Promoted == nil {
		return v, &errkind.CheckError{Problem: fmt.Sprintf("run %s has not been promoted: nothing to verify", st.RunID), Hint: "dome stack promote --run " + st.RunID}
	}
	p := st.Promoted
	v.DecisionID, v.FromHeadRef, v.ToRef = p.DecisionID, p.FromHeadRef, p.ToRef
	if res, err := compareState(l, st, evs); err != nil {
		return v, err
	} else if !res.Equal {
		problem("state.json differs from the state the %d events replay to (at %s)", res.Events, orWhole(res.FirstDiff))
	}

	var ps *PromotionState
	for i := range st.Promotions {
		if st.Promotions[i].DecisionID == p.DecisionID {
			ps = &st.Promotions[i]
		}
	}
	if ps == nil { // Fold refuses a promoted event without its decision; kept for safety
		problem("the ledger has no promotion.computed event for decision %s", p.DecisionID)
		return v, nil
	}
	doc, err := readlimit.ReadFile(l.Abs(ps.Path), MaxProposalBytes)
	switch {
	case err != nil:
		problem("PromotionDecision %s: cannot read %s: %v", p.DecisionID, ps.Path, err)
		return v, nil
	case canonical.Digest(doc) != ps.ArtifactDigest:
		problem("PromotionDecision %s: %s does not have the digest the ledger recorded (%s)", p.DecisionID, ps.Path, ps.ArtifactDigest)
		return v, nil
	}
	sealed, err := artifact.Open(doc, artifact.OpenOptions{Kind: KindPromotionDecision})
	if err != nil {
		problem("PromotionDecision %s: %v", p.DecisionID, err)
		return v, nil
	}
	var d PromotionDecision
	if err := json.Unmarshal(sealed.Payload, &d); err != nil {
		problem("PromotionDecision %s: %v", p.DecisionID, err)
		return v, nil
	}
	if d.DecisionID != p.DecisionID || d.FromHeadRef != p.FromHeadRef || d.ToRef != p.ToRef || !d.Allowed || len(d.Missing) > 0 {
		problem("PromotionDecision %s says %s -> %s, allowed %v, %d missing; the ledger promoted %s -> %s",
			d.DecisionID, short(d.FromHeadRef), d.ToRef, d.Allowed, len(d.Missing), short(p.FromHeadRef), p.ToRef)
	}
	if d.LedgerDigest != "" { // decisions made before dome recorded it have none
		n := 0
		for n < len(evs) && evs[n].Sequence <= d.LedgerSequence {
			n++
		}
		if n == 0 || evs[n-1].Sequence != d.LedgerSequence || LedgerDigest(evs[:n]) != d.LedgerDigest {
			problem("the ledger's events 1..%d are not the ones PromotionDecision %s was made on (an event was changed, removed or inserted)", d.LedgerSequence, d.DecisionID)
		}
	}
	v.SignedBy = checkDecisionSignature(sealed.Header, opts.Trusted, opts.RequireSignature || d.SignatureRequired, "PromotionDecision "+d.DecisionID, problem)

	for _, e := range d.Evidence {
		v.Evidence++
		b, err := readlimit.ReadFile(l.Abs(e.Path), MaxProposalBytes)
		if err != nil {
			problem("%s %s: cannot read %s: %v", e.Kind, e.ID, e.Path, err)
			continue
		}
		if canonical.Digest(b) != e.Digest {
			problem("%s %s: %s changed since the promotion (digest %s, cited %s)", e.Kind, e.ID, e.Path, canonical.Digest(b), e.Digest)
			continue
		}
		if e.Kind == KindGateDecision {
			gs, err := artifact.Open(b, artifact.OpenOptions{Kind: KindGateDecision})
			if err != nil {
				problem("GateDecision %s: %v", e.ID, err)
			} else if gs.Header.Signature != "" {
				checkDecisionSignature(gs.Header, opts.Trusted, true, "GateDecision "+e.ID, problem)
			}
		}
	}

	from, ok := gitstore.ParseHash(p.FromHeadRef)
	if !ok {
		problem("the promoted head %q is not a commit id", p.FromHeadRef)
		return v, nil
	}
	at, err := repo.Ref(p.ToRef)
	switch {
	case errors.Is(err, gitstore.ErrNotFound):
		problem("%s no longer exists", p.ToRef)
	case err != nil:
		return v, err
	default:
		v.ToRefAt = at.String()
		if ok, err := IsAncestor(repo, from, at, maxChain); err != nil {
			return v, err
		} else if !ok {
			problem("%s is at %s, which does not contain the promoted head %s", p.ToRef, short(at.String()), short(p.FromHeadRef))
		}
	}
	return v, nil
}

// checkDecisionSignature verifies a sealed header's signature against trusted, and
// reports what is wrong; it returns the signer's kid when it verified.
func checkDecisionSignature(h artifact.Header, trusted *signing.TrustedKeys, required bool, what string, problem func(string, ...any)) string {
	switch {
	case h.Signature == "" && required:
		problem("%s is not signed, and a signature is required", what)
	case h.Signature == "":
	case trusted == nil:
		problem("%s is signed by %q, but no trusted keys were given to check it", what, h.KID)
	default:
		if err := artifact.VerifyHeader(h, trusted); err != nil {
			problem("%s: the signature does not verify: %v", what, err)
			return ""
		}
		return h.KID
	}
	return ""
}

func orWhole(ptr string) string {
	if ptr == "" {
		return "the whole file"
	}
	return ptr
}
