package orchestrate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/dome-registry/dome/pkg/canonical"
	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/dome-registry/dome/pkg/ledger"
	"github.com/dome-registry/dome/pkg/readlimit"
	"github.com/dome-registry/dome/pkg/runspec"
	"github.com/dome-registry/dome/pkg/stack"
	"github.com/dome-registry/dome/pkg/workflow"
)

// ReplayError is a ledger whose events the engine does not re-derive.
type ReplayError struct {
	Sequence int64
	Topic    string
	Problem  string
	Want     []byte // the decision the engine derives (canonical JSON)
	Got      []byte // the decision the ledger holds
}

func (e *ReplayError) Error() string {
	s := fmt.Sprintf("event %d (%s): %s", e.Sequence, e.Topic, e.Problem)
	if e.Want != nil || e.Got != nil {
		s += fmt.Sprintf("\n  derived  %s\n  recorded %s", e.Want, e.Got)
	}
	return s
}

// replayer drives a fresh engine with a run's events, checking that every
// recorded decision is the one the engine derives at that point, and folds
// the run's State.
type replayer struct {
	q       *runspec.Queue
	rp      *runspec.Policy
	g       *workflow.Graph
	eng     *workflow.Engine
	v       *view
	pending []workflow.Decision // derived, not yet met in the ledger
	checked int                 // decisions checked
}

func newReplayer(q *runspec.Queue, rp *runspec.Policy, runID string) *replayer {
	return &replayer{q: q, rp: rp, v: newView(q, runID)}
}

// Schedule builds the engine's graph and policy of a run: the queue under
// the run policy, lowered by maxConcurrency, with the wave barrier.
func Schedule(q *runspec.Queue, rp *runspec.Policy, maxConcurrency int) (*workflow.Graph, workflow.Policy, error) {
	g, wp, err := runspec.Schedule(runspec.QueueFile, q, rp, runspec.Overrides{MaxConcurrency: maxConcurrency})
	if err != nil {
		return nil, wp, err
	}
	wp.WaveBarrier = true
	return g, wp, nil
}

func (r *replayer) start(p StartedPayload, runID string) error {
	g, wp, err := Schedule(r.q, r.rp, p.MaxConcurrency)
	if err != nil {
		return err
	}
	eng, err := workflow.NewEngine(g, wp, workflow.Options{RunID: runID, Seed: p.Seed})
	if err != nil {
		return err
	}
	r.g, r.eng = g, eng
	return nil
}

func canonicalDecision(d workflow.Decision) []byte {
	b, _ := canonical.Marshal(d)
	return b
}

// expect checks that the ledger's decision d is the next derived one.
func (r *replayer) expect(e ledger.Event, d workflow.Decision) error {
	if len(r.pending) == 0 {
		return &ReplayError{Sequence: e.Sequence, Topic: e.Topic, Problem: "a decision the engine did not make here", Got: canonicalDecision(d)}
	}
	want := canonicalDecision(r.pending[0])
	if got := canonicalDecision(d); !bytes.Equal(want, got) {
		return &ReplayError{Sequence: e.Sequence, Topic: e.Topic, Problem: "the recorded decision is not the one the engine derives", Want: want, Got: got}
	}
	r.pending = r.pending[1:]
	r.checked++
	return nil
}

// idle checks that no derived decision is waiting before an engine input.
func (r *replayer) idle(e ledger.Event) error {
	if len(r.pending) > 0 {
		return &ReplayError{Sequence: e.Sequence, Topic: e.Topic, Problem: fmt.Sprintf("an engine input while %d derived decision(s) were not recorded", len(r.pending)),
			Want: canonicalDecision(r.pending[0])}
	}
	return nil
}

