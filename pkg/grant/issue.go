package grant

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"time"

	"github.com/dome-registry/dome/pkg/artifact"
	"github.com/dome-registry/dome/pkg/signing"
)

// Payload is a grant's payload: the ToolProfile fields of the orchestration
// seed (section 5A), members in canonical order. kid and signature live in
// the artifact header, which the signature covers whole (and the payload
// through payload_digest).
type Payload struct {
	AllowedCapabilities []string    `json:"allowed_capabilities"`
	AllowedMethods      []Method    `json:"allowed_methods"`
	Audience            string      `json:"audience"`
	Budgets             Budgets     `json:"budgets"`
	Constraints         Constraints `json:"constraints"`
	Contracts           []string    `json:"contracts"` // contract_id@version of each skill contract the methods come from
	ExpiresAt           string      `json:"expires_at"`
	IssuedAt            string      `json:"issued_at"`
	Issuer              string      `json:"issuer"`
	JTI                 string      `json:"jti"`
	NodeExecutionID     string      `json:"node_execution_id,omitempty"`
	NodeID              string      `json:"node_id,omitempty"`
	ProfileID           string      `json:"profile_id"`
	RunID               string      `json:"run_id"`
	SingleUse           bool        `json:"single_use"`
	WaveID              string      `json:"wave_id"`
	WorkerID            string      `json:"worker_id,omitempty"`
}

// Grant is a parsed grant. Only Parse makes one; the methods index and
// times are derived from the payload.
type Grant struct {
	Header  artifact.Header
	Payload Payload
	Digest  string // sha256 of the grant's bytes: what a SpawnSpec's tool_profile_ref names

	issuedAt, expiresAt time.Time
	methods             map[string]int // method -> index in Payload.AllowedMethods
	signedDigest        string         // sha256 of the canonical header without its signature
	payloadDigestOK     bool           // payload_digest is the digest of the payload bytes
	validated           bool           // validate() passed
}

// IssuedAt and ExpiresAt return the validity window.
func (g *Grant) IssuedAt() time.Time  { return g.issuedAt }
func (g *Grant) ExpiresAt() time.Time { return g.expiresAt }

// Method returns the granted method by name.
func (g *Grant) Method(name string) (Method, bool) {
	i, ok := g.methods[name]
	if !ok {
		return Method{}, false
	}
	return g.Payload.AllowedMethods[i], true
}

// HasWrite reports whether any granted method mutates (write or admin).
func (g *Grant) HasWrite() bool {
	for _, m := range g.Payload.AllowedMethods {
		if m.Class.Mutates() {
			return true
		}
	}
	return false
}

// Binding ties a derivation to one execution.
type Binding struct {
	RunID           string    // required
	WaveID          string    // required
	WorkerID        string    // optional: bind to one spawn identity
	NodeExecutionID string    // optional: bind to one node attempt (the idempotency root)
	Issuer          string    // required: the coordinator's identity
	IssuedAt        time.Time // required: time is an input
	JTI             string    // optional: a fixed jti (tests, replays); default 128 random bits
	BaseRef         string    // optional: the full commit SHA the worker reads
}

// Issue binds d to an execution and signs it with key: a sealed artifact of
// kind dome.tool_profile/v0.1 in canonical bytes, and its parsed form.
// random supplies the jti when b.JTI is empty (nil: crypto/rand).
func Issue(d *Derivation, b Binding, key signing.PrivateKey, random io.Reader) ([]byte, *Grant, error) {
	bad := func(field, format string, a ...any) ([]byte, *Grant, error) {
		return nil, nil, &Error{Code: CodeBadRequest, Source: "issue", Field: field, Msg: fmt.Sprintf(format, a...)}
	}
	if d == nil {
		return bad("", "nothing to issue: derive a profile first")
	}
	for _, f := range []struct{ name, v string }{{"run_id", b.RunID}, {"wave_id", b.WaveID}, {"issuer", b.Issuer}} {
		if err := CheckID(f.v); err != nil {
			return bad(f.name, "%v", err)
		}
	}
	for _, f := range []struct{ name, v string }{{"worker_id", b.WorkerID}, {"node_execution_id", b.NodeExecutionID}, {"jti", b.JTI}} {
		if f.v != "" {
			if err := CheckID(f.v); err != nil {
				return bad(f.name, "%v", err)
			}
		}
	}
	if b.IssuedAt.IsZero() {
		return bad("issued_at", "time is an input: give the issue time")
	}
	if b.BaseRef != "" && !isFullSHA(b.BaseRef) {
		return bad("base_ref", "%q: want a full commit SHA (40 or 64 lowercase hex digits)", b.BaseRef)
	}
	if d.TTLSeconds <= 0 {
		return bad("ttl", "the derivation has no lifetime")
	}
	jti := b.JTI
	if jti == "" {
		if random == nil {
			random = rand.Reader
		}
		var buf [16]byte
		if _, err := io.ReadFull(random, buf[:]); err != nil {
			return nil, nil, fmt.Errorf("issue: jti: %w", err)
		}
		jti = hex.EncodeToString(buf[:])
	}
	issued := b.IssuedAt.UTC().Truncate(time.Second)
	p := Payload{
		AllowedCapabilities: d.Profile.AllowedCapabilities, AllowedMethods: d.Profile.AllowedMethods,
		Audience: d.Profile.Audience, Budgets: d.Profile.Budgets, Constraints: d.Profile.Constraints,
		Contracts: d.Profile.Contracts, ExpiresAt: FormatTime(issued.Add(time.Duration(d.TTLSeconds) * time.Second)),
		IssuedAt: FormatTime(issued), Issuer: b.Issuer, JTI: jti, NodeExecutionID: b.NodeExecutionID,
		NodeID: d.Profile.NodeID, ProfileID: d.Profile.ProfileID, RunID: b.RunID, SingleUse: d.Profile.SingleUse,
		WaveID: b.WaveID, WorkerID: b.WorkerID,
	}
	h := artifact.Header{
		ArtifactKind: ArtifactKind, Version: artifactVersion, ObjectID: jti, RunID: b.RunID, WaveID: b.WaveID,
		NodeID: d.Profile.NodeID, BaseRef: b.BaseRef, CreatedAt: p.IssuedAt, Producer: b.Issuer,
		InputsHash: d.InputsHash, DeterminismSeed: d.DeterminismSeed,
	}
	token, _, err := artifact.SealValue(h, p, &key)
	if err != nil {
		return nil, nil, fmt.Errorf("issue: %w", err)
	}
	g, err := Parse(token)
	if err != nil {
		return nil, nil, fmt.Errorf("issue: the sealed grant does not read back: %w", err)
	}
	if err := g.validate(); err != nil {
		return nil, nil, fmt.Errorf("issue: %w", err)
	}
	return token, g, nil
}

func isFullSHA(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}
