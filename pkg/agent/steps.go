package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/dome-registry/dome/pkg/agent/provider"
	"github.com/dome-registry/dome/pkg/workflow"
)

// Step failure reasons besides the provider, tool and delegation codes.
const (
	ReasonTemplate    = "TEMPLATE_ERROR" // a placeholder could not be filled
	ReasonStepTimeout = "STEP_TIMEOUT"   // the step's timeoutSeconds passed
	ReasonCancelled   = "CANCELLED"      // cancelled (fail fast, or the run was interrupted)
)

// stepFn runs one attempt.
type stepFn func(ctx context.Context) stepResult

func failed(reason, format string, a ...any) stepResult {
	return stepResult{outcome: workflow.Outcome{Status: workflow.OutcomeFailed, Reason: reason}, message: fmt.Sprintf(format, a...)}
}

func failedFn(res stepResult) stepFn { return func(context.Context) stepResult { return res } }

// vars are the values placeholders take now: the outputs of the steps that
// completed.
func (x *run) vars() templateVars {
	return templateVars{task: x.task, agent: x.p.ID, output: func(id string) (json.RawMessage, bool) {
		out, ok := x.e.Output(id)
		return out, ok
	}}
}

// prepare fills the action's placeholders (on the goroutine that owns the
// engine) and returns the function that runs it.
func (x *run) prepare(a Action, stepID string, timeoutSeconds int) stepFn {
	var fn stepFn
	switch a.Kind() {
	case "prompt":
		fn = x.preparePrompt(a.Prompt, stepID)
	case "tool":
		fn = x.prepareTool(a.Tool)
	case "delegate":
		fn = x.prepareDelegate(a.Delegate)
	default:
		return failedFn(failed(ReasonTemplate, "step %s has no action", stepID))
	}
	if timeoutSeconds <= 0 {
		return fn
	}
	limit := time.Duration(timeoutSeconds) * time.Second
	return func(ctx context.Context) stepResult {
		tctx, cancel := context.WithTimeout(ctx, limit)
		defer cancel()
		res := fn(tctx)
		if res.outcome.Status != workflow.OutcomeSucceeded && errors.Is(tctx.Err(), context.DeadlineExceeded) && ctx.Err() == nil {
			res.outcome.Reason = ReasonStepTimeout
			res.message = fmt.Sprintf("step %s did not finish within %s: %s", stepID, limit, res.message)
		}
		return res
	}
}

func cancelledOr(ctx context.Context, res stepResult) stepResult {
	if ctx.Err() != nil && res.outcome.Status != workflow.OutcomeSucceeded {
		if errors.Is(ctx.Err(), context.Canceled) {
			res.outcome = workflow.Outcome{Status: workflow.OutcomeCancelled, Reason: ReasonCancelled}
		}
	}
	return res
}

// preparePrompt injects the abilities into the system prompt, before
// anything is sent: the provider gets the finished request.
func (x *run) preparePrompt(tmpl, stepID string) stepFn {
	prompt, err := render(tmpl, x.vars())
	if err != nil {
		return failedFn(failed(ReasonTemplate, "step %s: %v", stepID, err))
	}
	_, rt, err := x.r.profile(x.p.ID)
	if err != nil {
		return failedFn(failed(provider.CodeConfig, "%v", err))
	}
	inj, err := x.r.env.Catalog.Abilities.Inject(x.p, x.task+"\n"+prompt)
	if err != nil {
		return failedFn(failed(provider.CodeConfig, "%v", err))
	}
	prov, err := x.r.provider(rt)
	if err != nil {
		return failedFn(failed(provider.CodeOf(err), "%v", err))
	}
	s := rt.Sampling(x.p.Provider.Temperature, x.p.Provider.Seed, x.p.Provider.MaxTokens)
	req := provider.Request{RunID: x.runID, Agent: x.p.ID, Step: stepID, Model: x.p.Provider.Model, System: inj.System, Prompt: prompt,
		Temperature: s.Temperature, Seed: s.Seed, MaxTokens: s.MaxTokens}
	return func(ctx context.Context) stepResult {
		resp, err := prov.Complete(ctx, req)
		if err != nil {
			code := provider.CodeOf(err)
			if code == "" {
				code = provider.CodeFailed
			}
			res := failed(code, "%s", providerMessage(err))
			res.inj, res.warnings = &inj, inj.Warnings
			return cancelledOr(ctx, res)
		}
		out, _ := json.Marshal(resp.Text)
		return stepResult{outcome: workflow.Outcome{Status: workflow.OutcomeSucceeded, Output: out}, inj: &inj, warnings: inj.Warnings,
			usage: Usage{ProviderCalls: 1, PromptTokens: resp.Usage.PromptTokens, CompletionTokens: resp.Usage.CompletionTokens}}
	}
}

func (x *run) prepareTool(tc *ToolCall) stepFn {
	input, err := renderJSON(tc.Input, x.vars())
	if err != nil {
		return failedFn(failed(ReasonTemplate, "tool %s input: %v", tc.Name, err))
	}
	tools := x.r.env.Tools
	return func(ctx context.Context) stepResult {
		res := tools.ExecuteAs(ctx, x.p.ID, tc.Name, input)
		rec := &ToolRecord{Name: tc.Name, Success: res.Success(), Error: res.Err()}
		if !res.Success() {
			e := res.Err()
			msg := e.Message
			if e.Field != "" {
				msg = e.Field + ": " + msg
			}
			if e.Reason != "" {
				msg = e.Reason + ": " + msg
			}
			out := failed(e.Code, "tool %s: %s", tc.Name, msg)
			out.tool, out.usage = rec, Usage{ToolCalls: 1}
			return cancelledOr(ctx, out)
		}
		return stepResult{outcome: workflow.Outcome{Status: workflow.OutcomeSucceeded, Output: res.Output()}, tool: rec, usage: Usage{ToolCalls: 1}}
	}
}

