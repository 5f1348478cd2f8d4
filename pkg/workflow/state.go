package workflow

import (
	"encoding/json"
	"fmt"
	"sort"
)

// StateSchema is the schema_version of a State.
const StateSchema = "dome.workflow.state/v1"

// State is everything the engine knows, for checkpoints and resume: Resume
// on it continues exactly where State was taken (the same later Decisions).
type State struct {
	SchemaVersion string       `json:"schema_version"`
	RunID         string       `json:"run_id"`
	Seed          string       `json:"determinism_seed"`
	Sequence      int          `json:"sequence"` // of the last decision
	Halted        string       `json:"halted,omitempty"`
	Wave          string       `json:"wave,omitempty"` // of the last Next call
	Nodes         []NodeState  `json:"nodes"`          // in graph order
	Classes       []ClassState `json:"classes"`        // by class name
	Loops         []LoopState  `json:"loops"`          // in declaration order
	Completed     []string     `json:"completed"`      // succeeded nodes, in completion order
}

// NodeState is one node in a State.
type NodeState struct {
	NodeID       string          `json:"node_id"`
	Status       Status          `json:"status"`
	Reason       string          `json:"reason,omitempty"`
	Attempts     int             `json:"attempts"`
	Failures     int             `json:"failures"`
	Live         []Attempt       `json:"live,omitempty"`
	Output       json.RawMessage `json:"output,omitempty"`
	Retry        bool            `json:"retry,omitempty"`
	Repeat       bool            `json:"repeat,omitempty"`
	Held         bool            `json:"held,omitempty"`         // ready, held by the wave barrier until the next wave
	Compensation string          `json:"compensation,omitempty"` // running, done, failed
}

// ClassState is the confidence record of one class.
type ClassState struct {
	Class     string `json:"class"`
	Succeeded int    `json:"succeeded"`
	Failed    int    `json:"failed"`
}

// LoopState is the current iteration of one loop.
type LoopState struct {
	LoopID    string `json:"loop_id"`
	Iteration int    `json:"iteration"`
}

// State returns a copy of the engine's state.
func (e *Engine) State() State {
	s := State{SchemaVersion: StateSchema, RunID: e.opt.RunID, Seed: e.opt.Seed, Sequence: e.seq, Halted: e.halted, Wave: e.wave,
		Nodes: make([]NodeState, len(e.nodes)), Classes: make([]ClassState, len(e.classes)),
		Loops: make([]LoopState, len(e.g.loops)), Completed: make([]string, len(e.done))}
	for i, rt := range e.nodes {
		s.Nodes[i] = NodeState{NodeID: e.g.nodes[i].ID, Status: rt.status, Reason: rt.reason, Attempts: rt.attempts,
			Failures: rt.failures, Live: append([]Attempt(nil), rt.live...), Output: clone(rt.output), Retry: rt.retry,
			Repeat: rt.repeat, Held: rt.held, Compensation: rt.comp}
	}
	for k, c := range e.classes {
		s.Classes[k] = ClassState{Class: c.name, Succeeded: c.succeeded, Failed: c.failed}
	}
	for k, l := range e.g.loops {
		s.Loops[k] = LoopState{LoopID: l.id, Iteration: e.loopIter[k]}
	}
	for k, i := range e.done {
		s.Completed[k] = e.g.nodes[i].ID
	}
	return s
}

func clone(b json.RawMessage) json.RawMessage {
	if b == nil {
		return nil
	}
	return append(json.RawMessage(nil), b...)
}

// StateError names the field of a State (or Checkpoint) that cannot be
// resumed from.
type StateError struct {
	Field, Problem string
}

func (e *StateError) Error() string { return e.Field + ": " + e.Problem }

func stateErr(field, format string, a ...any) error {
	return &StateError{Field: field, Problem: fmt.Sprintf(format, a...)}
}

