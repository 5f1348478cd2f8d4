package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/dome-registry/dome/pkg/workflow"
)

// run is one execution of an agent's workflow: the engine decides, the run
// carries the decisions out, records them and feeds outcomes back. Only the
// goroutine in execute touches the engine and the journal; steps run in
// their own goroutines and send their results back.
type run struct {
	r        *Runner
	p        *Profile
	wf       *Workflow
	g        *workflow.Graph
	e        *workflow.Engine
	j        Journal
	runID    string
	task     string
	seed     string
	chain    Chain
	cpIndex  int // stepIndex of the last checkpoint, -1 before the first
	restored map[string]json.RawMessage
	results  chan stepResult
	cancels  map[string]context.CancelFunc
	inflight int
	wave     int
	usage    Usage
	warnings []string
}

// stepResult is what a step's goroutine sends back.
type stepResult struct {
	execID   string
	index    int
	attempt  int
	outcome  workflow.Outcome
	message  string
	usage    Usage
	inj      *Injection
	tool     *ToolRecord
	deleg    *DelegationRecord
	warnings []string
}

func (r *Runner) newRun(p *Profile, wf *Workflow, g *workflow.Graph, runID, task, seed string, chain Chain, j Journal) *run {
	return &run{r: r, p: p, wf: wf, g: g, j: j, runID: runID, task: task, seed: seed, chain: chain, cpIndex: -1,
		restored: map[string]json.RawMessage{}, results: make(chan stepResult, len(wf.Steps)+1), cancels: map[string]context.CancelFunc{}}
}

func (x *run) record(topic string, payload any) error {
	if x.j == nil {
		return nil
	}
	if err := x.j.Record(topic, payload); err != nil {
		return fmt.Errorf("record %s of run %s: %w", topic, x.runID, err)
	}
	return nil
}

func (x *run) context() RunContext {
	return RunContext{RunID: x.runID, Agent: x.p.ID, Task: x.task, RegistryCommit: x.r.env.Catalog.Commit, ProfileDigest: x.p.Digest(), Chain: x.chain.IDs()}
}

func (x *run) memory() Memory {
	return Memory{Usage: x.usage, Warnings: orEmpty(x.warnings)}
}

// execute drives the engine to the end.
func (x *run) execute(ctx context.Context) (*Result, error) {
	err := x.loop(ctx)
	if err != nil {
		x.abort()
		if ctx.Err() != nil {
			return nil, fmt.Errorf("%w: %v", ErrInterrupted, ctx.Err())
		}
		return nil, err
	}
	sum := x.e.Summary()
	res := &Result{RunID: x.runID, Agent: x.p.ID, Status: StatusSucceeded, Summary: sum, Usage: x.usage, Warnings: orEmpty(x.warnings), Steps: []string{}}
	for i := 0; i < x.g.Len(); i++ {
		id := x.g.Node(i).ID
		if st, _, _ := x.e.NodeStatus(id); st == workflow.StatusSucceeded {
			res.Steps = append(res.Steps, id)
		}
	}
	if len(sum.Failures) > 0 || sum.Halted != "" {
		res.Status = StatusFailed
	} else {
		res.Output, _ = x.e.Output(x.g.Node(x.g.Len() - 1).ID)
	}
	if err := x.record(TopicRunFinished, RunFinished{Status: res.Status, Output: res.Output, Summary: sum, Usage: x.usage}); err != nil {
		return nil, err
	}
	return res, nil
}

// loop takes decisions until the engine is done. An error (a journal that
// cannot write, a cancelled context) leaves attempts running: abort stops
// them.
func (x *run) loop(ctx context.Context) error {
	for {
		x.wave++
		ds := x.e.Next(fmt.Sprintf("w%d", x.wave))
		if err := x.take(ctx, ds); err != nil {
			return err
		}
		if x.e.Done() {
			return nil
		}
		if x.inflight == 0 {
			if len(ds) == 0 {
				return fmt.Errorf("workflow of %s stalled: nothing runs and nothing may start", x.p.ID)
			}
			continue
		}
		var res stepResult
		select {
		case res = <-x.results:
		case <-ctx.Done():
			return ctx.Err()
		}
		x.inflight--
		if ctx.Err() != nil {
			// Interrupted as this attempt ended: keep what it produced
			// (a success stays restorable), tell the engine nothing.
			x.recordInterrupted(res)
			return ctx.Err()
		}
		if err := x.finish(ctx, res); err != nil {
			return err
		}
	}
}

// recordInterrupted records an attempt that ended while the run was being
// interrupted: a success as it is, anything else as cancelled.
func (x *run) recordInterrupted(res stepResult) {
	if res.outcome.Status != workflow.OutcomeSucceeded {
		res.outcome = workflow.Outcome{Status: workflow.OutcomeCancelled, Reason: "interrupted"}
	}
	x.recordFinished(res) // best effort: the journal may be what failed
}

// abort cancels what runs and waits for it; the outcomes are recorded as
// cancelled so the log shows what was in flight.
func (x *run) abort() {
	for _, c := range x.cancels {
		c()
	}
	for ; x.inflight > 0; x.inflight-- {
		x.recordInterrupted(<-x.results)
	}
}

