package webui

import (
	"bytes"
	"encoding/json"
	"fmt"
	"unicode/utf8"

	"github.com/dome-registry/dome/pkg/agent"
	"github.com/dome-registry/dome/pkg/ledger"
	"github.com/dome-registry/dome/pkg/stack"
)

// AgentRun is an agent workflow run (dome workflow run) as its ledger tells
// it at the view's sequence: what it was started with, each step with its
// attempts (status, reason, usage, the abilities chosen within their token
// budget, the tool call or the delegation, the output), the checkpoints and
// resumes, and how it finished. Everything in it is the ledger's, shown as
// text.
type AgentRun struct {
	Started     *agent.RunStarted `json:"started"`
	Status      string            `json:"status"` // succeeded, failed, or incomplete (not finished)
	Steps       []AgentStep       `json:"steps"`
	Checkpoints []AgentCheckpoint `json:"checkpoints"`
	Resumes     []AgentResume     `json:"resumes"`
	Usage       agent.Usage       `json:"usage"`
	Finished    *AgentFinished    `json:"finished,omitempty"`
	// Error: an event that is not an agent run's, or that does not decode
	// (what came before it is shown).
	Error string `json:"error,omitempty"`
}

// AgentStep is one step of the workflow.
type AgentStep struct {
	ID          string                 `json:"step_id"`
	Index       int                    `json:"step_index"`
	Status      string                 `json:"status"` // pending, running, succeeded, failed, cancelled, skipped
	Reason      string                 `json:"reason,omitempty"`
	Attempts    []AgentAttempt         `json:"attempts"`
	Compensated *agent.StepCompensated `json:"compensated,omitempty"`
	Restored    bool                   `json:"restored,omitempty"` // its output came from the log on a resume
}

// AgentAttempt is one attempt of a step.
type AgentAttempt struct {
	Attempt     int                 `json:"attempt"`
	ExecutionID string              `json:"execution_id"`
	Kind        string              `json:"kind"`
	Started     int64               `json:"started_sequence"`
	Finished    int64               `json:"finished_sequence,omitempty"`
	Result      *agent.StepFinished `json:"result,omitempty"`
	Output      string              `json:"-"` // the output as text, bounded
	OutputCut   bool                `json:"-"`
}

// AgentCheckpoint is one agent.checkpoint event.
type AgentCheckpoint struct {
	Sequence        int64        `json:"sequence"`
	StepIndex       int          `json:"step_index"`
	CompletedStepID string       `json:"completed_step_id"`
	Outputs         []string     `json:"step_outputs"` // the steps whose outputs it holds
	Memory          agent.Memory `json:"memory"`
}

// AgentResume is one agent.run.resumed event.
type AgentResume struct {
	Sequence int64 `json:"sequence"`
	agent.RunResumed
}

// AgentFinished is agent.run.finished.
type AgentFinished struct {
	Sequence int64 `json:"sequence"`
	agent.RunFinished
	Output    string `json:"-"`
	OutputCut bool   `json:"-"`
}

// maxOutputShown bounds the text of one output on a page.
const maxOutputShown = 64 << 10

// outputText is an output as the CLI prints it, cut to maxOutputShown at
// a character boundary.
func outputText(raw json.RawMessage) (string, bool) {
	if len(raw) == 0 {
		return "", false
	}
	s := agent.OutputText(raw)
	if len(s) <= maxOutputShown {
		return s, false
	}
	cut := maxOutputShown
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut], true
}

