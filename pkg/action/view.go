package action

import (
	"encoding/json"

	"github.com/dome-registry/dome/pkg/signing"
)

// View is a published version as API shows it
// (GET /actions/{name}/versions/{version}): the schema is the signed payload
// (the document without "hash", "signature" and "verified"), next to the
// hash, the signature block and the verification result.
type View struct {
	Name      string             `json:"name"`
	Version   string             `json:"version"`
	Schema    json.RawMessage    `json:"schema"`
	Hash      string             `json:"hash"`
	Signature *signing.Signature `json:"signature"`
	Verified  bool               `json:"verified"`
	// Deprecated and DeprecationReason appear only for a deprecated version.
	Deprecated        bool   `json:"deprecated,omitempty"`
	DeprecationReason string `json:"deprecation_reason,omitempty"`
}

// NewView builds the View of a record and its verification. Stored bytes
// that no longer parse give a null schema, the record's hash and no
// signature.
func NewView(rec Record, v Verification) View {
	out := View{Name: rec.Name, Version: rec.Version, Hash: rec.Hash, Verified: v.Verified, Schema: json.RawMessage("null")}
	if rec.Deprecation != nil {
		out.Deprecated, out.DeprecationReason = true, rec.Deprecation.Reason
	}
	if e, err := signing.SplitEmbedded(rec.Document); err == nil {
		out.Schema = json.RawMessage(e.Payload)
		out.Signature = e.Signature
		if e.Hash != "" {
			out.Hash = e.Hash
		}
	}
	return out
}
