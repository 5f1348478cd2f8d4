package signing

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/dome-registry/dome/pkg/canonical"
)

// An embedded signature lives in the signed document itself, as the action
// registry seed stores schemas: top-level "hash" ("sha256:" of the canonical
// payload) and "signature" ({alg, kid, sig}) members. The signed payload is
// the canonical object without its "hash", "signature" and "verified"
// members (ExcludedMembers).

// ErrNotObject is returned for a document with an embedded signature that is
// not a JSON object.
var ErrNotObject = errors.New("a document with an embedded signature must be a JSON object")

// ExcludedMembers returns the top-level members left out of an embedded
// signature's payload: "hash", "signature" and "verified".
func ExcludedMembers() []string { return []string{"hash", "signature", "verified"} }

// Embedded is a document split for an embedded signature.
type Embedded struct {
	Payload   []byte                     // canonical object without the excluded members
	Digest    string                     // canonical.Digest(Payload)
	Members   map[string]json.RawMessage // every top-level member, canonical values
	Hash      string                     // the document's "hash" member, "" if absent
	Signature *Signature                 // the document's "signature" member, nil if absent
}

// SplitEmbedded parses a JSON object (any formatting) into its signed payload
// and its embedded hash and signature. Errors: a *canonical.SyntaxError for
// input that is not strict JSON, ErrNotObject, or a malformed "hash" or
// "signature" member.
func SplitEmbedded(doc []byte) (*Embedded, error) {
	c, err := canonical.Transform(doc)
	if err != nil {
		return nil, err
	}
	var members map[string]json.RawMessage
	if err := json.Unmarshal(c, &members); err != nil || members == nil {
		return nil, ErrNotObject
	}
	rest := make(map[string]json.RawMessage, len(members))
	for k, v := range members {
		rest[k] = v
	}
	for _, name := range ExcludedMembers() {
		delete(rest, name)
	}
	payload, err := canonical.Marshal(rest)
	if err != nil {
		return nil, fmt.Errorf("encode the payload: %w", err)
	}
	e := &Embedded{Payload: payload, Digest: canonical.Digest(payload), Members: members}
	if raw, ok := members["hash"]; ok {
		if err := json.Unmarshal(raw, &e.Hash); err != nil {
			return nil, fmt.Errorf(`"hash": want a "sha256:<hex>" string, got %s`, raw)
		}
	}
	if raw, ok := members["signature"]; ok {
		var sig Signature
		if err := strictDecode(raw, &sig); err != nil {
			return nil, fmt.Errorf(`"signature": want {"alg", "kid", "sig"}: %w`, err)
		}
		e.Signature = &sig
	}
	return e, nil
}

// SignEmbedded signs doc (a JSON object) as payloadType and returns the
// canonical document with fresh "hash" and "signature" members ("verified"
// is dropped).
func SignEmbedded(key PrivateKey, payloadType string, doc []byte) ([]byte, Signature, error) {
	e, err := SplitEmbedded(doc)
	if err != nil {
		return nil, Signature{}, err
	}
	sig, err := Sign(key, payloadType, e.Payload)
	if err != nil {
		return nil, Signature{}, err
	}
	members := e.Members
	delete(members, "verified")
	members["hash"], _ = json.Marshal(e.Digest)
	members["signature"], _ = json.Marshal(sig)
	out, err := canonical.Marshal(members)
	if err != nil {
		return nil, Signature{}, fmt.Errorf("encode the signed document: %w", err)
	}
	return out, sig, nil
}

// VerifyEmbedded checks the embedded signature of doc made as payloadType.
// A missing signature, or a "hash" that is not the digest of the payload, is
// an ErrBadSignature; an unknown kid an ErrUnknownKeyID. Errors of
// SplitEmbedded are returned as they are.
func (t *TrustedKeys) VerifyEmbedded(payloadType string, doc []byte) (*Embedded, error) {
	e, err := SplitEmbedded(doc)
	if err != nil {
		return nil, err
	}
	if e.Signature == nil {
		return e, fmt.Errorf(`%w: no "signature" member`, ErrBadSignature)
	}
	if e.Hash != "" && e.Hash != e.Digest {
		return e, fmt.Errorf(`%w: the document changed since it was signed: its payload hashes to %s, "hash" says %s`, ErrBadSignature, e.Digest, e.Hash)
	}
	return e, t.VerifyDigest(payloadType, e.Digest, *e.Signature)
}

// strictDecode decodes JSON into v refusing duplicate and unknown members and
// any spelling that differs from the canonical encoding of v (encoding/json
// alone matches names case-insensitively).
func strictDecode(data []byte, v any) error {
	c, err := canonical.Transform(data)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(c))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	again, err := canonical.Marshal(v)
	if err != nil {
		return err
	}
	if !bytes.Equal(again, c) {
		return errors.New("unexpected, empty or differently spelled members")
	}
	return nil
}
