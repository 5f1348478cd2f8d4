package agent

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dome-registry/dome/pkg/agent/provider"
	"github.com/dome-registry/dome/pkg/ledger"
	"github.com/dome-registry/dome/pkg/workflow"
)

func openJournal(t *testing.T, dir, runID string) (*LedgerJournal, func()) {
	t.Helper()
	l, err := ledger.Open(dir, runID)
	if err != nil {
		t.Fatal(err)
	}
	clock := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	return &LedgerJournal{Log: l, Now: func() time.Time { return clock }}, func() { l.Close() }
}

func topics(t *testing.T, dir, runID string) []ledger.Event {
	t.Helper()
	evs, err := ledger.Read(dir, runID)
	if err != nil {
		t.Fatal(err)
	}
	return evs
}

func agentWith(id string, w *Workflow) *Profile {
	p := profile(id)
	p.Workflow = w
	return p
}

// TestINV_AGT_003_StepsRunInArrayOrder: without maxConcurrency the steps
// run one at a time in the order of the array, not sorted or reordered.
func TestINV_AGT_003_StepsRunInArrayOrder(t *testing.T) {
	w := steps("zeta", "alpha", "mid", "beta", "omega")
	c := catalogOf(t, nil, agentWith("seq", w))
	var running, overlap atomic.Int32
	m := &fakeModel{}
	m.fn = func(ctx context.Context, req provider.Request) (provider.Response, error) {
		if running.Add(1) > 1 {
			overlap.Add(1)
		}
		time.Sleep(2 * time.Millisecond)
		running.Add(-1)
		return provider.Response{Text: req.Step}, nil
	}
	res, err := runnerWith(c, m, nil).Start(context.Background(), StartOptions{RunID: "r", Agent: "seq", Task: "t"})
	if err != nil || res.Status != StatusSucceeded {
		t.Fatalf("%v %+v", err, res)
	}
	if got := strings.Join(m.steps(), " "); got != "seq/zeta seq/alpha seq/mid seq/beta seq/omega" || overlap.Load() != 0 {
		t.Fatalf("order %s, %d overlaps", got, overlap.Load())
	}
	if OutputText(res.Output) != "omega" {
		t.Fatalf("the output is the last step's: %s", res.Output)
	}
}

