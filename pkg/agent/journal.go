package agent

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"time"

	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/dome-registry/dome/pkg/ledger"
	"github.com/dome-registry/dome/pkg/workflow"
)

// Topics of an agent run's events (ops/runs/<run>/events/).
const (
	TopicRunStarted      = "agent.run.started"
	TopicRunResumed      = "agent.run.resumed"
	TopicStepStarted     = "agent.step.started"
	TopicStepFinished    = "agent.step.finished"
	TopicStepSkipped     = "agent.step.skipped"
	TopicStepCompensated = "agent.step.compensated"
	TopicCheckpoint      = "agent.checkpoint"
	TopicRunFinished     = "agent.run.finished"
)

// Journal records a run's events durably, in order. A nil Journal records
// nothing (a delegate's run inside its parent's step).
type Journal interface {
	Record(topic string, payload any) error
}

// LedgerJournal writes events to a run's ledger: each one durable (fsync'ed
// and renamed into place) before Record returns.
type LedgerJournal struct {
	Log *ledger.Log
	Now func() time.Time
}

// Record appends one event.
func (j *LedgerJournal) Record(topic string, payload any) error {
	_, err := j.Log.AppendPayload(topic, j.Now(), payload)
	return err
}

// RunStarted is the first event of a run: everything a resume needs besides
// the registry at the recorded commit.
type RunStarted struct {
	RunID           string         `json:"runId"`
	Agent           string         `json:"agent"`
	Task            string         `json:"task"`
	RegistryCommit  string         `json:"registryCommit"`
	ProfileDigest   string         `json:"profileDigest"`
	Mode            string         `json:"mode"` // sequential or dag
	Steps           []string       `json:"steps"`
	FailureStrategy string         `json:"failureStrategy"`
	MaxConcurrency  int            `json:"maxConcurrency"`
	MaxAttempts     int            `json:"maxAttempts"`
	Seed            string         `json:"seed"`
	Provider        ProviderRecord `json:"provider"`
	Exec            []string       `json:"exec,omitempty"`   // the exec provider's command line
	Grants          []GrantRecord  `json:"grants,omitempty"` // the agents' tool grants this process issued
}

// ProviderRecord names the provider a run used.
type ProviderRecord struct {
	Runtime    string `json:"runtime"`
	Kind       string `json:"kind"`
	Model      string `json:"model"`
	SDKVersion string `json:"sdkVersion,omitempty"`
}

// RunResumed records a resume: where it starts and what it restored.
type RunResumed struct {
	ResumeFromStep int           `json:"resumeFromStep"`   // checkpoint stepIndex + 1 (0 without a checkpoint)
	Restored       []string      `json:"restored"`         // steps whose outputs come from the log, never recomputed
	Grants         []GrantRecord `json:"grants,omitempty"` // grants issued again for this process
}

// StepStarted records an attempt of a step.
type StepStarted struct {
	StepID      string `json:"stepId"`
	StepIndex   int    `json:"stepIndex"`
	Attempt     int    `json:"attempt"`
	ExecutionID string `json:"executionId"`
	Kind        string `json:"kind"`
}

// StepFinished records the end of an attempt; Output is there on success.
type StepFinished struct {
	StepID      string            `json:"stepId"`
	StepIndex   int               `json:"stepIndex"`
	Attempt     int               `json:"attempt"`
	ExecutionID string            `json:"executionId"`
	Status      string            `json:"status"` // succeeded, failed or cancelled
	Reason      string            `json:"reason,omitempty"`
	Message     string            `json:"message,omitempty"`
	Output      json.RawMessage   `json:"output,omitempty"`
	Usage       *Usage            `json:"usage,omitempty"`
	Abilities   *Injection        `json:"abilities,omitempty"`
	Tool        *ToolRecord       `json:"tool,omitempty"`
	Delegation  *DelegationRecord `json:"delegation,omitempty"`
}

// ToolRecord is what a tool step's call did (its output is the step's).
type ToolRecord struct {
	Name    string     `json:"name"`
	Success bool       `json:"success"`
	Error   *ToolError `json:"error,omitempty"`
}

// DelegationRecord is what a delegate step did.
type DelegationRecord struct {
	Agent  string           `json:"agent"`
	Chain  []string         `json:"chain"`
	Status string           `json:"status"`
	Error  *DelegationError `json:"error,omitempty"`
	Steps  []string         `json:"steps,omitempty"` // the delegate's steps that succeeded
	Usage  Usage            `json:"usage"`
}

// StepSkipped records a step that will not run.
type StepSkipped struct {
	StepID    string `json:"stepId"`
	StepIndex int    `json:"stepIndex"`
	Reason    string `json:"reason"`
}

// StepCompensated records a compensating step (rollback).
type StepCompensated struct {
	StepID  string          `json:"stepId"`
	Status  string          `json:"status"` // succeeded or failed
	Reason  string          `json:"reason,omitempty"`
	Output  json.RawMessage `json:"output,omitempty"`
	Message string          `json:"message,omitempty"`
}

