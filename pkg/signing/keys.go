package signing

import (
	"bytes"
	"crypto/ed25519"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/dome-registry/dome/pkg/canonical"
)

// PrivateKey is an Ed25519 private key and the key id it signs as.
type PrivateKey struct {
	KID string
	Key ed25519.PrivateKey
}

// PublicKey is a trusted Ed25519 public key.
type PublicKey struct {
	KID string
	Alg string // AlgEd25519
	Key ed25519.PublicKey
}

// TrustedKeyEntry is one entry of a trusted key set file or of
// TRUSTED_KEYS_JSON: {"kid": "dev-root-1", "alg": "ed25519", "public_key": "base64:..."}.
// public_key may also hold a PKIX PEM block.
type TrustedKeyEntry struct {
	KID       string `json:"kid"`
	Alg       string `json:"alg"`
	PublicKey string `json:"public_key"`
}

// checkKID accepts 1 to 128 characters: letters, digits and ._:@+- , not
// starting with a punctuation character (key ids become file names).
func checkKID(kid string) error {
	if kid == "" || len(kid) > 128 {
		return fmt.Errorf("kid %q: want 1 to 128 characters", kid)
	}
	for i := 0; i < len(kid); i++ {
		c := kid[i]
		alnum := 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
		if !alnum && (i == 0 || !strings.ContainsRune("._:@+-", rune(c))) {
			return fmt.Errorf("kid %q: use letters, digits and . _ : @ + - (starting with a letter or digit)", kid)
		}
	}
	return nil
}

// CheckKID reports whether kid is a valid key id.
func CheckKID(kid string) error { return checkKID(kid) }

// GenerateKey makes a new Ed25519 key with the given id from rand (use
// crypto/rand.Reader).
func GenerateKey(kid string, rand io.Reader) (PrivateKey, error) {
	if err := checkKID(kid); err != nil {
		return PrivateKey{}, err
	}
	_, priv, err := ed25519.GenerateKey(rand)
	if err != nil {
		return PrivateKey{}, fmt.Errorf("generate Ed25519 key: %w", err)
	}
	return PrivateKey{KID: kid, Key: priv}, nil
}

// Public returns the public half of k.
func (k PrivateKey) Public() PublicKey {
	return PublicKey{KID: k.KID, Alg: AlgEd25519, Key: k.Key.Public().(ed25519.PublicKey)}
}

