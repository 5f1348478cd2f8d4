package codegen

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/dome-registry/dome/pkg/canonical"
	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/dome-registry/dome/pkg/specfilter"
)

// PolicyKind is the schema_version of a client's run-time policy.
const PolicyKind = "dome.client_policy/v1"

// Defaults of a profile's client section.
const (
	DefaultTimeoutMS      = 30000
	DefaultMaxRetries     = 0
	DefaultRetryBackoffMS = 100
)

// Policy is what a generated client enforces at run time, derived from the
// profile and the filtered spec. Every language's client embeds the same
// canonical JSON of it (the contract tests compare them).
type Policy struct {
	SchemaVersion string `json:"schema_version"`
	ToolID        string `json:"tool_id"`
	ProfileID     string `json:"profile_id"`
	// AllowHosts is nil when the profile sets no net.allow_hosts (any
	// host); an empty list allows none.
	AllowHosts      []string                   `json:"allow_hosts"`
	AuthMode        string                     `json:"auth_mode"`
	Budgets         PolicyBudgets              `json:"budgets"`
	Client          PolicyClient               `json:"client"`
	Servers         []string                   `json:"servers"`
	SecuritySchemes map[string]PolicyScheme    `json:"security_schemes"`
	Operations      map[string]PolicyOperation `json:"operations"`
}

// PolicyBudgets are the call and time budgets.
type PolicyBudgets struct {
	MaxCallsByFamily map[string]int `json:"max_calls_by_family"`
	MaxWallSeconds   *int           `json:"max_wall_seconds"`
}

// PolicyClient is how requests are sent.
type PolicyClient struct {
	TimeoutMS      int `json:"timeout_ms"`
	MaxRetries     int `json:"max_retries"`
	RetryBackoffMS int `json:"retry_backoff_ms"`
}

// PolicyScheme is a security scheme reduced to where its credential goes.
type PolicyScheme struct {
	Type   string `json:"type"`             // apiKey, http, oauth2, openIdConnect, mutualTLS
	In     string `json:"in,omitempty"`     // apiKey: header, query, cookie
	Name   string `json:"name,omitempty"`   // apiKey: the header, query or cookie name
	Scheme string `json:"scheme,omitempty"` // http: bearer, basic, ...
}

// PolicyOperation is one operation: where it goes, the families its calls
// count against (its operationId and its tags) and its security
// alternatives (each a sorted list of scheme names; [] = anonymous).
type PolicyOperation struct {
	Method   string     `json:"method"`
	Path     string     `json:"path"`
	Families []string   `json:"families"`
	Security [][]string `json:"security"`
}