// TestINV_CP_001_CheckpointComplete: after every step a checkpoint holds
// stepIndex, completedStepId, stepOutputs, context and memorySnapshot; it is
// validated before it is saved, and a resume needs nothing else.
func TestINV_CP_001_CheckpointComplete(t *testing.T) {
	w := steps("fetch", "parse", "summarize", "publish")
	w.Steps[2].Prompt = "summarize {{steps.parse.output}}"
	c := catalogOf(t, nil, agentWith("cp", w))
	dir := t.TempDir()
	j, done := openJournal(t, dir, "run-1")
	if _, err := runnerWith(c, &fakeModel{}, nil).Start(context.Background(), StartOptions{RunID: "run-1", Agent: "cp", Task: "the task", Journal: j}); err != nil {
		t.Fatal(err)
	}
	done()
	g, _ := BuildGraph(w)
	var cps []workflow.Checkpoint
	for _, e := range topics(t, dir, "run-1") {
		if e.Topic != TopicCheckpoint {
			continue
		}
		var raw map[string]json.RawMessage
		json.Unmarshal(e.Payload, &raw)
		for _, f := range []string{"stepIndex", "completedStepId", "stepOutputs", "context", "memorySnapshot"} {
			if _, ok := raw[f]; !ok {
				t.Fatalf("checkpoint %d lacks %s: %s", e.Sequence, f, e.Payload)
			}
		}
		cp, err := decodeCheckpoint(e.Payload)
		if err != nil {
			t.Fatal(err)
		}
		if err := cp.Validate(g); err != nil {
			t.Fatal(err)
		}
		var rc RunContext
		if err := decodeStrict(cp.Context, &rc); err != nil || rc.Task != "the task" || rc.Agent != "cp" || rc.RunID != "run-1" || rc.ProfileDigest == "" {
			t.Fatalf("context %s: %v", cp.Context, err)
		}
		cps = append(cps, cp)
	}
	if len(cps) != 4 {
		t.Fatalf("%d checkpoints, want one per step", len(cps))
	}
	for i, cp := range cps {
		if cp.StepIndex != i || cp.CompletedStepID != w.Steps[i].ID || len(cp.StepOutputs) != i+1 {
			t.Fatalf("checkpoint %d: %+v", i, cp)
		}
	}
	// Derivable from the checkpoint alone: a log of just the start and
	// the second checkpoint resumes at step 2 with the outputs it holds.
	dir2 := t.TempDir()
	l2, _ := ledger.Open(dir2, "run-1")
	evs := topics(t, dir, "run-1")
	var started, second ledger.Event
	n := 0
	for _, e := range evs {
		if e.Topic == TopicRunStarted {
			started = e
		}
		if e.Topic == TopicCheckpoint {
			if n++; n == 2 {
				second = e
			}
		}
	}
	for _, e := range []ledger.Event{started, second} {
		if _, err := l2.AppendPayload(e.Topic, time.Unix(0, 0), json.RawMessage(e.Payload)); err != nil {
			t.Fatal(err)
		}
	}
	rec, err := LoadRun(dir2, "run-1")
	if err != nil {
		t.Fatal(err)
	}
	m := &fakeModel{}
	res, err := runnerWith(c, m, nil).Resume(context.Background(), rec, &LedgerJournal{Log: l2, Now: time.Now})
	l2.Close()
	if err != nil || res.Status != StatusSucceeded || res.ResumeFromStep != 2 {
		t.Fatalf("%v %+v", err, res)
	}
	if got := strings.Join(m.steps(), " "); got != "cp/summarize cp/publish" {
		t.Fatalf("resumed steps %s", got)
	}
	if !strings.Contains(m.calls[0].Prompt, "cp/parse: do parse for the task") {
		t.Fatalf("the restored output was not used: %q", m.calls[0].Prompt)
	}
}

// TestINV_CP_001_CorruptCheckpointRefused: a checkpoint that is missing a
// field, has one too many, or does not fit the workflow is refused with the
// field named, never resumed from.
func TestINV_CP_001_CorruptCheckpointRefused(t *testing.T) {
	w := steps("a", "b", "c")
	c := catalogOf(t, nil, agentWith("cp", w))
	good := func() (ledger.Event, ledger.Event) {
		dir := t.TempDir()
		j, done := openJournal(t, dir, "r")
		m := &fakeModel{fn: func(ctx context.Context, req provider.Request) (provider.Response, error) {
			if req.Step == "b" {
				return provider.Response{}, errors.New("stop here")
			}
			return provider.Response{Text: "ok"}, nil
		}}
		runnerWith(c, m, nil).Start(context.Background(), StartOptions{RunID: "r", Agent: "cp", Task: "t", Journal: j})
		done()
		var st, cp ledger.Event
		for _, e := range topics(t, dir, "r") {
			switch e.Topic {
			case TopicRunStarted:
				st = e
			case TopicCheckpoint:
				cp = e
			}
		}
		return st, cp
	}
	st, cp := good()
	var payload map[string]any
	json.Unmarshal(cp.Payload, &payload)
	cases := []struct {
		name  string
		edit  func(map[string]any)
		field string
	}{
		{"missing memorySnapshot", func(m map[string]any) { delete(m, "memorySnapshot") }, "/payload/memorySnapshot"},
		{"missing stepOutputs", func(m map[string]any) { delete(m, "stepOutputs") }, "/payload/stepOutputs"},
		{"unknown field", func(m map[string]any) { m["nextStep"] = 2 }, "/payload/nextStep"},
		{"index past the steps", func(m map[string]any) { m["stepIndex"] = 7 }, "/payload/stepIndex"},
		{"wrong completed step", func(m map[string]any) { m["completedStepId"] = "c" }, "/payload/completedStepId"},
		{"output of a step not done", func(m map[string]any) { m["stepOutputs"].(map[string]any)["c"] = "x" }, "/payload/stepOutputs"},
		{"another run's context", func(m map[string]any) { m["context"].(map[string]any)["task"] = "other" }, "/payload/context/task"},
		{"memory of the wrong shape", func(m map[string]any) { m["memorySnapshot"] = []any{1} }, "/payload/memorySnapshot"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var p map[string]any
			b, _ := json.Marshal(payload)
			json.Unmarshal(b, &p)
			tc.edit(p)
			dir := t.TempDir()
			l, _ := ledger.Open(dir, "r")
			l.AppendPayload(TopicRunStarted, time.Unix(0, 0), json.RawMessage(st.Payload))
			l.AppendPayload(TopicCheckpoint, time.Unix(0, 0), p)
			rec, err := LoadRun(dir, "r")
			m := &fakeModel{}
			if err == nil {
				_, err = runnerWith(c, m, nil).Resume(context.Background(), rec, &LedgerJournal{Log: l, Now: time.Now})
			}
			l.Close()
			if err == nil || !strings.Contains(err.Error(), tc.field) {
				t.Fatalf("want a refusal naming %s, got %v", tc.field, err)
			}
			if len(m.calls) != 0 {
				t.Fatal("resumed from a bad checkpoint")
			}
		})
	}
}

