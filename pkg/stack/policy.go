package stack

import (
	"embed"
	"fmt"
	"sort"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/dome-registry/dome/pkg/canonical"
	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/dome-registry/dome/pkg/schemaval"
)

// PolicyPath is where a repository keeps its stack policy.
const PolicyPath = "policy/stack_policy.json"

// PolicySchema is the schema_version of a stack policy.
const PolicySchema = "dome.stack_policy/v1"

//go:embed schemas/stack_policy.schema.json schemas/patch_proposal.schema.json default_stack_policy.json
var policyFS embed.FS

// PolicySchemaJSON returns the embedded JSON Schema of stack_policy.json.
func PolicySchemaJSON() []byte {
	b, _ := policyFS.ReadFile("schemas/stack_policy.schema.json")
	return b
}

// DefaultPolicyJSON returns the policy used when a repository has none (the
// same as this repository's policy/stack_policy.json).
func DefaultPolicyJSON() []byte {
	b, _ := policyFS.ReadFile("default_stack_policy.json")
	return b
}

// Policy is policy/stack_policy.json.
type Policy struct {
	SchemaVersion   string           `json:"schema_version"`
	Version         string           `json:"version"`
	Description     string           `json:"description,omitempty"`
	ForbiddenPaths  []string         `json:"forbidden_paths"`
	SizeLimits      SizeLimits       `json:"size_limits"`
	DependencyFiles DependencyPolicy `json:"dependency_files"`
	MigrationPaths  []string         `json:"migration_paths,omitempty"`
	APIPaths        []string         `json:"api_paths,omitempty"`
	AllowBinary     *bool            `json:"allow_binary,omitempty"`
	IntentTags      []string         `json:"intent_tags,omitempty"`
	Atomicity       *AtomicityPolicy `json:"atomicity,omitempty"`
	Signatures      SignaturePolicy  `json:"signatures"`
	Risk            *RiskPolicy      `json:"risk,omitempty"`
	Apply           ApplyPolicy      `json:"apply"`
	Validation      ValidationPolicy `json:"validation"`
	Promotion       PromotionPolicy  `json:"promotion"`

	digest string
	canon  []byte // the canonical bytes digest is taken over
}

// SizeLimits bounds one proposal.
type SizeLimits struct {
	MaxDiffBytes    int64 `json:"max_diff_bytes"`
	MaxFiles        int   `json:"max_files"`
	MaxLinesChanged int   `json:"max_lines_changed"`
	MaxHunks        int   `json:"max_hunks,omitempty"`
}

// Dependency modes: late (accepted, planned last), gated (accepted only with
// the required intent tag, planned last), forbid (refused).
const (
	DepLate   = "late"
	DepGated  = "gated"
	DepForbid = "forbid"
)

// DependencyPolicy says how dependency manifests and lockfiles are handled.
type DependencyPolicy struct {
	Manifests      []string `json:"manifests"`
	Lockfiles      []string `json:"lockfiles"`
	Mode           string   `json:"mode"`
	RequiredIntent string   `json:"required_intent,omitempty"`
}

// AtomicityPolicy lists the atomicity policies proposals may declare.
type AtomicityPolicy struct {
	Allowed []string `json:"allowed"`
}

// SignaturePolicy says whether proposals must be signed and by whom.
type SignaturePolicy struct {
	Required    bool   `json:"required,omitempty"`
	TrustedKeys string `json:"trusted_keys,omitempty"`
}

// RiskPolicy sets the risk class thresholds of the risk score.
type RiskPolicy struct {
	MediumAt int `json:"medium_at"`
	HighAt   int `json:"high_at"`
}

// ApplyPolicy says how proposals are applied.
type ApplyPolicy struct {
	ThreeWay           bool   `json:"three_way"`
	Fuzz               int    `json:"fuzz,omitempty"`
	CheckpointStrategy string `json:"checkpoint_strategy"`
	SplitAllowed       bool   `json:"split_allowed,omitempty"`
}

// ValidationPolicy lists the validation tiers and what promotion requires.
type ValidationPolicy struct {
	Tiers                map[string]Tier     `json:"tiers"`
	RequiredForPromotion map[string][]string `json:"required_for_promotion"` // risk class -> tiers
	FinalHeadOnly        bool                `json:"final_head_only,omitempty"`
}

// Tier is one validation tier: commands run in a materialized head.
type Tier struct {
	Description    string        `json:"description,omitempty"`
	When           string        `json:"when"` // per_layer, final
	TimeoutSeconds int           `json:"timeout_seconds"`
	Commands       []TierCommand `json:"commands"`
}

// TierCommand is one command of a tier (argv, no shell unless argv says so).
type TierCommand struct {
	Name           string   `json:"name"`
	Argv           []string `json:"argv"`
	TimeoutSeconds int      `json:"timeout_seconds,omitempty"` // default: the tier's
}

