package orchestrate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/dome-registry/dome/pkg/canonical"
	"github.com/dome-registry/dome/pkg/gateway"
	"github.com/dome-registry/dome/pkg/ledger"
	"github.com/dome-registry/dome/pkg/readlimit"
	"github.com/dome-registry/dome/pkg/runspec"
	"github.com/dome-registry/dome/pkg/stack"
	"github.com/dome-registry/dome/pkg/workflow"
)

// StateSchema is the schema_version of run.state.json.
const StateSchema = "dome.run_state/v1"

// Files of a run's folder that package orchestrate writes (beside the
// stack's).
const (
	StateFile     = "run.state.json"
	RunPolicyFile = "run.policy.json"
	CancelFile    = "cancel.request.json"
	TaskResult    = "task.result.json"
	SpawnSpecFile = "spawn.spec.json"
	OutputsDir    = "outputs"
)

// Run statuses.
const (
	StatusRunning = "running" // a coordinator runs it, or died while it did
	StatusStopped = "stopped"
)

// Task statuses.
const (
	TaskDispatched = "dispatched" // started; no outcome yet
	TaskCompleted  = "completed"  // outcome recorded; result not yet durable
	TaskAcked      = "acked"      // task.result.json written and acknowledged
)

// State is what a run's events amount to: run.state.json, re-derived by
// Replay byte for byte. It includes the scheduler's own state.
type State struct {
	SchemaVersion   string              `json:"schema_version"`
	RunID           string              `json:"run_id"`
	Sequence        int64               `json:"sequence"` // the last event folded
	Status          string              `json:"status"`
	Started         *StartedPayload     `json:"started"`
	Sessions        int                 `json:"sessions"`
	WorkDir         string              `json:"work_dir,omitempty"` // the last session's scratch folders
	WaveID          string              `json:"wave_id"`
	BaseRef         string              `json:"base_ref"`
	IntegrationHead string              `json:"integration_head"`
	Waves           []WaveView          `json:"waves"`
	Tasks           map[string]TaskView `json:"tasks"`
	Nodes           []NodeView          `json:"nodes"` // in queue order
	Have            []string            `json:"have"`  // "<node>: <output>", in queue order
	Need            []string            `json:"need"`
	Counters        Counters            `json:"counters"`
	Decisions       int                 `json:"decisions"`
	Stopped         *StoppedPayload     `json:"stopped"`
	Engine          workflow.State      `json:"engine"`
}

// WaveView is one wave.
type WaveView struct {
	WaveID     string         `json:"wave_id"`
	BaseRef    string         `json:"base_ref"`
	Dispatched int            `json:"dispatched"`
	Integrated bool           `json:"integrated"`
	HeadRef    string         `json:"head_ref,omitempty"`
	Applied    []TaskProposal `json:"applied"`
	Reopened   []TaskProposal `json:"reopened"`
}

// TaskView is one attempt.
type TaskView struct {
	TaskID          string                `json:"task_id"`
	NodeID          string                `json:"node_id"`
	NodeExecutionID string                `json:"node_execution_id"`
	Attempt         int                   `json:"attempt"`
	WaveID          string                `json:"wave_id"`
	Action          string                `json:"action"` // dispatch, retry, duplicate
	Status          string                `json:"status"`
	Outcome         string                `json:"outcome,omitempty"` // succeeded, failed, cancelled, lost
	Reason          string                `json:"reason,omitempty"`
	Detail          string                `json:"detail,omitempty"`
	Grant           *GrantRef             `json:"grant,omitempty"`
	Proposals       []gateway.ProposalRef `json:"proposals"`
	Calls           int                   `json:"calls"`
	Refused         int                   `json:"refused"`
	Result          string                `json:"result,omitempty"`
	ResultDigest    string                `json:"result_digest,omitempty"`
	Evidence        map[string]string     `json:"evidence,omitempty"`
	Dispatched      int64                 `json:"dispatched_sequence"`
	Completed       int64                 `json:"completed_sequence,omitempty"`
}

