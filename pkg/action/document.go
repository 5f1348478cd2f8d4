package action

import (
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

// Sign signs an action document with key: it checks the document
// (ParseDocument) and returns its canonical form with fresh "hash" and
// "signature" members (any old ones and "verified" are replaced). The
// signature is Ed25519 over the DSSE pre-authentication encoding
//
//	"DSSEv1" SP LEN(PayloadType) SP PayloadType SP LEN(hash) SP hash
//
// hash being "sha256:<hex>" of the canonical payload (pkg/signing).
func Sign(key signing.PrivateKey, doc []byte) ([]byte, error) {
	if _, err := ParseDocument(doc); err != nil {
		return nil, err
	}
	out, _, err := signing.SignEmbedded(key, PayloadType, doc)
	if err != nil {
		return nil, fmt.Errorf("sign: %w", err)
	}
	return out, nil
}
