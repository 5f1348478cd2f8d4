package signing

import (
	"fmt"

	"github.com/dome-registry/dome/pkg/canonical"
)

// SignatureFile is a detached signature as dome sign writes it: the payload
// type, the canonicalization, the digest of the canonical payload and the
// signature block.
type SignatureFile struct {
	PayloadType      string    `json:"payload_type"`
	Canonicalization string    `json:"canonicalization"`
	Hash             string    `json:"hash"`
	Signature        Signature `json:"signature"`
}

// NewSignatureFile signs a canonical payload and returns its detached
// signature file.
func NewSignatureFile(key PrivateKey, payloadType string, canonicalPayload []byte) (SignatureFile, error) {
	sig, err := Sign(key, payloadType, canonicalPayload)
	if err != nil {
		return SignatureFile{}, err
	}
	return SignatureFile{PayloadType: payloadType, Canonicalization: canonical.Name, Hash: canonical.Digest(canonicalPayload), Signature: sig}, nil
}

// ParseSignatureFile reads a detached signature file strictly (no duplicate,
// unknown or differently spelled members).
func ParseSignatureFile(data []byte) (SignatureFile, error) {
	var sf SignatureFile
	if err := strictDecode(data, &sf); err != nil {
		return SignatureFile{}, fmt.Errorf(`signature file: want {"payload_type", "canonicalization", "hash", "signature": {"alg", "kid", "sig"}}: %w`, err)
	}
	return sf, nil
}

// VerifyDetached checks a detached signature file over a canonical payload
// that must have been signed as payloadType (the caller's expectation, not
// the file's claim). A file for another kind or canonicalization, or whose
// hash is not the payload's, is an ErrBadSignature.
func (t *TrustedKeys) VerifyDetached(payloadType string, canonicalPayload []byte, sf SignatureFile) error {
	switch digest := canonical.Digest(canonicalPayload); {
	case sf.Canonicalization != canonical.Name:
		return fmt.Errorf("%w: the signature file uses canonicalization %q, want %q", ErrBadSignature, sf.Canonicalization, canonical.Name)
	case sf.PayloadType != payloadType:
		return fmt.Errorf("%w: the signature file is for kind %q, not %q", ErrBadSignature, sf.PayloadType, payloadType)
	case sf.Hash != digest:
		return fmt.Errorf("%w: the payload changed since it was signed: its canonical hash is %s, the signature file says %s", ErrBadSignature, digest, sf.Hash)
	}
	return t.Verify(payloadType, canonicalPayload, sf.Signature)
}
