package workflow

import (
	"container/heap"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
)

// Outcome statuses an attempt reports.
const (
	OutcomeSucceeded = "succeeded"
	OutcomeFailed    = "failed"
	OutcomeCancelled = "cancelled"
	// OutcomeLost is an attempt that vanished with its coordinator (a
	// crash): it counts as neither a pass nor a failure, and the node is
	// ready to run again. Only a coordinator recovering its ledger reports it.
	OutcomeLost = "lost"
)

// Outcome is how an attempt ended.
type Outcome struct {
	Status string          `json:"status"`           // succeeded, failed or cancelled
	Reason string          `json:"reason,omitempty"` // a reason code: exit_nonzero, timeout, output_limit, ...
	Output json.RawMessage `json:"output,omitempty"` // the step's output, kept for its dependents
	// Repeat asks for another iteration of the node's loop; ignored
	// outside loops.
	Repeat bool `json:"repeat,omitempty"`
}

// ErrUnknownExecution is returned for an outcome of an attempt the engine
// did not start or already closed.
var ErrUnknownExecution = errors.New("unknown node execution")

// Report records the outcome of one attempt and returns what follows from
// it: cancels of the other attempts of a node that has just passed
// (endgame: the first passing result is accepted), skips of what depends on
// a node that failed for good, or, under fail_fast and rollback, cancels of
// everything running and skips of everything not started.
func (e *Engine) Report(execID string, o Outcome) ([]Decision, error) {
	ref, ok := e.execs[execID]
	if !ok {
		return nil, fmt.Errorf("%w %q", ErrUnknownExecution, execID)
	}
	switch o.Status {
	case OutcomeSucceeded, OutcomeFailed, OutcomeCancelled, OutcomeLost:
	default:
		return nil, fmt.Errorf("outcome of %s: status %q: want succeeded, failed, cancelled or lost", execID, o.Status)
	}
	if o.Output != nil && !json.Valid(o.Output) {
		return nil, fmt.Errorf("outcome of %s: the output is not valid JSON", execID)
	}
	i := ref.node
	rt := &e.nodes[i]
	var att Attempt
	for k, a := range rt.live {
		if a.NodeExecutionID == execID {
			att = a
			rt.live = append(rt.live[:k:k], rt.live[k+1:]...)
			break
		}
	}
	delete(e.execs, execID)
	e.live--
	for _, k := range e.scarce[i] {
		e.held[k]--
	}
	if rt.status.final() {
		return nil, nil // another attempt already decided the node (endgame)
	}
	if e.halted != "" {
		// A success while halting still counts, so that rollback
		// compensates it.
		if o.Status == OutcomeSucceeded {
			e.finishNode(i, StatusSucceeded, "succeeded while the run halted", o.Output)
			e.done = append(e.done, i)
		} else if len(rt.live) == 0 {
			e.finishNode(i, StatusCancelled, "halted: "+e.halted, nil)
		}
		return nil, nil
	}
	cl := e.classes[e.classOf[i]]
	switch o.Status {
	case OutcomeSucceeded:
		cl.succeeded++
		return e.succeed(i, att, o), nil
	default:
		reason := o.Reason
		if reason == "" {
			reason = o.Status
		}
		if !att.Cancelling && o.Status != OutcomeLost {
			cl.failed++
			rt.failures++
		}
		rt.reason = reason
		if len(rt.live) > 0 {
			return nil, nil // another attempt of the node is still running
		}
		if rt.failures < e.p.MaxAttempts || att.Cancelling || o.Status == OutcomeLost {
			rt.retry = rt.failures > 0 || o.Status == OutcomeLost
			e.makeReady(i)
			return nil, nil
		}
		return e.fail(i, fmt.Sprintf("%d failed attempt(s), max_attempts %d: %s", rt.failures, e.p.MaxAttempts, reason)), nil
	}
}

