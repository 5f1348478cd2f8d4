package artifact

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/dome-registry/dome/pkg/canonical"
	"github.com/dome-registry/dome/pkg/signing"
)

// Header is the standard artifact header. Fields marked optional are omitted
// from the JSON when empty.
type Header struct {
	ArtifactKind     string `json:"artifact_kind"`            // e.g. "dome.stack_plan/v1": the format and its version
	Version          string `json:"version"`                  // the version of this object (e.g. "1", "1.2.0")
	ObjectID         string `json:"object_id"`                // unique within its run (content address or UUID)
	RunID            string `json:"run_id,omitempty"`         // optional
	WaveID           string `json:"wave_id,omitempty"`        // optional
	NodeID           string `json:"node_id,omitempty"`        // optional
	BaseRef          string `json:"base_ref,omitempty"`       // the commit SHA the artifact is about, if any
	BaseTreeHash     string `json:"base_tree_hash,omitempty"` // optional
	CreatedAt        string `json:"created_at"`               // RFC 3339 UTC, an input (--created-at, SOURCE_DATE_EPOCH)
	Producer         string `json:"producer"`                 // who made it, e.g. "dome/0.1.0 stack plan"
	InputsHash       string `json:"inputs_hash,omitempty"`    // optional "sha256:<hex>" of the inputs
	DeterminismSeed  string `json:"determinism_seed,omitempty"`
	PayloadDigest    string `json:"payload_digest"`      // "sha256:<hex>" of the canonical payload (set by Seal)
	Canonicalization string `json:"canonicalization"`    // "jcs-rfc8785" (set by Seal)
	KID              string `json:"kid,omitempty"`       // signing key id, when signed
	Signature        string `json:"signature,omitempty"` // "base64:<64 bytes>", when signed
}

// Sealed is a sealed artifact document.
type Sealed struct {
	Header  Header          `json:"header"`
	Payload json.RawMessage `json:"payload"` // canonical bytes
}

// Errors of Open, for errors.Is (signature failures wrap the errors of
// package signing: signing.ErrUnknownKeyID, signing.ErrBadSignature).
var (
	ErrMalformed      = errors.New("malformed artifact")
	ErrKindMismatch   = errors.New("artifact kind mismatch")
	ErrDigestMismatch = errors.New("payload digest mismatch")
	ErrUnsigned       = errors.New("artifact is not signed")
)

