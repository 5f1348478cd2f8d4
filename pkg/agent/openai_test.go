package agent

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/dome-registry/dome/pkg/agent/provider"
)

// TestRun_OpenAIProviderInProcessServer runs an agent through the real
// OpenAI Go SDK (in dome-openai, run as dome runs it) against an in-process OpenAI-compatible server that records
// the requests: the abilities are in the system message, ahead of the
// system prompt, before the user message, within the token budget.
func TestRun_OpenAIProviderInProcessServer(t *testing.T) {
	var mu sync.Mutex
	var bodies []map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		data, _ := io.ReadAll(r.Body)
		var b map[string]any
		json.Unmarshal(data, &b)
		mu.Lock()
		bodies = append(bodies, b)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"c","object":"chat.completion","created":1,"model":"gpt-4o-mini","choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"done"}}],"usage":{"prompt_tokens":9,"completion_tokens":1,"total_tokens":10}}`)
	}))
	defer srv.Close()

	long := "---\ntitle: Long\n---\n" + strings.Repeat("Go tests are table-driven and named for behaviour. ", 100)
	abs := map[string]string{"core-a": testAbilities["core-a"], "long": long}
	p := profile("coder")
	p.CoreAbilities, p.Abilities, p.AbilityTokenBudget = []string{"core-a"}, []string{"long"}, 120
	p.Workflow = steps("plan", "write")
	c := catalogOf(t, abs, p)
	// The profile's runtime "test" becomes an openai one.
	c.Runtimes["test"] = &provider.Runtime{SchemaVersion: provider.RuntimeSchemaVersion, ID: "test", Kind: "openai",
		SDK: &provider.SDK{Module: provider.OpenAIModule, Version: "v3.96.0"}, BaseURL: "https://api.openai.invalid/v1",
		Auth: &provider.Auth{APIKeyEnv: "KEY"}, Models: []string{"m"}, TimeoutSeconds: 5}
	r := NewRunner(Env{Catalog: c, Provider: func(rt *provider.Runtime) (provider.Provider, error) {
		getenv := func(k string) string {
			if k == "KEY" {
				return "k"
			}
			return os.Getenv(k) // DOME_EXEC_PATH: where TestMain put dome-openai
		}
		return provider.New(rt, provider.Options{BaseURL: srv.URL, Getenv: getenv})
	}})
	res, err := r.Start(context.Background(), StartOptions{RunID: "r", Agent: "coder", Task: "write table-driven go tests"})
	if err != nil || res.Status != StatusSucceeded || res.Usage.PromptTokens != 18 {
		t.Fatalf("%v %+v", err, res)
	}
	if len(bodies) != 2 {
		t.Fatalf("%d requests", len(bodies))
	}
	tok := NewTokenizer()
	for _, b := range bodies {
		msgs := b["messages"].([]any)
		sys, user := msgs[0].(map[string]any), msgs[1].(map[string]any)
		content := sys["content"].(string)
		block, rest, ok := strings.Cut(content, injectionSep)
		if sys["role"] != "system" || user["role"] != "user" || !ok || rest != "You are coder." {
			t.Fatalf("messages %v", msgs)
		}
		if !strings.Contains(block, "Always know A") || !strings.Contains(block, "[truncated]") {
			t.Fatalf("abilities %q", block)
		}
		if n := tok.Count(block + injectionSep); n > 120 {
			t.Fatalf("the injected abilities take %d tokens, over the budget of 120", n)
		}
		if b["model"] != "m" || b["temperature"] != 0.0 || b["seed"] != 0.0 {
			t.Fatalf("sampling %v", b)
		}
	}
}
