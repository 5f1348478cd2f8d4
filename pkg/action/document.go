package action

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/dome-registry/dome/pkg/canonical"
	"github.com/dome-registry/dome/pkg/signing"
)

// MaxDocumentSize bounds an action document (1 MiB): larger input is refused
// before it is parsed.
const MaxDocumentSize = 1 << 20

// An action document is a JSON object with at least
//
//	{"name": "files.move", "version": "1.1.0", ...}
//
// and, once signed, the embedded signature members of pkg/signing:
//
//	"hash": "sha256:<hex of the canonical payload>",
//	"signature": {"alg": "ed25519", "kid": "dev-root-1", "sig": "base64:<64 bytes>"}
//
// Everything but "hash", "signature" and "verified" is the payload: name,
// version, an optional "description" string and whatever else the schema
// holds (input and output JSON Schemas, for example). Name and version are
// part of the signed payload, so a signature for files.move@1.0.0 never
// verifies for another name or version.

// Document is a parsed action document.
type Document struct {
	Name        string
	Version     string
	Description string // "" if absent
	// Canonical is the RFC 8785 form of the whole document (with "hash" and
	// "signature" when present, without "verified"): the bytes a store keeps.
	Canonical []byte
	// Payload is the canonical document without "hash", "signature" and
	// "verified": the signed bytes (via their digest).
	Payload []byte
	// Hash is canonical.Digest(Payload).
	Hash string
	// StatedHash is the document's "hash" member ("" if absent).
	StatedHash string
	// Signature is the document's "signature" member (nil if absent).
	Signature *signing.Signature
}