// apply folds one event.
func (r *replayer) apply(e ledger.Event) error {
	if err := r.v.fold(e); err != nil {
		return &ReplayError{Sequence: e.Sequence, Topic: e.Topic, Problem: err.Error()}
	}
	fail := func(err error) error {
		return &ReplayError{Sequence: e.Sequence, Topic: e.Topic, Problem: err.Error()}
	}
	if e.Topic == TopicStarted {
		if r.eng != nil {
			return fail(errors.New("the run is started twice"))
		}
		if err := r.start(*r.v.st.Started, e.RunID); err != nil {
			return fail(err)
		}
		return nil
	}
	if r.eng == nil {
		switch e.Topic {
		case stack.TopicTaskDispatched, stack.TopicTaskCompleted, TopicDecision, TopicHalt, TopicIntegrated:
			return fail(fmt.Errorf("a scheduling event before %s", TopicStarted))
		}
		return nil
	}
	switch e.Topic {
	case stack.TopicTaskDispatched:
		var p stack.TaskPayload
		var d DispatchData
		if err := decodeData(e.Payload, &p); err != nil {
			return fail(err)
		}
		if err := decodeData(p.Data, &d); err != nil {
			return fail(err)
		}
		if len(r.pending) == 0 {
			// The first start of a scheduling call.
			r.pending = r.eng.Next(d.Decision.WaveID)
		}
		return r.expect(e, d.Decision)
	case TopicDecision:
		var p DecisionPayload
		if err := decodeData(e.Payload, &p); err != nil {
			return fail(err)
		}
		return r.expect(e, p.Decision)
	case stack.TopicTaskCompleted:
		if err := r.idle(e); err != nil {
			return err
		}
		var p stack.TaskPayload
		var d CompletedData
		if err := decodeData(e.Payload, &p); err != nil {
			return fail(err)
		}
		if err := decodeData(p.Data, &d); err != nil {
			return fail(err)
		}
		ds, err := r.eng.Report(p.NodeExecutionID, d.Outcome)
		if err != nil {
			return fail(err)
		}
		r.pending = ds
	case TopicHalt:
		if err := r.idle(e); err != nil {
			return err
		}
		var p HaltPayload
		if err := decodeData(e.Payload, &p); err != nil {
			return fail(err)
		}
		r.pending = r.eng.Halt(p.Reason)
	case TopicIntegrated:
		if err := r.idle(e); err != nil {
			return err
		}
		var p IntegratedPayload
		if err := decodeData(e.Payload, &p); err != nil {
			return fail(err)
		}
		for _, x := range p.Reopened {
			ds, err := r.eng.Reopen(x.NodeID, x.Reason)
			if err != nil {
				return fail(err)
			}
			r.pending = append(r.pending, ds...)
		}
	}
	return nil
}

// ReplayResult is what Replay found.
type ReplayResult struct {
	RunID     string `json:"run_id"`
	Events    int    `json:"events"`
	Decisions int    `json:"decisions"` // recorded decisions the engine re-derived
	// Unrecorded are decisions the engine derives after the last event that
	// the ledger does not hold (a coordinator stopped while recording
	// them): the next dome run start records them.
	Unrecorded int    `json:"unrecorded"`
	State      State  `json:"-"`
	Digest     string `json:"state_digest"`
	// StoredSequence is the event the stored run.state.json was written
	// after (0: there is none); Matches says whether its bytes are the
	// derived state's.
	StoredSequence int64  `json:"stored_sequence"`
	Matches        bool   `json:"matches"`
	FirstDiff      string `json:"first_difference,omitempty"`
	Stack          stack.ReplayResult
}

// Replay re-derives a run from its folder: every SchedulingDecision from
// the queue, the run policy, the seed and the ledger, byte for byte, and
// the State, compared with run.state.json. A decision that does not match
// is a *ReplayError.
func Replay(l stack.Layout) (*ReplayResult, error) {
	q, rp, err := LoadRunFiles(l)
	if err != nil {
		return nil, err
	}
	evs, err := ledger.Read(l.Root, l.RunID)
	if err != nil {
		return nil, err
	}
	r := newReplayer(q, rp, l.RunID)
	for _, e := range evs {
		if err := r.apply(e); err != nil {
			return nil, err
		}
	}
	st := r.v.finish(r.eng)
	b, err := st.Marshal()
	if err != nil {
		return nil, err
	}
	res := &ReplayResult{RunID: l.RunID, Events: len(evs), Decisions: r.checked, Unrecorded: len(r.pending), State: st, Digest: canonical.Digest(b)}
	if have, err := readlimit.ReadFile(filepath.Join(l.Root, StateFile), 256<<20); err == nil {
		var head struct {
			Sequence int64 `json:"sequence"`
		}
		json.Unmarshal(have, &head)
		res.StoredSequence = head.Sequence
		res.Matches = bytes.Equal(have, b)
		if !res.Matches {
			ptr, detail := stack.FirstDifference(have, b)
			res.FirstDiff = ptr + ": " + detail
		}
	}
	sr, err := stack.ReplayEvents(l, evs)
	if err != nil {
		return res, err
	}
	res.Stack = sr
	return res, nil
}

// LoadRunFiles reads a run's pinned queue and run policy from its folder.
func LoadRunFiles(l stack.Layout) (*runspec.Queue, *runspec.Policy, error) {
	qp := filepath.Join(l.Root, runspec.QueueFile)
	qb, err := readlimit.ReadFile(qp, runspec.MaxQueueBytes)
	if err != nil {
		return nil, nil, &errkind.InputError{Source: qp, Problem: "the run has no work queue: " + err.Error(), Hint: "start it with dome run start QUEUE"}
	}
	q, _, err := runspec.ParseQueue(qp, qb)
	if err != nil {
		return nil, nil, err
	}
	pp := filepath.Join(l.Root, RunPolicyFile)
	pb, err := readlimit.ReadFile(pp, readlimit.Profile)
	if err != nil {
		return nil, nil, &errkind.InputError{Source: pp, Problem: "the run has no run policy: " + err.Error()}
	}
	rp, err := runspec.ParsePolicy(pp, pb)
	if err != nil {
		return nil, nil, err
	}
	return q, rp, nil
}
