package specfilter

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/dome-registry/dome/pkg/netpolicy"
	"github.com/dome-registry/dome/pkg/schemaval"
)

// ProfileSchemaVersion is the schema_version of a profile file.
const ProfileSchemaVersion = "dome.profile/v1"

//go:embed schema/profile.schema.json
var profileSchema []byte

// ProfileSchema returns the JSON Schema of a profile file
// (registry/tools/<tool_id>/profiles/<profile_id>.profile.json).
func ProfileSchema() []byte { return bytes.Clone(profileSchema) }

// Profile is a profile file: a filter and policy overlay on a tool's spec
// (DESIGN.md "ProfileSpec"). Unknown fields are errors.
type Profile struct {
	SchemaVersion   string       `json:"schema_version"`
	ID              string       `json:"id"`
	Description     string       `json:"description,omitempty"`
	Allow           *Selectors   `json:"allow,omitempty"`
	Deny            *Selectors   `json:"deny,omitempty"`
	Auth            *Auth        `json:"auth,omitempty"`
	Net             *Net         `json:"net,omitempty"`
	IO              *IO          `json:"io,omitempty"`
	Budgets         *Budgets     `json:"budgets,omitempty"`
	Client          *Client      `json:"client,omitempty"`
	Determinism     *Determinism `json:"determinism,omitempty"`
	Servers         []Server     `json:"servers,omitempty"`
	StripExtensions []string     `json:"strip_extensions,omitempty"`
	// TopLevelExtensions decides the document's top-level x- extensions;
	// nil keeps them all.
	TopLevelExtensions *TopLevelExtensions `json:"top_level_extensions,omitempty"`
	Webhooks           *Selectors          `json:"webhooks,omitempty"`

	allow, deny, webhooks []Selector // parsed
	name                  string     // the file, for messages
}

// Selectors lists operation selectors.
type Selectors struct {
	Operations []string `json:"operations,omitempty"`
}

// Auth is the auth mode the client uses.
type Auth struct {
	Mode string `json:"mode,omitempty"` // none, apiKey, http, oauth2, openIdConnect, mutualTLS, any
}

// Net is the network policy.
type Net struct {
	AllowHosts []string `json:"allow_hosts,omitempty"`
}

// IO is the file-system policy.
type IO struct {
	ReadRoots  []string `json:"read_roots,omitempty"`
	WriteRoots []string `json:"write_roots,omitempty"`
	DenyGlobs  []string `json:"deny_globs,omitempty"`
}

// Budgets limits calls and time.
type Budgets struct {
	MaxCallsByFamily map[string]int `json:"max_calls_by_family,omitempty"`
	MaxWallSeconds   *int           `json:"max_wall_seconds,omitempty"`
}

// Client says how generated clients send requests (defaults: 30 s per
// attempt, no retries, 100 ms backoff).
type Client struct {
	TimeoutMS      *int `json:"timeout_ms,omitempty"`
	MaxRetries     *int `json:"max_retries,omitempty"`
	RetryBackoffMS *int `json:"retry_backoff_ms,omitempty"`
}

// Determinism pins the inputs of a run.
type Determinism struct {
	Seed       *int64 `json:"seed,omitempty"`
	InputsHash string `json:"inputs_hash,omitempty"`
}

// TopLevelExtensions is the profile's top_level_extensions: "keep" (every
// top-level x- extension, and whatever its $refs reach), "drop" (none), or
// a list of the names to keep. x-webhooks is not among them: it is the
// webhooks section of a 3.0 document, selected by webhooks.operations.
type TopLevelExtensions struct {
	Drop bool     // "drop"
	Keep []string // the names to keep; nil with Drop false: "keep" (all)
	list bool
}

// Keeps reports whether the top-level extension name stays.
func (t *TopLevelExtensions) Keeps(name string) bool {
	if t == nil {
		return true
	}
	if t.list {
		return slices.Contains(t.Keep, name)
	}
	return !t.Drop
}

