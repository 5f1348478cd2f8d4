package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/dome-registry/dome/pkg/agent/provider"
	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/dome-registry/dome/pkg/workflow"
)

// Catalog is the agent part of a registry at one commit: the profiles,
// the abilities and the model runtimes.
type Catalog struct {
	Commit    string
	Agents    *Set
	Abilities *Abilities
	Runtimes  map[string]*provider.Runtime
}

// Env is what runs take from outside the registry.
type Env struct {
	Catalog *Catalog
	// Provider makes the provider of a runtime (once per runtime and run).
	Provider func(rt *provider.Runtime) (provider.Provider, error)
	// Tools runs tool steps; nil: every tool step fails TOOL_NOT_FOUND.
	Tools *Executor
	// Grants are the tool grants issued for the run, recorded with its
	// start or resume.
	Grants []GrantRecord
}

// Runner runs agent workflows on the workflow engine (pkg/workflow).
type Runner struct {
	env       Env
	mu        sync.Mutex
	providers map[string]provider.Provider
}

// NewRunner returns a runner.
func NewRunner(env Env) *Runner {
	return &Runner{env: env, providers: map[string]provider.Provider{}}
}

// StartOptions start a run.
type StartOptions struct {
	RunID   string
	Agent   string
	Task    string
	Seed    string   // the engine's determinism seed (default: the run id)
	Exec    []string // the exec provider's command line, recorded for resume
	Journal Journal  // where events go; nil records nothing
}

// Result is how a run ended.
type Result struct {
	RunID          string           `json:"runId"`
	Agent          string           `json:"agent"`
	Status         string           `json:"status"` // succeeded or failed
	Output         json.RawMessage  `json:"output,omitempty"`
	Summary        workflow.Summary `json:"summary"`
	Usage          Usage            `json:"usage"`
	ResumeFromStep int              `json:"resumeFromStep,omitempty"`
	Restored       []string         `json:"restored,omitempty"`
	Warnings       []string         `json:"warnings"`
	Steps          []string         `json:"steps"` // that succeeded, in array order
}

// Run statuses.
const (
	StatusSucceeded = "succeeded"
	StatusFailed    = "failed"
)

// ErrInterrupted is returned when the context is cancelled mid-run: the
// attempts were cancelled and recorded, and the run can be resumed.
var ErrInterrupted = errors.New("the run was interrupted")

func (r *Runner) provider(rt *provider.Runtime) (provider.Provider, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if p, ok := r.providers[rt.ID]; ok {
		return p, nil
	}
	if r.env.Provider == nil {
		return nil, &provider.Error{Code: provider.CodeConfig, Provider: rt.ID, Message: "no provider configured"}
	}
	p, err := r.env.Provider(rt)
	if err != nil {
		return nil, err
	}
	r.providers[rt.ID] = p
	return p, nil
}

// profile returns an enabled agent's profile and its runtime.
func (r *Runner) profile(id string) (*Profile, *provider.Runtime, error) {
	set := r.env.Catalog.Agents
	p, ok := set.get(id)
	if !ok {
		return nil, nil, &errkind.InputError{Source: "agent", Problem: fmt.Sprintf("no agent %q at %s", id, short(r.env.Catalog.Commit)),
			Hint: "agents: " + strings.Join(set.IDs(), ", ")}
	}
	if !p.Enabled {
		return nil, nil, &errkind.InputError{Source: set.Source(id), Field: "/enabled", Problem: fmt.Sprintf("agent %q is disabled", id), Hint: "enable it, or pick another agent"}
	}
	rt, ok := r.env.Catalog.Runtimes[p.Provider.Runtime]
	if !ok {
		return nil, nil, &errkind.InputError{Source: set.Source(id), Field: "/provider/runtime", Problem: fmt.Sprintf("no model runtime %q", p.Provider.Runtime)}
	}
	return p, rt, nil
}

func short(commit string) string {
	if len(commit) > 12 {
		return commit[:12]
	}
	return commit
}

// policyOf maps a workflow onto the engine's policy: one step at a time in
// array order unless maxConcurrency is set.
func policyOf(w *Workflow) workflow.Policy {
	p := workflow.Policy{MaxConcurrency: 1, Weights: workflow.DefaultWeights(), MaxAttempts: 1, Strategy: workflow.FailFast}
	if w.MaxConcurrency > 0 {
		p.MaxConcurrency = w.MaxConcurrency
	}
	if w.MaxAttempts > 0 {
		p.MaxAttempts = w.MaxAttempts
	}
	switch w.Strategy() {
	case ContinueOnError:
		p.Strategy = workflow.ContinueOnError
	case Rollback:
		p.Strategy = workflow.Rollback
	}
	return p
}

func modeOf(w *Workflow) string {
	if w.Parallel() {
		return "dag"
	}
	return "sequential"
}

