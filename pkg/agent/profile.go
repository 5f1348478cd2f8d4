package agent

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"math"
	"path"
	"strings"

	"github.com/dome-registry/dome/pkg/canonical"
	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/dome-registry/dome/pkg/schemaval"
	"github.com/dome-registry/dome/pkg/specfilter"
)

//go:embed schemas/agent.schema.json
var profileSchemaJSON []byte

// ProfileSchemaBytes returns the JSON Schema (draft 2020-12) of an agent
// profile.
func ProfileSchemaBytes() []byte { return profileSchemaJSON }

// Profile file constants.
const (
	ProfileSchemaVersion      = "dome.agent/v1"
	StandardAgentID           = "standard" // the fallback agent every registry must have, enabled
	DefaultMaxDepth           = 5          // delegation depth when a profile sets none
	DefaultAbilityTokenBudget = 2000       // tokens of injected abilities when a profile sets none
	MaxProfileBytes           = 1 << 20
	maxYAMLDepth              = 64
)

// Failure strategies of a workflow (the profile's spelling).
const (
	FailFast        = "failFast"
	ContinueOnError = "continueOnError"
	Rollback        = "rollback"
)

// Profile is an agent profile. Values of it held by a Set were validated
// in full; the Set hands out copies.
type Profile struct {
	SchemaVersion      string      `json:"schemaVersion"`
	ID                 string      `json:"id"`
	Name               string      `json:"name"`
	Description        string      `json:"description"`
	SystemPrompt       string      `json:"systemPrompt"`
	Enabled            bool        `json:"enabled"`
	CoreAbilities      []string    `json:"coreAbilities,omitempty"`
	Abilities          []string    `json:"abilities,omitempty"`
	AbilityTokenBudget int         `json:"abilityTokenBudget,omitempty"`
	ExampleTasks       []string    `json:"exampleTasks,omitempty"`
	NotForTasks        []string    `json:"notForTasks,omitempty"`
	Provider           Provider    `json:"provider"`
	Workflow           *Workflow   `json:"workflow,omitempty"`
	Delegation         *Delegation `json:"delegation,omitempty"`
	Tools              *ToolAccess `json:"tools,omitempty"`
}

// Provider names the model runtime and the model an agent's prompts go to.
type Provider struct {
	Runtime     string   `json:"runtime"`
	Model       string   `json:"model"`
	Temperature *float64 `json:"temperature,omitempty"`
	Seed        *int64   `json:"seed,omitempty"`
	MaxTokens   int      `json:"maxTokens,omitempty"`
}

// Workflow is an agent's steps. Without MaxConcurrency they run one at a
// time in array order; with it they form a DAG by DependsOn.
type Workflow struct {
	Steps           []Step `json:"steps"`
	MaxConcurrency  int    `json:"maxConcurrency,omitempty"`
	FailureStrategy string `json:"failureStrategy,omitempty"`
	MaxAttempts     int    `json:"maxAttempts,omitempty"`
}

// Step is one workflow step: exactly one of Prompt, Tool and Delegate.
type Step struct {
	ID             string        `json:"id"`
	Description    string        `json:"description,omitempty"`
	DependsOn      []string      `json:"dependsOn,omitempty"`
	Prompt         string        `json:"prompt,omitempty"`
	Tool           *ToolCall     `json:"tool,omitempty"`
	Delegate       *DelegateCall `json:"delegate,omitempty"`
	Compensate     *Action       `json:"compensate,omitempty"`
	TimeoutSeconds int           `json:"timeoutSeconds,omitempty"`
}

// Action is what a compensating step does: exactly one of its fields.
type Action struct {
	Prompt   string        `json:"prompt,omitempty"`
	Tool     *ToolCall     `json:"tool,omitempty"`
	Delegate *DelegateCall `json:"delegate,omitempty"`
}

// ToolCall calls a tool, <tool>/<operationId>, with an input object whose
// strings may hold templates.
type ToolCall struct {
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input,omitempty"`
}

// DelegateCall hands a task to another agent.
type DelegateCall struct {
	Agent string `json:"agent"`
	Task  string `json:"task"`
}

// Delegation bounds an agent's delegation.
type Delegation struct {
	MaxDepth         *int     `json:"maxDepth,omitempty"`
	AllowedDelegates []string `json:"allowedDelegates,omitempty"`
}

// ToolAccess is what the agent's tool calls are granted from: the A2A
// runtime card that bounds them and the capabilities they need.
type ToolAccess struct {
	Card         string   `json:"card"`
	Capabilities []string `json:"capabilities"`
}

// Kind returns "prompt", "tool" or "delegate".
func (s Step) Kind() string { return s.Action().Kind() }

