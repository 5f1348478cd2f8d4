package spawn

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/dome-registry/dome/pkg/canonical"
	"github.com/dome-registry/dome/pkg/grant"
	"github.com/dome-registry/dome/pkg/schemaval"
)

//go:embed schemas/spawn_spec.schema.json
var schemaJSON []byte

// SchemaBytes returns the SpawnSpec JSON Schema.
func SchemaBytes() []byte { return bytes.Clone(schemaJSON) }

// MaxBytes bounds a SpawnSpec.
const MaxBytes = 256 << 10

// Reason codes of a refused SpawnSpec.
const (
	CodeMalformed          = "SPAWN_MALFORMED"            // not strict JSON, duplicate members, wrong types
	CodeUnknownField       = "SPAWN_UNKNOWN_FIELD"        // a member the contract does not define
	CodeMissingField       = "SPAWN_MISSING_FIELD"        // a required member is absent
	CodeMutableRef         = "SPAWN_MUTABLE_REF"          // task_spec_ref or tool_profile_ref can move
	CodeContainerNotPinned = "SPAWN_CONTAINER_NOT_PINNED" // container_ref is not an image digest
	CodeBadField           = "SPAWN_BAD_FIELD"            // any other invalid value
	CodeInputsHash         = "SPAWN_INPUTS_HASH_MISMATCH" // inputs_hash is not the spec's
	CodeGrantMismatch      = "SPAWN_GRANT_MISMATCH"       // the grant is not the one tool_profile_ref names, or binds another execution
)

// Error is a refused SpawnSpec: a reason code, the field (a JSON pointer)
// and the problem. Every code but SPAWN_INPUTS_HASH_MISMATCH and
// SPAWN_GRANT_MISMATCH is bad input; those two are failed checks.
type Error struct {
	Code    string
	Source  string
	Field   string
	Problem string
	Err     error
}

func (e *Error) Error() string {
	parts := []string{}
	for _, p := range []string{e.Source, e.Field, e.Problem} {
		if p != "" {
			parts = append(parts, p)
		}
	}
	if e.Err != nil {
		parts = append(parts, e.Err.Error())
	}
	return strings.Join(parts, ": ") + " (" + e.Code + ")"
}

func (e *Error) Unwrap() error { return e.Err }

// Input reports whether the refusal is bad input (exit 2).
func (e *Error) Input() bool { return e.Code != CodeInputsHash && e.Code != CodeGrantMismatch }

// ActionSpec is the intent-level action a worker compiles into tool calls;
// it names no method.
type ActionSpec struct {
	Intent  string          `json:"intent"`
	Summary string          `json:"summary,omitempty"`
	Inputs  json.RawMessage `json:"inputs,omitempty"`
}

// fieldNames are a SpawnSpec's members, all required.
var fieldNames = []string{"run_id", "wave_id", "node_id", "node_execution_id", "task_spec_ref", "tool_profile_ref", "container_ref", "action_spec", "determinism_seed", "inputs_hash"}

// Fields are a SpawnSpec's members.
type Fields struct {
	RunID           string     `json:"run_id"`
	WaveID          string     `json:"wave_id"`
	NodeID          string     `json:"node_id"`
	NodeExecutionID string     `json:"node_execution_id"`
	TaskSpecRef     string     `json:"task_spec_ref"`
	ToolProfileRef  string     `json:"tool_profile_ref"`
	ContainerRef    string     `json:"container_ref"`
	ActionSpec      ActionSpec `json:"action_spec"`
	DeterminismSeed int64      `json:"determinism_seed"`
	InputsHash      string     `json:"inputs_hash"`
}

// Spec is a validated SpawnSpec. Only Parse and New make one.
type Spec struct {
	f *Fields
}

// Valid reports whether s came from Parse or New (the zero Spec did not).
func (s Spec) Valid() bool { return s.f != nil }

// Fields returns a copy of the members (the zero Fields for an invalid Spec).
func (s Spec) Fields() Fields {
	if s.f == nil {
		return Fields{}
	}
	f := *s.f
	f.ActionSpec.Inputs = bytes.Clone(f.ActionSpec.Inputs)
	return f
}

// Accessors of a valid Spec.
func (s Spec) RunID() string           { return s.Fields().RunID }
func (s Spec) WaveID() string          { return s.Fields().WaveID }
func (s Spec) NodeID() string          { return s.Fields().NodeID }
func (s Spec) NodeExecutionID() string { return s.Fields().NodeExecutionID }
func (s Spec) ToolProfileRef() string  { return s.Fields().ToolProfileRef }
func (s Spec) ContainerRef() string    { return s.Fields().ContainerRef }
func (s Spec) InputsHash() string      { return s.Fields().InputsHash }