// Start runs agent opts.Agent on opts.Task from the first step.
func (r *Runner) Start(ctx context.Context, opts StartOptions) (*Result, error) {
	p, rt, err := r.profile(opts.Agent)
	if err != nil {
		return nil, err
	}
	if err := rt.CheckModel(p.Provider.Model); err != nil {
		return nil, &errkind.InputError{Source: r.env.Catalog.Agents.Source(p.ID), Field: "/provider/model", Problem: err.Error()}
	}
	if strings.TrimSpace(opts.Task) == "" {
		return nil, &errkind.InputError{Source: "task", Problem: "the task is empty", Hint: "say what the agent should do"}
	}
	seed := opts.Seed
	if seed == "" {
		seed = opts.RunID
	}
	wf := p.EffectiveWorkflow()
	g, err := BuildGraph(wf)
	if err != nil {
		return nil, err
	}
	x := r.newRun(p, wf, g, opts.RunID, opts.Task, seed, NewChain(p.ID, p.MaxDepth()), opts.Journal)
	x.e, err = workflow.NewEngine(g, policyOf(wf), workflow.Options{RunID: opts.RunID, Seed: seed})
	if err != nil {
		return nil, err
	}
	steps := make([]string, len(wf.Steps))
	for i, s := range wf.Steps {
		steps[i] = s.ID
	}
	pol := policyOf(wf)
	rec := ProviderRecord{Runtime: rt.ID, Kind: rt.Kind, Model: p.Provider.Model}
	if rt.Kind == "openai" && rt.SDK != nil {
		rec.SDKVersion = rt.SDK.Version
	}
	if err := x.record(TopicRunStarted, RunStarted{RunID: opts.RunID, Agent: p.ID, Task: opts.Task, RegistryCommit: r.env.Catalog.Commit,
		ProfileDigest: p.Digest(), Mode: modeOf(wf), Steps: steps, FailureStrategy: wf.Strategy(), MaxConcurrency: pol.MaxConcurrency,
		MaxAttempts: pol.MaxAttempts, Seed: seed, Provider: rec, Exec: opts.Exec, Grants: r.env.Grants}); err != nil {
		return nil, err
	}
	return x.execute(ctx)
}

// Resume continues a run folded from its events (LoadRun): from the last
// checkpoint at stepIndex + 1 with the checkpoint's outputs restored, and
// every step that finished after it restored from its event; nothing that
// completed runs again. The catalog must be the registry at the run's
// commit, where the profile has the digest the run recorded.
func (r *Runner) Resume(ctx context.Context, rec *Record, j Journal) (*Result, error) {
	st := rec.Started
	if rec.Finished != nil {
		return nil, &errkind.InputError{Source: "--run", Problem: fmt.Sprintf("run %s already finished (%s)", st.RunID, rec.Finished.Status),
			Hint: "start a new run with dome workflow run"}
	}
	if r.env.Catalog.Commit != st.RegistryCommit {
		return nil, fmt.Errorf("resume %s: the registry is at %s, the run at %s", st.RunID, short(r.env.Catalog.Commit), short(st.RegistryCommit))
	}
	p, _, err := r.profile(st.Agent)
	if err != nil {
		return nil, err
	}
	if d := p.Digest(); d != st.ProfileDigest {
		return nil, fmt.Errorf("resume %s: agent %q at %s has digest %s, the run recorded %s", st.RunID, st.Agent, short(st.RegistryCommit), d, st.ProfileDigest)
	}
	wf := p.EffectiveWorkflow()
	g, err := BuildGraph(wf)
	if err != nil {
		return nil, err
	}
	pol := policyOf(wf)
	opt := workflow.Options{RunID: st.RunID, Seed: st.Seed}
	x := r.newRun(p, wf, g, st.RunID, st.Task, st.Seed, NewChain(p.ID, p.MaxDepth()), j)
	x.usage = rec.Memory.Usage
	x.warnings = append(x.warnings, rec.Memory.Warnings...)
	from := 0
	if cp := rec.Checkpoint; cp != nil {
		if err := x.checkContext(rec.CheckpointFile, cp.Context); err != nil {
			return nil, err
		}
		x.e, err = workflow.ResumeCheckpoint(g, pol, opt, *cp)
		if err != nil {
			var se *workflow.StateError
			if errors.As(err, &se) {
				return nil, &errkind.InputError{Source: rec.CheckpointFile, Field: "/payload/" + se.Field, Problem: "checkpoint: " + se.Problem,
					Hint: "the checkpoint does not fit the agent's workflow; it is never resumed from: start a new run"}
			}
			return nil, err
		}
		x.cpIndex = cp.StepIndex
		from = cp.StepIndex + 1
	} else if x.e, err = workflow.NewEngine(g, pol, opt); err != nil {
		return nil, err
	}
	var restored []string
	for id, out := range rec.Restorable {
		i, ok := g.Index(id)
		if !ok || i <= x.cpIndex {
			continue
		}
		x.restored[id] = out
		restored = append(restored, id)
	}
	sort.Strings(restored)
	if err := x.record(TopicRunResumed, RunResumed{ResumeFromStep: from, Restored: orEmpty(restored), Grants: r.env.Grants}); err != nil {
		return nil, err
	}
	res, err := x.execute(ctx)
	if res != nil {
		res.ResumeFromStep, res.Restored = from, restored
	}
	return res, err
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// checkContext holds a checkpoint's context to the run it belongs to.
func (x *run) checkContext(file string, raw json.RawMessage) error {
	var c RunContext
	if err := decodeStrict(raw, &c); err != nil {
		return &errkind.InputError{Source: file, Field: "/payload/context", Problem: "checkpoint: " + err.Error()}
	}
	want := x.context()
	for _, f := range []struct{ name, got, want string }{
		{"runId", c.RunID, want.RunID}, {"agent", c.Agent, want.Agent}, {"task", c.Task, want.Task},
		{"registryCommit", c.RegistryCommit, want.RegistryCommit}, {"profileDigest", c.ProfileDigest, want.ProfileDigest},
	} {
		if f.got != f.want {
			return &errkind.InputError{Source: file, Field: "/payload/context/" + f.name, Problem: fmt.Sprintf("checkpoint: %q, but the run's is %q", f.got, f.want),
				Hint: "the checkpoint belongs to another run; it is never resumed from"}
		}
	}
	return nil
}