// PromotionPolicy says whether a human must approve, by risk class.
type PromotionPolicy struct {
	HumanApproval map[string]bool `json:"human_approval"`
	// Signature: risk classes whose promotion decision must be signed
	// (dome stack promote --sign-key). Absent means none.
	Signature map[string]bool `json:"signature,omitempty"`
}

// ParsePolicy validates a stack policy against its schema (errors name the
// source and the JSON pointer) and checks its globs and tier references.
func ParsePolicy(source string, data []byte) (*Policy, error) {
	schema, err := schemaval.Compile("stack_policy.schema.json", PolicySchemaJSON())
	if err != nil {
		return nil, err
	}
	if err := schema.Validate(source, data); err != nil {
		return nil, err
	}
	var p Policy
	if err := strictUnmarshal(data, &p); err != nil {
		return nil, &errkind.InputError{Source: source, Problem: err.Error()}
	}
	globs := map[string][]string{"/forbidden_paths": p.ForbiddenPaths, "/dependency_files/manifests": p.DependencyFiles.Manifests,
		"/dependency_files/lockfiles": p.DependencyFiles.Lockfiles, "/migration_paths": p.MigrationPaths, "/api_paths": p.APIPaths}
	for _, field := range sortedKeys(globs) {
		for i, g := range globs[field] {
			if !doublestar.ValidatePattern(g) {
				return nil, &errkind.InputError{Source: source, Field: fmt.Sprintf("%s/%d", field, i), Problem: fmt.Sprintf("%q is not a valid glob", g),
					Hint: "use doublestar globs: *, **, ?, [abc], {a,b}"}
			}
		}
	}
	for class, tiers := range p.Validation.RequiredForPromotion {
		for i, t := range tiers {
			if _, ok := p.Validation.Tiers[t]; !ok {
				return nil, &errkind.InputError{Source: source, Field: fmt.Sprintf("/validation/required_for_promotion/%s/%d", class, i),
					Problem: fmt.Sprintf("tier %q is not defined", t), Hint: "define it under /validation/tiers"}
			}
		}
	}
	if p.DependencyFiles.Mode == DepGated && p.DependencyFiles.RequiredIntent == "" {
		return nil, &errkind.InputError{Source: source, Field: "/dependency_files/required_intent", Problem: "mode gated needs required_intent"}
	}
	if p.Risk != nil && p.Risk.HighAt < p.Risk.MediumAt {
		return nil, &errkind.InputError{Source: source, Field: "/risk/high_at", Problem: "high_at is below medium_at"}
	}
	cd, err := canonical.Transform(data)
	if err != nil {
		return nil, &errkind.InputError{Source: source, Problem: err.Error()}
	}
	p.digest, p.canon = canonical.Digest(cd), cd
	return &p, nil
}

// DefaultPolicy returns the built-in policy.
func DefaultPolicy() *Policy {
	p, err := ParsePolicy("built-in stack policy", DefaultPolicyJSON())
	if err != nil {
		panic(err) // embedded; TestDefaultPolicy keeps it valid
	}
	return p
}

// Digest returns the digest of the policy's canonical bytes (its version in
// decision artifacts).
func (p *Policy) Digest() string { return p.digest }

// Canonical returns the policy's canonical bytes (what a run keeps).
func (p *Policy) Canonical() []byte { return p.canon }

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// matchAny reports the first glob of globs that matches path.
func matchAny(globs []string, path string) (string, bool) {
	for _, g := range globs {
		if ok, _ := doublestar.Match(g, path); ok {
			return g, true
		}
	}
	return "", false
}

// binaryAllowed is allow_binary (default true).
func (p *Policy) binaryAllowed() bool { return p.AllowBinary == nil || *p.AllowBinary }

// atomicityAllowed reports whether a proposal may declare a.
func (p *Policy) atomicityAllowed(a string) bool {
	if p.Atomicity == nil {
		return a == AtomicProposal
	}
	for _, x := range p.Atomicity.Allowed {
		if x == a {
			return true
		}
	}
	return false
}

// RiskClass maps a risk score to a class.
func (p *Policy) RiskClass(score int) string {
	medium, high := 40, 120
	if p.Risk != nil {
		medium, high = p.Risk.MediumAt, p.Risk.HighAt
	}
	switch {
	case score >= high:
		return RiskHigh
	case score >= medium:
		return RiskMedium
	}
	return RiskLow
}

// ExpectedValidations lists the tiers in name order with their schedule and
// whether promotion of a head of riskClass requires them.
func (p *Policy) ExpectedValidations(riskClass string) []ExpectedValidation {
	req := map[string]bool{}
	for _, t := range p.Validation.RequiredForPromotion[riskClass] {
		req[t] = true
	}
	var out []ExpectedValidation
	for _, name := range sortedKeys(p.Validation.Tiers) {
		t := p.Validation.Tiers[name]
		out = append(out, ExpectedValidation{Tier: name, When: t.When, RequiredForPromotion: req[name], TimeoutSeconds: t.TimeoutSeconds})
	}
	return out
}