// RunFinished is the last event of a run.
type RunFinished struct {
	Status  string           `json:"status"` // succeeded or failed
	Output  json.RawMessage  `json:"output,omitempty"`
	Summary workflow.Summary `json:"summary"`
	Usage   Usage            `json:"usage"`
}

// Usage counts what a run spent.
type Usage struct {
	ProviderCalls    int `json:"providerCalls"`
	PromptTokens     int `json:"promptTokens"`
	CompletionTokens int `json:"completionTokens"`
	ToolCalls        int `json:"toolCalls"`
	Delegations      int `json:"delegations"`
}

func (u *Usage) add(v Usage) {
	u.ProviderCalls += v.ProviderCalls
	u.PromptTokens += v.PromptTokens
	u.CompletionTokens += v.CompletionTokens
	u.ToolCalls += v.ToolCalls
	u.Delegations += v.Delegations
}

// RunContext is a checkpoint's context: the inputs the run was started
// with, enough to find the profile again at its commit.
type RunContext struct {
	RunID          string   `json:"runId"`
	Agent          string   `json:"agent"`
	Task           string   `json:"task"`
	RegistryCommit string   `json:"registryCommit"`
	ProfileDigest  string   `json:"profileDigest"`
	Chain          []string `json:"chain"`
}

// Memory is a checkpoint's memorySnapshot: what the run accumulated besides
// the step outputs.
type Memory struct {
	Usage    Usage    `json:"usage"`
	Warnings []string `json:"warnings"`
}

// Record is a run folded from its events.
type Record struct {
	Dir            string
	Started        RunStarted
	Resumes        []RunResumed
	Steps          map[string]*StepState // by step id
	Checkpoint     *workflow.Checkpoint  // the last one
	CheckpointFile string
	Memory         Memory
	Finished       *RunFinished
	Events         int
	// After the last checkpoint: steps that finished with an output, which
	// a resume restores instead of running them again.
	Restorable map[string]json.RawMessage
}

// StepState is one step as the events tell it.
type StepState struct {
	ID          string `json:"stepId"`
	Index       int    `json:"stepIndex"`
	Status      string `json:"status"` // pending, running, succeeded, failed, cancelled, skipped
	Attempts    int    `json:"attempts"`
	Reason      string `json:"reason,omitempty"`
	Message     string `json:"message,omitempty"`
	Delegate    string `json:"delegate,omitempty"` // the agent a delegate step handed its task to
	Tool        string `json:"tool,omitempty"`     // the tool a tool step called
	Compensated string `json:"compensated,omitempty"`
}