// succeed closes node i after a passing attempt.
func (e *Engine) succeed(i int, att Attempt, o Outcome) []Decision {
	rt := &e.nodes[i]
	var out []Decision
	for k := range rt.live {
		a := &rt.live[k]
		if a.Cancelling {
			continue
		}
		a.Cancelling = true
		d := e.decision(ActCancel, i, fmt.Sprintf("first passing result accepted: attempt %d (%s)", att.Attempt, att.NodeExecutionID))
		d.WaveID, d.NodeExecutionID, d.Attempt, d.Running = a.WaveID, a.NodeExecutionID, a.Attempt, e.live
		out = append(out, d)
	}
	rt.output = o.Output
	c := e.g.comps[e.g.comp[i]]
	if c.loop < 0 {
		e.finishNode(i, StatusSucceeded, "", o.Output)
		e.done = append(e.done, i)
		e.release(i)
		return out
	}
	// A loop's node: done for this iteration.
	rt.status, rt.repeat = StatusIterated, o.Repeat
	l := e.g.loops[c.loop]
	for _, r := range e.g.rdeps[i] {
		if e.g.comp[r] == e.g.comp[i] && l.pos[r] > l.pos[i] {
			if e.unmet[r]--; e.unmet[r] == 0 && e.nodes[r].status == StatusPending {
				e.readyAfterSuccess(r)
			}
		}
	}
	repeat := false
	for _, m := range l.members {
		if e.nodes[m].status != StatusIterated {
			return out
		}
		repeat = repeat || e.nodes[m].repeat
	}
	it := e.loopIter[c.loop]
	switch {
	case repeat && it < l.max:
		e.loopIter[c.loop]++
		for _, m := range l.members {
			e.nodes[m].status, e.nodes[m].repeat = StatusPending, false
			e.unmet[m] = 0
			for _, d := range e.g.deps[m] {
				if e.g.comp[d] == e.g.comp[m] && l.pos[d] < l.pos[m] {
					e.unmet[m]++
				}
			}
		}
		for _, m := range l.members {
			if e.unmet[m] == 0 {
				e.readyAfterSuccess(m)
			}
		}
	case repeat:
		return append(out, e.failLoop(c.loop, fmt.Sprintf("iteration_limit: loop %q still asked for another iteration after %d", l.id, l.max))...)
	default:
		for _, m := range l.members {
			e.finishNode(m, StatusSucceeded, fmt.Sprintf("loop %q converged after %d iteration(s)", l.id, it), e.nodes[m].output)
			e.done = append(e.done, m)
		}
		for _, m := range l.members {
			e.release(m)
		}
	}
	return out
}

// release lets node i's dependents outside its loop go.
func (e *Engine) release(i int) {
	for _, r := range e.g.rdeps[i] {
		if e.g.comp[r] == e.g.comp[i] {
			continue
		}
		if e.unmet[r]--; e.unmet[r] == 0 && e.nodes[r].status == StatusPending {
			e.readyAfterSuccess(r)
		}
	}
}

func (e *Engine) finishNode(i int, s Status, reason string, output json.RawMessage) {
	rt := &e.nodes[i]
	if !rt.status.final() {
		e.open--
	}
	rt.status, rt.reason = s, reason
	if output != nil {
		rt.output = output
	}
	if rt.inHeap {
		e.removeReady(i)
	}
	e.unhold(i)
}

func (e *Engine) removeReady(i int) {
	h := &e.buckets[e.bucketOf[i]].ready
	for k, x := range h.nodes {
		if x == i {
			heap.Remove(h, k)
			break
		}
	}
	e.nodes[i].inHeap = false
}

// fail closes node i as failed and applies the failure strategy.
func (e *Engine) fail(i int, reason string) []Decision {
	if _, _, inLoop := e.g.LoopOf(i); inLoop {
		return e.failLoop(e.g.comps[e.g.comp[i]].loop, fmt.Sprintf("node %q failed: %s", e.g.nodes[i].ID, reason))
	}
	e.finishNode(i, StatusFailed, reason, nil)
	return e.afterFailure([]int{i}, reason)
}

// failLoop fails every node of a loop: the loop as a whole did not pass.
func (e *Engine) failLoop(li int, reason string) []Decision {
	var out []Decision
	members := e.g.loops[li].members
	for _, m := range members {
		out = append(out, e.cancelLive(m, "loop failed: "+reason)...)
		e.finishNode(m, StatusFailed, reason, nil)
	}
	return append(out, e.afterFailure(members, reason)...)
}

func (e *Engine) cancelLive(i int, reason string) []Decision {
	var out []Decision
	rt := &e.nodes[i]
	for k := range rt.live {
		a := &rt.live[k]
		if a.Cancelling {
			continue
		}
		a.Cancelling = true
		d := e.decision(ActCancel, i, reason)
		d.WaveID, d.NodeExecutionID, d.Attempt, d.Running = a.WaveID, a.NodeExecutionID, a.Attempt, e.live
		out = append(out, d)
	}
	return out
}