// BuildPolicy derives a client's policy from its profile and model. A
// budget naming no family of the filtered spec and an auth mode no security
// scheme of the filtered spec has are input errors naming the profile.
func BuildPolicy(toolID string, p *specfilter.Profile, source string, m *Model) (*Policy, error) {
	pol := &Policy{
		SchemaVersion: PolicyKind, ToolID: toolID, ProfileID: p.ID, AuthMode: "any",
		Budgets:         PolicyBudgets{MaxCallsByFamily: map[string]int{}},
		Client:          PolicyClient{TimeoutMS: DefaultTimeoutMS, MaxRetries: DefaultMaxRetries, RetryBackoffMS: DefaultRetryBackoffMS},
		Servers:         append([]string{}, m.Servers...),
		SecuritySchemes: map[string]PolicyScheme{},
		Operations:      map[string]PolicyOperation{},
	}
	if p.Net != nil && p.Net.AllowHosts != nil {
		pol.AllowHosts = append([]string{}, p.Net.AllowHosts...)
		sort.Strings(pol.AllowHosts)
	}
	if p.Auth != nil && p.Auth.Mode != "" {
		pol.AuthMode = p.Auth.Mode
	}
	if c := p.Client; c != nil {
		if c.TimeoutMS != nil {
			pol.Client.TimeoutMS = *c.TimeoutMS
		}
		if c.MaxRetries != nil {
			pol.Client.MaxRetries = *c.MaxRetries
		}
		if c.RetryBackoffMS != nil {
			pol.Client.RetryBackoffMS = *c.RetryBackoffMS
		}
	}
	for _, s := range m.SecuritySchemes {
		ps := PolicyScheme{Type: s.Type}
		switch s.Type {
		case "apiKey":
			ps.In, ps.Name = s.In, s.ParamName
		case "http":
			ps.Scheme = s.Scheme
		}
		pol.SecuritySchemes[s.Name] = ps
	}
	families := map[string]bool{}
	for _, op := range m.Operations {
		po := PolicyOperation{Method: op.Method, Path: op.Path, Families: []string{op.ID}, Security: [][]string{}}
		seen := map[string]bool{op.ID: true}
		for _, t := range op.Tags {
			if !seen[t] {
				seen[t] = true
				po.Families = append(po.Families, t)
			}
		}
		sort.Strings(po.Families)
		for _, f := range po.Families {
			families[f] = true
		}
		for _, alt := range op.Security {
			names := []string{}
			for n := range alt {
				names = append(names, n)
			}
			sort.Strings(names)
			po.Security = append(po.Security, names)
		}
		pol.Operations[op.ID] = po
	}
	if b := p.Budgets; b != nil {
		pol.Budgets.MaxWallSeconds = b.MaxWallSeconds
		var keys []string
		for k := range b.MaxCallsByFamily {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if !families[k] {
				return nil, &errkind.InputError{Source: source, Field: "/budgets/max_calls_by_family/" + escapePointer(k), Problem: fmt.Sprintf("no operation of the filtered spec is in family %q", k), Hint: "a family is an operationId or a tag of a kept operation; families here: " + listFamilies(families)}
			}
			pol.Budgets.MaxCallsByFamily[k] = b.MaxCallsByFamily[k]
		}
	}
	if msg := CheckAuthMode(pol); msg != "" {
		return nil, &errkind.InputError{Source: source, Field: "/auth/mode", Problem: msg, Hint: "use the type of one of the spec's security schemes, \"none\" or \"any\""}
	}
	return pol, nil
}

// CheckAuthMode returns why the policy's auth mode cannot work with its
// security schemes ("" when it can): a mode other than none and any needs a
// scheme of that type. The runtimes say the same words.
func CheckAuthMode(pol *Policy) string {
	if pol.AuthMode == "none" || pol.AuthMode == "any" {
		return ""
	}
	var have []string
	names := make([]string, 0, len(pol.SecuritySchemes))
	for n := range pol.SecuritySchemes {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		s := pol.SecuritySchemes[n]
		if s.Type == pol.AuthMode {
			return ""
		}
		have = append(have, n+" ("+s.Type+")")
	}
	schemes := "none"
	if len(have) > 0 {
		schemes = strings.Join(have, ", ")
	}
	return fmt.Sprintf("auth.mode %q: the filtered spec has no %s security scheme (schemes: %s)", pol.AuthMode, pol.AuthMode, schemes)
}

func listFamilies(f map[string]bool) string {
	var out []string
	for k := range f {
		out = append(out, k)
	}
	sort.Strings(out)
	if len(out) > 30 {
		out = append(out[:30], "...")
	}
	return strings.Join(out, ", ")
}

// Canonical returns the policy's RFC 8785 canonical JSON.
func (p *Policy) Canonical() ([]byte, error) { return canonical.Marshal(p) }

// JSON returns the policy's canonical JSON as a string (for templates).
func (p *Policy) JSON() (string, error) {
	b, err := p.Canonical()
	return string(b), err
}

// Families lists every family of the policy's operations, sorted.
func (p *Policy) Families() []string {
	seen := map[string]bool{}
	for _, op := range p.Operations {
		for _, f := range op.Families {
			seen[f] = true
		}
	}
	var out []string
	for f := range seen {
		out = append(out, f)
	}
	sort.Strings(out)
	return out
}

// ParsePolicy decodes a policy's JSON.
func ParsePolicy(data []byte) (*Policy, error) {
	var p Policy
	if err := json.Unmarshal(data, &p); err != nil {
		return nil, err
	}
	return &p, nil
}