// decodeStrict decodes an event payload: known fields only.
func decodeStrict(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

// LoadRun reads and folds the events of the run in runDir. The ledger
// itself is validated (every event's id, no gaps); a payload that does not
// decode, or a checkpoint that does not validate against the workflow, is
// refused naming the event file and the field.
func LoadRun(runDir, runID string) (*Record, error) {
	evs, err := ledger.Read(runDir, runID)
	if err != nil {
		return nil, err
	}
	if len(evs) == 0 {
		return nil, ErrNoRun
	}
	rec := &Record{Dir: runDir, Steps: map[string]*StepState{}, Restorable: map[string]json.RawMessage{}, Events: len(evs)}
	file := func(seq int64) string { return filepath.Join(runDir, ledger.EventsDir, ledger.FileName(seq)) }
	bad := func(e ledger.Event, field, format string, a ...any) error {
		return &errkind.InputError{Source: file(e.Sequence), Field: field, Problem: fmt.Sprintf(format, a...),
			Hint: "the run's log does not describe an agent run that can be resumed; start a new run"}
	}
	if evs[0].Topic != TopicRunStarted {
		return nil, bad(evs[0], "/topic", "%q: the first event of an agent run is %s", evs[0].Topic, TopicRunStarted)
	}
	if err := decodeStrict(evs[0].Payload, &rec.Started); err != nil {
		return nil, bad(evs[0], "/payload", "%v", err)
	}
	for i, id := range rec.Started.Steps {
		rec.Steps[id] = &StepState{ID: id, Index: i, Status: "pending"}
	}
	step := func(e ledger.Event, id string, idx int) (*StepState, error) {
		s, ok := rec.Steps[id]
		if !ok || s.Index != idx {
			return nil, bad(e, "/payload/stepId", "step %q (index %d) is not a step of the run", id, idx)
		}
		return s, nil
	}
	for _, e := range evs[1:] {
		if rec.Finished != nil {
			return nil, bad(e, "/topic", "an event after %s", TopicRunFinished)
		}
		switch e.Topic {
		case TopicRunResumed:
			var p RunResumed
			if err := decodeStrict(e.Payload, &p); err != nil {
				return nil, bad(e, "/payload", "%v", err)
			}
			rec.Resumes = append(rec.Resumes, p)
		case TopicStepStarted:
			var p StepStarted
			if err := decodeStrict(e.Payload, &p); err != nil {
				return nil, bad(e, "/payload", "%v", err)
			}
			s, err := step(e, p.StepID, p.StepIndex)
			if err != nil {
				return nil, err
			}
			s.Status, s.Attempts = "running", s.Attempts+1
		case TopicStepFinished:
			var p StepFinished
			if err := decodeStrict(e.Payload, &p); err != nil {
				return nil, bad(e, "/payload", "%v", err)
			}
			s, err := step(e, p.StepID, p.StepIndex)
			if err != nil {
				return nil, err
			}
			s.Status, s.Reason, s.Message = p.Status, p.Reason, p.Message
			if p.Delegation != nil {
				s.Delegate = p.Delegation.Agent
			}
			if p.Tool != nil {
				s.Tool = p.Tool.Name
			}
			if p.Status == workflow.OutcomeSucceeded {
				if len(p.Output) == 0 || !json.Valid(p.Output) {
					return nil, bad(e, "/payload/output", "a succeeded step without a JSON output")
				}
				rec.Restorable[p.StepID] = p.Output
			}
			if p.Usage != nil {
				rec.Memory.Usage.add(*p.Usage)
			}
		case TopicStepSkipped:
			var p StepSkipped
			if err := decodeStrict(e.Payload, &p); err != nil {
				return nil, bad(e, "/payload", "%v", err)
			}
			s, err := step(e, p.StepID, p.StepIndex)
			if err != nil {
				return nil, err
			}
			s.Status, s.Reason = "skipped", p.Reason
		case TopicStepCompensated:
			var p StepCompensated
			if err := decodeStrict(e.Payload, &p); err != nil {
				return nil, bad(e, "/payload", "%v", err)
			}
			s, ok := rec.Steps[p.StepID]
			if !ok {
				return nil, bad(e, "/payload/stepId", "step %q is not a step of the run", p.StepID)
			}
			s.Compensated = p.Status
		case TopicCheckpoint:
			cp, err := decodeCheckpoint(e.Payload)
			if err != nil {
				var fe *fieldError
				if errors.As(err, &fe) {
					return nil, bad(e, "/payload/"+fe.field, "checkpoint: %s", fe.problem)
				}
				return nil, bad(e, "/payload", "checkpoint: %v", err)
			}
			rec.Checkpoint, rec.CheckpointFile = &cp, file(e.Sequence)
			var mem Memory
			if err := decodeStrict(cp.MemorySnapshot, &mem); err != nil {
				return nil, bad(e, "/payload/memorySnapshot", "checkpoint: %v", err)
			}
			rec.Memory = mem
			// What the checkpoint holds is restored from it; later
			// finished steps are restored from their events.
			rec.Restorable = map[string]json.RawMessage{}
		case TopicRunFinished:
			var p RunFinished
			if err := decodeStrict(e.Payload, &p); err != nil {
				return nil, bad(e, "/payload", "%v", err)
			}
			rec.Finished = &p
		default:
			return nil, bad(e, "/topic", "%q is not an agent run topic", e.Topic)
		}
	}
	return rec, nil
}

// ErrNoRun is returned for a run folder without events.
var ErrNoRun = errors.New("the run has no events")

// fieldError names the checkpoint field that is missing or wrong.
type fieldError struct{ field, problem string }

func (e *fieldError) Error() string { return e.field + ": " + e.problem }

// decodeCheckpoint decodes a checkpoint payload strictly: the five fields,
// all present, nothing else.
func decodeCheckpoint(payload []byte) (workflow.Checkpoint, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(payload, &raw); err != nil {
		return workflow.Checkpoint{}, err
	}
	fields := []string{"stepIndex", "completedStepId", "stepOutputs", "context", "memorySnapshot"}
	for _, f := range fields {
		if _, ok := raw[f]; !ok {
			return workflow.Checkpoint{}, &fieldError{f, "missing"}
		}
	}
	var extra []string
	for k := range raw {
		known := false
		for _, f := range fields {
			known = known || k == f
		}
		if !known {
			extra = append(extra, k)
		}
	}
	if len(extra) > 0 {
		sort.Strings(extra)
		return workflow.Checkpoint{}, &fieldError{extra[0], "not a checkpoint field"}
	}
	var cp workflow.Checkpoint
	for _, f := range fields {
		var err error
		switch f {
		case "stepIndex":
			err = json.Unmarshal(raw[f], &cp.StepIndex)
		case "completedStepId":
			err = json.Unmarshal(raw[f], &cp.CompletedStepID)
		case "stepOutputs":
			err = json.Unmarshal(raw[f], &cp.StepOutputs)
		case "context":
			cp.Context = raw[f]
		case "memorySnapshot":
			cp.MemorySnapshot = raw[f]
		}
		if err != nil {
			return workflow.Checkpoint{}, &fieldError{f, err.Error()}
		}
	}
	return cp, nil
}
