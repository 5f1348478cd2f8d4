package orchestrate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/dome-registry/dome/pkg/artifact"
	"github.com/dome-registry/dome/pkg/canonical"
	"github.com/dome-registry/dome/pkg/gateway"
	"github.com/dome-registry/dome/pkg/grant"
	"github.com/dome-registry/dome/pkg/ledger"
	"github.com/dome-registry/dome/pkg/readlimit"
	"github.com/dome-registry/dome/pkg/runspec"
	"github.com/dome-registry/dome/pkg/sandbox"
	"github.com/dome-registry/dome/pkg/spawn"
	"github.com/dome-registry/dome/pkg/stack"
	"github.com/dome-registry/dome/pkg/workflow"
)

// ErrInterrupted is returned when the caller's context ended: the attempts
// were killed, nothing more was recorded, and starting again resumes (they
// are reported lost and run again).
var ErrInterrupted = errors.New("interrupted")

// waveID is the wave the stack is in: the wave every new attempt joins.
func (c *coordinator) waveID() string { return c.rep.v.stackSt.WaveID }

// stackState is the stack's state as the view folded it: the loop reads
// it without the run's lock (the gateway records concurrently).
func (c *coordinator) stackState() *stack.State { return &c.rep.v.stackSt }

// events returns the run's events under the run's lock.
func (c *coordinator) events() []ledger.Event {
	var evs []ledger.Event
	c.sr.Do(func(r *stack.Run) error {
		evs = r.Events()
		return nil
	})
	return evs
}

// loop runs waves until the run stops.
func (c *coordinator) loop(ctx context.Context) (StoppedPayload, error) {
	ticker := time.NewTicker(c.cfg.PollInterval)
	defer ticker.Stop()
	for {
		if c.stopWith != nil {
			return *c.stopWith, nil
		}
		if err := c.checkLimits(); err != nil {
			return StoppedPayload{}, err
		}
		if c.halting == "" && !c.attemptsSpent() {
			if err := c.decided(c.eng.Next(c.waveID())); err != nil {
				return StoppedPayload{}, err
			}
		}
		if len(c.running) == 0 {
			if c.halting == "" && c.attemptsSpent() && !c.eng.Done() {
				if err := c.haltRun(StopBudgetExhausted, fmt.Sprintf("max_total_attempts %d reached", c.q.Budgets.MaxTotalAttempts)); err != nil {
					return StoppedPayload{}, err
				}
				continue
			}
			stop, err := c.endOfWave(ctx)
			if err != nil {
				return StoppedPayload{}, err
			}
			if stop != nil {
				return *stop, nil
			}
			continue
		}
		select {
		case r := <-c.results:
			if err := c.complete(r); err != nil {
				return StoppedPayload{}, err
			}
		case p := <-c.progress:
			if err := c.record(stack.TopicTaskProgress, stack.TaskPayload{TaskID: p.TaskID, WaveID: p.WaveID, NodeID: p.NodeID,
				NodeExecutionID: p.NodeExecutionID, Attempt: p.Attempt, WorkerID: WorkerID(p.TaskID), Detail: p.Detail}); err != nil {
				return StoppedPayload{}, err
			}
			c.tell(p)
		case id := <-c.flooded:
			if a := c.running[id]; a != nil {
				a.kill(ReasonCallFlood)
			}
		case <-ticker.C:
		case <-ctx.Done():
			c.killAll(ReasonHalted)
			c.drain()
			return StoppedPayload{}, ErrInterrupted
		}
	}
}

// attemptsSpent reports whether the queue's max_total_attempts is reached.
func (c *coordinator) attemptsSpent() bool {
	b := c.q.Budgets
	return b != nil && b.MaxTotalAttempts > 0 && c.rep.v.st.Counters.Attempts >= b.MaxTotalAttempts
}