// Resume rebuilds an engine from a State taken from an engine over the same
// graph, policy and options. Every field is checked against the graph and
// against the others; a state that does not add up is refused with the
// field named, never resumed from.
func Resume(g *Graph, p Policy, opt Options, s State) (*Engine, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	switch {
	case s.SchemaVersion != StateSchema:
		return nil, stateErr("/schema_version", "%q, want %q", s.SchemaVersion, StateSchema)
	case s.RunID != opt.RunID:
		return nil, stateErr("/run_id", "%q, but the run is %q", s.RunID, opt.RunID)
	case s.Seed != opt.Seed:
		return nil, stateErr("/determinism_seed", "%q, but the run's seed is %q", s.Seed, opt.Seed)
	case s.Sequence < 0:
		return nil, stateErr("/sequence", "%d is negative", s.Sequence)
	case len(s.Nodes) != g.Len():
		return nil, stateErr("/nodes", "%d nodes, the graph has %d", len(s.Nodes), g.Len())
	case len(s.Loops) != len(g.loops):
		return nil, stateErr("/loops", "%d loops, the graph has %d", len(s.Loops), len(g.loops))
	}
	e := newEngine(g, p, opt)
	e.seq, e.halted, e.wave = s.Sequence, s.Halted, s.Wave
	for k, l := range s.Loops {
		gl := g.loops[k]
		if l.LoopID != gl.id || l.Iteration < 1 || l.Iteration > gl.max {
			return nil, stateErr(fmt.Sprintf("/loops/%d", k), "loop %q iteration %d does not match loop %q (1..%d)", l.LoopID, l.Iteration, gl.id, gl.max)
		}
		e.loopIter[k] = l.Iteration
	}
	classIdx := map[string]int{}
	for k, c := range e.classes {
		classIdx[c.name] = k
	}
	if len(s.Classes) != len(e.classes) {
		return nil, stateErr("/classes", "%d classes, the graph has %d", len(s.Classes), len(e.classes))
	}
	for k, c := range s.Classes {
		ci, ok := classIdx[c.Class]
		if !ok || ci != k || c.Succeeded < 0 || c.Failed < 0 {
			return nil, stateErr(fmt.Sprintf("/classes/%d", k), "class %q is not the graph's class %d, or has negative counts", c.Class, k)
		}
		e.classes[k].succeeded, e.classes[k].failed = c.Succeeded, c.Failed
	}
	e.open = 0
	for i, ns := range s.Nodes {
		f := fmt.Sprintf("/nodes/%d", i)
		if ns.NodeID != g.nodes[i].ID {
			return nil, stateErr(f+"/node_id", "%q, the graph's node %d is %q", ns.NodeID, i, g.nodes[i].ID)
		}
		if err := e.restoreNode(i, ns, f); err != nil {
			return nil, err
		}
	}
	seen := map[int]bool{}
	for k, id := range s.Completed {
		i, ok := g.Index(id)
		if !ok || seen[i] || e.nodes[i].status != StatusSucceeded {
			return nil, stateErr(fmt.Sprintf("/completed/%d", k), "%q is not a succeeded node, or is listed twice", id)
		}
		seen[i] = true
		e.done = append(e.done, i)
	}
	for i, rt := range e.nodes {
		if rt.status == StatusSucceeded && !seen[i] {
			return nil, stateErr("/completed", "succeeded node %q is missing", g.nodes[i].ID)
		}
	}
	if err := e.restoreReadiness(); err != nil {
		return nil, err
	}
	return e, nil
}