// MarshalPEM encodes k as a PKCS#8 "PRIVATE KEY" PEM block (as
// "openssl genpkey -algorithm ed25519" writes it).
func (k PrivateKey) MarshalPEM() ([]byte, error) {
	der, err := x509.MarshalPKCS8PrivateKey(k.Key)
	if err != nil {
		return nil, fmt.Errorf("encode private key %q: %w", k.KID, err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), nil
}

// ParsePrivateKey reads a PKCS#8 PEM Ed25519 private key that signs as kid.
func ParsePrivateKey(kid string, data []byte) (PrivateKey, error) {
	if err := checkKID(kid); err != nil {
		return PrivateKey{}, err
	}
	der, err := onePEM(data, "PRIVATE KEY")
	if err != nil {
		return PrivateKey{}, err
	}
	key, err := x509.ParsePKCS8PrivateKey(der)
	if err != nil {
		return PrivateKey{}, fmt.Errorf("PKCS#8 private key: %w", err)
	}
	priv, ok := key.(ed25519.PrivateKey)
	if !ok {
		return PrivateKey{}, fmt.Errorf("the private key is a %T, want Ed25519", key)
	}
	return PrivateKey{KID: kid, Key: priv}, nil
}

// onePEM returns the bytes of the single PEM block of the given type in data.
func onePEM(data []byte, typ string) ([]byte, error) {
	block, rest := pem.Decode(data)
	if block == nil {
		return nil, fmt.Errorf("no PEM block found, want %q", "-----BEGIN "+typ+"-----")
	}
	if block.Type == "ENCRYPTED PRIVATE KEY" {
		return nil, errors.New("the private key is encrypted; dome reads unencrypted PKCS#8 keys (keep the file mode 0600)")
	}
	if block.Type != typ {
		return nil, fmt.Errorf("PEM block is %q, want %q", block.Type, typ)
	}
	if len(block.Headers) > 0 {
		return nil, fmt.Errorf("PEM block %q has headers; want a plain block", typ)
	}
	if len(bytes.TrimSpace(rest)) > 0 {
		return nil, fmt.Errorf("data after the %q PEM block", typ)
	}
	return block.Bytes, nil
}

// MarshalPEM encodes p as a PKIX "PUBLIC KEY" PEM block.
func (p PublicKey) MarshalPEM() ([]byte, error) {
	der, err := x509.MarshalPKIXPublicKey(p.Key)
	if err != nil {
		return nil, fmt.Errorf("encode public key %q: %w", p.KID, err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}), nil
}

// Encoded returns "base64:" and the standard base64 of the raw 32-byte key.
func (p PublicKey) Encoded() string {
	return sigPrefix + base64.StdEncoding.EncodeToString(p.Key)
}

// Entry returns p as a trusted key entry.
func (p PublicKey) Entry() TrustedKeyEntry {
	return TrustedKeyEntry{KID: p.KID, Alg: p.Alg, PublicKey: p.Encoded()}
}

// ParsePublicKey reads an Ed25519 public key for kid, given as
// "base64:<raw 32 bytes>" or as a PKIX "PUBLIC KEY" PEM block.
func ParsePublicKey(kid, s string) (PublicKey, error) {
	if err := checkKID(kid); err != nil {
		return PublicKey{}, err
	}
	var raw []byte
	switch {
	case strings.HasPrefix(s, sigPrefix):
		var buf [33]byte // base64.StdEncoding.DecodedLen(44)
		b, err := decodeStrictBase64(buf[:], s[len(sigPrefix):], ed25519.PublicKeySize)
		if err != nil {
			return PublicKey{}, fmt.Errorf(`public key: want "base64:" followed by the padded standard base64 of the raw 32-byte Ed25519 key (44 characters), or a PKIX PEM block: %w`, err)
		}
		raw = b
	case strings.Contains(s, "-----BEGIN"):
		der, err := onePEM([]byte(s), "PUBLIC KEY")
		if err != nil {
			return PublicKey{}, fmt.Errorf("public key: %w", err)
		}
		key, err := x509.ParsePKIXPublicKey(der)
		if err != nil {
			return PublicKey{}, fmt.Errorf("public key: %w", err)
		}
		pub, ok := key.(ed25519.PublicKey)
		if !ok {
			return PublicKey{}, fmt.Errorf("public key: a %T, want Ed25519", key)
		}
		raw = pub
	default:
		return PublicKey{}, errors.New(`public key: want "base64:<raw 32 bytes>" or a PKIX PEM block`)
	}
	if err := CheckPublicKey(raw); err != nil {
		return PublicKey{}, fmt.Errorf("public key: %w", err)
	}
	return PublicKey{KID: kid, Alg: AlgEd25519, Key: ed25519.PublicKey(slices.Clone(raw))}, nil
}

// TrustedKeys is an immutable set of trusted public keys by kid.
type TrustedKeys struct {
	byKID map[string]PublicKey
	kids  []string // sorted
}

// NewTrustedKeys builds a set. A kid or a public key listed twice is an error:
// with one kid per key, a signature never verifies under a changed kid. A key
// CheckPublicKey refuses (small order, off the curve) is an error too.
func NewTrustedKeys(keys ...PublicKey) (*TrustedKeys, error) {
	if len(keys) == 0 {
		return nil, errors.New("trusted keys: the set is empty")
	}
	t := &TrustedKeys{byKID: make(map[string]PublicKey, len(keys))}
	seen := make(map[string]string, len(keys))
	for _, k := range keys {
		if err := checkKID(k.KID); err != nil {
			return nil, fmt.Errorf("trusted keys: %w", err)
		}
		if k.Alg != AlgEd25519 {
			return nil, fmt.Errorf("trusted keys: kid %q: alg %q is not supported, want %q", k.KID, k.Alg, AlgEd25519)
		}
		if err := CheckPublicKey(k.Key); err != nil {
			return nil, fmt.Errorf("trusted keys: kid %q: %w", k.KID, err)
		}
		if _, dup := t.byKID[k.KID]; dup {
			return nil, fmt.Errorf("trusted keys: kid %q is listed twice", k.KID)
		}
		if other, dup := seen[string(k.Key)]; dup {
			return nil, fmt.Errorf("trusted keys: kids %q and %q have the same public key; give each key one kid", other, k.KID)
		}
		seen[string(k.Key)] = k.KID
		k.Key = slices.Clone(k.Key)
		t.byKID[k.KID] = k
		t.kids = append(t.kids, k.KID)
	}
	slices.Sort(t.kids)
	return t, nil
}

// ParseTrustedKeys reads a trusted key set: a JSON array of
// {"kid", "alg", "public_key"} entries (the content of a trusted keys file or
// of TRUSTED_KEYS_JSON). Duplicate JSON member names and unknown fields are
// refused.
func ParseTrustedKeys(data []byte) (*TrustedKeys, error) {
	if _, err := canonical.Transform(data); err != nil {
		return nil, fmt.Errorf("trusted keys: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var entries []TrustedKeyEntry
	if err := dec.Decode(&entries); err != nil {
		return nil, fmt.Errorf(`trusted keys: want a JSON array of {"kid", "alg", "public_key"} entries: %w`, err)
	}
	keys := make([]PublicKey, 0, len(entries))
	for i, e := range entries {
		if e.Alg != AlgEd25519 {
			return nil, fmt.Errorf("trusted keys: entry %d (kid %q): alg %q is not supported, want %q", i, e.KID, e.Alg, AlgEd25519)
		}
		k, err := ParsePublicKey(e.KID, e.PublicKey)
		if err != nil {
			return nil, fmt.Errorf("trusted keys: entry %d (kid %q): %w", i, e.KID, err)
		}
		keys = append(keys, k)
	}
	return NewTrustedKeys(keys...)
}

// Key returns the trusted key with the given id, or an ErrUnknownKeyID error.
func (t *TrustedKeys) Key(kid string) (PublicKey, error) {
	if t != nil {
		if k, ok := t.byKID[kid]; ok {
			return k, nil
		}
	}
	return PublicKey{}, fmt.Errorf("%w: kid %q is not in the trusted key set (%s)", ErrUnknownKeyID, kid, strings.Join(t.KIDs(), ", "))
}

// KIDs returns the trusted key ids, sorted.
func (t *TrustedKeys) KIDs() []string {
	if t == nil {
		return nil
	}
	return slices.Clone(t.kids)
}

// Entries returns the set as trusted key entries, sorted by kid.
func (t *TrustedKeys) Entries() []TrustedKeyEntry {
	out := make([]TrustedKeyEntry, 0, len(t.KIDs()))
	for _, kid := range t.KIDs() {
		out = append(out, t.byKID[kid].Entry())
	}
	return out
}