// checkLimits halts the run when it is cancelled or its wall time is spent.
func (c *coordinator) checkLimits() error {
	if c.halting != "" {
		return nil
	}
	if b, err := readlimit.ReadFile(filepath.Join(c.l.Root, CancelFile), 64<<10); err == nil {
		var req CancelRequest
		json.Unmarshal(b, &req)
		return c.haltRun(StopCancelled, orDefault(req.Reason, "dome run cancel"))
	}
	if b := c.q.Budgets; b != nil && b.MaxWallSeconds > 0 && c.rep.v.st.Started != nil {
		if first := c.firstTS(); !first.IsZero() && c.cfg.Now().Sub(first) > time.Duration(b.MaxWallSeconds)*time.Second {
			return c.haltRun(StopBudgetExhausted, fmt.Sprintf("max_wall_seconds %d passed", b.MaxWallSeconds))
		}
	}
	return nil
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

// firstTS is when the run started (the time of its first event).
func (c *coordinator) firstTS() time.Time {
	evs := c.events()
	if len(evs) == 0 {
		return time.Time{}
	}
	t, _ := time.Parse(time.RFC3339Nano, evs[0].TS)
	return t
}

// haltRun records run.halt and what the engine decides from it.
func (c *coordinator) haltRun(code, detail string) error {
	c.halting = code
	reason := code + ": " + detail
	if err := c.record(TopicHalt, HaltPayload{Reason: reason}); err != nil {
		return err
	}
	c.tell(Progress{Kind: "halted", Detail: reason})
	return c.decided(c.eng.Halt(reason))
}

// decided records decisions in the order the engine made them (starts as
// task.dispatched, the rest as run.decision), then launches the starts.
func (c *coordinator) decided(ds []workflow.Decision) error {
	type launch struct {
		job  Job
		at   *attempt
		fail string
	}
	var launches []launch
	for _, d := range ds {
		switch d.Action {
		case workflow.ActDispatch, workflow.ActRetry, workflow.ActDuplicate:
			job, at, dd := c.prepare(d)
			if err := c.record(stack.TopicTaskDispatched, stack.TaskPayload{TaskID: at.a.TaskID, WaveID: d.WaveID, NodeID: d.NodeID,
				NodeExecutionID: d.NodeExecutionID, Attempt: d.Attempt, WorkerID: at.a.WorkerID, Detail: d.Reason, Data: mustJSON(dd)}); err != nil {
				return err
			}
			c.running[d.NodeExecutionID] = at
			launches = append(launches, launch{job: job, at: at, fail: dd.Error})
			c.tell(Progress{Kind: "dispatched", WaveID: d.WaveID, TaskID: at.a.TaskID, NodeID: d.NodeID, Detail: d.Reason})
		default:
			if err := c.record(TopicDecision, DecisionPayload{Decision: d}); err != nil {
				return err
			}
			if d.Action == workflow.ActCancel {
				if a := c.running[d.NodeExecutionID]; a != nil {
					why := ReasonEndgameLost
					if c.halting != "" {
						why = ReasonHalted
					}
					a.kill(why)
				}
			}
		}
	}
	for _, l := range launches {
		if l.fail != "" {
			r := attemptResult{execID: l.at.a.NodeExecutionID, res: Result{Err: errors.New(l.fail)}}
			go func() { c.results <- r }()
			continue
		}
		c.launch(l.job, l.at)
	}
	return nil
}

func mustJSON(v any) json.RawMessage {
	b, err := canonical.Marshal(v)
	if err != nil {
		panic(err) // our own payload types always marshal
	}
	return b
}

// prepare sets an attempt up: its grant, its SpawnSpec, its job. A failure
// is in DispatchData.Error: the attempt is recorded and fails at once.
func (c *coordinator) prepare(d workflow.Decision) (Job, *attempt, DispatchData) {
	task, _ := c.q.Task(d.NodeID)
	taskID := TaskID(d.NodeID, d.Attempt, d.NodeExecutionID)
	a := gateway.Attempt{RunID: c.cfg.RunID, WaveID: d.WaveID, NodeID: d.NodeID, NodeExecutionID: d.NodeExecutionID, TaskID: taskID,
		WorkerID: WorkerID(taskID), BaseRef: c.stackState().BaseRef}
	at := &attempt{a: a, attempt: d.Attempt, task: task, cancel: func() {}}
	dd := DispatchData{Decision: d, TaskSpecRef: "task/" + d.NodeID + "@" + task.Digest}
	job, err := c.job(d, task, a, at, &dd)
	if err != nil {
		dd.Error = err.Error()
	}
	return job, at, dd
}

func (c *coordinator) job(d workflow.Decision, task *runspec.Task, a gateway.Attempt, at *attempt, dd *DispatchData) (Job, error) {
	now := c.cfg.Now()
	tok, g, err := grant.Issue(c.derived[d.NodeID], grant.Binding{RunID: a.RunID, WaveID: a.WaveID, WorkerID: a.WorkerID,
		NodeExecutionID: a.NodeExecutionID, Issuer: "dome-run:" + c.cfg.RunID, IssuedAt: now, BaseRef: a.BaseRef}, c.key, c.cfg.Random)
	if err != nil {
		return Job{}, fmt.Errorf("issue the grant: %w", err)
	}
	dd.Grant = &GrantRef{JTI: g.Payload.JTI, ProfileID: g.Payload.ProfileID, Digest: g.Digest, ExpiresAt: g.Payload.ExpiresAt, KID: c.key.KID}
	at.grant = dd.Grant
	ct := task.Containers[0]
	act := spawn.ActionSpec{Intent: "task"}
	params, text := "", ""
	if task.ActionSpec != nil {
		text, act.Inputs = task.ActionSpec.Intent, task.ActionSpec.Params
		act.Intent, act.Summary = intentSlug(text), truncate(text, 4000)
		params = string(task.ActionSpec.Params)
	}
	spec, err := c.spawns.New(spawn.Fields{RunID: a.RunID, WaveID: a.WaveID, NodeID: a.NodeID, NodeExecutionID: a.NodeExecutionID,
		TaskSpecRef: dd.TaskSpecRef, ToolProfileRef: "grant@" + g.Digest, ContainerRef: ct.ContainerRef, ActionSpec: act,
		DeterminismSeed: SpawnSeed(c.started.Seed, a.NodeExecutionID)})
	if err != nil {
		return Job{}, fmt.Errorf("spawn spec: %w", err)
	}
	if err := spec.CheckGrant(g); err != nil {
		return Job{}, err
	}
	sb, err := spec.Canonical()
	if err != nil {
		return Job{}, err
	}
	dd.SpawnDigest = canonical.Digest(sb)
	dir := filepath.Join(c.l.Root, "tasks", a.TaskID)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return Job{}, err
	}
	if err := ledger.WriteFileDurable(filepath.Join(dir, SpawnSpecFile), append(sb, '\n')); err != nil {
		return Job{}, err
	}
	l := limitsOf(c.rp.Sandbox)
	wall := time.Duration(g.Payload.Budgets.MaxWallSeconds) * time.Second
	if ttl := g.ExpiresAt().Sub(now); ttl < wall {
		wall = ttl
	}
	if l.WallTime <= 0 || wall < l.WallTime {
		l.WallTime = wall
	}
	dd.WallSeconds = int64(l.WallTime / time.Second)
	return Job{Attempt: a, Argv: ct.Command, Limits: l, Grant: tok, Parsed: g, SpawnSpec: sb,
		Env:        workerEnv(a, d.Attempt, tok, text, params, string(sb), c.cfg.Tools != ""),
		OutputsDir: filepath.Join(dir, OutputsDir)}, nil
}

