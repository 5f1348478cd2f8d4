package webui

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dome-registry/dome/internal/runtest"
	"github.com/dome-registry/dome/pkg/agent"
	"github.com/dome-registry/dome/pkg/agent/provider"
	"github.com/dome-registry/dome/pkg/ledger"
)

// exampleAgents loads the agents, runtimes and abilities this repository
// ships (registry/).
func exampleAgents(t *testing.T) *agent.Catalog {
	t.Helper()
	root := runtest.Root()
	read := func(pattern string) []agent.File {
		paths, err := filepath.Glob(filepath.Join(root, "registry", pattern))
		if err != nil {
			t.Fatal(err)
		}
		sort.Strings(paths)
		var out []agent.File
		for _, p := range paths {
			data, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			rel, _ := filepath.Rel(root, p)
			out = append(out, agent.File{Path: filepath.ToSlash(rel), Data: data})
		}
		return out
	}
	c, err := agent.LoadCatalog("0123456789abcdef0123456789abcdef01234567", read("agents/*.agent.*"), read("agents/runtimes/*.runtime.json"),
		read("abilities/*.md"), agent.LoadOptions{Tokenizer: agent.NewTokenizer()})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// model is a hostile model: it answers with markup, and fails or stops
// the run where its test says.
type model struct {
	mu   sync.Mutex
	n    int
	fn   func(n int, req provider.Request) (provider.Response, error)
	seen []string
}

func (m *model) Kind() string { return "exec" }

func (m *model) Complete(ctx context.Context, req provider.Request) (provider.Response, error) {
	m.mu.Lock()
	m.n++
	n := m.n
	m.seen = append(m.seen, req.Agent+"/"+req.Step)
	m.mu.Unlock()
	return m.fn(n, req)
}

func runAgent(t *testing.T, runs, runID string, m *model, ctx context.Context, cat *agent.Catalog, task string) (*agent.Result, error) {
	t.Helper()
	log, err := ledger.Open(filepath.Join(runs, runID), runID)
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	r := agent.NewRunner(agent.Env{Catalog: cat, Provider: func(*provider.Runtime) (provider.Provider, error) { return m, nil }})
	return r.Start(ctx, agent.StartOptions{RunID: runID, Agent: "planner", Task: task, Journal: &agent.LedgerJournal{Log: log, Now: func() time.Time { return t0 }}})
}

func TestAgentRunPages_HostileModelRendersAsText(t *testing.T) {
	cat := exampleAgents(t)
	runs := t.TempDir()
	// A run whose model answers with markup and fails its last step.
	hostile := &model{fn: func(n int, req provider.Request) (provider.Response, error) {
		if req.Step == "summarize" {
			return provider.Response{}, &provider.Error{Code: provider.CodeFailed, Provider: "local-exec", Message: "<iframe src=x></iframe> the model went away"}
		}
		return provider.Response{Text: "<script>window.__domePwned='output'</script><h1>injected</h1> from " + req.Step, Usage: provider.Usage{PromptTokens: 10, CompletionTokens: 3}}, nil
	}}
	if res, err := runAgent(t, runs, "plan-hostile", hostile, context.Background(), cat, "plan <b>bold</b> <img src=x onerror=\"window.__domePwned='task'\">"); err != nil || res.Status != agent.StatusFailed {
		t.Fatalf("run: %v %+v", err, res)
	}
	// A run stopped after its second model call, then resumed.
	ctx, cancel := context.WithCancel(context.Background())
	first := &model{fn: func(n int, req provider.Request) (provider.Response, error) {
		if n == 2 {
			cancel()
			return provider.Response{}, &provider.Error{Code: provider.CodeCancelled, Provider: "local-exec", Message: "stopped", Err: context.Canceled}
		}
		return provider.Response{Text: "first " + req.Step, Usage: provider.Usage{PromptTokens: 5, CompletionTokens: 1}}, nil
	}}
	if _, err := runAgent(t, runs, "plan-resumed", first, ctx, cat, "plan a resume"); !errors.Is(err, agent.ErrInterrupted) {
		t.Fatalf("the first session: %v", err)
	}
	rec, err := agent.LoadRun(filepath.Join(runs, "plan-resumed"), "plan-resumed")
	if err != nil {
		t.Fatal(err)
	}
	log, err := ledger.Open(filepath.Join(runs, "plan-resumed"), "plan-resumed")
	if err != nil {
		t.Fatal(err)
	}
	second := &model{fn: func(n int, req provider.Request) (provider.Response, error) {
		return provider.Response{Text: "second " + req.Step, Usage: provider.Usage{PromptTokens: 5, CompletionTokens: 1}}, nil
	}}
	r := agent.NewRunner(agent.Env{Catalog: cat, Provider: func(*provider.Runtime) (provider.Provider, error) { return second, nil }})
	res, err := r.Resume(context.Background(), rec, &agent.LedgerJournal{Log: log, Now: func() time.Time { return t0 }})
	log.Close()
	if err != nil || res.Status != agent.StatusSucceeded {
		t.Fatalf("resume: %v %+v", err, res)
	}

	if os.Getenv("DUMP") != "" {
		evs, _ := ledger.Read(filepath.Join(runs, "plan-resumed"), "plan-resumed")
		for _, e := range evs {
			t.Logf("%d %s %.300s", e.Sequence, e.Topic, e.Payload)
		}
	}
	srv := newRunServer(t, Options{RunsDir: runs})
	for _, tc := range []struct {
		path string
		want []string
	}{
		{"/ui/runs/", []string{"plan-hostile", "plan-resumed", "agent"}},
		{"/ui/runs/plan-hostile/", []string{"agent run", "planner", "plan &lt;b&gt;bold&lt;/b&gt; &lt;img src=x onerror=", "failed",
			"&lt;script&gt;window.__domePwned=&#39;output&#39;&lt;/script&gt;&lt;h1&gt;injected&lt;/h1&gt; from outline",
			"PROVIDER_FAILED", "&lt;iframe src=x&gt;&lt;/iframe&gt; the model went away", "delegated", "writer", "reviewer",
			"house-style", "of 2000 tokens", "checkpoint after step 0"}},
		{"/ui/runs/plan-resumed/", []string{"succeeded", "resumed from step 1", "second summarize", "DELEGATE_FAILED", "second respond", "first outline"}},
		{"/ui/runs/plan-hostile/at/3/", []string{"3 of 13", "incomplete"}},
		{"/ui/runs/plan-hostile/at/3/run.json", []string{`"kind": "agent"`, `"agent_run"`, `"stepId": "outline"`}},
		{"/ui/runs/plan-hostile/at/3/events/", []string{"agent.run.started", "agent.step.finished"}},
	} {
		code, body, hdr := get(t, srv, tc.path)
		if code != 200 {
			t.Errorf("%s: status %d\n%.800s", tc.path, code, body)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(body, w) {
				t.Errorf("%s: no %q in\n%.4000s", tc.path, w, body)
			}
		}
		if strings.HasPrefix(hdr.Get("Content-Type"), "text/html") {
			checkEscaped(t, tc.path, body)
		}
	}
	// Each session's attempt of the interrupted step is its own.
	_, body, _ := get(t, srv, "/ui/runs/plan-resumed/at/17/run.json")
	var v struct {
		Agent AgentRun `json:"agent_run"`
	}
	if err := json.Unmarshal([]byte(body), &v); err != nil {
		t.Fatal(err)
	}
	if d := v.Agent.Steps[1]; len(d.Attempts) != 2 || d.Attempts[0].Finished != 6 || d.Attempts[1].Started != 8 || d.Attempts[1].Result.Status != "succeeded" || len(v.Agent.Resumes) != 1 || len(v.Agent.Checkpoints) != 4 {
		t.Errorf("the resumed run: %+v", v.Agent)
	}
	// A finished run's page is static; an unfinished one follows its ledger.
	if _, body, _ := get(t, srv, "/ui/runs/plan-hostile/"); strings.Contains(body, "<script") {
		t.Error("a finished agent run's page carries the live script")
	}
	evs, _ := ledger.Read(filepath.Join(runs, "plan-hostile"), "plan-hostile")
	cut := t.TempDir()
	log, err = ledger.Open(filepath.Join(cut, "open"), "open")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range evs[:4] {
		if _, err := log.AppendPayload(e.Topic, t0, e.Payload); err != nil {
			t.Fatal(err)
		}
	}
	log.Close()
	srv2 := newRunServer(t, Options{RunsDir: cut})
	if _, body, _ := get(t, srv2, "/ui/runs/open/"); !strings.Contains(body, "live.js") || !strings.Contains(body, "incomplete") {
		t.Errorf("an unfinished agent run's page:\n%.2000s", body)
	}
	// Stack pages do not apply to an agent run; its ledger and run.json do.
	if _, body, _ := get(t, srv, "/ui/runs/plan-hostile/at/3/"); strings.Contains(body, "checkpoints/") {
		t.Error("an agent run's page links the stack's pages")
	}
}
