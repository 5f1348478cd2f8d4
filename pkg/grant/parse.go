package grant

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"strings"

	"github.com/dome-registry/dome/pkg/canonical"
)

// Parse reads a grant's bytes: the canonical sealed document
// {"header": {...}, "payload": {...}} exactly as Issue wrote it. It checks
// structure and kind only; the signature, the field values and the bindings
// are Verify's. Errors are MALFORMED (or WRONG_KIND for an artifact of
// another kind), naming the field.
func Parse(token []byte) (*Grant, error) {
	if len(token) > MaxGrantBytes {
		return nil, refuse(CodeMalformed, "", "%d bytes: a grant is at most %d bytes", len(token), MaxGrantBytes)
	}
	s := &scanner{b: token}
	g := &Grant{}
	if !s.lit(`{"header":`) {
		return nil, malformed("", errors.New(`want the canonical bytes of {"header": {...}, "payload": {...}} as issued (no whitespace, members sorted)`))
	}
	hStart := s.i
	sigStart, sigEnd := -1, -1
	h := &g.Header
	var missing []string
	seen := 0
	const (
		hKind = 1 << iota
		hCanon
		hCreated
		hKID
		hObject
		hDigest
		hProducer
		hRun
		hSig
		hVersion
		hWave
	)
	err := s.object(func(name []byte, keyStart int) error {
		var err error
		optional := func(dst *string) {
			*dst, err = s.str()
			if err == nil && *dst == "" {
				err = errors.New("empty: leave the member out instead")
			}
		}
		required := func(dst *string, bit int) {
			*dst, err = s.str()
			seen |= bit
		}
		switch string(name) {
		case "artifact_kind":
			required(&h.ArtifactKind, hKind)
		case "base_ref":
			optional(&h.BaseRef)
		case "base_tree_hash":
			optional(&h.BaseTreeHash)
		case "canonicalization":
			required(&h.Canonicalization, hCanon)
		case "created_at":
			required(&h.CreatedAt, hCreated)
		case "determinism_seed":
			optional(&h.DeterminismSeed)
		case "inputs_hash":
			optional(&h.InputsHash)
		case "kid":
			required(&h.KID, hKID)
		case "node_id":
			optional(&h.NodeID)
		case "object_id":
			required(&h.ObjectID, hObject)
		case "payload_digest":
			required(&h.PayloadDigest, hDigest)
		case "producer":
			required(&h.Producer, hProducer)
		case "run_id":
			optional(&h.RunID)
			seen |= hRun
		case "signature":
			sigStart = keyStart - 1 // the comma before it: signature is never first
			required(&h.Signature, hSig)
			sigEnd = s.i
		case "version":
			required(&h.Version, hVersion)
		case "wave_id":
			optional(&h.WaveID)
			seen |= hWave
		default:
			return fmt.Errorf("unknown header member %q", name)
		}
		if err != nil {
			return fmt.Errorf("header %s: %w", name, err)
		}
		return nil
	})
	if err != nil {
		return nil, malformed("header", err)
	}
	hEnd := s.i
	for _, f := range []struct {
		bit  int
		name string
	}{{hKind, "artifact_kind"}, {hCanon, "canonicalization"}, {hCreated, "created_at"}, {hKID, "kid"}, {hObject, "object_id"}, {hDigest, "payload_digest"}, {hProducer, "producer"}, {hRun, "run_id"}, {hSig, "signature"}, {hVersion, "version"}, {hWave, "wave_id"}} {
		if seen&f.bit == 0 {
			missing = append(missing, f.name)
		}
	}
	if h.ArtifactKind != "" && h.ArtifactKind != ArtifactKind {
		return nil, refuse(CodeWrongKind, "header.artifact_kind", "the artifact is a %q, not a grant (%s)", h.ArtifactKind, ArtifactKind)
	}
	if len(missing) > 0 {
		return nil, refuse(CodeMalformed, "header", "missing %s", strings.Join(missing, ", "))
	}
	if h.Canonicalization != canonical.Name {
		return nil, refuse(CodeMalformed, "header.canonicalization", "%q, want %q", h.Canonicalization, canonical.Name)
	}
	if h.Version != artifactVersion {
		return nil, refuse(CodeMalformed, "header.version", "%q, want %q", h.Version, artifactVersion)
	}
	if !s.lit(`,"payload":`) {
		return nil, malformed("", s.fail(`want ,"payload": after the header`))
	}
	pStart := s.i
	if err := parsePayload(s, &g.Payload); err != nil {
		return nil, malformed("payload", err)
	}
	pEnd := s.i
	if !s.lit("}") || s.i != len(token) {
		return nil, malformed("", s.fail("want the end of the grant"))
	}
	// The signature covers the canonical header without its signature
	// member: these bytes with that member cut out.
	hs := sha256.New()
	hs.Write(token[hStart:sigStart])
	hs.Write(token[sigEnd:hEnd])
	var sum [sha256.Size]byte
	g.signedDigest = digestString(hs.Sum(sum[:0]))
	g.payloadDigestOK = digestString(sha256Sum(token[pStart:pEnd])) == h.PayloadDigest
	g.Digest = digestString(sha256Sum(token))
	g.methods = make(map[string]int, len(g.Payload.AllowedMethods))
	for i, m := range g.Payload.AllowedMethods {
		g.methods[m.Method] = i
	}
	return g, nil
}