// TestINV_CP_002_ResumeStartsAfterCheckpoint: an interrupted run resumes at
// the step after the checkpoint; completed steps are restored, never run
// again, and their outputs feed the steps that follow.
func TestINV_CP_002_ResumeStartsAfterCheckpoint(t *testing.T) {
	w := steps("s1", "s2", "s3", "s4", "s5")
	w.Steps[2].Prompt = "continue from {{steps.s2.output}}"
	c := catalogOf(t, nil, agentWith("res", w))
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	m := &fakeModel{}
	m.fn = func(cctx context.Context, req provider.Request) (provider.Response, error) {
		if req.Step == "s3" {
			cancel() // the process is interrupted while s3 runs
			<-cctx.Done()
			return provider.Response{}, cctx.Err()
		}
		return provider.Response{Text: "out-" + req.Step}, nil
	}
	j, done := openJournal(t, dir, "r")
	_, err := runnerWith(c, m, nil).Start(ctx, StartOptions{RunID: "r", Agent: "res", Task: "t", Journal: j})
	done()
	if !errors.Is(err, ErrInterrupted) {
		t.Fatalf("%v", err)
	}
	rec, err := LoadRun(dir, "r")
	if err != nil {
		t.Fatal(err)
	}
	if rec.Checkpoint == nil || rec.Checkpoint.StepIndex != 1 || rec.Steps["s3"].Status != "cancelled" {
		t.Fatalf("after the interruption: %+v %+v", rec.Checkpoint, rec.Steps["s3"])
	}
	m2 := &fakeModel{}
	j2, done2 := openJournal(t, dir, "r")
	res, err := runnerWith(c, m2, nil).Resume(context.Background(), rec, j2)
	done2()
	if err != nil || res.Status != StatusSucceeded || res.ResumeFromStep != 2 {
		t.Fatalf("%v %+v", err, res)
	}
	if got := strings.Join(m2.steps(), " "); got != "res/s3 res/s4 res/s5" {
		t.Fatalf("resumed %s", got)
	}
	if m2.calls[0].Prompt != "continue from out-s2" {
		t.Fatalf("s3 prompt %q", m2.calls[0].Prompt)
	}
	rec, _ = LoadRun(dir, "r")
	if rec.Finished == nil || rec.Finished.Status != StatusSucceeded || len(rec.Resumes) != 1 || rec.Resumes[0].ResumeFromStep != 2 {
		t.Fatalf("%+v", rec)
	}
	// A finished run is not resumed.
	if _, err := runnerWith(c, m2, nil).Resume(context.Background(), rec, nil); err == nil || !strings.Contains(err.Error(), "already finished") {
		t.Fatalf("%v", err)
	}
}

