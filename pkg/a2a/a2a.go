package a2a

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/dome-registry/dome/pkg/canonical"
	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/dome-registry/dome/pkg/schemaval"
)

//go:embed schemas/*.schema.json
var schemaFS embed.FS

// Schema file names.
const (
	SchemaCard    = "card.schema.json"
	SchemaProfile = "profile.schema.json"
)

// ProfileSchemaVersion is the schema_version of an A2A profile.
const ProfileSchemaVersion = "dome.a2a_profile/v1"

// Card kinds: the folder under registry/a2a/cards/.
const (
	KindRuntime = "runtime"
	KindTool    = "tool"
)

// SchemaBytes returns an embedded schema by file name.
func SchemaBytes(name string) ([]byte, error) { return schemaFS.ReadFile("schemas/" + name) }

// Schemas compile once per process on first use; they are immutable.
type compiled struct {
	once   sync.Once
	schema *schemaval.Schema
}

// Schemas holds the compiled schemas; the zero value is ready to use and
// compiles each schema on first use.
type Schemas struct {
	card, profile compiled
}

func (s *Schemas) get(c *compiled, name string) *schemaval.Schema {
	c.once.Do(func() {
		b, err := SchemaBytes(name)
		if err != nil {
			panic(err) // embedded; TestSchemasCompile keeps this unreachable
		}
		c.schema = schemaval.MustCompile(name, b)
	})
	return c.schema
}

// Card is an A2A v1.0 AgentCard with dome's x-dome block.
type Card struct {
	Name                 string                     `json:"name"`
	Description          string                     `json:"description"`
	Version              string                     `json:"version"`
	SupportedInterfaces  []Interface                `json:"supportedInterfaces"`
	Provider             *Provider                  `json:"provider,omitempty"`
	DocumentationURL     string                     `json:"documentationUrl,omitempty"`
	IconURL              string                     `json:"iconUrl,omitempty"`
	Capabilities         AgentCapabilities          `json:"capabilities"`
	SecuritySchemes      map[string]json.RawMessage `json:"securitySchemes,omitempty"`
	SecurityRequirements []SecurityRequirement      `json:"securityRequirements,omitempty"`
	DefaultInputModes    []string                   `json:"defaultInputModes"`
	DefaultOutputModes   []string                   `json:"defaultOutputModes"`
	Skills               []Skill                    `json:"skills"`
	Signatures           []json.RawMessage          `json:"signatures,omitempty"`
	XDome                XDome                      `json:"x-dome"`
}

// Interface is one entry of supportedInterfaces (first preferred).
type Interface struct {
	URL             string `json:"url"`
	ProtocolBinding string `json:"protocolBinding"`
	ProtocolVersion string `json:"protocolVersion"`
	Tenant          string `json:"tenant,omitempty"`
}

// Provider is the organization behind an agent.
type Provider struct {
	URL          string `json:"url"`
	Organization string `json:"organization"`
}

// AgentCapabilities are A2A's optional protocol features.
type AgentCapabilities struct {
	Streaming         *bool             `json:"streaming,omitempty"`
	PushNotifications *bool             `json:"pushNotifications,omitempty"`
	ExtendedAgentCard *bool             `json:"extendedAgentCard,omitempty"`
	Extensions        []json.RawMessage `json:"extensions,omitempty"`
}

// SecurityRequirement maps security scheme names to scopes.
type SecurityRequirement struct {
	Schemes map[string]Scopes `json:"schemes"`
}

// Scopes is A2A's StringList.
type Scopes struct {
	List []string `json:"list"`
}

// Skill is one AgentSkill.
type Skill struct {
	ID                   string                `json:"id"`
	Name                 string                `json:"name"`
	Description          string                `json:"description"`
	Tags                 []string              `json:"tags"`
	Examples             []string              `json:"examples,omitempty"`
	InputModes           []string              `json:"inputModes,omitempty"`
	OutputModes          []string              `json:"outputModes,omitempty"`
	SecurityRequirements []SecurityRequirement `json:"securityRequirements,omitempty"`
}