func sha256Sum(b []byte) []byte {
	s := sha256.Sum256(b)
	return s[:]
}

func digestString(sum []byte) string {
	const digits = "0123456789abcdef"
	var d [7 + 64]byte
	copy(d[:], "sha256:")
	for i, b := range sum {
		d[7+2*i] = digits[b>>4]
		d[7+2*i+1] = digits[b&0xF]
	}
	return string(d[:])
}

func malformed(field string, err error) *Error {
	return &Error{Code: CodeMalformed, Source: "grant", Field: field, Msg: err.Error()}
}

// payloadMembers are the payload's members; required ones are checked by
// a bit per member.
var payloadMembers = [...]struct {
	name     string
	required bool
}{
	{"allowed_capabilities", true}, {"allowed_methods", true}, {"audience", true}, {"budgets", true},
	{"constraints", true}, {"contracts", true}, {"expires_at", true}, {"issued_at", true}, {"issuer", true},
	{"jti", true}, {"node_execution_id", false}, {"node_id", false}, {"profile_id", true}, {"run_id", true},
	{"single_use", true}, {"wave_id", true}, {"worker_id", false},
}

func parsePayload(s *scanner, p *Payload) error {
	var seen uint32
	nonEmpty := func(v string, err error) (string, error) {
		if err == nil && v == "" {
			err = errors.New("empty: leave the member out instead")
		}
		return v, err
	}
	err := s.object(func(name []byte, _ int) error {
		var err error
		bit := -1
		switch string(name) {
		case "allowed_capabilities":
			bit = 0
			p.AllowedCapabilities, err = s.strs()
		case "allowed_methods":
			bit = 1
			p.AllowedMethods = make([]Method, 0, 8)
			err = s.array(func() error {
				var m Method
				if err := parseMethod(s, &m); err != nil {
					return err
				}
				p.AllowedMethods = append(p.AllowedMethods, m)
				return nil
			})
		case "audience":
			bit = 2
			p.Audience, err = s.str()
		case "budgets":
			bit = 3
			err = parseBudgets(s, &p.Budgets)
		case "constraints":
			bit = 4
			err = parseConstraints(s, &p.Constraints)
		case "contracts":
			bit = 5
			p.Contracts, err = s.strs()
		case "expires_at":
			bit = 6
			p.ExpiresAt, err = s.str()
		case "issued_at":
			bit = 7
			p.IssuedAt, err = s.str()
		case "issuer":
			bit = 8
			p.Issuer, err = s.str()
		case "jti":
			bit = 9
			p.JTI, err = s.str()
		case "node_execution_id":
			bit = 10
			p.NodeExecutionID, err = nonEmpty(s.str())
		case "node_id":
			bit = 11
			p.NodeID, err = nonEmpty(s.str())
		case "profile_id":
			bit = 12
			p.ProfileID, err = s.str()
		case "run_id":
			bit = 13
			p.RunID, err = s.str()
		case "single_use":
			bit = 14
			p.SingleUse, err = s.boolean()
		case "wave_id":
			bit = 15
			p.WaveID, err = s.str()
		case "worker_id":
			bit = 16
			p.WorkerID, err = nonEmpty(s.str())
		default:
			return fmt.Errorf("unknown member %q", name)
		}
		seen |= 1 << bit
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	var missing []string
	for i, m := range payloadMembers {
		if m.required && seen&(1<<i) == 0 {
			missing = append(missing, m.name)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("missing %s", strings.Join(missing, ", "))
	}
	return nil
}

func parseMethod(s *scanner, m *Method) error {
	var seen int
	err := s.object(func(name []byte, _ int) error {
		var err error
		var v string
		switch string(name) {
		case "capability":
			m.Capability, err = s.str()
			seen |= 1
		case "class":
			v, err = s.str()
			m.Class = Class(v)
			seen |= 2
		case "method":
			m.Method, err = s.str()
			seen |= 4
		case "side_effect":
			m.SideEffect, err = s.str()
			if err == nil && m.SideEffect == "" {
				err = errors.New("empty: leave the member out instead")
			}
		default:
			return fmt.Errorf("allowed_methods: unknown member %q", name)
		}
		if err != nil {
			return fmt.Errorf("allowed_methods: %s: %w", name, err)
		}
		return nil
	})
	if err == nil && seen != 7 {
		err = errors.New("allowed_methods: an entry needs capability, class and method")
	}
	return err
}

func parseBudgets(s *scanner, b *Budgets) error {
	var seen int
	err := s.object(func(name []byte, _ int) error {
		var err error
		switch string(name) {
		case "max_calls":
			b.MaxCalls, err = s.uint()
			seen |= 1
		case "max_calls_by_capability":
			b.MaxCallsByCapability = map[string]int64{}
			seen |= 2
			err = s.object(func(c []byte, _ int) error {
				v, err := s.uint()
				b.MaxCallsByCapability[string(c)] = v
				return err
			})
		case "max_wall_seconds":
			b.MaxWallSeconds, err = s.uint()
			seen |= 4
		default:
			return fmt.Errorf("unknown member %q", name)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		return nil
	})
	if err == nil && seen != 7 {
		err = errors.New("want max_calls, max_calls_by_capability and max_wall_seconds")
	}
	if err != nil {
		return fmt.Errorf("budgets: %w", err)
	}
	return nil
}

func parseConstraints(s *scanner, c *Constraints) error {
	var seen int
	err := s.object(func(name []byte, _ int) error {
		switch string(name) {
		case "io":
			seen |= 1
			var io int
			err := s.object(func(n []byte, _ int) error {
				var err error
				switch string(n) {
				case "deny_globs":
					c.IO.DenyGlobs, err = s.strs()
					io |= 1
				case "read_roots":
					c.IO.ReadRoots, err = s.strs()
					io |= 2
				case "write_roots":
					c.IO.WriteRoots, err = s.strs()
					io |= 4
				default:
					return fmt.Errorf("io: unknown member %q", n)
				}
				if err != nil {
					return fmt.Errorf("io.%s: %w", n, err)
				}
				return nil
			})
			if err == nil && io != 7 {
				err = errors.New("io: want deny_globs, read_roots and write_roots")
			}
			return err
		case "net":
			seen |= 2
			var net bool
			err := s.object(func(n []byte, _ int) error {
				if string(n) != "allow_hosts" {
					return fmt.Errorf("net: unknown member %q", n)
				}
				var err error
				c.Net.AllowHosts, err = s.strs()
				net = true
				if err != nil {
					return fmt.Errorf("net.allow_hosts: %w", err)
				}
				return nil
			})
			if err == nil && !net {
				err = errors.New("net: want allow_hosts")
			}
			return err
		}
		return fmt.Errorf("unknown member %q", name)
	})
	if err == nil && seen != 3 {
		err = errors.New("want io and net")
	}
	if err != nil {
		return fmt.Errorf("constraints: %w", err)
	}
	return nil
}