// TestResume_RestoresStepsFinishedAfterTheCheckpoint: in a DAG a step may
// finish while an earlier one still runs; its output is in the log and a
// resume restores it instead of running it again.
func TestResume_RestoresStepsFinishedAfterTheCheckpoint(t *testing.T) {
	w := steps("slow", "fast", "after:slow")
	w.MaxConcurrency = 2
	c := catalogOf(t, nil, agentWith("dag", w))
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	m := &fakeModel{fn: func(cctx context.Context, req provider.Request) (provider.Response, error) {
		if req.Step == "slow" {
			<-cctx.Done()
			return provider.Response{}, cctx.Err()
		}
		cancel()
		return provider.Response{Text: "fast done"}, nil
	}}
	j, done := openJournal(t, dir, "r")
	_, err := runnerWith(c, m, nil).Start(ctx, StartOptions{RunID: "r", Agent: "dag", Task: "t", Journal: j})
	done()
	if !errors.Is(err, ErrInterrupted) {
		t.Fatal(err)
	}
	rec, err := LoadRun(dir, "r")
	if err != nil || rec.Checkpoint != nil || rec.Restorable["fast"] == nil {
		t.Fatalf("%v %+v", err, rec)
	}
	m2 := &fakeModel{}
	j2, done2 := openJournal(t, dir, "r")
	res, err := runnerWith(c, m2, nil).Resume(context.Background(), rec, j2)
	done2()
	if err != nil || res.Status != StatusSucceeded || strings.Join(res.Restored, ",") != "fast" {
		t.Fatalf("%v %+v", err, res)
	}
	if got := strings.Join(m2.steps(), " "); got != "dag/slow dag/after" {
		t.Fatalf("resumed %s: fast ran again", got)
	}
}