// afterFailure applies the strategy once failed (nodes) failed for good.
func (e *Engine) afterFailure(failed []int, reason string) []Decision {
	first := e.g.nodes[failed[0]].ID
	if e.p.Strategy == ContinueOnError {
		// Skip everything downstream, in graph order.
		seen := map[int]bool{}
		queue := append([]int(nil), failed...)
		for len(queue) > 0 {
			v := queue[0]
			queue = queue[1:]
			for _, r := range e.g.rdeps[v] {
				if !seen[r] && !e.nodes[r].status.final() {
					seen[r] = true
					queue = append(queue, r)
				}
			}
		}
		var skip []int
		for r := range seen {
			skip = append(skip, r)
		}
		sort.Ints(skip)
		var out []Decision
		for _, r := range skip {
			out = append(out, e.cancelLive(r, fmt.Sprintf("dependency_failed: %s", first))...)
			e.finishNode(r, StatusSkipped, "dependency_failed: "+first, nil)
			out = append(out, e.decision(ActSkip, r, "dependency_failed: "+first+" ("+reason+")"))
		}
		return out
	}
	return e.halt(fmt.Sprintf("%s: node %q failed (%s)", e.p.Strategy, first, reason))
}

// ErrNotReopenable is returned by Reopen for a node whose result cannot be
// taken back.
var ErrNotReopenable = errors.New("node cannot be reopened")

// Reopen takes back the success of node id: its result did not hold (for
// dome run, its patch proposal conflicted when the wave was integrated). It
// counts as a failed attempt of the node; while failures stay under
// max_attempts the node is ready again (held by the wave barrier until the
// next wave), otherwise it fails for good and the strategy applies. The
// dependents that became ready with it wait again. Only a node outside a
// loop none of whose dependents has started can be reopened. The first
// Decision is the reopen itself (action reopen); the rest follow from it.
func (e *Engine) Reopen(id, reason string) ([]Decision, error) {
	i, ok := e.g.Index(id)
	if !ok {
		return nil, fmt.Errorf("%w: no node %q", ErrNotReopenable, id)
	}
	rt := &e.nodes[i]
	switch {
	case e.halted != "":
		return nil, fmt.Errorf("%w: %q: the run halted (%s)", ErrNotReopenable, id, e.halted)
	case rt.status != StatusSucceeded:
		return nil, fmt.Errorf("%w: %q is %s, not succeeded", ErrNotReopenable, id, rt.status)
	}
	if _, _, inLoop := e.g.LoopOf(i); inLoop {
		return nil, fmt.Errorf("%w: %q is a loop's node", ErrNotReopenable, id)
	}
	for _, r := range e.g.rdeps[i] {
		if n := &e.nodes[r]; n.attempts > 0 || n.status != StatusPending && n.status != StatusReady {
			return nil, fmt.Errorf("%w: %q: its dependent %q has started (%s)", ErrNotReopenable, id, e.g.nodes[r].ID, n.status)
		}
	}
	if reason == "" {
		reason = "reopened"
	}
	for k, x := range e.done {
		if x == i {
			e.done = append(e.done[:k:k], e.done[k+1:]...)
			break
		}
	}
	cl := e.classes[e.classOf[i]]
	cl.succeeded--
	cl.failed++
	rt.failures++
	rt.output = nil
	e.open++
	for _, r := range e.g.rdeps[i] {
		e.unmet[r]++
		if n := &e.nodes[r]; n.status == StatusReady {
			if n.inHeap {
				e.removeReady(r)
			}
			e.unhold(r)
			n.status = StatusPending
		}
	}
	d := e.decision(ActReopen, i, reason)
	d.Running = e.live
	out := []Decision{d}
	if rt.failures < e.p.MaxAttempts {
		rt.status, rt.reason, rt.retry = StatusPending, reason, true
		e.readyAfterSuccess(i)
		return out, nil
	}
	rt.status = StatusPending // not final, so that fail closes it
	return append(out, e.fail(i, fmt.Sprintf("%d failed attempt(s), max_attempts %d: %s", rt.failures, e.p.MaxAttempts, reason))...), nil
}

// Halt stops the run: running attempts are cancelled, nodes not started are
// skipped; under the rollback strategy, compensation follows once nothing
// runs. The coordinator calls it to cancel a run or when a budget is spent.
func (e *Engine) Halt(reason string) []Decision {
	if e.halted != "" {
		return nil
	}
	return e.halt(reason)
}