func (e *Engine) restoreNode(i int, ns NodeState, f string) error {
	switch ns.Status {
	case StatusPending, StatusReady, StatusRunning, StatusIterated, StatusSucceeded, StatusFailed, StatusSkipped, StatusCancelled:
	default:
		return stateErr(f+"/status", "%q is not a node status", ns.Status)
	}
	if ns.Attempts < 0 || ns.Failures < 0 || ns.Failures > ns.Attempts || len(ns.Live) > ns.Attempts {
		return stateErr(f+"/attempts", "%d attempts, %d failures and %d running do not add up", ns.Attempts, ns.Failures, len(ns.Live))
	}
	// A running node has attempts running; a final node may still have
	// attempts whose cancel was decided (endgame losers, a halt).
	cancelling := true
	for _, a := range ns.Live {
		cancelling = cancelling && a.Cancelling
	}
	if ns.Status == StatusRunning && len(ns.Live) == 0 || ns.Status != StatusRunning && len(ns.Live) > 0 && !(ns.Status.final() && cancelling) {
		return stateErr(f+"/live", "a %s node with %d running attempts", ns.Status, len(ns.Live))
	}
	if ns.Output != nil && !json.Valid(ns.Output) {
		return stateErr(f+"/output", "not valid JSON")
	}
	switch ns.Compensation {
	case "", "running", "done", "failed":
	default:
		return stateErr(f+"/compensation", "%q: want running, done or failed", ns.Compensation)
	}
	if ns.Compensation != "" && (ns.Status != StatusSucceeded || !e.g.nodes[i].Compensable) {
		return stateErr(f+"/compensation", "only a succeeded compensable node is compensated")
	}
	rt := &e.nodes[i]
	rt.status, rt.reason, rt.attempts, rt.failures = ns.Status, ns.Reason, ns.Attempts, ns.Failures
	if ns.Held && (ns.Status != StatusReady || !e.p.WaveBarrier) {
		return stateErr(f+"/held", "only a ready node is held, and only under the wave barrier")
	}
	rt.output, rt.retry, rt.repeat, rt.comp = clone(ns.Output), ns.Retry, ns.Repeat, ns.Compensation
	rt.held = ns.Held
	for k, a := range ns.Live {
		want := ExecutionID(e.opt.Seed, e.opt.RunID, e.g.nodes[i].ID, a.Attempt)
		if a.Attempt < 1 || a.Attempt > ns.Attempts || a.NodeExecutionID != want {
			return stateErr(fmt.Sprintf("%s/live/%d", f, k), "attempt %d (%s) is not an attempt of this node", a.Attempt, a.NodeExecutionID)
		}
		if _, dup := e.execs[a.NodeExecutionID]; dup {
			return stateErr(fmt.Sprintf("%s/live/%d", f, k), "attempt %d is listed twice", a.Attempt)
		}
		e.execs[a.NodeExecutionID] = execRef{node: i, idx: a.Attempt}
		rt.live = append(rt.live, a)
		e.live++
		for _, key := range e.scarce[i] {
			e.held[key]++
		}
	}
	if !ns.Status.final() {
		e.open++
	}
	return nil
}

// restoreReadiness recomputes what each node waits for from the statuses
// and checks that the statuses agree with it; ready nodes go back into the
// ready queues (whose order depends only on the nodes' keys).
func (e *Engine) restoreReadiness() error {
	g := e.g
	for i := range e.nodes {
		c := g.comps[g.comp[i]]
		u := 0
		for _, d := range g.deps[i] {
			if c.loop >= 0 && g.comp[d] == g.comp[i] {
				l := g.loops[c.loop]
				if l.pos[d] > l.pos[i] {
					continue
				}
				if st := e.nodes[d].status; st != StatusIterated && st != StatusSucceeded {
					u++
				}
				continue
			}
			if e.nodes[d].status != StatusSucceeded {
				u++
			}
		}
		e.unmet[i] = u
		st := e.nodes[i].status
		f := fmt.Sprintf("/nodes/%d/status", i)
		switch {
		case e.halted == "" && st == StatusPending && u == 0:
			return stateErr(f, "node %q is pending although every dependency succeeded", g.nodes[i].ID)
		case (st == StatusReady || st == StatusRunning || st == StatusIterated || st == StatusSucceeded) && u > 0:
			return stateErr(f, "node %q is %s although a dependency has not succeeded", g.nodes[i].ID, st)
		case st == StatusReady && e.halted != "":
			return stateErr(f, "node %q is ready although the run halted", g.nodes[i].ID)
		case st == StatusReady && e.nodes[i].held:
			e.deferred = append(e.deferred, i)
		case st == StatusReady:
			e.makeReady(i)
		}
	}
	return nil
}

// Checkpoint is the resume point of a workflow whose steps complete in array
// order (an agent workflow): the index and id of the last completed step,
// the outputs of every step up to it, and the caller's context and memory,
// so that a resume needs nothing else.
type Checkpoint struct {
	StepIndex       int                        `json:"stepIndex"`
	CompletedStepID string                     `json:"completedStepId"`
	StepOutputs     map[string]json.RawMessage `json:"stepOutputs"`
	Context         json.RawMessage            `json:"context"`
	MemorySnapshot  json.RawMessage            `json:"memorySnapshot"`
}