func decodeStrict(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

// buildAgentView makes the view of an agent run after events[:seq].
func buildAgentView(l stack.Layout, events []ledger.Event, seq, latest int64) *RunView {
	v := &RunView{RunID: l.RunID, Kind: kindAgent, Sequence: seq, Latest: latest, Base: runAtURL(l.RunID, seq)}
	e := events[seq-1]
	v.EventID, v.TS = e.EventID, e.TS
	a := agentRunOf(l, events)
	v.Agent = a
	if a.Error != "" {
		v.FoldError = a.Error
	}
	if a.Finished != nil {
		v.Ended, v.EndReason = true, "finished: "+a.Finished.Status
	}
	return v
}

// agentRunOf folds an agent run's events. agent.FoldRun checks them as
// dome workflow status and resume do; the walk below keeps what the page
// shows of each attempt, and stops at the first event that does not
// decode.
func agentRunOf(l stack.Layout, events []ledger.Event) *AgentRun {
	a := &AgentRun{Status: "incomplete", Steps: []AgentStep{}, Checkpoints: []AgentCheckpoint{}, Resumes: []AgentResume{}}
	rec, err := agent.FoldRun(l.Root, events)
	if err != nil {
		a.Error = err.Error()
	}
	byID := map[string]int{}
	// The attempt a step.finished ends: the last one of its number still
	// open (a resumed run numbers its attempts again from 1).
	attempt := func(s *AgentStep, n int, exec string) *AgentAttempt {
		for i := len(s.Attempts) - 1; i >= 0; i-- {
			if a := &s.Attempts[i]; a.Attempt == n && a.ExecutionID == exec && a.Finished == 0 {
				return a
			}
		}
		return nil
	}
	step := func(e ledger.Event, id string) (*AgentStep, error) {
		i, ok := byID[id]
		if !ok {
			return nil, fmt.Errorf("event %d (%s): step %q is not a step of the run", e.Sequence, e.Topic, id)
		}
		return &a.Steps[i], nil
	}
	fail := func(e ledger.Event, err error) *AgentRun {
		if a.Error == "" {
			a.Error = fmt.Sprintf("event %d (%s): %v", e.Sequence, e.Topic, err)
		}
		return a
	}
	for _, e := range events {
		if a.Started == nil {
			var p agent.RunStarted
			if e.Topic != agent.TopicRunStarted {
				return fail(e, fmt.Errorf("the first event of an agent run is %s", agent.TopicRunStarted))
			}
			if err := decodeStrict(e.Payload, &p); err != nil {
				return fail(e, err)
			}
			a.Started = &p
			for i, id := range p.Steps {
				byID[id] = i
				a.Steps = append(a.Steps, AgentStep{ID: id, Index: i, Status: "pending", Attempts: []AgentAttempt{}})
			}
			continue
		}
		switch e.Topic {
		case agent.TopicRunResumed:
			var p agent.RunResumed
			if err := decodeStrict(e.Payload, &p); err != nil {
				return fail(e, err)
			}
			a.Resumes = append(a.Resumes, AgentResume{Sequence: e.Sequence, RunResumed: p})
			for _, id := range p.Restored {
				if s, err := step(e, id); err == nil {
					s.Restored = true
				}
			}
		case agent.TopicStepStarted:
			var p agent.StepStarted
			if err := decodeStrict(e.Payload, &p); err != nil {
				return fail(e, err)
			}
			s, err := step(e, p.StepID)
			if err != nil {
				return fail(e, err)
			}
			s.Status = "running"
			s.Attempts = append(s.Attempts, AgentAttempt{Attempt: p.Attempt, ExecutionID: p.ExecutionID, Kind: p.Kind, Started: e.Sequence})
		case agent.TopicStepFinished:
			var p agent.StepFinished
			if err := decodeStrict(e.Payload, &p); err != nil {
				return fail(e, err)
			}
			s, err := step(e, p.StepID)
			if err != nil {
				return fail(e, err)
			}
			at := attempt(s, p.Attempt, p.ExecutionID)
			if at == nil {
				s.Attempts = append(s.Attempts, AgentAttempt{Attempt: p.Attempt, ExecutionID: p.ExecutionID})
				at = &s.Attempts[len(s.Attempts)-1]
			}
			at.Finished, at.Result = e.Sequence, &p
			at.Output, at.OutputCut = outputText(p.Output)
			s.Status, s.Reason = p.Status, p.Reason
			if p.Usage != nil {
				addUsage(&a.Usage, *p.Usage)
			}
		case agent.TopicStepSkipped:
			var p agent.StepSkipped
			if err := decodeStrict(e.Payload, &p); err != nil {
				return fail(e, err)
			}
			s, err := step(e, p.StepID)
			if err != nil {
				return fail(e, err)
			}
			s.Status, s.Reason = "skipped", p.Reason
		case agent.TopicStepCompensated:
			var p agent.StepCompensated
			if err := decodeStrict(e.Payload, &p); err != nil {
				return fail(e, err)
			}
			s, err := step(e, p.StepID)
			if err != nil {
				return fail(e, err)
			}
			s.Compensated = &p
		case agent.TopicCheckpoint:
			var p struct {
				StepIndex       int                        `json:"stepIndex"`
				CompletedStepID string                     `json:"completedStepId"`
				StepOutputs     map[string]json.RawMessage `json:"stepOutputs"`
				Context         json.RawMessage            `json:"context"`
				MemorySnapshot  agent.Memory               `json:"memorySnapshot"`
			}
			if err := decodeStrict(e.Payload, &p); err != nil {
				return fail(e, err)
			}
			cp := AgentCheckpoint{Sequence: e.Sequence, StepIndex: p.StepIndex, CompletedStepID: p.CompletedStepID, Memory: p.MemorySnapshot, Outputs: sortedKeys(p.StepOutputs)}
			if cp.Memory.Warnings == nil {
				cp.Memory.Warnings = []string{}
			}
			a.Checkpoints = append(a.Checkpoints, cp)
		case agent.TopicRunFinished:
			var p agent.RunFinished
			if err := decodeStrict(e.Payload, &p); err != nil {
				return fail(e, err)
			}
			f := &AgentFinished{Sequence: e.Sequence, RunFinished: p}
			f.Output, f.OutputCut = outputText(p.Output)
			a.Finished, a.Status, a.Usage = f, p.Status, p.Usage
		default:
			return fail(e, fmt.Errorf("%q is not an agent run topic", e.Topic))
		}
	}
	if rec != nil && a.Finished == nil {
		// The steps' statuses as dome workflow status shows them.
		for i := range a.Steps {
			if st := rec.Steps[a.Steps[i].ID]; st != nil {
				a.Steps[i].Status = st.Status
			}
		}
	}
	return a
}

func addUsage(u *agent.Usage, v agent.Usage) {
	u.ProviderCalls += v.ProviderCalls
	u.PromptTokens += v.PromptTokens
	u.CompletionTokens += v.CompletionTokens
	u.ToolCalls += v.ToolCalls
	u.Delegations += v.Delegations
}
