package agent

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/dome-registry/dome/pkg/agent/provider"
)

// exampleCatalog loads the example registry this repository ships.
func exampleCatalog(t testing.TB) *Catalog {
	t.Helper()
	root := filepath.Join("..", "..", "registry")
	read := func(pattern string) []File {
		paths, err := filepath.Glob(filepath.Join(root, pattern))
		if err != nil {
			t.Fatal(err)
		}
		sort.Strings(paths)
		var out []File
		for _, p := range paths {
			data, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			rel, _ := filepath.Rel(filepath.Join(root, ".."), p)
			out = append(out, File{Path: filepath.ToSlash(rel), Data: data})
		}
		return out
	}
	c, err := LoadCatalog("0123456789abcdef0123456789abcdef01234567", read("agents/*.agent.*"), read("agents/runtimes/*.runtime.json"), read("abilities/*.md"), LoadOptions{Tokenizer: NewTokenizer()})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// profile returns a valid minimal profile.
func profile(id string) *Profile {
	return &Profile{SchemaVersion: ProfileSchemaVersion, ID: id, Name: "Agent " + id, Description: "the " + id + " agent",
		SystemPrompt: "You are " + id + ".", Enabled: true, Provider: Provider{Runtime: "test", Model: "m"}}
}

func testRuntime() *provider.Runtime {
	return &provider.Runtime{SchemaVersion: provider.RuntimeSchemaVersion, ID: "test", Kind: "exec", Models: []string{"m"}, TimeoutSeconds: 10}
}

// catalogOf builds a catalog of the standard agent and ps, with abilities.
func catalogOf(t testing.TB, abilities map[string]string, ps ...*Profile) *Catalog {
	t.Helper()
	var agents []File
	for _, p := range append([]*Profile{profile(StandardAgentID)}, ps...) {
		data, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		agents = append(agents, File{Path: "registry/agents/" + p.ID + ".agent.json", Data: data})
	}
	rt, _ := json.Marshal(testRuntime())
	var abs []File
	for id, text := range abilities {
		abs = append(abs, File{Path: "registry/abilities/" + id + ".md", Data: []byte(text)})
	}
	sort.Slice(abs, func(i, j int) bool { return abs[i].Path < abs[j].Path })
	c, err := LoadCatalog("1111111111111111111111111111111111111111", agents, []File{{Path: "registry/agents/runtimes/test.runtime.json", Data: rt}}, abs, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// fakeModel is a provider for the runner's tests: it records every request
// and answers with fn (default: "<agent>/<step>: <prompt>").
type fakeModel struct {
	mu    sync.Mutex
	calls []provider.Request
	fn    func(ctx context.Context, req provider.Request) (provider.Response, error)
}

func (f *fakeModel) Kind() string { return "exec" }

func (f *fakeModel) Complete(ctx context.Context, req provider.Request) (provider.Response, error) {
	f.mu.Lock()
	f.calls = append(f.calls, req)
	f.mu.Unlock()
	if f.fn != nil {
		return f.fn(ctx, req)
	}
	return provider.Response{Text: req.Agent + "/" + req.Step + ": " + req.Prompt, Usage: provider.Usage{PromptTokens: 3, CompletionTokens: 2}}, nil
}

func (f *fakeModel) steps() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, c := range f.calls {
		out = append(out, c.Agent+"/"+c.Step)
	}
	return out
}

func runnerWith(c *Catalog, m *fakeModel, tools *Executor) *Runner {
	return NewRunner(Env{Catalog: c, Tools: tools, Provider: func(*provider.Runtime) (provider.Provider, error) { return m, nil }})
}

func steps(specs ...string) *Workflow {
	w := &Workflow{}
	for _, s := range specs {
		id, deps, _ := strings.Cut(s, ":")
		st := Step{ID: id, Prompt: "do " + id + " for {{task}}"}
		if deps != "" {
			st.DependsOn = strings.Split(deps, ",")
		}
		w.Steps = append(w.Steps, st)
	}
	return w
}
