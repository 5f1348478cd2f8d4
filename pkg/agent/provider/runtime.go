package provider

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/dome-registry/dome/pkg/schemaval"
)

//go:embed schemas/runtime.schema.json
var runtimeSchemaJSON []byte

// RuntimeSchemaBytes returns the JSON Schema of a model runtime file.
func RuntimeSchemaBytes() []byte { return runtimeSchemaJSON }

// RuntimeSchemaVersion is the schemaVersion of a model runtime file.
const RuntimeSchemaVersion = "dome.agent_runtime/v1"

// OpenAIModule is the SDK the openai kind is built on.
const OpenAIModule = "github.com/openai/openai-go/v3"

// Limits and defaults of a runtime.
const (
	MaxRuntimeBytes         = 256 << 10
	DefaultMaxResponseBytes = 1 << 20
)

// Runtime is a model runtime: how an agent's prompts reach a model.
type Runtime struct {
	SchemaVersion    string    `json:"schemaVersion"`
	ID               string    `json:"id"`
	Description      string    `json:"description,omitempty"`
	Kind             string    `json:"kind"`
	SDK              *SDK      `json:"sdk,omitempty"`
	BaseURL          string    `json:"baseUrl,omitempty"`
	Auth             *Auth     `json:"auth,omitempty"`
	Models           []string  `json:"models"`
	TimeoutSeconds   int       `json:"timeoutSeconds"`
	MaxRetries       int       `json:"maxRetries,omitempty"`
	MaxResponseBytes int       `json:"maxResponseBytes,omitempty"`
	Defaults         *Defaults `json:"defaults,omitempty"`

	// Source names the file the runtime was read from.
	Source string `json:"-"`
}

// SDK pins the client library of the openai kind.
type SDK struct {
	Module  string `json:"module"`
	Version string `json:"version"`
}

// Auth says where the API key comes from: an environment variable, never
// the registry.
type Auth struct {
	APIKeyEnv string `json:"apiKeyEnv"`
}

// Defaults are the sampling parameters a profile does not set.
type Defaults struct {
	Temperature *float64 `json:"temperature,omitempty"`
	Seed        *int64   `json:"seed,omitempty"`
	MaxTokens   int      `json:"maxTokens,omitempty"`
}

// ParseRuntime reads a model runtime file (JSON) and validates it against
// its schema; errors name source and the field.
func ParseRuntime(source string, data []byte, schema *schemaval.Schema) (*Runtime, error) {
	if len(data) > MaxRuntimeBytes {
		return nil, &errkind.InputError{Source: source, Problem: fmt.Sprintf("%d bytes, over the limit of %d", len(data), MaxRuntimeBytes)}
	}
	if err := schema.Validate(source, data); err != nil {
		return nil, err
	}
	var rt Runtime
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&rt); err != nil {
		return nil, &errkind.InputError{Source: source, Problem: "cannot decode: " + err.Error()}
	}
	rt.Source = source
	return &rt, nil
}

// CompileRuntimeSchema compiles the runtime schema (callers keep the result:
// compiling costs more than validating).
func CompileRuntimeSchema() *schemaval.Schema {
	return schemaval.MustCompile("agent_runtime.schema.json", runtimeSchemaJSON)
}

// Timeout returns the per-request time limit.
func (rt *Runtime) Timeout() time.Duration { return time.Duration(rt.TimeoutSeconds) * time.Second }

// ResponseLimit returns the largest response accepted.
func (rt *Runtime) ResponseLimit() int {
	if rt.MaxResponseBytes > 0 {
		return rt.MaxResponseBytes
	}
	return DefaultMaxResponseBytes
}

// AllowsModel reports whether model is in the allowlist.
func (rt *Runtime) AllowsModel(model string) bool { return slices.Contains(rt.Models, model) }

// CheckModel returns a MODEL_NOT_ALLOWED error for a model outside the
// allowlist.
func (rt *Runtime) CheckModel(model string) error {
	if rt.AllowsModel(model) {
		return nil
	}
	return &Error{Code: CodeModelNotAllowed, Provider: rt.ID,
		Message: fmt.Sprintf("model %q is not in the runtime's allowlist (%s)", model, strings.Join(rt.Models, ", "))}
}

// Sampling are the parameters of a request after the defaults.
type Sampling struct {
	Temperature float64 `json:"temperature"`
	Seed        int64   `json:"seed"`
	MaxTokens   int     `json:"maxTokens,omitempty"`
}

// Sampling resolves the parameters: the profile's, else the runtime's
// defaults, else temperature 0 and seed 0 (deterministic).
func (rt *Runtime) Sampling(temperature *float64, seed *int64, maxTokens int) Sampling {
	s := Sampling{}
	if rt.Defaults != nil {
		if rt.Defaults.Temperature != nil {
			s.Temperature = *rt.Defaults.Temperature
		}
		if rt.Defaults.Seed != nil {
			s.Seed = *rt.Defaults.Seed
		}
		s.MaxTokens = rt.Defaults.MaxTokens
	}
	if temperature != nil {
		s.Temperature = *temperature
	}
	if seed != nil {
		s.Seed = *seed
	}
	if maxTokens > 0 {
		s.MaxTokens = maxTokens
	}
	return s
}

// Options are what a provider takes from outside the registry.
type Options struct {
	// Exec is the command line of the exec kind (argv; no shell).
	Exec []string
	// Env is the environment of the exec command (nil: the process's).
	Env []string
	// Getenv reads the API key variable of the openai kind.
	Getenv func(string) string
	// BaseURL replaces the runtime's base URL (any OpenAI-compatible server).
	BaseURL string
	// Helper is the dome-openai program the openai kind runs (default:
	// found by pkg/helperexec through Getenv).
	Helper string
	// InstallHint says how to install a missing helper (its name given):
	// the program that knows how dome is packaged says.
	InstallHint func(name string) string
}

// New returns the provider of rt.
func New(rt *Runtime, opts Options) (Provider, error) {
	switch rt.Kind {
	case "exec":
		return newExec(rt, opts)
	case "openai":
		return newOpenAI(rt, opts)
	}
	return nil, &Error{Code: CodeConfig, Provider: rt.ID, Message: fmt.Sprintf("unknown kind %q", rt.Kind)}
}