// Canonical returns the spec's RFC 8785 canonical bytes.
func (s Spec) Canonical() ([]byte, error) {
	if s.f == nil {
		return nil, errors.New("spawn: not a validated SpawnSpec")
	}
	return canonical.Marshal(s.f)
}

// Validator compiles the schema once; the zero value is ready and may be
// shared by goroutines.
type Validator struct {
	once   sync.Once
	schema *schemaval.Schema
}

func (v *Validator) get() *schemaval.Schema {
	v.once.Do(func() { v.schema = schemaval.MustCompile("spawn_spec.schema.json", schemaJSON) })
	return v.schema
}

// Parse validates a SpawnSpec read from source.
func (v *Validator) Parse(source string, data []byte) (Spec, error) {
	if len(data) > MaxBytes {
		return Spec{}, &Error{Code: CodeMalformed, Source: source, Problem: fmt.Sprintf("%d bytes: a SpawnSpec is at most %d", len(data), MaxBytes)}
	}
	if err := schemaval.CheckJSON(source, data); err != nil {
		return Spec{}, &Error{Code: CodeMalformed, Err: err}
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil || top == nil {
		return Spec{}, &Error{Code: CodeMalformed, Source: source, Problem: "want a JSON object"}
	}
	var unknown, missing []string
	for k := range top {
		if !slices.Contains(fieldNames, k) {
			unknown = append(unknown, k)
		}
	}
	for _, k := range fieldNames {
		if _, ok := top[k]; !ok {
			missing = append(missing, k)
		}
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		return Spec{}, &Error{Code: CodeUnknownField, Source: source, Field: "/" + unknown[0], Problem: fmt.Sprintf("unknown field (a SpawnSpec has exactly %s)", strings.Join(fieldNames, ", "))}
	}
	if len(missing) > 0 {
		return Spec{}, &Error{Code: CodeMissingField, Source: source, Field: "/" + missing[0], Problem: "missing: " + strings.Join(missing, ", ")}
	}
	if err := v.get().Validate(source, data); err != nil {
		return Spec{}, &Error{Code: CodeBadField, Err: err}
	}
	var f Fields
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return Spec{}, &Error{Code: CodeMalformed, Source: source, Problem: err.Error()}
	}
	if err := check(source, &f); err != nil {
		return Spec{}, err
	}
	want, err := computeInputsHash(f)
	if err != nil {
		return Spec{}, &Error{Code: CodeMalformed, Source: source, Field: "/action_spec/inputs", Problem: err.Error()}
	}
	if f.InputsHash != want {
		return Spec{}, &Error{Code: CodeInputsHash, Source: source, Field: "/inputs_hash", Problem: fmt.Sprintf("%s, but the spec hashes to %s: a field changed after it was computed", f.InputsHash, want)}
	}
	return Spec{f: &f}, nil
}

// New validates fields built by a coordinator, computing inputs_hash (any
// value given is replaced).
func (v *Validator) New(f Fields) (Spec, error) {
	f.InputsHash = ""
	h, err := computeInputsHash(f)
	if err != nil {
		return Spec{}, &Error{Code: CodeBadField, Source: "spawn spec", Field: "/action_spec/inputs", Problem: err.Error()}
	}
	f.InputsHash = h
	data, err := canonical.Marshal(f)
	if err != nil {
		return Spec{}, &Error{Code: CodeBadField, Source: "spawn spec", Problem: err.Error()}
	}
	return v.Parse("spawn spec", data)
}

// computeInputsHash is the sha256 of the canonical spec without inputs_hash.
func computeInputsHash(f Fields) (string, error) {
	m := map[string]any{
		"run_id": f.RunID, "wave_id": f.WaveID, "node_id": f.NodeID, "node_execution_id": f.NodeExecutionID,
		"task_spec_ref": f.TaskSpecRef, "tool_profile_ref": f.ToolProfileRef, "container_ref": f.ContainerRef,
		"action_spec": f.ActionSpec, "determinism_seed": f.DeterminismSeed,
	}
	b, err := canonical.Marshal(m)
	if err != nil {
		return "", err
	}
	return canonical.Digest(b), nil
}