// UnmarshalJSON reads "keep", "drop" or a list of names.
func (t *TopLevelExtensions) UnmarshalJSON(b []byte) error {
	var mode string
	if err := json.Unmarshal(b, &mode); err == nil {
		switch mode {
		case "keep", "drop":
			*t = TopLevelExtensions{Drop: mode == "drop"}
			return nil
		}
		return fmt.Errorf("top_level_extensions: %q is neither keep nor drop", mode)
	}
	var names []string
	if err := json.Unmarshal(b, &names); err != nil {
		return fmt.Errorf("top_level_extensions: want \"keep\", \"drop\" or a list of extension names")
	}
	*t = TopLevelExtensions{Keep: append([]string{}, names...), list: true}
	return nil
}

// MarshalJSON writes the form UnmarshalJSON reads.
func (t TopLevelExtensions) MarshalJSON() ([]byte, error) {
	switch {
	case t.list:
		return json.Marshal(append([]string{}, t.Keep...))
	case t.Drop:
		return []byte(`"drop"`), nil
	}
	return []byte(`"keep"`), nil
}

// Server replaces the spec's servers.
type Server struct {
	URL         string `json:"url"`
	Description string `json:"description,omitempty"`
}

// ParseProfile parses and validates a profile file; name is the file's
// name for messages (and, when it ends in .profile.json, must match the id).
// Every problem is an *errkind.InputError with the JSON pointer.
func ParseProfile(name string, data []byte) (*Profile, error) {
	schema, err := schemaval.Compile("profile.schema.json", profileSchema)
	if err != nil {
		return nil, fmt.Errorf("profile schema: %w", err)
	}
	if err := schema.Validate(name, data); err != nil {
		return nil, err
	}
	p := &Profile{name: name}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(p); err != nil {
		return nil, &errkind.InputError{Source: name, Problem: err.Error(), Err: err}
	}
	if p.Net != nil {
		for i, h := range p.Net.AllowHosts {
			norm, herr := netpolicy.CheckAllowHost(h)
			if herr != nil {
				return nil, &errkind.InputError{Source: name, Field: fmt.Sprintf("/net/allow_hosts/%d", i), Problem: herr.Error(), Hint: herr.Hint}
			}
			p.Net.AllowHosts[i] = norm
		}
	}
	base := name[strings.LastIndexByte(name, '/')+1:]
	if id, ok := strings.CutSuffix(base, ".profile.json"); ok && id != p.ID {
		return nil, &errkind.InputError{Source: name, Field: "/id", Problem: fmt.Sprintf("id %q does not match the file name %q", p.ID, base), Hint: "rename the file or fix the id"}
	}
	if p.allow, err = parseSelectors(name, "/allow/operations", p.Allow, false); err != nil {
		return nil, err
	}
	if p.deny, err = parseSelectors(name, "/deny/operations", p.Deny, false); err != nil {
		return nil, err
	}
	if p.webhooks, err = parseSelectors(name, "/webhooks/operations", p.Webhooks, true); err != nil {
		return nil, err
	}
	return p, nil
}

func parseSelectors(name, field string, s *Selectors, webhook bool) ([]Selector, error) {
	if s == nil {
		return nil, nil
	}
	out := make([]Selector, 0, len(s.Operations))
	for i, raw := range s.Operations {
		sel, err := ParseSelector(raw)
		if err != nil {
			return nil, &errkind.InputError{Source: name, Field: fmt.Sprintf("%s/%d", field, i), Problem: err.Error(), Hint: selectorHint(webhook)}
		}
		out = append(out, sel)
	}
	return out, nil
}

func selectorHint(webhook bool) string {
	if webhook {
		return `a selector is an operationId, "tag:<name>" or "<METHOD|*> <webhook-name-glob>", e.g. "POST ticket*"`
	}
	return `a selector is an operationId, "tag:<name>" or "<METHOD|*> <path-glob>", e.g. "GET /pets/**"`
}

// source names the profile file in messages.
func (p *Profile) source() string {
	if p.name != "" {
		return p.name
	}
	return "profile " + p.ID
}

// Selectors returns the parsed allow, deny and webhook selectors.
func (p *Profile) Selectors() (allow, deny, webhooks []Selector) {
	return p.allow, p.deny, p.webhooks
}