// XDome is dome's extension block: the most a grant for this agent may ever
// hold.
type XDome struct {
	Kind         string    `json:"kind"`                    // runtime or tool (the folder it lives in)
	MaxClasses   []string  `json:"max_classes"`             // read, write, admin
	Capabilities []string  `json:"capabilities"`            // resolver capability names
	ContainerRef string    `json:"container_ref,omitempty"` // runtime image, by digest
	SpecRefs     *SpecRefs `json:"spec_refs,omitempty"`
}

// SpecRefs names the specs an agent speaks: tool@ref of registry tools, and
// the runtime's own spec.
type SpecRefs struct {
	Tools   []string `json:"tools,omitempty"`
	Runtime string   `json:"runtime,omitempty"`
}

// HasClass reports whether the card allows class c.
func (c *Card) HasClass(class string) bool {
	for _, x := range c.XDome.MaxClasses {
		if x == class {
			return true
		}
	}
	return false
}

// HasCapability reports whether the card offers capability name.
func (c *Card) HasCapability(name string) bool {
	for _, x := range c.XDome.Capabilities {
		if x == name {
			return true
		}
	}
	return false
}

// droppedV1 are AgentCard members A2A v1.0 removed, with what replaced them.
var droppedV1 = map[string]string{
	"url":                               "A2A v1.0 moved it into supportedInterfaces[].url",
	"preferredTransport":                "A2A v1.0 orders supportedInterfaces instead: the first entry is preferred",
	"protocolVersion":                   "A2A v1.0 moved it into supportedInterfaces[].protocolVersion",
	"additionalInterfaces":              "A2A v1.0 lists every interface in supportedInterfaces",
	"security":                          "A2A v1.0 renamed it securityRequirements",
	"supportsAuthenticatedExtendedCard": "A2A v1.0 moved it to capabilities.extendedAgentCard",
}

