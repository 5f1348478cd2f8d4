package stack

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/dome-registry/dome/pkg/artifact"
	"github.com/dome-registry/dome/pkg/canonical"
	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/dome-registry/dome/pkg/schemaval"
)

// MaxProposalBytes bounds a proposal document.
const MaxProposalBytes = 96 << 20

// Rejection is a refused proposal: a reason class, a reason code and what
// was wrong.
type Rejection struct {
	Class  string `json:"reason_class"`
	Code   string `json:"reason_code"`
	Detail string `json:"detail"`
}

func (r *Rejection) Error() string { return r.Class + "/" + r.Code + ": " + r.Detail }

func reject(class, code, format string, a ...any) *Rejection {
	return &Rejection{Class: class, Code: code, Detail: fmt.Sprintf(format, a...)}
}

// headerFields are the members a sealed document's header may have.
var headerFields = map[string]bool{
	"artifact_kind": true, "version": true, "object_id": true, "run_id": true, "wave_id": true, "node_id": true,
	"base_ref": true, "base_tree_hash": true, "created_at": true, "producer": true, "inputs_hash": true,
	"determinism_seed": true, "payload_digest": true, "canonicalization": true, "kid": true, "signature": true,
}

// requiredProposalFields are the PatchProposal members that must be present.
var requiredProposalFields = []string{"proposal_id", "base_ref", "base_tree_hash", "diff_canonicalization", "diff_digest",
	"touched_files", "intent_tags", "risk", "declared_constraints", "worker_run_meta", "idempotency_key"}

// ParsedProposal is a proposal document that passed the structural checks.
type ParsedProposal struct {
	Sealed   *artifact.Sealed
	Proposal PatchProposal
}

// ParseProposal checks a proposal document's structure: strict JSON, a
// sealed dome.patch_proposal/v1 whose payload digest checks, no unknown
// members (header or payload, at any depth), every required member present
// and every value of the right shape (the embedded JSON schema). It does
// not check signatures, refs or the diff (Submit does). A failure is a
// *Rejection with class verification.
func ParseProposal(data []byte) (*ParsedProposal, *Rejection) {
	if len(data) > MaxProposalBytes {
		return nil, reject(ClassVerification, ReasonMalformed, "the document is %d bytes, over the limit of %d", len(data), MaxProposalBytes)
	}
	cd, err := canonical.Transform(data)
	if err != nil {
		return nil, reject(ClassVerification, ReasonMalformed, "not strict JSON: %v", err)
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(cd, &top); err != nil {
		return nil, reject(ClassVerification, ReasonMalformed, `want a sealed document {"header": {...}, "payload": {...}}`)
	}
	if unknown := unknownKeys(top, map[string]bool{"header": true, "payload": true}); len(unknown) > 0 {
		return nil, reject(ClassVerification, ReasonUnknownField, "unknown member(s) %s of the document", strings.Join(unknown, ", "))
	}
	for _, k := range []string{"header", "payload"} {
		if _, ok := top[k]; !ok {
			return nil, reject(ClassVerification, ReasonMissingField, "the document has no %q", k)
		}
	}
	var hdr, payload map[string]json.RawMessage
	if err := json.Unmarshal(top["header"], &hdr); err != nil {
		return nil, reject(ClassVerification, ReasonMalformed, "header: want an object")
	}
	if unknown := unknownKeys(hdr, headerFields); len(unknown) > 0 {
		return nil, reject(ClassVerification, ReasonUnknownField, "unknown header member(s) %s", strings.Join(unknown, ", "))
	}
	if err := json.Unmarshal(top["payload"], &payload); err != nil {
		return nil, reject(ClassVerification, ReasonMalformed, "payload: want an object")
	}
	var missing []string
	for _, k := range requiredProposalFields {
		if _, ok := payload[k]; !ok {
			missing = append(missing, k)
		}
	}
	if _, ok := payload["diff_unified"]; !ok {
		if _, ok := payload["diff_ref"]; !ok {
			missing = append(missing, "diff_unified or diff_ref")
		}
	}
	if len(missing) > 0 {
		return nil, reject(ClassVerification, ReasonMissingField, "missing %s", strings.Join(missing, ", "))
	}
	if err := proposalSchema().Validate("payload", top["payload"]); err != nil {
		var ie *errkind.InputError
		code := ReasonInvalidField
		if errors.As(err, &ie) {
			switch {
			case strings.HasPrefix(ie.Problem, "unknown field"):
				code = ReasonUnknownField
			case strings.HasPrefix(ie.Problem, "missing"):
				code = ReasonMissingField
			}
		}
		return nil, reject(ClassVerification, code, "%v", err)
	}
	s, err := artifact.Open(data, artifact.OpenOptions{Kind: KindPatchProposal})
	if err != nil {
		return nil, reject(ClassVerification, ReasonMalformed, "%v", err)
	}
	var pp PatchProposal
	dec := json.NewDecoder(bytes.NewReader(s.Payload))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&pp); err != nil {
		return nil, reject(ClassVerification, ReasonUnknownField, "payload: %v", err)
	}
	return &ParsedProposal{Sealed: s, Proposal: pp}, nil
}

func unknownKeys(m map[string]json.RawMessage, known map[string]bool) []string {
	var out []string
	for k := range m {
		if !known[k] {
			out = append(out, fmt.Sprintf("%q", k))
		}
	}
	sort.Strings(out)
	return out
}

// proposalSchema is the embedded PatchProposal schema, compiled on first
// use (a read-only value afterwards).
var proposalSchema = sync.OnceValue(func() *schemaval.Schema {
	b, _ := policyFS.ReadFile("schemas/patch_proposal.schema.json")
	return schemaval.MustCompile("patch_proposal.schema.json", b)
})

// ProposalSchemaJSON returns the embedded JSON Schema of a PatchProposal
// payload.
func ProposalSchemaJSON() []byte {
	b, _ := policyFS.ReadFile("schemas/patch_proposal.schema.json")
	return b
}
