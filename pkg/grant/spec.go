package grant

import (
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/dome-registry/dome/pkg/canonical"
	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/dome-registry/dome/pkg/schemaval"
)

// The policy and resolver schemas; pkg/registry embeds the same files
// (TestSchemasMatchRegistry keeps them identical).
//
//go:embed schemas/*.schema.json
var schemaFS embed.FS

// Schema file names.
const (
	SchemaPolicySpec   = "policy_spec.schema.json"
	SchemaResolverSpec = "resolver_spec.schema.json"
)

// Schema versions of the two policy files.
const (
	PolicySchemaVersion   = "dome.policy_spec/v1"
	ResolverSchemaVersion = "dome.resolver_spec/v1"
)

// SchemaBytes returns an embedded schema by file name.
func SchemaBytes(name string) ([]byte, error) { return schemaFS.ReadFile("schemas/" + name) }

// Specs compiles the policy and resolver schemas on first use; the zero
// value is ready. One Specs may be shared by goroutines.
type Specs struct {
	policyOnce, resolverOnce sync.Once
	policy, resolver         *schemaval.Schema
}

func (s *Specs) schema(name string) *schemaval.Schema {
	once, dst := &s.policyOnce, &s.policy
	if name == SchemaResolverSpec {
		once, dst = &s.resolverOnce, &s.resolver
	}
	once.Do(func() {
		b, err := SchemaBytes(name)
		if err != nil {
			panic(err) // embedded; TestSchemasCompile keeps this unreachable
		}
		*dst = schemaval.MustCompile(name, b)
	})
	return *dst
}

// Policy is a parsed policy/policy_spec.json.
type Policy struct {
	Classes  map[Class]ClassRule
	Grants   GrantRules
	Defaults Template // every member set: the constraints a grant starts from
	Source   string   // where it was read, for messages and explanations
	Digest   string   // sha256 of its canonical bytes
}

// ClassRule says who may hold a class.
type ClassRule struct {
	Holders                []string `json:"holders"`
	RequiresIdempotencyKey bool     `json:"requires_idempotency_key,omitempty"`
	Description            string   `json:"description,omitempty"`
}

// GrantRules bound every grant.
type GrantRules struct {
	DefaultTTLSeconds int64                   `json:"default_ttl_seconds"`
	MaxTTLSeconds     int64                   `json:"max_ttl_seconds"`
	SingleUseForWrite bool                    `json:"single_use_for_write,omitempty"`
	Audiences         map[string]AudienceRule `json:"audiences"`
}

// AudienceRule says which roles may ask for an audience.
type AudienceRule struct {
	Holders     []string `json:"holders"`
	Description string   `json:"description,omitempty"`
}

// DefaultClockSkewSeconds is a verifier's clock skew unless configured.
const DefaultClockSkewSeconds = 30

// MaxClockSkewSeconds bounds any configured clock skew.
const MaxClockSkewSeconds = 300

// MayHold reports whether role may hold class.
func (p *Policy) MayHold(role string, c Class) bool {
	return slices.Contains(p.Classes[c].Holders, role)
}

// MayUseAudience reports whether role may ask for audience.
func (p *Policy) MayUseAudience(role, audience string) bool {
	a, ok := p.Grants.Audiences[audience]
	return ok && slices.Contains(a.Holders, role)
}

// Audiences returns the policy's audiences, sorted.
func (p *Policy) Audiences() []string {
	out := make([]string, 0, len(p.Grants.Audiences))
	for a := range p.Grants.Audiences {
		out = append(out, a)
	}
	slices.Sort(out)
	return out
}

// policyFile is the JSON shape of policy_spec.json.
type policyFile struct {
	SchemaVersion string               `json:"schema_version"`
	Description   string               `json:"description,omitempty"`
	Classes       map[string]ClassRule `json:"classes"`
	Grants        GrantRules           `json:"grants"`
	Defaults      Template             `json:"defaults"`
}

// ParsePolicy reads a policy spec (the bytes of the file named source):
// its schema, then the rules the schema cannot say. Every problem is an
// *Error (BAD_POLICY) wrapping an *errkind.InputError that names the field.
func (s *Specs) ParsePolicy(source string, data []byte) (*Policy, error) {
	if err := s.schema(SchemaPolicySpec).Validate(source, data); err != nil {
		return nil, &Error{Code: CodeBadPolicy, Err: err}
	}
	var f policyFile
	if err := decodeStrict(data, &f); err != nil {
		return nil, specErr(CodeBadPolicy, source, "", err.Error(), "")
	}
	p := &Policy{Classes: map[Class]ClassRule{}, Grants: f.Grants, Defaults: f.Defaults, Source: source}
	for name, rule := range f.Classes {
		p.Classes[Class(name)] = rule
	}
	bad := func(field, problem, hint string) error { return specErr(CodeBadPolicy, source, field, problem, hint) }
	g := f.Grants
	if g.DefaultTTLSeconds > g.MaxTTLSeconds {
		return nil, bad("/grants/default_ttl_seconds", fmt.Sprintf("%d is over max_ttl_seconds (%d)", g.DefaultTTLSeconds, g.MaxTTLSeconds), "lower the default or raise the cap")
	}
	// The least-privilege rules are not policy knobs: admin tools are
	// coordinator-only, and every write needs an idempotency key.
	for _, h := range p.Classes[ClassAdmin].Holders {
		if h != RoleCoordinator {
			return nil, bad("/classes/admin/holders", fmt.Sprintf("%q may not hold admin: admin tools are coordinator-only", h), `list only "coordinator" (a planner holds admin only when acting as coordinator)`)
		}
	}
	for _, c := range []Class{ClassWrite, ClassAdmin} {
		if !p.Classes[c].RequiresIdempotencyKey {
			return nil, bad("/classes/"+string(c)+"/requires_idempotency_key", "must be true: every write call carries an idempotency_key, so endgame duplicates are safe", "set it to true")
		}
	}
	for name, a := range g.Audiences {
		if err := CheckID(name); err != nil {
			return nil, bad("/grants/audiences/"+name, err.Error(), "")
		}
		if name == AudienceCoordinator {
			for _, h := range a.Holders {
				if h != RoleCoordinator {
					return nil, bad("/grants/audiences/coordinator/holders", fmt.Sprintf("%q may not use the coordinator audience", h), `list only "coordinator"`)
				}
			}
		}
	}
	if err := f.Defaults.check("/defaults"); err != nil {
		return nil, fieldSpecErr(CodeBadPolicy, source, err)
	}
	if err := normalizeTemplate(&p.Defaults); err != nil {
		return nil, fieldSpecErr(CodeBadPolicy, source, fieldErr("/defaults", err))
	}
	d, err := canonical.DigestJSON(data)
	if err != nil {
		return nil, specErr(CodeBadPolicy, source, "", err.Error(), "")
	}
	p.Digest = d
	return p, nil
}