// Action returns the step's action.
func (s Step) Action() Action { return Action{Prompt: s.Prompt, Tool: s.Tool, Delegate: s.Delegate} }

// Kind returns "prompt", "tool" or "delegate" ("" for an empty action).
func (a Action) Kind() string {
	switch {
	case a.Tool != nil:
		return "tool"
	case a.Delegate != nil:
		return "delegate"
	case a.Prompt != "":
		return "prompt"
	}
	return ""
}

// MaxDepth returns the profile's delegation depth limit (DefaultMaxDepth
// when unset).
func (p *Profile) MaxDepth() int {
	if p.Delegation != nil && p.Delegation.MaxDepth != nil {
		return *p.Delegation.MaxDepth
	}
	return DefaultMaxDepth
}

// AllowsDelegate reports whether the profile lists id among its delegates.
func (p *Profile) AllowsDelegate(id string) bool {
	if p.Delegation == nil {
		return false
	}
	for _, d := range p.Delegation.AllowedDelegates {
		if d == id {
			return true
		}
	}
	return false
}

// TokenBudget returns the ability token budget.
func (p *Profile) TokenBudget() int {
	if p.AbilityTokenBudget > 0 {
		return p.AbilityTokenBudget
	}
	return DefaultAbilityTokenBudget
}

// Strategy returns the workflow's failure strategy (failFast by default).
func (w *Workflow) Strategy() string {
	if w == nil || w.FailureStrategy == "" {
		return FailFast
	}
	return w.FailureStrategy
}

// Parallel reports whether the steps form a DAG run concurrently.
func (w *Workflow) Parallel() bool { return w != nil && w.MaxConcurrency > 0 }

// Digest returns the sha256 digest of the profile's canonical JSON.
func (p *Profile) Digest() string {
	b, err := canonical.Marshal(p)
	if err != nil {
		// A validated profile is plain JSON data; this cannot fail.
		panic(fmt.Sprintf("agent: canonical profile: %v", err))
	}
	return canonical.Digest(b)
}

// Clone returns a deep copy.
func (p *Profile) Clone() *Profile {
	c := *p
	c.CoreAbilities = clone(p.CoreAbilities)
	c.Abilities = clone(p.Abilities)
	c.ExampleTasks = clone(p.ExampleTasks)
	c.NotForTasks = clone(p.NotForTasks)
	if p.Provider.Temperature != nil {
		t := *p.Provider.Temperature
		c.Provider.Temperature = &t
	}
	if p.Provider.Seed != nil {
		s := *p.Provider.Seed
		c.Provider.Seed = &s
	}
	if p.Workflow != nil {
		w := *p.Workflow
		w.Steps = make([]Step, len(p.Workflow.Steps))
		for i, s := range p.Workflow.Steps {
			s.DependsOn = clone(s.DependsOn)
			s.Tool = s.Tool.clone()
			s.Delegate = s.Delegate.clone()
			if s.Compensate != nil {
				a := *s.Compensate
				a.Tool, a.Delegate = a.Tool.clone(), a.Delegate.clone()
				s.Compensate = &a
			}
			w.Steps[i] = s
		}
		c.Workflow = &w
	}
	if p.Delegation != nil {
		d := *p.Delegation
		if d.MaxDepth != nil {
			m := *d.MaxDepth
			d.MaxDepth = &m
		}
		d.AllowedDelegates = clone(d.AllowedDelegates)
		c.Delegation = &d
	}
	if p.Tools != nil {
		t := *p.Tools
		t.Capabilities = clone(t.Capabilities)
		c.Tools = &t
	}
	return &c
}

func (t *ToolCall) clone() *ToolCall {
	if t == nil {
		return nil
	}
	c := *t
	c.Input = append(json.RawMessage(nil), t.Input...)
	return &c
}

func (d *DelegateCall) clone() *DelegateCall {
	if d == nil {
		return nil
	}
	c := *d
	return &c
}

func clone[T any](s []T) []T {
	if s == nil {
		return nil
	}
	return append([]T(nil), s...)
}

// Validator checks profiles against the schema and the rules the schema
// cannot say. Make one and keep it: compiling the schema costs more than a
// validation.
type Validator struct {
	schema *schemaval.Schema
}

// NewValidator compiles the profile schema.
func NewValidator() *Validator {
	return &Validator{schema: schemaval.MustCompile("agent.schema.json", profileSchemaJSON)}
}