// NodeView is one node with what it has and what it still needs.
type NodeView struct {
	NodeID   string   `json:"node_id"`
	Status   string   `json:"status"`
	Reason   string   `json:"reason,omitempty"`
	Attempts int      `json:"attempts"`
	Have     []string `json:"have"`
	Need     []string `json:"need"`
}

// Counters add up the run.
type Counters struct {
	Attempts  int `json:"attempts"`
	Succeeded int `json:"succeeded"`
	Failed    int `json:"failed"`
	Cancelled int `json:"cancelled"`
	Lost      int `json:"lost"`
	Timeouts  int `json:"timeouts"`
	Calls     int `json:"calls"`
	Refused   int `json:"refused"`
	Reopened  int `json:"reopened"`
}

// Marshal returns the canonical bytes of s.
func (s *State) Marshal() ([]byte, error) { return canonical.Marshal(s) }

// view tracks what the fold needs beyond State.
type view struct {
	st        State
	q         *runspec.Queue
	applied   map[string]TaskProposal // node -> its applied proposal (latest)
	redundant map[string]TaskProposal
	stackSt   stack.State
}

func newView(q *runspec.Queue, runID string) *view {
	v := &view{q: q, applied: map[string]TaskProposal{}, redundant: map[string]TaskProposal{}, stackSt: stack.NewState(runID)}
	v.st = State{SchemaVersion: StateSchema, RunID: runID, Status: StatusRunning, Waves: []WaveView{}, Tasks: map[string]TaskView{}}
	return v
}