// prepareDelegate checks the delegation before anything runs: the target
// exists and is enabled, the running agent allows it, and the chain stays
// acyclic and within maxDepth. A refusal is a failed step with the code.
func (x *run) prepareDelegate(dc *DelegateCall) stepFn {
	task, err := render(dc.Task, x.vars())
	if err != nil {
		return failedFn(failed(ReasonTemplate, "delegate task: %v", err))
	}
	res := x.r.Delegate(context.Background(), x.chain, x.p.ID, dc.Agent, task, x.runID, x.seed, true)
	if res.Error != nil {
		out := failed(res.Error.Code, "%s", res.Error.Message)
		out.deleg = &DelegationRecord{Agent: dc.Agent, Chain: res.Chain, Status: StatusFailed, Error: res.Error}
		return failedFn(out)
	}
	return func(ctx context.Context) stepResult {
		d := x.r.Delegate(ctx, x.chain, x.p.ID, dc.Agent, task, x.runID, x.seed, false)
		rec := &DelegationRecord{Agent: dc.Agent, Chain: d.Chain, Status: StatusSucceeded, Error: d.Error, Steps: d.steps, Usage: d.usage}
		u := d.usage
		u.Delegations++
		if d.Error != nil {
			rec.Status = StatusFailed
			out := failed(d.Error.Code, "%s", d.Error.Message)
			out.deleg, out.usage, out.warnings = rec, u, d.warnings
			return cancelledOr(ctx, out)
		}
		return stepResult{outcome: workflow.Outcome{Status: workflow.OutcomeSucceeded, Output: d.Output}, deleg: rec, usage: u, warnings: d.warnings}
	}
}

// providerMessage is a provider error without its code (the step's reason
// carries it).
func providerMessage(err error) string {
	var pe *provider.Error
	if errors.As(err, &pe) {
		return "provider " + pe.Provider + ": " + pe.Message
	}
	return err.Error()
}

// delegation is a DelegationResult with what the delegate's run spent.
type delegation struct {
	DelegationResult
	steps    []string
	usage    Usage
	warnings []string
}

// Delegate hands task from agent from (running with chain) to agent to and
// runs it: its workflow, or its one prompt, in memory, with the longer
// chain. With checkOnly it only checks. Every refusal and failure is an
// error result with a code, never a panic.
func (r *Runner) Delegate(ctx context.Context, chain Chain, from, to, task, runID, seed string, checkOnly bool) delegation {
	out := delegation{DelegationResult: DelegationResult{Agent: to, Chain: chain.IDs()}}
	fail := func(code, format string, a ...any) delegation {
		out.Error = &DelegationError{Code: code, Message: fmt.Sprintf(format, a...)}
		return out
	}
	fp, ok := r.env.Catalog.Agents.get(from)
	if !ok {
		return fail(CodeDelegateNotFound, "no agent %q", from)
	}
	tp, ok := r.env.Catalog.Agents.get(to)
	switch {
	case !ok:
		return fail(CodeDelegateNotFound, "agent %q delegates to %q, which does not exist", from, to)
	case chain.IsInChain(to):
		// The chain says why better than the allowlist would.
	case !tp.Enabled:
		return fail(CodeDelegateDisabled, "agent %q delegates to %q, which is disabled", from, to)
	case !fp.AllowsDelegate(to):
		return fail(CodeDelegateNotAllowed, "agent %q may not delegate to %q: not among its allowedDelegates", from, to)
	}
	next, derr := chain.Delegate(to, tp.MaxDepth())
	if derr != nil {
		out.Error = derr
		return out
	}
	out.Chain = next.IDs()
	if checkOnly {
		return out
	}
	wf := tp.EffectiveWorkflow()
	g, err := BuildGraph(wf)
	if err != nil {
		return fail(CodeDelegateFailed, "agent %q: %v", to, err)
	}
	subID := runID + "/" + to
	x := r.newRun(tp, wf, g, subID, task, seed, next, nil)
	if x.e, err = workflow.NewEngine(g, policyOf(wf), workflow.Options{RunID: subID, Seed: seed}); err != nil {
		return fail(CodeDelegateFailed, "agent %q: %v", to, err)
	}
	res, err := x.execute(ctx)
	if err != nil {
		return fail(CodeDelegateFailed, "agent %q: %v", to, err)
	}
	out.steps, out.usage, out.warnings = res.Steps, res.Usage, res.Warnings
	if res.Status != StatusSucceeded {
		reason := res.Summary.Halted
		if reason == "" && len(res.Summary.Failures) > 0 {
			f := res.Summary.Failures[0]
			reason = fmt.Sprintf("step %s %s: %s", f.NodeID, f.Status, f.Reason)
		}
		return fail(CodeDelegateFailed, "agent %q failed: %s", to, reason)
	}
	out.Success, out.Output = true, res.Output
	return out
}