func (e *Engine) halt(reason string) []Decision {
	e.halted = reason
	var out []Decision
	for i := range e.nodes {
		rt := &e.nodes[i]
		if rt.status.final() {
			continue
		}
		if len(rt.live) > 0 {
			out = append(out, e.cancelLive(i, "halted: "+reason)...)
			continue
		}
		e.finishNode(i, StatusSkipped, "halted: "+reason, nil)
		out = append(out, e.decision(ActSkip, i, "halted: "+reason))
	}
	return out
}

// nextCompensation returns the next compensating step (the last completed
// compensable node first) once no attempt is running, one at a time.
func (e *Engine) nextCompensation() []Decision {
	if e.p.Strategy != Rollback || e.live > 0 {
		return nil
	}
	// Nodes that succeeded after the halt are in e.done too.
	for k := len(e.done) - 1; k >= 0; k-- {
		i := e.done[k]
		rt := &e.nodes[i]
		if rt.comp == "running" {
			return nil
		}
		if e.g.nodes[i].Compensable && rt.status == StatusSucceeded && rt.comp == "" {
			rt.comp = "running"
			return []Decision{e.decision(ActCompensate, i, "rollback: compensate in reverse completion order ("+e.halted+")")}
		}
	}
	return nil
}

// ReportCompensation records the end of node id's compensating step.
func (e *Engine) ReportCompensation(id string, ok bool) error {
	i, found := e.g.Index(id)
	if !found || e.nodes[i].comp != "running" {
		return fmt.Errorf("no compensation of %q is running", id)
	}
	if ok {
		e.nodes[i].comp = "done"
	} else {
		e.nodes[i].comp = "failed"
	}
	return nil
}

// Done reports whether nothing more will happen: every node is final,
// nothing runs and no compensation is left.
func (e *Engine) Done() bool {
	if e.open > 0 || e.live > 0 {
		return false
	}
	if e.halted != "" && e.p.Strategy == Rollback {
		for _, i := range e.done {
			if c := e.nodes[i].comp; e.g.nodes[i].Compensable && e.nodes[i].status == StatusSucceeded && c != "done" && c != "failed" {
				return false
			}
		}
	}
	return true
}

// Output returns the output a succeeded (or iterated) node reported.
func (e *Engine) Output(id string) (json.RawMessage, bool) {
	i, ok := e.g.Index(id)
	if !ok || e.nodes[i].output == nil {
		return nil, false
	}
	return e.nodes[i].output, true
}

// NodeStatus returns the status and the reason of node id.
func (e *Engine) NodeStatus(id string) (Status, string, bool) {
	i, ok := e.g.Index(id)
	if !ok {
		return "", "", false
	}
	return e.nodes[i].status, e.nodes[i].reason, true
}

// Running returns the number of running attempts.
func (e *Engine) Running() int { return e.live }

// Halted returns why the run halted, or "".
func (e *Engine) Halted() string { return e.halted }

// Summary counts the nodes by status and lists the failures: the aggregate
// of errors under continue_on_error.
type Summary struct {
	Nodes       int            `json:"nodes"`
	ByStatus    map[Status]int `json:"by_status"`
	Failures    []NodeFailure  `json:"failures"`
	Halted      string         `json:"halted,omitempty"`
	Compensated []string       `json:"compensated,omitempty"` // in the order they ran
	Done        bool           `json:"done"`
}

// NodeFailure is one failed or skipped node with its reason.
type NodeFailure struct {
	NodeID string `json:"node_id"`
	Status Status `json:"status"`
	Reason string `json:"reason"`
}

// Summary returns the run's counts and failures, in graph order.
func (e *Engine) Summary() Summary {
	s := Summary{Nodes: len(e.nodes), ByStatus: map[Status]int{}, Failures: []NodeFailure{}, Halted: e.halted, Done: e.Done()}
	for i, rt := range e.nodes {
		s.ByStatus[rt.status]++
		if rt.status == StatusFailed || rt.status == StatusSkipped || rt.status == StatusCancelled {
			s.Failures = append(s.Failures, NodeFailure{NodeID: e.g.nodes[i].ID, Status: rt.status, Reason: rt.reason})
		}
	}
	for k := len(e.done) - 1; k >= 0; k-- {
		if i := e.done[k]; e.nodes[i].comp == "done" {
			s.Compensated = append(s.Compensated, e.g.nodes[i].ID)
		}
	}
	return s
}
