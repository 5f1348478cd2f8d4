package signing

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"

	"github.com/dome-registry/dome/pkg/canonical"
)

// AlgEd25519 is the only signature algorithm dome accepts.
const AlgEd25519 = "ed25519"

// Errors of Verify, for errors.Is. An algorithm mismatch is also a bad
// signature (the action registry answers both with BAD_SIGNATURE).
var (
	ErrUnknownKeyID = errors.New("unknown key id")
	ErrBadSignature = errors.New("bad signature")
	ErrAlgMismatch  = errors.New("signature algorithm does not match the key")
)

// Stable codes for Verify's errors, as the action registry's API reports them.
const (
	CodeUnknownKeyID = "UNKNOWN_KEY_ID"
	CodeBadSignature = "BAD_SIGNATURE"
)

// Code returns the stable code of a verification error: CodeUnknownKeyID,
// CodeBadSignature, or "" for nil and for errors that are not Verify's.
func Code(err error) string {
	switch {
	case err == nil:
		return ""
	case errors.Is(err, ErrUnknownKeyID):
		return CodeUnknownKeyID
	case errors.Is(err, ErrBadSignature):
		return CodeBadSignature
	}
	return ""
}

// Signature is a detached signature block, as stored beside a payload:
// {"alg": "ed25519", "kid": "dev-root-1", "sig": "base64:..."}.
type Signature struct {
	Alg string `json:"alg"`
	KID string `json:"kid"`
	Sig string `json:"sig"`
}

const sigPrefix = "base64:"

// PAE is the DSSE pre-authentication encoding of a payload type and body:
// "DSSEv1" SP LEN(type) SP type SP LEN(body) SP body, lengths as ASCII
// decimal byte counts.
func PAE(payloadType string, body []byte) []byte {
	return appendPAE(nil, payloadType, body)
}

func appendPAE(dst []byte, payloadType string, body []byte) []byte {
	dst = append(dst, "DSSEv1 "...)
	dst = strconv.AppendInt(dst, int64(len(payloadType)), 10)
	dst = append(dst, ' ')
	dst = append(dst, payloadType...)
	dst = append(dst, ' ')
	dst = strconv.AppendInt(dst, int64(len(body)), 10)
	dst = append(dst, ' ')
	return append(dst, body...)
}

// SigningInput returns the exact bytes an Ed25519 signature covers:
// PAE(payloadType, digest), digest being "sha256:<64 lowercase hex>" of the
// canonical payload. For example, for payload type "dome.action/v1":
//
//	DSSEv1 14 dome.action/v1 71 sha256:<64 hex digits>
func SigningInput(payloadType, digest string) ([]byte, error) {
	if err := checkPayloadType(payloadType); err != nil {
		return nil, err
	}
	if _, err := canonical.ParseDigest(digest); err != nil {
		return nil, err
	}
	return appendPAE(make([]byte, 0, 16+len(payloadType)+len(digest)), payloadType, []byte(digest)), nil
}

// CheckPayloadType reports whether t is a valid payload type: 1 to 256
// visible ASCII characters.
func CheckPayloadType(t string) error { return checkPayloadType(t) }

func checkPayloadType(t string) error {
	if t == "" || len(t) > 256 {
		return fmt.Errorf("payload type %q: want 1 to 256 characters naming the artifact kind, e.g. dome.action/v1", t)
	}
	for i := 0; i < len(t); i++ {
		if c := t[i]; c <= ' ' || c > '~' {
			return fmt.Errorf("payload type %q: only visible ASCII characters are allowed", t)
		}
	}
	return nil
}

// Sign signs a canonical payload (the output of canonical.Transform or
// canonical.Marshal) as payloadType. A payload that is not in canonical form
// is refused: its digest would never match what a verifier computes.
func Sign(key PrivateKey, payloadType string, canonicalPayload []byte) (Signature, error) {
	c, err := canonical.Transform(canonicalPayload)
	if err != nil {
		return Signature{}, fmt.Errorf("sign: payload: %w", err)
	}
	if string(c) != string(canonicalPayload) {
		return Signature{}, errors.New("sign: the payload is not in RFC 8785 canonical form; pass it through canonical.Transform first")
	}
	return SignDigest(key, payloadType, canonical.Digest(canonicalPayload))
}