// normalizeTemplate sorts and normalizes a template's lists in place.
func normalizeTemplate(t *Template) error {
	if t.Net != nil && t.Net.AllowHosts != nil {
		hs, err := normalizeAll(t.Net.AllowHosts, NormalizeHost)
		if err != nil {
			return err
		}
		t.Net.AllowHosts = hs
	}
	if t.IO != nil {
		if t.IO.ReadRoots != nil {
			t.IO.ReadRoots = minimalRoots(t.IO.ReadRoots)
		}
		if t.IO.WriteRoots != nil {
			t.IO.WriteRoots = minimalRoots(t.IO.WriteRoots)
		}
		if t.IO.DenyGlobs != nil {
			t.IO.DenyGlobs = sortedSet(t.IO.DenyGlobs)
		}
	}
	return nil
}

// Resolver is a parsed policy/resolver_spec.json.
type Resolver struct {
	Capabilities map[string]*Capability
	Source       string
	Digest       string
}

// Capability is one resolver entry: a class, a tool, the operations (by id
// or by family, i.e. OpenAPI tag) it maps to and its constraints template.
type Capability struct {
	ID           string    `json:"-"`
	Class        Class     `json:"class"`
	Tool         string    `json:"tool"`
	Description  string    `json:"description,omitempty"`
	OperationIDs []string  `json:"operation_ids,omitempty"`
	Families     []string  `json:"families,omitempty"`
	Template     *Template `json:"constraints_template,omitempty"`
}

type resolverFile struct {
	SchemaVersion string                 `json:"schema_version"`
	Description   string                 `json:"description,omitempty"`
	Capabilities  map[string]*Capability `json:"capabilities"`
}

// IDs returns the capability names, sorted.
func (r *Resolver) IDs() []string {
	out := make([]string, 0, len(r.Capabilities))
	for id := range r.Capabilities {
		out = append(out, id)
	}
	slices.Sort(out)
	return out
}

// ParseResolver reads a resolver spec (the bytes of the file named source).
// Every problem is an *Error (BAD_RESOLVER) naming the field. Whether the
// operations and families exist is checked against the contracts by
// NewIndex.
func (s *Specs) ParseResolver(source string, data []byte) (*Resolver, error) {
	if err := s.schema(SchemaResolverSpec).Validate(source, data); err != nil {
		return nil, &Error{Code: CodeBadResolver, Err: err}
	}
	var f resolverFile
	if err := decodeStrict(data, &f); err != nil {
		return nil, specErr(CodeBadResolver, source, "", err.Error(), "")
	}
	r := &Resolver{Capabilities: f.Capabilities, Source: source}
	for _, id := range r.IDs() {
		c := r.Capabilities[id]
		c.ID = id
		if c.Template != nil {
			if err := c.Template.check("/capabilities/" + id + "/constraints_template"); err != nil {
				return nil, fieldSpecErr(CodeBadResolver, source, err)
			}
			if c.Class == ClassRead && len(c.Template.writeRoots()) > 0 {
				return nil, specErr(CodeBadResolver, source, "/capabilities/"+id+"/constraints_template/io/write_roots", "a read capability cannot carry write roots", "move the write roots to a write capability")
			}
			if err := normalizeTemplate(c.Template); err != nil {
				return nil, fieldSpecErr(CodeBadResolver, source, fieldErr("/capabilities/"+id+"/constraints_template", err))
			}
		}
	}
	d, err := canonical.DigestJSON(data)
	if err != nil {
		return nil, specErr(CodeBadResolver, source, "", err.Error(), "")
	}
	r.Digest = d
	return r, nil
}

func specErr(code Code, source, field, problem, hint string) error {
	return &Error{Code: code, Err: &errkind.InputError{Source: source, Field: field, Problem: problem, Hint: hint}}
}

func fieldSpecErr(code Code, source string, err error) error {
	var fe *fieldError
	if errors.As(err, &fe) {
		return specErr(code, source, fe.field, fe.err.Error(), "")
	}
	return specErr(code, source, "", err.Error(), "")
}

// decodeStrict decodes JSON already checked by a schema (which refused
// unknown and duplicate members), refusing unknown fields once more.
func decodeStrict(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}