// take carries out decisions.
func (x *run) take(ctx context.Context, ds []workflow.Decision) error {
	for _, d := range ds {
		switch d.Action {
		case workflow.ActDispatch, workflow.ActRetry, workflow.ActDuplicate:
			if err := x.dispatch(ctx, d); err != nil {
				return err
			}
		case workflow.ActCancel:
			if c, ok := x.cancels[d.NodeExecutionID]; ok {
				c()
			}
		case workflow.ActSkip:
			i, _ := x.g.Index(d.NodeID)
			if err := x.record(TopicStepSkipped, StepSkipped{StepID: d.NodeID, StepIndex: i, Reason: d.Reason}); err != nil {
				return err
			}
		case workflow.ActCompensate:
			if err := x.compensate(ctx, d.NodeID); err != nil {
				return err
			}
		}
	}
	return nil
}

// dispatch starts an attempt, or reports a restored output at once.
func (x *run) dispatch(ctx context.Context, d workflow.Decision) error {
	i, _ := x.g.Index(d.NodeID)
	if out, ok := x.restored[d.NodeID]; ok {
		delete(x.restored, d.NodeID)
		more, err := x.e.Report(d.NodeExecutionID, workflow.Outcome{Status: workflow.OutcomeSucceeded, Output: out})
		if err != nil {
			return err
		}
		if err := x.take(ctx, more); err != nil {
			return err
		}
		return x.checkpoint()
	}
	step := x.wf.Steps[i]
	if err := x.record(TopicStepStarted, StepStarted{StepID: step.ID, StepIndex: i, Attempt: d.Attempt, ExecutionID: d.NodeExecutionID, Kind: step.Kind()}); err != nil {
		return err
	}
	fn := x.prepare(step.Action(), step.ID, step.TimeoutSeconds)
	actx, cancel := context.WithCancel(ctx)
	x.cancels[d.NodeExecutionID] = cancel
	x.inflight++
	go func() {
		res := fn(actx)
		res.execID, res.index, res.attempt = d.NodeExecutionID, i, d.Attempt
		x.results <- res
	}()
	return nil
}

// finish records an attempt's end and reports it to the engine. The step's
// output is durable before the engine hears of it, and a checkpoint is
// durable before the next step starts.
func (x *run) finish(ctx context.Context, res stepResult) error {
	if c, ok := x.cancels[res.execID]; ok {
		c()
		delete(x.cancels, res.execID)
	}
	x.usage.add(res.usage)
	x.warnings = append(x.warnings, res.warnings...)
	if err := x.recordFinished(res); err != nil {
		return err
	}
	ds, err := x.e.Report(res.execID, res.outcome)
	if err != nil {
		return err
	}
	if err := x.take(ctx, ds); err != nil {
		return err
	}
	return x.checkpoint()
}

func (x *run) recordFinished(res stepResult) error {
	step := x.wf.Steps[res.index]
	return x.record(TopicStepFinished, StepFinished{StepID: step.ID, StepIndex: res.index, Attempt: res.attempt, ExecutionID: res.execID,
		Status: res.outcome.Status, Reason: res.outcome.Reason, Message: res.message, Output: res.outcome.Output, Usage: usagePtr(res.usage),
		Abilities: res.inj, Tool: res.tool, Delegation: res.deleg})
}

func usagePtr(u Usage) *Usage {
	if u == (Usage{}) {
		return nil
	}
	return &u
}

// checkpoint saves a checkpoint when the completed prefix of the steps (in
// array order) grew: validated by the engine, then recorded durably.
func (x *run) checkpoint() error {
	if x.j == nil {
		return nil
	}
	k := x.cpIndex
	for k+1 < x.g.Len() {
		if st, _, _ := x.e.NodeStatus(x.g.Node(k + 1).ID); st != workflow.StatusSucceeded {
			break
		}
		k++
	}
	if k == x.cpIndex {
		return nil
	}
	ctxJSON, err := json.Marshal(x.context())
	if err != nil {
		return err
	}
	memJSON, err := json.Marshal(x.memory())
	if err != nil {
		return err
	}
	cp, err := x.e.Checkpoint(ctxJSON, memJSON)
	if err != nil {
		return fmt.Errorf("checkpoint of run %s: %w", x.runID, err)
	}
	if err := x.record(TopicCheckpoint, cp); err != nil {
		return err
	}
	x.cpIndex = cp.StepIndex
	return nil
}

// compensate runs a completed step's compensating action (rollback).
func (x *run) compensate(ctx context.Context, id string) error {
	i, _ := x.g.Index(id)
	step := x.wf.Steps[i]
	res := x.prepare(*step.Compensate, step.ID, step.TimeoutSeconds)(ctx)
	x.usage.add(res.usage)
	ok := res.outcome.Status == workflow.OutcomeSucceeded
	status := StatusSucceeded
	if !ok {
		status = StatusFailed
	}
	if err := x.record(TopicStepCompensated, StepCompensated{StepID: id, Status: status, Reason: res.outcome.Reason, Output: res.outcome.Output, Message: res.message}); err != nil {
		return err
	}
	if err := x.e.ReportCompensation(id, ok); err != nil {
		return errors.Join(fmt.Errorf("compensate %s", id), err)
	}
	return nil
}
