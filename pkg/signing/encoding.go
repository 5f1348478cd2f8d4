package signing

import (
	"bytes"
	"crypto/ed25519"
	"encoding/base64"
	"errors"
	"fmt"

	"filippo.io/edwards25519"
)

// One base64 rule for every key and signature dome reads ("base64:" then the
// text): the standard alphabet of RFC 4648 section 4 with "=" padding, and
// exactly the one encoding of the expected number of bytes. Nothing else is
// accepted: no line breaks or other whitespace anywhere (Go's decoder skips
// \r and \n even in strict mode), no missing or extra padding, no URL-safe
// alphabet, no non-zero bits after the last byte. So no character of a key
// or a signature can change without changing what it decodes to.

// decodeStrictBase64 decodes the strict base64 text of exactly n bytes into
// dst (which needs room for base64.StdEncoding.DecodedLen of the text).
func decodeStrictBase64(dst []byte, s string, n int) ([]byte, error) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '+' || c == '/' || c == '=') {
			return nil, fmt.Errorf("character %d (%q) is not in the standard base64 alphabet (A-Z a-z 0-9 + / and = padding; no whitespace or line breaks)", i+1, c)
		}
	}
	want := base64.StdEncoding.EncodedLen(n)
	if len(s) != want {
		return nil, fmt.Errorf("%d characters of base64, want %d (the padded standard base64 of %d bytes)", len(s), want, n)
	}
	pad := want - (n*4+2)/3 // "=" characters the encoding of n bytes ends with
	for i := 0; i < len(s); i++ {
		if (s[i] == '=') != (i >= len(s)-pad) {
			return nil, fmt.Errorf("character %d: the encoding of %d bytes ends with exactly %d \"=\" and has none before", i+1, n, pad)
		}
	}
	if len(dst) < base64.StdEncoding.DecodedLen(len(s)) {
		return nil, errors.New("decode buffer too small")
	}
	got, err := base64.StdEncoding.Strict().Decode(dst, []byte(s))
	if err != nil {
		return nil, errors.New("not the canonical base64 encoding: the bits after the last byte must be zero")
	}
	if got != n {
		return nil, fmt.Errorf("decodes to %d bytes, want %d", got, n)
	}
	return dst[:n], nil
}

// CheckPublicKey refuses an Ed25519 public key that is not the canonical
// encoding of a point on the curve, or that is a point of small order (the
// identity and the seven other points the cofactor 8 sends to it).
// crypto/ed25519 verifies signatures under such keys: with the identity as
// the key, R = identity and S = 0 verify every message, so a trusted key set
// holding one would accept anything.
func CheckPublicKey(key []byte) error {
	if len(key) != ed25519.PublicKeySize {
		return fmt.Errorf("an Ed25519 public key has %d bytes, got %d", ed25519.PublicKeySize, len(key))
	}
	p, err := new(edwards25519.Point).SetBytes(key)
	if err != nil {
		return errors.New("not a point of the Ed25519 curve")
	}
	if !bytes.Equal(p.Bytes(), key) {
		return errors.New("a non-canonical encoding of an Ed25519 point (a coordinate not reduced modulo 2^255-19)")
	}
	if new(edwards25519.Point).MultByCofactor(p).Equal(edwards25519.NewIdentityPoint()) == 1 {
		return errors.New("a small-order point, not a usable Ed25519 public key: signatures under it can be forged for any message")
	}
	return nil
}