// Checkpoint returns the checkpoint after the longest prefix of steps that
// succeeded, with context and memory (JSON) as given. It fails when the
// first step has not succeeded yet.
func (e *Engine) Checkpoint(context, memory json.RawMessage) (Checkpoint, error) {
	k := -1
	for i := range e.nodes {
		if e.nodes[i].status != StatusSucceeded {
			break
		}
		k = i
	}
	if k < 0 {
		return Checkpoint{}, fmt.Errorf("no step has completed yet: nothing to checkpoint")
	}
	c := Checkpoint{StepIndex: k, CompletedStepID: e.g.nodes[k].ID, StepOutputs: map[string]json.RawMessage{},
		Context: clone(context), MemorySnapshot: clone(memory)}
	for i := 0; i <= k; i++ {
		out := e.nodes[i].output
		if out == nil {
			out = json.RawMessage("null")
		}
		c.StepOutputs[e.g.nodes[i].ID] = clone(out)
	}
	return c, c.Validate(e.g)
}

// Validate checks that c is complete for g: the step index names a step,
// completedStepId is that step, every step up to it has an output and no
// later step does, each step up to it depends only on steps up to it, and
// context and memorySnapshot are JSON values.
func (c Checkpoint) Validate(g *Graph) error {
	if c.StepIndex < 0 || c.StepIndex >= g.Len() {
		return stateErr("stepIndex", "%d is not a step index (0..%d)", c.StepIndex, g.Len()-1)
	}
	if id := g.nodes[c.StepIndex].ID; c.CompletedStepID != id {
		return stateErr("completedStepId", "%q, but step %d is %q", c.CompletedStepID, c.StepIndex, id)
	}
	if c.StepOutputs == nil {
		return stateErr("stepOutputs", "missing")
	}
	for i := 0; i <= c.StepIndex; i++ {
		id := g.nodes[i].ID
		out, ok := c.StepOutputs[id]
		if !ok {
			return stateErr("stepOutputs", "the output of completed step %q is missing", id)
		}
		if !json.Valid(out) {
			return stateErr("stepOutputs/"+id, "not valid JSON")
		}
		for _, d := range g.deps[i] {
			if d > c.StepIndex {
				return stateErr("stepIndex", "completed step %q depends on %q, which is after the checkpoint", id, g.nodes[d].ID)
			}
		}
	}
	if len(c.StepOutputs) != c.StepIndex+1 {
		var extra []string
		for id := range c.StepOutputs {
			if i, ok := g.Index(id); !ok || i > c.StepIndex {
				extra = append(extra, id)
			}
		}
		sort.Strings(extra)
		return stateErr("stepOutputs", "outputs of steps not completed at the checkpoint: %q", extra)
	}
	if len(c.Context) == 0 || !json.Valid(c.Context) {
		return stateErr("context", "missing or not valid JSON")
	}
	if len(c.MemorySnapshot) == 0 || !json.Valid(c.MemorySnapshot) {
		return stateErr("memorySnapshot", "missing or not valid JSON")
	}
	return nil
}

// ResumeCheckpoint starts an engine at a checkpoint: steps 0..StepIndex are
// succeeded with their outputs restored (never recomputed), so the next
// step to start is StepIndex+1.
func ResumeCheckpoint(g *Graph, p Policy, opt Options, c Checkpoint) (*Engine, error) {
	if err := c.Validate(g); err != nil {
		return nil, err
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	if len(g.loops) > 0 {
		return nil, fmt.Errorf("a checkpoint resumes a workflow without loops")
	}
	e := newEngine(g, p, opt)
	for i := 0; i <= c.StepIndex; i++ {
		e.finishNode(i, StatusSucceeded, "restored from checkpoint", clone(c.StepOutputs[g.nodes[i].ID]))
		e.done = append(e.done, i)
	}
	for i := 0; i <= c.StepIndex; i++ {
		e.release(i)
	}
	for i := range e.nodes {
		if e.nodes[i].status == StatusPending && e.unmet[i] == 0 {
			e.makeReady(i)
		}
	}
	return e, nil
}