// TestINV_PE_001_ParallelRespectsLimit: independent steps run at once, never
// more than maxConcurrency.
func TestINV_PE_001_ParallelRespectsLimit(t *testing.T) {
	w := steps("a", "b", "c", "d", "e", "f", "g")
	w.MaxConcurrency = 3
	c := catalogOf(t, nil, agentWith("par", w))
	var running, peak atomic.Int32
	m := &fakeModel{fn: func(ctx context.Context, req provider.Request) (provider.Response, error) {
		n := running.Add(1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		time.Sleep(20 * time.Millisecond)
		running.Add(-1)
		return provider.Response{Text: req.Step}, nil
	}}
	res, err := runnerWith(c, m, nil).Start(context.Background(), StartOptions{RunID: "r", Agent: "par", Task: "t"})
	if err != nil || res.Status != StatusSucceeded || len(m.calls) != 7 {
		t.Fatalf("%v %+v", err, res)
	}
	if peak.Load() != 3 {
		t.Fatalf("peak concurrency %d, want 3", peak.Load())
	}
}

// TestINV_PE_002_DependenciesHonored: a step starts only after every step
// it depends on finished, and gets their outputs.
func TestINV_PE_002_DependenciesHonored(t *testing.T) {
	w := steps("a", "b:a", "c:a", "d:b,c", "e")
	w.MaxConcurrency = 4
	w.Steps[3].Prompt = "join {{steps.b.output}} and {{steps.c.output}}"
	c := catalogOf(t, nil, agentWith("deps", w))
	var mu sync.Mutex
	finished := map[string]bool{}
	deps := map[string][]string{"b": {"a"}, "c": {"a"}, "d": {"b", "c"}}
	var bad []string
	m := &fakeModel{fn: func(ctx context.Context, req provider.Request) (provider.Response, error) {
		mu.Lock()
		for _, d := range deps[req.Step] {
			if !finished[d] {
				bad = append(bad, req.Step+" before "+d)
			}
		}
		mu.Unlock()
		time.Sleep(5 * time.Millisecond)
		mu.Lock()
		finished[req.Step] = true
		mu.Unlock()
		return provider.Response{Text: "<" + req.Step + ">"}, nil
	}}
	res, err := runnerWith(c, m, nil).Start(context.Background(), StartOptions{RunID: "r", Agent: "deps", Task: "t"})
	if err != nil || res.Status != StatusSucceeded || len(bad) > 0 {
		t.Fatalf("%v %+v %v", err, res, bad)
	}
	for _, call := range m.calls {
		if call.Step == "d" && call.Prompt != "join <b> and <c>" {
			t.Fatalf("d got %q", call.Prompt)
		}
	}
	// A cycle is refused before anything runs.
	cyc := steps("a:c", "b:a", "c:b")
	cyc.MaxConcurrency = 2
	if _, err := BuildGraph(cyc); err == nil {
		t.Fatal("a cyclic workflow was accepted")
	}
}

// TestINV_PE_003_FailureStrategies: failFast stops everything at the first
// failure, continueOnError runs what does not depend on the failure and
// aggregates the errors, rollback compensates the completed steps in
// reverse order.
func TestINV_PE_003_FailureStrategies(t *testing.T) {
	failOn := func(step string) *fakeModel {
		return &fakeModel{fn: func(ctx context.Context, req provider.Request) (provider.Response, error) {
			switch {
			case req.Step == step:
				return provider.Response{}, &provider.Error{Code: provider.CodeHTTP, Provider: "test", Message: "HTTP 500"}
			case req.Step == "slow":
				select {
				case <-ctx.Done():
					return provider.Response{}, ctx.Err()
				case <-time.After(5 * time.Second):
				}
			}
			return provider.Response{Text: req.Step}, nil
		}}
	}
	t.Run("failFast", func(t *testing.T) {
		// bad and slow start together (bad first: it is on the longer
		// path); zother waits for a free slot and never gets one.
		w := steps("slow", "bad", "after:bad", "zother")
		w.MaxConcurrency = 2
		c := catalogOf(t, nil, agentWith("ff", w))
		start := time.Now()
		res, err := runnerWith(c, failOn("bad"), nil).Start(context.Background(), StartOptions{RunID: "r", Agent: "ff", Task: "t"})
		if err != nil || res.Status != StatusFailed || time.Since(start) > 4*time.Second {
			t.Fatalf("%v %+v", err, res)
		}
		st := map[string]workflow.Status{}
		for _, f := range res.Summary.Failures {
			st[f.NodeID] = f.Status
		}
		if st["bad"] != workflow.StatusFailed || st["slow"] != workflow.StatusCancelled || st["after"] != workflow.StatusSkipped || st["zother"] != workflow.StatusSkipped {
			t.Fatalf("%+v", res.Summary)
		}
	})
	t.Run("continueOnError", func(t *testing.T) {
		w := steps("bad", "after:bad", "other", "last:other")
		w.MaxConcurrency = 2
		w.FailureStrategy = ContinueOnError
		c := catalogOf(t, nil, agentWith("coe", w))
		res, err := runnerWith(c, failOn("bad"), nil).Start(context.Background(), StartOptions{RunID: "r", Agent: "coe", Task: "t"})
		if err != nil || res.Status != StatusFailed {
			t.Fatalf("%v %+v", err, res)
		}
		if strings.Join(res.Steps, ",") != "other,last" || len(res.Summary.Failures) != 2 ||
			res.Summary.Failures[0].NodeID != "bad" || res.Summary.Failures[1].NodeID != "after" || res.Summary.Failures[1].Status != workflow.StatusSkipped {
			t.Fatalf("%+v", res)
		}
	})
	t.Run("rollback", func(t *testing.T) {
		w := steps("s1", "s2", "s3", "s4")
		w.FailureStrategy = Rollback
		w.Steps[0].Compensate = &Action{Prompt: "undo s1 ({{steps.s1.output}})"}
		w.Steps[1].Compensate = &Action{Prompt: "undo s2"}
		c := catalogOf(t, nil, agentWith("rb", w))
		dir := t.TempDir()
		j, done := openJournal(t, dir, "r")
		m := failOn("s3")
		res, err := runnerWith(c, m, nil).Start(context.Background(), StartOptions{RunID: "r", Agent: "rb", Task: "t", Journal: j})
		done()
		if err != nil || res.Status != StatusFailed || strings.Join(res.Summary.Compensated, ",") != "s2,s1" {
			t.Fatalf("%v %+v", err, res)
		}
		if got := strings.Join(m.steps(), " "); got != "rb/s1 rb/s2 rb/s3 rb/s2 rb/s1" {
			t.Fatalf("calls %s", got)
		}
		if m.calls[4].Prompt != "undo s1 (s1)" {
			t.Fatalf("compensation prompt %q", m.calls[4].Prompt)
		}
		var comp []string
		for _, e := range topics(t, dir, "r") {
			if e.Topic == TopicStepCompensated {
				var p StepCompensated
				json.Unmarshal(e.Payload, &p)
				comp = append(comp, p.StepID+":"+p.Status)
			}
		}
		if strings.Join(comp, ",") != "s2:succeeded,s1:succeeded" {
			t.Fatalf("compensation events %v", comp)
		}
	})
}

func TestRun_DelegationAndTools(t *testing.T) {
	cat := exampleCatalog(t)
	m := &fakeModel{}
	dir := t.TempDir()
	j, done := openJournal(t, dir, "demo")
	res, err := runnerWith(cat, m, nil).Start(context.Background(), StartOptions{RunID: "demo", Agent: "planner", Task: "plan a README change", Journal: j})
	done()
	if err != nil || res.Status != StatusSucceeded {
		t.Fatalf("%v %+v", err, res)
	}
	want := "planner/outline writer/respond reviewer/findings reviewer/verdict planner/summarize"
	if got := strings.Join(m.steps(), " "); got != want {
		t.Fatalf("calls %s, want %s", got, want)
	}
	if res.Usage.Delegations != 2 || res.Usage.ProviderCalls != 5 {
		t.Fatalf("usage %+v", res.Usage)
	}
	rec, err := LoadRun(dir, "demo")
	if err != nil || rec.Finished == nil || rec.Checkpoint.StepIndex != 3 {
		t.Fatalf("%v %+v", err, rec)
	}
	// A tool step in a run goes through the executor (here without one:
	// TOOL_NOT_FOUND, a failed step, not a panic).
	p := profile("tooly")
	p.Tools = &ToolAccess{Card: "runtime/dome-worker", Capabilities: []string{"repo.read"}}
	p.Workflow = &Workflow{Steps: []Step{{ID: "read", Tool: &ToolCall{Name: "repo-read/read_file", Input: json.RawMessage(`{"path":"{{task}}"}`)}}}}
	c := catalogOf(t, nil, p)
	res, err = runnerWith(c, m, nil).Start(context.Background(), StartOptions{RunID: "r", Agent: "tooly", Task: "README.md"})
	if err != nil || res.Status != StatusFailed || !strings.Contains(res.Summary.Failures[0].Reason, CodeToolNotFound) {
		t.Fatalf("%v %+v", err, res)
	}
	var ran atomic.Int32
	x, _ := NewExecutor(&allowAll{}, readFileTool(&ran))
	res, err = runnerWith(c, m, x).Start(context.Background(), StartOptions{RunID: "r", Agent: "tooly", Task: "README.md"})
	if err != nil || res.Status != StatusSucceeded || string(res.Output) != `{"content":"hello","lines":[1,2]}` || res.Usage.ToolCalls != 1 {
		t.Fatalf("%v %+v", err, res)
	}
}