// intentSlug is a SpawnSpec's intent for a queue's free-text intent: the
// text itself when it is a slug, else its words in lower case joined by
// "-" (at most 64 characters), else "task".
func intentSlug(text string) string {
	var b []byte
	dash := false
	for i := 0; i < len(text) && len(b) < 64; i++ {
		c := text[i]
		switch {
		case c >= 'a' && c <= 'z' || c >= '0' && c <= '9':
			b, dash = append(b, c), false
		case c >= 'A' && c <= 'Z':
			b, dash = append(b, c+'a'-'A'), false
		case (c == '.' || c == '_' || c == '-') && len(b) > 0 && !dash:
			b = append(b, c)
		default:
			if len(b) > 0 && !dash {
				b, dash = append(b, '-'), true
			}
		}
	}
	s := strings.TrimRight(string(b), ".-_")
	if s == "" {
		return "task"
	}
	return s
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// limitsOf maps the run policy's sandbox limits onto the sandbox's.
func limitsOf(s runspec.SandboxLimits) sandbox.Limits {
	return sandbox.Limits{WallTime: time.Duration(s.MaxWallSeconds) * time.Second, Processes: s.MaxProcesses,
		MemoryBytes: s.MaxMemoryBytes, OpenFiles: s.MaxOpenFiles, FileBytes: s.MaxFileBytes, OutputBytes: s.MaxOutputBytes}
}

// launch runs the attempt on its own goroutine.
func (c *coordinator) launch(job Job, at *attempt) {
	ctx, cancel := context.WithCancel(context.Background())
	at.mu.Lock()
	at.cancel = cancel
	killed := at.killedAs != ""
	at.mu.Unlock()
	if killed {
		cancel()
	}
	go func() {
		defer cancel()
		res := c.disp.Run(ctx, job, func(where string) {
			detail := "running (" + c.cfg.SandboxInfo.Kind + ")"
			if where != "" {
				detail = "running " + where
			}
			c.progress <- Progress{Kind: "running", WaveID: job.Attempt.WaveID, TaskID: job.Attempt.TaskID, NodeID: job.Attempt.NodeID,
				NodeExecutionID: job.Attempt.NodeExecutionID, Attempt: at.attempt, Detail: detail}
		})
		c.results <- attemptResult{execID: job.Attempt.NodeExecutionID, res: res}
	}()
}

func (c *coordinator) killAll(reason string) {
	for _, a := range c.running {
		a.kill(reason)
	}
}

// drain waits for every running attempt to end, recording nothing.
func (c *coordinator) drain() {
	for len(c.running) > 0 {
		select {
		case r := <-c.results:
			delete(c.running, r.execID)
		case <-c.progress:
		case <-time.After(30 * time.Second):
			return
		}
	}
}

// complete records how an attempt ended and what follows from it.
func (c *coordinator) complete(r attemptResult) error {
	at := c.running[r.execID]
	if at == nil {
		return nil
	}
	delete(c.running, r.execID)
	outcome, data := c.judge(at, r.res)
	if outcome.Status != workflow.OutcomeSucceeded {
		w, err := c.withdraw(at.a, data.Proposals, outcome.Reason)
		if err != nil {
			return err
		}
		data.Withdrawn = w
	}
	p := stack.TaskPayload{TaskID: at.a.TaskID, WaveID: at.a.WaveID, NodeID: at.a.NodeID, NodeExecutionID: at.a.NodeExecutionID,
		Attempt: at.attempt, WorkerID: at.a.WorkerID, Reason: outcome.Reason, Detail: data.Detail}
	for _, pr := range data.Proposals {
		p.ArtifactRefs = append(p.ArtifactRefs, pr.ProposalID)
	}
	if outcome.Reason == sandbox.ReasonTimeout {
		if err := c.record(stack.TopicTaskTimeout, p); err != nil {
			return err
		}
	}
	data.Outcome = outcome
	p.Data = mustJSON(data)
	if err := c.record(stack.TopicTaskCompleted, p); err != nil {
		return err
	}
	ds, err := c.eng.Report(r.execID, outcome)
	if err != nil {
		return err
	}
	if err := c.decided(ds); err != nil {
		return err
	}
	c.tell(Progress{Kind: "completed", WaveID: at.a.WaveID, TaskID: at.a.TaskID, NodeID: at.a.NodeID, Detail: outcome.Status + " (" + outcome.Reason + ")" + detailSuffix(data.Detail)})
	if err := c.ack(at.a.TaskID); err != nil {
		return err
	}
	if a, ok := c.disp.(Acker); ok {
		a.Acked(r.execID)
	}
	return nil
}

func detailSuffix(d string) string {
	if d == "" {
		return ""
	}
	return ": " + d
}

// judge decides an attempt's outcome from what it did.
func (c *coordinator) judge(at *attempt, res Result) (workflow.Outcome, CompletedData) {
	data := CompletedData{Outputs: res.Outputs, Proposals: res.Session.Proposals}
	if res.Session.Calls > 0 || len(res.Session.Proposals) > 0 {
		s := res.Session
		data.Gateway = &s
	}
	fail := func(reason, detail string) (workflow.Outcome, CompletedData) {
		data.Detail = detail
		return workflow.Outcome{Status: workflow.OutcomeFailed, Reason: reason}, data
	}
	if k := at.killed(); k == ReasonEndgameLost || k == ReasonHalted {
		data.Detail = res.Sandbox.Detail
		if res.Err == nil {
			data.Sandbox = sandboxSummary(res.Kind, res.Sandbox)
		}
		return workflow.Outcome{Status: workflow.OutcomeCancelled, Reason: k}, data
	}
	if res.Err != nil {
		return fail(ReasonPrepareFailed, res.Err.Error())
	}
	sb := res.Sandbox
	data.Sandbox = sandboxSummary(res.Kind, sb)
	switch k := at.killed(); {
	case k == ReasonCallFlood || res.Session.Flooded:
		return fail(ReasonCallFlood, fmt.Sprintf("%d calls refused: killed", res.Session.Refused))
	case sb.Reason != sandbox.ReasonOK:
		return fail(sb.Reason, sb.Detail)
	}
	var kinds []string
	for _, o := range at.task.RequiredOutputs {
		if o.Kind == runspec.OutputEvidence {
			kinds = append(kinds, o.EvidenceKind)
		}
	}
	data.Evidence = evidenceOf(kinds, res.Outputs)
	if len(data.Evidence) == 0 {
		data.Evidence = nil
	}
	var accepted []string
	rejected := ""
	for _, p := range res.Session.Proposals {
		switch p.Status {
		case gateway.StatusSubmitted, gateway.StatusDeduplicated:
			accepted = append(accepted, p.ProposalID)
		case gateway.StatusRejected:
			rejected = p.ReasonCode
		}
	}
	for _, o := range at.task.RequiredOutputs {
		if o.Optional {
			continue
		}
		switch o.Kind {
		case runspec.OutputPatchProposal:
			if len(accepted) > 0 {
				continue
			}
			if rejected != "" {
				data.Missing = append(data.Missing, "patch_proposal")
				return fail(ReasonProposalRejected, "the stack rejected its proposal: "+rejected)
			}
			data.Missing = append(data.Missing, "patch_proposal")
		case runspec.OutputEvidence:
			if data.Evidence[o.EvidenceKind] == "" {
				data.Missing = append(data.Missing, "evidence "+o.EvidenceKind)
			}
		}
	}
	if len(data.Missing) > 0 {
		return fail(ReasonMissingOutput, "exited 0 without "+joinList(data.Missing))
	}
	out := mustJSON(map[string]any{"task_id": at.a.TaskID, "proposals": nonNil(accepted)})
	return workflow.Outcome{Status: workflow.OutcomeSucceeded, Reason: sandbox.ReasonOK, Output: out}, data
}

func joinList(s []string) string {
	out := ""
	for i, x := range s {
		if i > 0 {
			out += ", "
		}
		out += x
	}
	return out
}

// withdraw takes back the pending proposals of an attempt that did not
// pass.
func (c *coordinator) withdraw(a gateway.Attempt, props []gateway.ProposalRef, reason string) ([]string, error) {
	var out []string
	err := c.sr.Do(func(r *stack.Run) error {
		ids := map[string]bool{}
		for _, p := range props {
			ids[p.ProposalID] = true
		}
		// Also what the ledger says the worker submitted (an attempt lost
		// with its coordinator has no session summary).
		for id, q := range r.State.Proposals {
			if q.WorkerID == a.WorkerID {
				ids[id] = true
			}
		}
		for _, id := range sortedKeys(ids) {
			q := r.State.Proposals[id]
			if q == nil || (q.Status != stack.StatusSubmitted && q.Status != stack.StatusDeferred) {
				continue
			}
			if _, err := r.Withdraw(id, reason, "task "+a.TaskID+" did not pass", c.cfg.Now()); err != nil {
				return err
			}
			out = append(out, id)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, c.catchUp()
}

// TaskResultKind is the artifact kind of task.result.json.
const TaskResultKind = "dome.task.result/v1"

// TaskResultPayload is the payload of tasks/<task_id>/task.result.json.
type TaskResultPayload struct {
	TaskID          string                `json:"task_id"`
	NodeID          string                `json:"node_id"`
	NodeExecutionID string                `json:"node_execution_id"`
	WaveID          string                `json:"wave_id"`
	Attempt         int                   `json:"attempt"`
	Status          string                `json:"status"`
	Reason          string                `json:"reason"`
	Detail          string                `json:"detail,omitempty"`
	Grant           *GrantRef             `json:"grant,omitempty"`
	SpawnSpecDigest string                `json:"spawn_spec_digest,omitempty"`
	Sandbox         *SandboxSummary       `json:"sandbox,omitempty"`
	Gateway         *gateway.Summary      `json:"gateway,omitempty"`
	Proposals       []gateway.ProposalRef `json:"proposals"`
	Withdrawn       []string              `json:"withdrawn"`
	Outputs         []OutputRef           `json:"outputs"`
	RequiredOutputs []OutputCheck         `json:"required_outputs"`
}

// OutputCheck is one required output and whether the attempt made it.
type OutputCheck struct {
	Kind         string `json:"kind"`
	EvidenceKind string `json:"evidence_kind,omitempty"`
	Optional     bool   `json:"optional,omitempty"`
	Satisfied    bool   `json:"satisfied"`
	By           string `json:"by,omitempty"` // the proposal or the output file
}

// ack writes the task's result durably, then records task.ack: an
// acknowledged result is never lost. The result is built from the ledger
// alone (its created_at is its completion's time), so writing it again
// after a crash gives the same bytes.
func (c *coordinator) ack(taskID string) error {
	t, ok := c.rep.v.st.Tasks[taskID]
	if !ok || t.Status != TaskCompleted {
		return nil
	}
	var disp, comp ledger.Event
	evs := c.events()
	if int(t.Completed) > len(evs) {
		return fmt.Errorf("task %s: its completion is not in the ledger", taskID)
	}
	for _, e := range evs[t.Dispatched-1 : t.Completed] {
		if e.Sequence == t.Dispatched {
			disp = e
		}
		if e.Sequence == t.Completed {
			comp = e
		}
	}
	var dp, cp stack.TaskPayload
	var dd DispatchData
	var cd CompletedData
	if decodeData(disp.Payload, &dp) != nil || decodeData(dp.Data, &dd) != nil || decodeData(comp.Payload, &cp) != nil || decodeData(cp.Data, &cd) != nil {
		return fmt.Errorf("task %s: its events do not read back", taskID)
	}
	task, _ := c.q.Task(t.NodeID)
	res := TaskResultPayload{TaskID: taskID, NodeID: t.NodeID, NodeExecutionID: t.NodeExecutionID, WaveID: t.WaveID, Attempt: t.Attempt,
		Status: cd.Outcome.Status, Reason: cd.Outcome.Reason, Detail: cd.Detail, Grant: dd.Grant, SpawnSpecDigest: dd.SpawnDigest,
		Sandbox: cd.Sandbox, Gateway: cd.Gateway, Proposals: nonNil(cd.Proposals), Withdrawn: nonNil(cd.Withdrawn), Outputs: nonNil(cd.Outputs),
		RequiredOutputs: []OutputCheck{}}
	for _, o := range task.RequiredOutputs {
		oc := OutputCheck{Kind: o.Kind, EvidenceKind: o.EvidenceKind, Optional: o.Optional}
		switch o.Kind {
		case runspec.OutputPatchProposal:
			for _, p := range cd.Proposals {
				if p.Status == gateway.StatusSubmitted || p.Status == gateway.StatusDeduplicated {
					oc.Satisfied, oc.By = true, p.ProposalID
					break
				}
			}
		case runspec.OutputEvidence:
			if p := cd.Evidence[o.EvidenceKind]; p != "" {
				oc.Satisfied, oc.By = true, p
			}
		}
		res.RequiredOutputs = append(res.RequiredOutputs, oc)
	}
	at, _ := time.Parse(time.RFC3339Nano, comp.TS)
	h := stack.NewHeader(TaskResultKind, taskID, c.cfg.RunID, t.WaveID, c.waveBase(t.WaveID), at, c.cfg.Producer)
	h.NodeID, h.InputsHash = t.NodeID, dd.SpawnDigest
	doc, _, err := artifact.SealValue(h, res, nil)
	if err != nil {
		return err
	}
	rel := filepath.ToSlash(filepath.Join("tasks", taskID, TaskResult))
	var digest string
	err = c.sr.Do(func(r *stack.Run) error {
		var err error
		digest, _, err = r.WriteArtifact(filepath.Join(c.l.Root, rel), doc)
		return err
	})
	if err != nil {
		return err
	}
	if err := c.record(stack.TopicTaskAck, stack.TaskPayload{TaskID: taskID, WaveID: t.WaveID, NodeID: t.NodeID, NodeExecutionID: t.NodeExecutionID,
		Attempt: t.Attempt, WorkerID: WorkerID(taskID), Reason: cd.Outcome.Reason, Data: mustJSON(AckData{Result: rel, Digest: digest})}); err != nil {
		return err
	}
	return nil
}

// waveBase is the base commit of a wave.
func (c *coordinator) waveBase(wave string) string {
	st := c.stackState()
	for _, w := range st.Waves {
		if w.WaveID == wave {
			return w.BaseRef
		}
	}
	return st.BaseRef
}

// recover finishes what the last session left: the decisions the engine
// derives that the ledger lacks, the attempts that were running (lost:
// run again, not charged; their proposals withdrawn, their grants
// revoked), and results completed but not acknowledged.
func (c *coordinator) recover() error {
	pending := c.rep.pending
	c.rep.pending = nil
	var lost []TaskView
	for _, t := range c.rep.v.st.Tasks {
		if t.Status == TaskDispatched {
			lost = append(lost, t)
		}
	}
	sort.Slice(lost, func(i, j int) bool { return lost[i].Dispatched < lost[j].Dispatched })
	p := ResumedPayload{Session: c.rep.v.st.Sessions + 1, Coordinator: c.keyRef(), Lost: []string{}, WorkDir: c.tmp, Removed: c.removed}
	for _, t := range lost {
		p.Lost = append(p.Lost, t.TaskID)
	}
	if err := c.record(TopicResumed, p); err != nil {
		return err
	}
	c.tell(Progress{Kind: "resumed", Detail: fmt.Sprintf("session %d: %d attempt(s) lost, %d decision(s) to record", p.Session, len(lost), len(pending))})
	if err := c.decided(pending); err != nil {
		return err
	}
	for _, t := range lost {
		if t.Grant != nil {
			exp, _ := time.Parse(time.RFC3339, t.Grant.ExpiresAt)
			// A verifier accepts a grant up to its clock skew past its
			// expiry: the revocation outlives that.
			exp = exp.Add(grant.MaxClockSkewSeconds * time.Second)
			now := c.cfg.Now()
			if exp.After(now) {
				c.store.Revoke(context.Background(), grant.Revocation{Issuer: "dome-run:" + c.cfg.RunID, Kind: grant.RevokeJTI, Value: t.Grant.JTI,
					Reason: "lost with its coordinator", Until: exp, RevokedAt: now})
			}
		}
		task, _ := c.q.Task(t.NodeID)
		at := &attempt{a: gateway.Attempt{RunID: c.cfg.RunID, WaveID: t.WaveID, NodeID: t.NodeID, NodeExecutionID: t.NodeExecutionID, TaskID: t.TaskID,
			WorkerID: WorkerID(t.TaskID)}, attempt: t.Attempt, task: task, cancel: func() {}}
		c.running[t.NodeExecutionID] = at
		if err := c.completeLost(at); err != nil {
			return err
		}
	}
	for _, id := range sortedKeys(c.rep.v.st.Tasks) {
		if c.rep.v.st.Tasks[id].Status == TaskCompleted {
			if err := c.ack(id); err != nil {
				return err
			}
		}
	}
	return nil
}

// completeLost records an attempt lost with the last coordinator.
func (c *coordinator) completeLost(at *attempt) error {
	delete(c.running, at.a.NodeExecutionID)
	w, err := c.withdraw(at.a, nil, ReasonLost)
	if err != nil {
		return err
	}
	data := CompletedData{Outcome: workflow.Outcome{Status: workflow.OutcomeLost, Reason: ReasonLost}, Detail: "it was running when its coordinator stopped",
		Withdrawn: w}
	p := stack.TaskPayload{TaskID: at.a.TaskID, WaveID: at.a.WaveID, NodeID: at.a.NodeID, NodeExecutionID: at.a.NodeExecutionID,
		Attempt: at.attempt, WorkerID: at.a.WorkerID, Reason: ReasonLost, Detail: data.Detail, Data: mustJSON(data)}
	if err := c.record(stack.TopicTaskCompleted, p); err != nil {
		return err
	}
	ds, err := c.eng.Report(at.a.NodeExecutionID, data.Outcome)
	if err != nil {
		return err
	}
	if err := c.decided(ds); err != nil {
		return err
	}
	return c.ack(at.a.TaskID)
}