func decodeData(raw json.RawMessage, v any) error {
	if len(raw) == 0 {
		return errors.New("no data")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

// fold adds one event to the view (the engine is driven by the replayer).
func (v *view) fold(e ledger.Event) error {
	if err := v.stackSt.Apply(e); err != nil {
		return err
	}
	st := &v.st
	st.Sequence = e.Sequence
	ss := &v.stackSt
	st.WaveID, st.BaseRef, st.IntegrationHead = ss.WaveID, ss.BaseRef, ss.IntegrationHead
	if e.Topic == stack.TopicInitialized || e.Topic == stack.TopicWaveAdvanced {
		st.Waves = append(st.Waves, WaveView{WaveID: ss.WaveID, BaseRef: ss.BaseRef, Applied: []TaskProposal{}, Reopened: []TaskProposal{}})
	}
	switch e.Topic {
	case TopicStarted:
		var p StartedPayload
		if err := decodeData(e.Payload, &p); err != nil {
			return err
		}
		st.Started, st.Sessions, st.WorkDir = &p, 1, p.WorkDir
	case TopicResumed:
		var p ResumedPayload
		if err := decodeData(e.Payload, &p); err != nil {
			return err
		}
		st.Sessions, st.WorkDir = p.Session, p.WorkDir
	case stack.TopicTaskDispatched, stack.TopicTaskCompleted, stack.TopicTaskAck, stack.TopicTaskTimeout, stack.TopicTaskProgress:
		return v.task(e)
	case TopicDecision:
		st.Decisions++
	case TopicIntegrated:
		var p IntegratedPayload
		if err := decodeData(e.Payload, &p); err != nil {
			return err
		}
		for i := range st.Waves {
			if w := &st.Waves[i]; w.WaveID == p.WaveID {
				w.Integrated, w.HeadRef, w.Applied, w.Reopened = true, p.HeadRef, nonNil(p.Applied), nonNil(p.Reopened)
			}
		}
		for _, a := range p.Applied {
			v.applied[a.NodeID] = a
			delete(v.redundant, a.NodeID)
		}
		for _, a := range p.Redundant {
			v.redundant[a.NodeID] = a
			delete(v.applied, a.NodeID)
		}
		for _, a := range p.Reopened {
			delete(v.applied, a.NodeID)
			delete(v.redundant, a.NodeID)
		}
		st.Counters.Reopened += len(p.Reopened)
	case TopicStopped:
		var p StoppedPayload
		if err := decodeData(e.Payload, &p); err != nil {
			return err
		}
		st.Status, st.Stopped = StatusStopped, &p
	case gateway.TopicCall, gateway.TopicCalls:
		// counted from the sessions' summaries at completion
	}
	return nil
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func (v *view) task(e ledger.Event) error {
	var p stack.TaskPayload
	if err := decodeData(e.Payload, &p); err != nil {
		return err
	}
	st := &v.st
	t, ok := st.Tasks[p.TaskID]
	switch e.Topic {
	case stack.TopicTaskDispatched:
		var d DispatchData
		if err := decodeData(p.Data, &d); err != nil {
			return fmt.Errorf("task.dispatched data: %w", err)
		}
		if ok {
			return fmt.Errorf("task %s is dispatched twice", p.TaskID)
		}
		t = TaskView{TaskID: p.TaskID, NodeID: p.NodeID, NodeExecutionID: p.NodeExecutionID, Attempt: p.Attempt, WaveID: p.WaveID,
			Action: d.Decision.Action, Status: TaskDispatched, Grant: d.Grant, Proposals: []gateway.ProposalRef{}, Dispatched: e.Sequence}
		st.Counters.Attempts++
		for i := range st.Waves {
			if st.Waves[i].WaveID == p.WaveID {
				st.Waves[i].Dispatched++
			}
		}
	case stack.TopicTaskCompleted:
		var d CompletedData
		if err := decodeData(p.Data, &d); err != nil {
			return fmt.Errorf("task.completed data: %w", err)
		}
		if !ok || t.Status != TaskDispatched {
			return fmt.Errorf("task %s completes without a running dispatch", p.TaskID)
		}
		t.Status, t.Outcome, t.Reason, t.Detail, t.Completed = TaskCompleted, d.Outcome.Status, d.Outcome.Reason, d.Detail, e.Sequence
		t.Proposals = nonNil(d.Proposals)
		withdrawn := map[string]bool{}
		for _, id := range d.Withdrawn {
			withdrawn[id] = true
		}
		for i := range t.Proposals {
			if withdrawn[t.Proposals[i].ProposalID] {
				t.Proposals[i].Status = stack.StatusWithdrawn
			}
		}
		t.Evidence = d.Evidence
		if d.Gateway != nil {
			t.Calls, t.Refused = d.Gateway.Calls, d.Gateway.Refused
			st.Counters.Calls += d.Gateway.Calls
			st.Counters.Refused += d.Gateway.Refused
		}
		switch d.Outcome.Status {
		case workflow.OutcomeSucceeded:
			st.Counters.Succeeded++
		case workflow.OutcomeFailed:
			st.Counters.Failed++
		case workflow.OutcomeCancelled:
			st.Counters.Cancelled++
		case workflow.OutcomeLost:
			st.Counters.Lost++
		}
	case stack.TopicTaskAck:
		var d AckData
		if err := decodeData(p.Data, &d); err != nil {
			return fmt.Errorf("task.ack data: %w", err)
		}
		if !ok || t.Status != TaskCompleted {
			return fmt.Errorf("task %s is acknowledged before it completed", p.TaskID)
		}
		t.Status, t.Result, t.ResultDigest = TaskAcked, d.Result, d.Digest
	case stack.TopicTaskTimeout:
		st.Counters.Timeouts++
		return nil
	default:
		return nil // progress
	}
	st.Tasks[p.TaskID] = t
	return nil
}

// finish fills what depends on the whole fold: the engine's state and the
// have/need view of every node.
func (v *view) finish(eng *workflow.Engine) State {
	st := v.st
	if eng != nil {
		st.Engine = eng.State()
	}
	st.Nodes, st.Have, st.Need = []NodeView{}, []string{}, []string{}
	succeeded := map[string]TaskView{} // node -> its passing attempt (the last one)
	for _, t := range st.Tasks {
		if t.Outcome == workflow.OutcomeSucceeded {
			if prev, ok := succeeded[t.NodeID]; !ok || prev.Completed < t.Completed {
				succeeded[t.NodeID] = t
			}
		}
	}
	byNode := map[string]workflow.NodeState{}
	for _, n := range st.Engine.Nodes {
		byNode[n.NodeID] = n
	}
	for i := range v.q.Tasks {
		task := &v.q.Tasks[i]
		ns := byNode[task.NodeID]
		nv := NodeView{NodeID: task.NodeID, Status: string(ns.Status), Reason: ns.Reason, Attempts: ns.Attempts, Have: []string{}, Need: []string{}}
		passed, ok := succeeded[task.NodeID]
		ok = ok && (ns.Status == workflow.StatusSucceeded || ns.Status == workflow.StatusIterated)
		for _, o := range task.RequiredOutputs {
			switch o.Kind {
			case runspec.OutputPatchProposal:
				switch a, r := v.applied[task.NodeID], v.redundant[task.NodeID]; {
				case ok && a.ProposalID != "":
					nv.Have = append(nv.Have, fmt.Sprintf("patch_proposal %s applied at %s", a.ProposalID, short(a.Checkpoint)))
				case ok && r.ProposalID != "":
					nv.Have = append(nv.Have, fmt.Sprintf("patch_proposal %s (the change was already on the canvas)", r.ProposalID))
				case ok && len(passed.Proposals) > 0:
					nv.Need = append(nv.Need, fmt.Sprintf("patch_proposal %s: awaiting integration", passed.Proposals[0].ProposalID))
				case ok && o.Optional:
					nv.Have = append(nv.Have, "patch_proposal: none (optional)")
				case !o.Optional:
					nv.Need = append(nv.Need, "patch_proposal")
				}
			case runspec.OutputEvidence:
				if p := passed.Evidence[o.EvidenceKind]; ok && p != "" {
					nv.Have = append(nv.Have, fmt.Sprintf("evidence %s: %s", o.EvidenceKind, p))
				} else if !o.Optional {
					nv.Need = append(nv.Need, "evidence "+o.EvidenceKind)
				}
			}
		}
		for _, h := range nv.Have {
			st.Have = append(st.Have, task.NodeID+": "+h)
		}
		for _, n := range nv.Need {
			st.Need = append(st.Need, task.NodeID+": "+n)
		}
		st.Nodes = append(st.Nodes, nv)
	}
	return st
}

func short(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}

// LoadState reads a run's run.state.json (what the coordinator last
// wrote); it does not take the run's lock. A missing file is an error
// wrapping os.ErrNotExist.
func LoadState(l stack.Layout) (*State, error) {
	b, err := readlimit.ReadFile(filepath.Join(l.Root, StateFile), 256<<20)
	if err != nil {
		return nil, err
	}
	var s State
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(l.Root, StateFile), err)
	}
	return &s, nil
}

// Runs lists the runs under opsRuns that dome run started (those with a
// run.state.json or a work queue and events), sorted by id.
func Runs(opsRuns string) ([]string, error) {
	ents, err := os.ReadDir(opsRuns)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	var out []string
	for _, e := range ents {
		if !e.IsDir() || ledger.CheckRunID(e.Name()) != nil {
			continue
		}
		if _, err := os.Stat(filepath.Join(opsRuns, e.Name(), runspec.QueueFile)); err == nil {
			out = append(out, e.Name())
		}
	}
	sort.Strings(out)
	return out, nil
}

// have reports whether s is in list (a small helper for messages).
func have(list []string, s string) bool {
	for _, x := range list {
		if x == s || strings.HasPrefix(x, s+" ") {
			return true
		}
	}
	return false
}