// ProfileFileID returns the agent id a profile file name carries
// (<id>.agent.json, .agent.yaml or .agent.yml), or false.
func ProfileFileID(name string) (string, bool) {
	base := fileBase(name)
	for _, ext := range []string{".agent.json", ".agent.yaml", ".agent.yml"} {
		if id, ok := strings.CutSuffix(base, ext); ok && id != "" {
			return id, true
		}
	}
	return "", false
}

// Parse reads a profile file: JSON, or YAML (YAML 1.2 core schema) when
// source ends in .yaml or .yml. The profile must pass the schema and every
// rule of Check; errors are *errkind.InputError naming source and the
// field (a JSON pointer).
func (v *Validator) Parse(source string, data []byte) (*Profile, error) {
	if len(data) > MaxProfileBytes {
		return nil, &errkind.InputError{Source: source, Problem: fmt.Sprintf("%d bytes, over the limit of %d", len(data), MaxProfileBytes), Hint: "an agent profile is a few kilobytes"}
	}
	if b := fileBase(source); strings.HasSuffix(b, ".yaml") || strings.HasSuffix(b, ".yml") {
		val, err := specfilter.ParseYAML(data, specfilter.Limits{MaxBytes: MaxProfileBytes, MaxDepth: maxYAMLDepth})
		if err != nil {
			return nil, &errkind.InputError{Source: source, Problem: "invalid YAML: " + err.Error(), Err: err, Hint: "write YAML 1.2: indent with spaces, quote strings that look like numbers"}
		}
		data = val.AppendJSON(nil)
	}
	if err := checkActions(source, data); err != nil {
		return nil, err
	}
	if err := v.schema.Validate(source, data); err != nil {
		return nil, err
	}
	var p Profile
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return nil, &errkind.InputError{Source: source, Problem: "cannot decode: " + err.Error(), Err: err}
	}
	if err := checkProfile(source, &p); err != nil {
		return nil, err
	}
	return &p, nil
}

// Check validates a profile built in code the way Parse validates a file:
// the schema, then the rules.
func (v *Validator) Check(source string, p *Profile) error {
	if p == nil {
		return &errkind.InputError{Source: source, Problem: "no profile"}
	}
	if p.Provider.Temperature != nil && (math.IsNaN(*p.Provider.Temperature) || math.IsInf(*p.Provider.Temperature, 0)) {
		return &errkind.InputError{Source: source, Field: "/provider/temperature", Problem: "not a number"}
	}
	data, err := json.Marshal(p)
	if err != nil {
		return &errkind.InputError{Source: source, Problem: "cannot encode: " + err.Error(), Err: err}
	}
	if err := checkActions(source, data); err != nil {
		return err
	}
	if err := v.schema.Validate(source, data); err != nil {
		return err
	}
	return checkProfile(source, p)
}

// fileBase is the file name of a source: its last path element without a
// trailing "@<commit>" (sources read from git are named path@commit).
func fileBase(source string) string {
	b := path.Base(source)
	if i := strings.LastIndex(b, "@"); i > 0 {
		b = b[:i]
	}
	return b
}

func fieldErr(source, field, hint, format string, a ...any) error {
	return &errkind.InputError{Source: source, Field: field, Problem: fmt.Sprintf(format, a...), Hint: hint}
}

// checkActions says plainly what the schema's oneOf would say obscurely: a
// step, and a compensation, does exactly one of prompt, tool and delegate.
func checkActions(source string, data []byte) error {
	var doc struct {
		Workflow *struct {
			Steps []map[string]json.RawMessage `json:"steps"`
		} `json:"workflow"`
	}
	if json.Unmarshal(data, &doc) != nil || doc.Workflow == nil {
		return nil // the schema reports what is wrong with the shape
	}
	kinds := func(m map[string]json.RawMessage) []string {
		var out []string
		for _, k := range []string{"prompt", "tool", "delegate"} {
			if _, ok := m[k]; ok {
				out = append(out, k)
			}
		}
		return out
	}
	for i, st := range doc.Workflow.Steps {
		f := fmt.Sprintf("/workflow/steps/%d", i)
		if ks := kinds(st); len(ks) != 1 {
			return actionErr(source, f, ks)
		}
		if raw, ok := st["compensate"]; ok {
			var c map[string]json.RawMessage
			if json.Unmarshal(raw, &c) == nil {
				if ks := kinds(c); len(ks) != 1 {
					return actionErr(source, f+"/compensate", ks)
				}
			}
		}
	}
	return nil
}

func actionErr(source, field string, has []string) error {
	what := "none of them"
	if len(has) > 0 {
		what = strings.Join(has, " and ")
	}
	return &errkind.InputError{Source: source, Field: field, Problem: "want exactly one of prompt, tool and delegate; it has " + what,
		Hint: "split the work into one step per action"}
}