// ParseCard validates and decodes a card read from source (a path, with its
// commit for registry files). kind, when not empty, is the folder the card
// was found in and must equal x-dome.kind.
func (s *Schemas) ParseCard(source, kind string, data []byte) (*Card, error) {
	if err := schemaval.CheckJSON(source, data); err != nil {
		return nil, err
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err == nil {
		for name, why := range droppedV1 {
			if _, ok := top[name]; ok {
				return nil, &errkind.InputError{Source: source, Field: "/" + name, Problem: "not an A2A v1.0 AgentCard member", Hint: why}
			}
		}
	}
	if err := s.get(&s.card, SchemaCard).Validate(source, data); err != nil {
		return nil, err
	}
	c := &Card{}
	if err := decodeStrict(data, c); err != nil {
		return nil, &errkind.InputError{Source: source, Problem: err.Error()}
	}
	if kind != "" && c.XDome.Kind != kind {
		return nil, &errkind.InputError{Source: source, Field: "/x-dome/kind", Problem: fmt.Sprintf("%q, but the card is under cards/%s/", c.XDome.Kind, kind), Hint: "move the file or fix x-dome.kind"}
	}
	seen := map[string]bool{}
	for i, sk := range c.Skills {
		if seen[sk.ID] {
			return nil, &errkind.InputError{Source: source, Field: fmt.Sprintf("/skills/%d/id", i), Problem: fmt.Sprintf("skill id %q is listed twice", sk.ID)}
		}
		seen[sk.ID] = true
	}
	for i, req := range c.SecurityRequirements {
		if err := checkSchemesKnown(c, req); err != nil {
			return nil, &errkind.InputError{Source: source, Field: fmt.Sprintf("/securityRequirements/%d", i), Problem: err.Error(), Hint: "declare the scheme under securitySchemes"}
		}
	}
	for i, sk := range c.Skills {
		for j, req := range sk.SecurityRequirements {
			if err := checkSchemesKnown(c, req); err != nil {
				return nil, &errkind.InputError{Source: source, Field: fmt.Sprintf("/skills/%d/securityRequirements/%d", i, j), Problem: err.Error(), Hint: "declare the scheme under securitySchemes"}
			}
		}
	}
	return c, nil
}

func checkSchemesKnown(c *Card, req SecurityRequirement) error {
	for name := range req.Schemes {
		if _, ok := c.SecuritySchemes[name]; !ok {
			return fmt.Errorf("security scheme %q is not declared", name)
		}
	}
	return nil
}

// Profile is an A2A profile: the view granted for a run.
type Profile struct {
	SchemaVersion string       `json:"schema_version"`
	ID            string       `json:"id"`
	Description   string       `json:"description,omitempty"`
	Card          string       `json:"card"`     // "runtime/<id>" or "tool/<id>"
	Audience      string       `json:"audience"` // the grant audience it is for
	Capabilities  []string     `json:"capabilities"`
	View          *View        `json:"view,omitempty"`
	Constraints   *Constraints `json:"constraints,omitempty"`
	Determinism   *Determinism `json:"determinism,omitempty"`
}

// View selects the methods a profile lets through: "<tool>/<operationId>",
// "<tool>/*" or "tag:<name>". Empty allow means all; deny wins.
type View struct {
	Allow []string `json:"allow,omitempty"`
	Deny  []string `json:"deny,omitempty"`
}

// Constraints narrow a grant; unset members leave it as it is.
type Constraints struct {
	Net     *Net     `json:"net,omitempty"`
	IO      *IO      `json:"io,omitempty"`
	Budgets *Budgets `json:"budgets,omitempty"`
}

// Net narrows the hosts.
type Net struct {
	AllowHosts []string `json:"allow_hosts,omitempty"`
}

// IO narrows the roots and adds deny globs.
type IO struct {
	ReadRoots  []string `json:"read_roots,omitempty"`
	WriteRoots []string `json:"write_roots,omitempty"`
	DenyGlobs  []string `json:"deny_globs,omitempty"`
}

// Budgets lowers the budgets.
type Budgets struct {
	MaxCalls             *int64           `json:"max_calls,omitempty"`
	MaxWallSeconds       *int64           `json:"max_wall_seconds,omitempty"`
	MaxCallsByCapability map[string]int64 `json:"max_calls_by_capability,omitempty"`
}

// Determinism pins the seed a run's workers get.
type Determinism struct {
	Seed *int64 `json:"seed,omitempty"`
}

// CardKindID splits a profile's card reference "runtime/<id>".
func CardKindID(ref string) (kind, id string, ok bool) {
	kind, id, ok = strings.Cut(ref, "/")
	if !ok || (kind != KindRuntime && kind != KindTool) || id == "" {
		return "", "", false
	}
	return kind, id, true
}

// ParseProfile validates and decodes an A2A profile read from source. id,
// when not empty, is the file's id (its name without .profile.json) and
// must equal the profile's id.
func (s *Schemas) ParseProfile(source, id string, data []byte) (*Profile, error) {
	if err := s.get(&s.profile, SchemaProfile).Validate(source, data); err != nil {
		return nil, err
	}
	p := &Profile{}
	if err := decodeStrict(data, p); err != nil {
		return nil, &errkind.InputError{Source: source, Problem: err.Error()}
	}
	if id != "" && p.ID != id {
		return nil, &errkind.InputError{Source: source, Field: "/id", Problem: fmt.Sprintf("id %q does not match the file name %q", p.ID, id), Hint: "rename the file or fix the id"}
	}
	return p, nil
}

// Digest returns the sha256 digest of a document's canonical bytes (what a
// grant's inputs_hash records for a card or a profile).
func Digest(data []byte) (string, error) { return canonical.DigestJSON(data) }

// decodeStrict decodes JSON refusing unknown members (encoding/json would
// drop them; a card dome does not fully understand is not a card it uses).
func decodeStrict(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}