// ParseDocument reads an action document in any JSON formatting. It refuses
// input over MaxDocumentSize, anything that is not strict JSON (duplicate
// member names included, also when spelled with escapes: two parsers must
// never see different documents), a non-object, a missing or invalid "name"
// or "version", a "description" that is not a string and a malformed "hash"
// or "signature" member. Errors wrap ErrInvalid; syntax errors also wrap the
// *canonical.SyntaxError with the byte offset.
func ParseDocument(doc []byte) (*Document, error) {
	if len(doc) > MaxDocumentSize {
		return nil, fmt.Errorf("%w: the document is %d bytes, the limit is %d", ErrInvalid, len(doc), MaxDocumentSize)
	}
	e, err := signing.SplitEmbedded(doc)
	if err != nil {
		var se *canonical.SyntaxError
		if errors.As(err, &se) {
			return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
		}
		if errors.Is(err, signing.ErrNotObject) {
			return nil, fmt.Errorf("%w: an action document must be a JSON object", ErrInvalid)
		}
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	d := &Document{Payload: e.Payload, Hash: e.Digest, StatedHash: e.Hash, Signature: e.Signature}
	if d.Name, err = stringMember(e.Members, "name", true); err != nil {
		return nil, err
	}
	if err := CheckName(d.Name); err != nil {
		return nil, fmt.Errorf(`"name": %w`, err)
	}
	if d.Version, err = stringMember(e.Members, "version", true); err != nil {
		return nil, err
	}
	if err := CheckVersion(d.Version); err != nil {
		return nil, fmt.Errorf(`"version": %w`, err)
	}
	if d.Description, err = stringMember(e.Members, "description", false); err != nil {
		return nil, err
	}
	members := e.Members
	if _, ok := members["verified"]; ok {
		members = make(map[string]json.RawMessage, len(e.Members))
		for k, v := range e.Members {
			if k != "verified" {
				members[k] = v
			}
		}
	}
	if d.Canonical, err = canonical.Marshal(members); err != nil {
		return nil, fmt.Errorf("%w: encode the document: %w", ErrInvalid, err)
	}
	return d, nil
}

func stringMember(members map[string]json.RawMessage, name string, required bool) (string, error) {
	raw, ok := members[name]
	if !ok {
		if required {
			return "", fmt.Errorf("%w: the document has no %q member (an action document is {\"name\": ..., \"version\": ..., ...})", ErrInvalid, name)
		}
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", fmt.Errorf("%w: %q must be a string, got %s", ErrInvalid, name, truncate(raw, 40))
	}
	return s, nil
}

func truncate(b []byte, n int) string {
	if len(b) <= n {
		return string(b)
	}
	return string(b[:n]) + "..."
}

// An action can also be sent as the publish request the action registry
// API describes: an envelope around the payload,
//
//	{"schema": {"name": "files.move", "version": "1.1.0", ...},
//	 "signature": {"alg": "ed25519", "kid": "dev-root-1", "sig": "base64:..."}}
//
// optionally with the "hash" of the payload and the "name", "version" and
// "verified" members of a fetched version (so the body of
// GET /actions/{name}/versions/{version} publishes as it is). The signed
// bytes are the same in both shapes: the canonical payload's digest.

// envelopeMembers are the members an envelope may hold.
var envelopeMembers = map[string]bool{"schema": true, "signature": true, "hash": true, "name": true, "version": true, "verified": true}

// ParseSubmitted reads an action as a publisher sends it: the document
// itself (ParseDocument), or the envelope {"schema", "signature"} above,
// which it turns into the document (the schema's members with "signature"
// and "hash", the hash computed when the envelope has none). A JSON object
// is read as an envelope when every member is an envelope member and
// "schema" is an object with a "name"; anything else is a document. Errors
// are ParseDocument's, and ErrInvalid for an envelope whose "name" or
// "version" differ from its schema's or whose schema carries a different
// "hash" or "signature" of its own.
func ParseSubmitted(body []byte) (*Document, error) {
	if len(body) > MaxDocumentSize || !bytes.Contains(body, []byte(`"schema"`)) {
		return ParseDocument(body)
	}
	members, ok := envelope(body)
	if !ok {
		return ParseDocument(body)
	}
	var schema map[string]json.RawMessage
	if err := json.Unmarshal(members["schema"], &schema); err != nil {
		return nil, fmt.Errorf("%w: \"schema\": %w", ErrInvalid, err)
	}
	for _, m := range []string{"name", "version"} {
		if raw, ok := members[m]; ok && !bytes.Equal(raw, schema[m]) {
			return nil, fmt.Errorf("%w: the envelope's %q is %s, its schema's is %s", ErrInvalid, m, truncate(raw, 60), truncate(schema[m], 60))
		}
	}
	for _, m := range []string{"hash", "signature"} {
		outer, inOuter := members[m]
		inner, inInner := schema[m]
		switch {
		case inOuter && inInner && !bytes.Equal(outer, inner):
			return nil, fmt.Errorf("%w: the envelope and its schema carry different %q members; keep the envelope's", ErrInvalid, m)
		case inOuter:
			schema[m] = outer
		}
	}
	delete(schema, "verified")
	doc, err := canonical.Marshal(schema)
	if err != nil {
		return nil, fmt.Errorf("%w: encode the document: %w", ErrInvalid, err)
	}
	d, err := ParseDocument(doc)
	if err != nil || d.StatedHash != "" {
		return d, err
	}
	// The server computes the hash the envelope left out.
	schema["hash"], _ = json.Marshal(d.Hash)
	if doc, err = canonical.Marshal(schema); err != nil {
		return nil, fmt.Errorf("%w: encode the document: %w", ErrInvalid, err)
	}
	return ParseDocument(doc)
}

// envelope returns the members of body when it is an envelope.
func envelope(body []byte) (map[string]json.RawMessage, bool) {
	c, err := canonical.Transform(body)
	if err != nil {
		return nil, false // ParseDocument reports it
	}
	var members map[string]json.RawMessage
	if json.Unmarshal(c, &members) != nil || members == nil {
		return nil, false
	}
	for k := range members {
		if !envelopeMembers[k] {
			return nil, false
		}
	}
	var schema map[string]json.RawMessage
	if json.Unmarshal(members["schema"], &schema) != nil || schema == nil {
		return nil, false
	}
	if _, ok := schema["name"]; !ok {
		return nil, false
	}
	return members, true
}

// Prepare parses a document (ParseDocument) and returns the Record a store
// keeps: name and version read from the document, Document the canonical
// bytes (with "hash" and "signature", without "verified"), Hash the digest of
// the canonical payload. It does not check the signature: call Verify (or
// VerifyRecord) before Store.Publish, or use Publish which does both.
func Prepare(doc []byte) (Record, error) {
	d, err := ParseDocument(doc)
	if err != nil {
		return Record{}, err
	}
	return Record{Name: d.Name, Version: d.Version, Document: d.Canonical, Hash: d.Hash}, nil
}

// Sign signs an action document with key: it checks the document (either
// shape, ParseSubmitted) and returns its canonical form with fresh "hash" and
// "signature" members (any old ones and "verified" are replaced). The
// signature is Ed25519 over the DSSE pre-authentication encoding
//
//	"DSSEv1" SP LEN(PayloadType) SP PayloadType SP LEN(hash) SP hash
//
// hash being "sha256:<hex>" of the canonical payload (pkg/signing).
func Sign(key signing.PrivateKey, doc []byte) ([]byte, error) {
	d, err := ParseSubmitted(doc)
	if err != nil {
		return nil, err
	}
	out, _, err := signing.SignEmbedded(key, PayloadType, d.Canonical)
	if err != nil {
		return nil, fmt.Errorf("sign: %w", err)
	}
	return out, nil
}