func check(source string, f *Fields) error {
	bad := func(code, field, format string, a ...any) error {
		return &Error{Code: code, Source: source, Field: field, Problem: fmt.Sprintf(format, a...)}
	}
	if err := checkImmutableRef(f.TaskSpecRef); err != nil {
		return bad(CodeMutableRef, "/task_spec_ref", "%v", err)
	}
	if err := checkImmutableRef(f.ToolProfileRef); err != nil {
		return bad(CodeMutableRef, "/tool_profile_ref", "%v", err)
	}
	if err := CheckImageDigest(f.ContainerRef); err != nil {
		return bad(CodeContainerNotPinned, "/container_ref", "%v", err)
	}
	if field, msg := CheckActionInputs(f.ActionSpec.Inputs); msg != "" {
		return bad(CodeBadField, "/action_spec/inputs"+field, "%s", msg)
	}
	return nil
}

// CheckActionInputs checks an action's inputs as a spawn spec carries
// them: an object that names no method (methods come from the grant). It
// returns the offending member ("" for the whole) and the problem, or ""
// and "" when they pass; a work queue's tasks are checked with it before a
// run starts, so that no task is found undispatchable only at dispatch.
func CheckActionInputs(in json.RawMessage) (field, problem string) {
	if len(in) == 0 {
		return "", ""
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(in, &obj) != nil || obj == nil {
		return "", "want an object"
	}
	for _, k := range []string{"method", "methods", "tool_calls", "operation_id", "allowed_methods"} {
		if _, ok := obj[k]; ok {
			return "/" + k, "an action_spec is intent-level: methods come from the grant, not the spawn spec"
		}
	}
	return "", ""
}

// checkImmutableRef accepts "[<name>@]<full commit SHA | sha256:<hex>>".
func checkImmutableRef(ref string) error {
	name, pin := "", ref
	if i := strings.LastIndexByte(ref, '@'); i >= 0 {
		name, pin = ref[:i], ref[i+1:]
		if name == "" || strings.ContainsAny(name, " \t\r\n@") {
			return fmt.Errorf("%q: want [<name>@]<pin> with a name without spaces or '@'", ref)
		}
	}
	if isHex(pin) && (len(pin) == 40 || len(pin) == 64) {
		return nil
	}
	if _, err := canonical.ParseDigest(pin); err == nil {
		return nil
	}
	return fmt.Errorf("%q is not immutable: pin it to a full commit SHA (40 or 64 lowercase hex) or a sha256:<64 hex> digest", ref)
}

// CheckImageDigest accepts "<repository>@sha256:<64 hex>" or "sha256:<64 hex>".
func CheckImageDigest(ref string) error {
	pin := ref
	if i := strings.LastIndexByte(ref, '@'); i >= 0 {
		repo := ref[:i]
		if repo == "" || strings.ContainsAny(repo, " \t\r\n@") {
			return fmt.Errorf("%q: want <repository>@sha256:<64 hex>", ref)
		}
		pin = ref[i+1:]
	}
	if _, err := canonical.ParseDigest(pin); err != nil {
		return fmt.Errorf("%q is not an image digest: a tag such as :latest can move; write <repository>@sha256:<64 hex>", ref)
	}
	return nil
}

func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return s != ""
}

// CheckGrant checks that g (whose bytes hash to g.Digest) is the grant
// s.tool_profile_ref names, bound to the same run, wave and node execution.
func (s Spec) CheckGrant(g *grant.Grant) error {
	if s.f == nil {
		return errors.New("spawn: not a validated SpawnSpec")
	}
	f := s.f
	pin := f.ToolProfileRef
	if i := strings.LastIndexByte(pin, '@'); i >= 0 {
		pin = pin[i+1:]
	}
	bad := func(field, format string, a ...any) error {
		return &Error{Code: CodeGrantMismatch, Source: "spawn spec", Field: field, Problem: fmt.Sprintf(format, a...)}
	}
	if pin != g.Digest {
		return bad("/tool_profile_ref", "names %s, but the grant's bytes hash to %s", pin, g.Digest)
	}
	p := g.Payload
	if p.RunID != f.RunID || p.WaveID != f.WaveID {
		return bad("/run_id", "the grant is bound to run %s wave %s, the spec to run %s wave %s", p.RunID, p.WaveID, f.RunID, f.WaveID)
	}
	if p.NodeExecutionID != "" && p.NodeExecutionID != f.NodeExecutionID {
		return bad("/node_execution_id", "the grant is bound to node execution %s, the spec is %s", p.NodeExecutionID, f.NodeExecutionID)
	}
	if p.NodeID != "" && p.NodeID != f.NodeID {
		return bad("/node_id", "the grant is for node %s, the spec for %s", p.NodeID, f.NodeID)
	}
	return nil
}