// SignDigest signs the digest ("sha256:<hex>") of a canonical payload.
func SignDigest(key PrivateKey, payloadType, digest string) (Signature, error) {
	if len(key.Key) != ed25519.PrivateKeySize {
		return Signature{}, fmt.Errorf("sign: key %q is not an Ed25519 private key", key.KID)
	}
	if err := checkKID(key.KID); err != nil {
		return Signature{}, fmt.Errorf("sign: %w", err)
	}
	msg, err := SigningInput(payloadType, digest)
	if err != nil {
		return Signature{}, fmt.Errorf("sign: %w", err)
	}
	sig := ed25519.Sign(key.Key, msg)
	return Signature{Alg: AlgEd25519, KID: key.KID, Sig: sigPrefix + base64.StdEncoding.EncodeToString(sig)}, nil
}

// Verify checks sig over a canonical payload signed as payloadType. It fails
// with ErrUnknownKeyID when sig.KID is not trusted, ErrAlgMismatch (also an
// ErrBadSignature) when sig.Alg is not the key's, and ErrBadSignature when
// the signature is malformed or does not verify.
func (t *TrustedKeys) Verify(payloadType string, canonicalPayload []byte, sig Signature) error {
	sum := sha256.Sum256(canonicalPayload)
	var d [7 + 64]byte
	copy(d[:], "sha256:")
	hexEncode(d[7:], sum[:])
	return t.verify(payloadType, d[:], sig)
}

// VerifyDigest is Verify given the digest ("sha256:<hex>") of the canonical
// payload instead of the payload.
func (t *TrustedKeys) VerifyDigest(payloadType, digest string, sig Signature) error {
	if _, err := canonical.ParseDigest(digest); err != nil {
		return fmt.Errorf("%w: %w", ErrBadSignature, err)
	}
	return t.verify(payloadType, []byte(digest), sig)
}

func (t *TrustedKeys) verify(payloadType string, digest []byte, sig Signature) error {
	key, err := t.Key(sig.KID)
	if err != nil {
		return err
	}
	if sig.Alg != key.Alg {
		return fmt.Errorf("%w: %w: signature says %q, key %q is %q", ErrBadSignature, ErrAlgMismatch, sig.Alg, key.KID, key.Alg)
	}
	if err := checkPayloadType(payloadType); err != nil {
		return fmt.Errorf("%w: %w", ErrBadSignature, err)
	}
	var rawBuf [66]byte // base64.StdEncoding.DecodedLen(88): Decode may write that much
	raw, err := decodeSig(rawBuf[:], sig.Sig)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrBadSignature, err)
	}
	var buf [512]byte
	msg := appendPAE(buf[:0], payloadType, digest)
	if len(key.Key) != ed25519.PublicKeySize || !ed25519.Verify(key.Key, msg, raw) {
		return fmt.Errorf("%w: the Ed25519 signature by %q does not match this %s payload", ErrBadSignature, key.KID, payloadType)
	}
	return nil
}

// decodeSig decodes "base64:<64 bytes>" into dst (at least 66 bytes: 88
// characters decode to at most 66) by the strict base64 rule of every key and
// signature (decodeStrictBase64): one encoding per signature, so no byte of
// the text can change unnoticed.
func decodeSig(dst []byte, s string) ([]byte, error) {
	if len(s) < len(sigPrefix) || s[:len(sigPrefix)] != sigPrefix {
		return nil, errors.New(`sig: want "base64:" followed by the padded standard base64 of 64 bytes (88 characters)`)
	}
	raw, err := decodeStrictBase64(dst, s[len(sigPrefix):], ed25519.SignatureSize)
	if err != nil {
		return nil, fmt.Errorf(`sig: want "base64:" followed by the padded standard base64 of 64 bytes (88 characters): %w`, err)
	}
	return raw, nil
}

func hexEncode(dst, src []byte) {
	const digits = "0123456789abcdef"
	for i, b := range src {
		dst[2*i] = digits[b>>4]
		dst[2*i+1] = digits[b&0xF]
	}
}
