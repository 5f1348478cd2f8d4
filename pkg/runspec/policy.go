package runspec

import (
	"fmt"
	"sync"

	"github.com/dome-registry/dome/pkg/canonical"
	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/dome-registry/dome/pkg/schemaval"
	"github.com/dome-registry/dome/pkg/workflow"
)

// PolicyPath is where a repository keeps its run policy.
const PolicyPath = "policy/run_policy.json"

// PolicySchema is the schema_version of a run policy.
const PolicySchema = "dome.run_policy/v1"

// PolicySchemaJSON returns the JSON Schema of run_policy.json.
func PolicySchemaJSON() []byte { b, _ := schemaFS.ReadFile("schemas/run_policy.schema.json"); return b }

// DefaultPolicyJSON returns the policy used when a repository has none.
func DefaultPolicyJSON() []byte { b, _ := schemaFS.ReadFile("default_run_policy.json"); return b }

var compilePolicy = sync.OnceValue(func() *schemaval.Schema {
	return schemaval.MustCompile("run_policy.schema.json", PolicySchemaJSON())
})

// Policy is policy/run_policy.json.
type Policy struct {
	SchemaVersion string        `json:"schema_version"`
	Description   string        `json:"description,omitempty"`
	Scheduling    Scheduling    `json:"scheduling"`
	Scarce        Scarce        `json:"scarce"`
	Risk          RiskPolicy    `json:"risk"`
	Sandbox       SandboxLimits `json:"sandbox"`
	digest        string        // of the canonical bytes
}

// Scheduling is the scheduler's part of the policy.
type Scheduling struct {
	MaxConcurrency int               `json:"max_concurrency"`
	MaxAttempts    int               `json:"max_attempts,omitempty"`
	Strategy       string            `json:"strategy,omitempty"`
	Weights        *workflow.Weights `json:"weights,omitempty"`
	Endgame        *workflow.Endgame `json:"endgame,omitempty"`
}

// Scarce lists capacities: how many attempts may hold each at once.
type Scarce struct {
	Resources    map[string]int `json:"resources,omitempty"`
	Capabilities map[string]int `json:"capabilities,omitempty"`
	RuntimeCards map[string]int `json:"runtime_cards,omitempty"`
}

// RiskPolicy gives risk penalty points by level and by capability.
type RiskPolicy struct {
	Levels       map[string]int `json:"levels,omitempty"`
	Capabilities map[string]int `json:"capabilities,omitempty"`
}

// SandboxLimits bound one worker attempt.
type SandboxLimits struct {
	MaxWallSeconds int   `json:"max_wall_seconds,omitempty"`
	MaxProcesses   int   `json:"max_processes,omitempty"`
	MaxMemoryBytes int64 `json:"max_memory_bytes,omitempty"`
	MaxOpenFiles   int   `json:"max_open_files,omitempty"`
	MaxFileBytes   int64 `json:"max_file_bytes,omitempty"`
	MaxOutputBytes int64 `json:"max_output_bytes,omitempty"`
}

// Digest returns the digest of the policy's canonical bytes.
func (p *Policy) Digest() string { return p.digest }

// DefaultPolicy returns the built-in run policy.
func DefaultPolicy() *Policy {
	p, err := ParsePolicy("built-in run policy", DefaultPolicyJSON())
	if err != nil {
		panic(err) // the embedded policy is tested
	}
	return p
}

// ParsePolicy validates a run policy against its schema; errors name the
// source and the JSON pointer.
func ParsePolicy(source string, data []byte) (*Policy, error) {
	if err := compilePolicy().Validate(source, data); err != nil {
		return nil, err
	}
	var p Policy
	if err := strictJSON(data, &p); err != nil {
		return nil, &errkind.InputError{Source: source, Problem: err.Error()}
	}
	canon, err := canonical.Transform(data)
	if err != nil {
		return nil, &errkind.InputError{Source: source, Problem: err.Error()}
	}
	p.digest = canonical.Digest(canon)
	return &p, nil
}

// RiskOf returns a task's risk penalty: its declared level's points plus
// the points of each capability it requires, at most 1000.
func (p *Policy) RiskOf(t Task) int {
	r := 0
	if t.Risk != "" {
		r += p.Risk.Levels[t.Risk]
	}
	for _, c := range t.RequiredCapabilities {
		r += p.Risk.Capabilities[c]
	}
	return min(r, 1000)
}

// Overrides narrow the policy for one invocation (flags); zero leaves a
// value alone.
type Overrides struct {
	MaxConcurrency int
}

// Schedule combines the queue, the policy and overrides into the engine's
// graph and policy: capacities from the scarce lists, risk from the policy,
// and every limit the smallest of policy, queue budgets and overrides.
func Schedule(source string, q *Queue, p *Policy, o Overrides) (*workflow.Graph, workflow.Policy, error) {
	wp := workflow.DefaultPolicy()
	s := p.Scheduling
	wp.MaxConcurrency = s.MaxConcurrency
	if s.MaxAttempts > 0 {
		wp.MaxAttempts = s.MaxAttempts
	}
	if s.Strategy != "" {
		wp.Strategy = workflow.Strategy(s.Strategy)
	}
	if s.Weights != nil {
		wp.Weights = *s.Weights
	}
	if s.Endgame != nil {
		wp.Endgame = *s.Endgame
	}
	if b := q.Budgets; b != nil {
		if b.MaxConcurrency > 0 {
			wp.MaxConcurrency = min(wp.MaxConcurrency, b.MaxConcurrency)
		}
		if b.MaxAttempts > 0 {
			wp.MaxAttempts = min(wp.MaxAttempts, b.MaxAttempts)
		}
	}
	if o.MaxConcurrency > 0 {
		wp.MaxConcurrency = min(wp.MaxConcurrency, o.MaxConcurrency)
	}
	wp.Capacity = map[string]int{}
	for k, v := range p.Scarce.Resources {
		wp.Capacity[NeedResource+k] = v
	}
	for k, v := range p.Scarce.Capabilities {
		wp.Capacity[NeedCapability+k] = v
	}
	for k, v := range p.Scarce.RuntimeCards {
		wp.Capacity[NeedCard+k] = v
	}
	if err := wp.Validate(); err != nil {
		return nil, wp, &errkind.InputError{Source: "run policy", Field: "/scheduling", Problem: err.Error()}
	}
	g, err := workflow.Build(q.GraphSpec(p))
	if err != nil {
		return nil, wp, graphError(source, err)
	}
	return g, wp, nil
}

// DescribePolicy describes the effective scheduling policy in one line.
func DescribePolicy(wp workflow.Policy) string {
	return fmt.Sprintf("max_concurrency %d, max_attempts %d, %s, endgame remaining %d duplicates %d",
		wp.MaxConcurrency, wp.MaxAttempts, wp.Strategy, wp.Endgame.Remaining, wp.Endgame.MaxDuplicates)
}
