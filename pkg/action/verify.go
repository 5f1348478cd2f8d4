package action

import (
	"errors"
	"fmt"

	"github.com/dome-registry/dome/pkg/canonical"
	"github.com/dome-registry/dome/pkg/signing"
)

// Verification is the outcome of checking an action document's embedded
// signature against a trusted key set.
type Verification struct {
	Verified bool
	KID      string // the signature block's kid ("" without a signature)
	Alg      string // the signature block's alg ("" without a signature)
	// Hash is "sha256:<hex>" of the canonical payload recomputed from the
	// bytes checked ("" when they are not a JSON object).
	Hash string
	// Reason says why the document did not verify ("" when it did).
	Reason string
	// Err is nil when Verified; otherwise it wraps ErrUnknownKeyID (the kid
	// is not trusted) or ErrBadSignature (anything else: no or malformed
	// signature, changed bytes, a "hash" that is not the payload's, a failing
	// Ed25519 check, an unparseable document).
	Err error
}

// Code returns stable code of a failed verification
// ("UNKNOWN_KEY_ID" or "BAD_SIGNATURE"), "" when verified.
func (v Verification) Code() string {
	switch {
	case v.Verified || v.Err == nil:
		return ""
	case errors.Is(v.Err, ErrUnknownKeyID):
		return ErrUnknownKeyID.Error()
	}
	return ErrBadSignature.Error()
}

// Verify checks the embedded signature of doc, made as PayloadType, against
// keys. Tamper behaviour: any change to any byte of the payload, of "hash"
// or of the signature makes Verified false with a Reason (and Err wrapping
// ErrBadSignature); a kid not in keys gives ErrUnknownKeyID. A nil key set
// verifies nothing (ErrUnknownKeyID).
func Verify(doc []byte, keys *signing.TrustedKeys) Verification {
	d, err := ParseDocument(doc)
	if err != nil {
		if e, serr := signing.SplitEmbedded(doc); serr == nil {
			// valid JSON object, but not a valid action document
			return fail(ErrBadSignature, e.Digest, nil, err.Error())
		}
		return fail(ErrBadSignature, "", nil, "the document does not parse: "+err.Error())
	}
	return verifyParsed(d, keys)
}

// VerifyDocument checks a parsed document's signature as Verify does.
func VerifyDocument(d *Document, keys *signing.TrustedKeys) Verification {
	return verifyParsed(d, keys)
}

func verifyParsed(d *Document, keys *signing.TrustedKeys) Verification {
	if d.Signature == nil {
		return fail(ErrBadSignature, d.Hash, nil, `the document has no "signature" member; sign it with dome action sign --key KEY FILE`)
	}
	if d.StatedHash == "" {
		return fail(ErrBadSignature, d.Hash, d.Signature, `the document has no "hash" member`)
	}
	if d.StatedHash != d.Hash {
		return fail(ErrBadSignature, d.Hash, d.Signature, fmt.Sprintf(`the document changed since it was signed: its payload hashes to %s, "hash" says %s`, d.Hash, d.StatedHash))
	}
	if err := keys.VerifyDigest(PayloadType, d.Hash, *d.Signature); err != nil {
		base := ErrBadSignature
		if errors.Is(err, signing.ErrUnknownKeyID) {
			base = ErrUnknownKeyID
		}
		return fail(base, d.Hash, d.Signature, err.Error())
	}
	return Verification{Verified: true, KID: d.Signature.KID, Alg: d.Signature.Alg, Hash: d.Hash}
}

func fail(base error, hash string, sig *signing.Signature, reason string) Verification {
	v := Verification{Hash: hash, Reason: reason, Err: fmt.Errorf("%w: %s", base, reason)}
	if sig != nil {
		v.KID, v.Alg = sig.KID, sig.Alg
	}
	return v
}

// VerifyRecord verifies a stored record: its document's signature (Verify),
// and that the document is what the record says it is: its name and version
// are the record's and its payload hashes to the record's Hash. A record
// whose stored bytes or columns were changed after publishing never verifies.
func VerifyRecord(rec Record, keys *signing.TrustedKeys) Verification {
	d, err := ParseDocument(rec.Document)
	if err != nil {
		return Verify(rec.Document, keys)
	}
	switch {
	case d.Name != rec.Name || d.Version != rec.Version:
		return fail(ErrBadSignature, d.Hash, d.Signature, fmt.Sprintf("the stored document is %s@%s, not %s@%s", d.Name, d.Version, rec.Name, rec.Version))
	case rec.Hash != "" && rec.Hash != d.Hash:
		return fail(ErrBadSignature, d.Hash, d.Signature, fmt.Sprintf("the stored document's payload hashes to %s, the store recorded %s at publish time", d.Hash, rec.Hash))
	}
	return verifyParsed(d, keys)
}

// KeysFingerprint identifies a trusted key set: "sha256:" of the canonical
// JSON of its entries sorted by kid. Two sets with the same keys under the
// same kids have the same fingerprint. A nil set has the fingerprint "".
func KeysFingerprint(keys *signing.TrustedKeys) string {
	if keys == nil {
		return ""
	}
	b, err := canonical.Marshal(keys.Entries())
	if err != nil { // entries are plain strings: cannot happen
		panic(fmt.Sprintf("action: encode trusted keys: %v", err))
	}
	return canonical.Digest(b)
}