// FormatTime formats t as created_at values are written: RFC 3339 in UTC.
func FormatTime(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// ParseSourceDateEpoch reads a SOURCE_DATE_EPOCH value (decimal seconds since
// 1970, https://reproducible-builds.org/specs/source-date-epoch/).
func ParseSourceDateEpoch(s string) (time.Time, error) {
	n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil || n < 0 {
		return time.Time{}, fmt.Errorf("SOURCE_DATE_EPOCH %q: want a non-negative number of seconds since 1970-01-01", s)
	}
	return time.Unix(n, 0).UTC(), nil
}

// Check validates the header fields Seal does not set.
func (h Header) check() error {
	var missing []string
	for _, f := range []struct{ name, v string }{
		{"artifact_kind", h.ArtifactKind}, {"version", h.Version}, {"object_id", h.ObjectID},
		{"created_at", h.CreatedAt}, {"producer", h.Producer},
	} {
		if f.v == "" {
			missing = append(missing, f.name)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("header: missing %s", strings.Join(missing, ", "))
	}
	for i := 0; i < len(h.ArtifactKind); i++ {
		if c := h.ArtifactKind[i]; c <= ' ' || c > '~' {
			return fmt.Errorf("header: artifact_kind %q: only visible ASCII characters are allowed", h.ArtifactKind)
		}
	}
	if _, err := time.Parse(time.RFC3339Nano, h.CreatedAt); err != nil || !strings.HasSuffix(h.CreatedAt, "Z") {
		return fmt.Errorf("header: created_at %q: want an RFC 3339 UTC time such as 2026-01-02T03:04:05Z", h.CreatedAt)
	}
	if h.InputsHash != "" {
		if _, err := canonical.ParseDigest(h.InputsHash); err != nil {
			return fmt.Errorf("header: inputs_hash: %w", err)
		}
	}
	return nil
}

// Seal returns the canonical bytes of {"header": h, "payload": payload} with
// h.PayloadDigest and h.Canonicalization set from the canonical payload, and
// signed with key when key is not nil (h.KID = key.KID). payload is any JSON
// text; it is canonicalized. Existing KID and Signature fields are replaced.
func Seal(h Header, payload []byte, key *signing.PrivateKey) ([]byte, Header, error) {
	cp, err := canonical.Transform(payload)
	if err != nil {
		return nil, Header{}, fmt.Errorf("seal %s: payload: %w", h.ArtifactKind, err)
	}
	if err := h.check(); err != nil {
		return nil, Header{}, fmt.Errorf("seal: %w", err)
	}
	h.PayloadDigest = canonical.Digest(cp)
	h.Canonicalization = canonical.Name
	h.KID, h.Signature = "", ""
	if key != nil {
		h.KID = key.KID
		signed, err := canonical.Marshal(h)
		if err != nil {
			return nil, Header{}, fmt.Errorf("seal %s: %w", h.ArtifactKind, err)
		}
		sig, err := signing.Sign(*key, h.ArtifactKind, signed)
		if err != nil {
			return nil, Header{}, fmt.Errorf("seal %s: %w", h.ArtifactKind, err)
		}
		h.Signature = sig.Sig
	}
	doc, err := encode(h, cp)
	if err != nil {
		return nil, Header{}, fmt.Errorf("seal %s: %w", h.ArtifactKind, err)
	}
	return doc, h, nil
}

// SealValue is Seal with the payload encoded from v by canonical.Marshal.
func SealValue(h Header, v any, key *signing.PrivateKey) ([]byte, Header, error) {
	p, err := canonical.Marshal(v)
	if err != nil {
		return nil, Header{}, fmt.Errorf("seal %s: %w", h.ArtifactKind, err)
	}
	return Seal(h, p, key)
}

func encode(h Header, canonicalPayload []byte) ([]byte, error) {
	hb, err := canonical.Marshal(h)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	b.Grow(len(hb) + len(canonicalPayload) + 24)
	b.WriteString(`{"header":`)
	b.Write(hb)
	b.WriteString(`,"payload":`)
	b.Write(canonicalPayload)
	b.WriteString(`}`)
	return b.Bytes(), nil
}

// OpenOptions says what Open requires.
type OpenOptions struct {
	Kind             string               // the artifact_kind expected; "" accepts any
	Trusted          *signing.TrustedKeys // verifies signatures; nil leaves a signature unchecked
	RequireSignature bool                 // refuse unsigned artifacts (needs Trusted)
}

// Open parses a sealed document (any JSON formatting; duplicate member names
// are refused), checks the header, the kind, that payload_digest is the
// digest of the canonical payload and, with opts.Trusted, the signature. The
// returned payload is canonical.
func Open(doc []byte, opts OpenOptions) (*Sealed, error) {
	cd, err := canonical.Transform(doc)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	var raw struct {
		Header  *json.RawMessage `json:"header"`
		Payload *json.RawMessage `json:"payload"`
	}
	dec := json.NewDecoder(bytes.NewReader(cd))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&raw); err != nil {
		return nil, fmt.Errorf(`%w: want {"header": {...}, "payload": ...}: %w`, ErrMalformed, err)
	}
	if raw.Header == nil || raw.Payload == nil {
		return nil, fmt.Errorf(`%w: want both "header" and "payload"`, ErrMalformed)
	}
	var h Header
	hd := json.NewDecoder(bytes.NewReader(*raw.Header))
	hd.DisallowUnknownFields()
	if err := hd.Decode(&h); err != nil {
		return nil, fmt.Errorf("%w: header: %w", ErrMalformed, err)
	}
	if err := h.check(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	if h.Canonicalization != canonical.Name {
		return nil, fmt.Errorf("%w: header: canonicalization %q is not supported, want %q", ErrMalformed, h.Canonicalization, canonical.Name)
	}
	if opts.Kind != "" && h.ArtifactKind != opts.Kind {
		return nil, fmt.Errorf("%w: the artifact is a %q, want %q", ErrKindMismatch, h.ArtifactKind, opts.Kind)
	}
	payload := []byte(*raw.Payload) // canonical already: a part of canonical bytes
	// encoding/json matches names case-insensitively and keeps the last of
	// two spellings; require the document to be exactly what dome writes, so
	// that every reader sees the fields the signature covers.
	if want, err := encode(h, payload); err != nil || !bytes.Equal(want, cd) {
		return nil, fmt.Errorf("%w: the document has fields that are unknown, empty or spelled differently (write it with dome)", ErrMalformed)
	}
	if got := canonical.Digest(payload); got != h.PayloadDigest {
		return nil, fmt.Errorf("%w: the payload hashes to %s, the header says %s", ErrDigestMismatch, got, h.PayloadDigest)
	}
	if (h.KID == "") != (h.Signature == "") {
		return nil, fmt.Errorf("%w: header: kid and signature go together", ErrMalformed)
	}
	switch {
	case h.Signature == "" && opts.RequireSignature:
		return nil, fmt.Errorf("%w: a signed %s is required", ErrUnsigned, h.ArtifactKind)
	case h.Signature != "" && opts.Trusted != nil:
		if err := VerifyHeader(h, opts.Trusted); err != nil {
			return nil, err
		}
	case opts.RequireSignature:
		return nil, fmt.Errorf("%w: no trusted keys to check the signature with", ErrUnsigned)
	}
	return &Sealed{Header: h, Payload: payload}, nil
}

// SigningPayload returns the canonical bytes a header's signature covers: the
// header without its signature field (kid included).
func SigningPayload(h Header) ([]byte, error) {
	h.Signature = ""
	return canonical.Marshal(h)
}

// VerifyHeader checks h's signature with trusted. It does not check the
// payload digest (Open does).
func VerifyHeader(h Header, trusted *signing.TrustedKeys) error {
	if h.Signature == "" {
		return fmt.Errorf("%w: %s %s", ErrUnsigned, h.ArtifactKind, h.ObjectID)
	}
	signed, err := SigningPayload(h)
	if err != nil {
		return err
	}
	alg := signing.AlgEd25519
	if k, err := trusted.Key(h.KID); err == nil {
		alg = k.Alg
	}
	if err := trusted.Verify(h.ArtifactKind, signed, signing.Signature{Alg: alg, KID: h.KID, Sig: h.Signature}); err != nil {
		return fmt.Errorf("%s %s: %w", h.ArtifactKind, h.ObjectID, err)
	}
	return nil
}
