package provider

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// chatServer is an in-process OpenAI-compatible server: it records every
// request and answers with the handler the test sets.
type chatServer struct {
	*httptest.Server
	mu      sync.Mutex
	reqs    []recorded
	respond func(w http.ResponseWriter, n int)
}

type recorded struct {
	Path, Auth, UserAgent string
	Body                  map[string]any
}

func newChatServer(t *testing.T) *chatServer {
	s := &chatServer{}
	s.respond = func(w http.ResponseWriter, n int) { writeCompletion(w, "the answer") }
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		data, _ := io.ReadAll(r.Body)
		var body map[string]any
		json.Unmarshal(data, &body)
		s.mu.Lock()
		s.reqs = append(s.reqs, recorded{Path: r.URL.Path, Auth: r.Header.Get("Authorization"), UserAgent: r.Header.Get("User-Agent"), Body: body})
		n := len(s.reqs)
		s.mu.Unlock()
		s.respond(w, n)
	}))
	t.Cleanup(s.Close)
	return s
}

func writeCompletion(w http.ResponseWriter, text string) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{
		"id": "chatcmpl-1", "object": "chat.completion", "created": 1767225600, "model": "gpt-4o-mini",
		"choices": []any{map[string]any{"index": 0, "finish_reason": "stop", "message": map[string]any{"role": "assistant", "content": text}}},
		"usage":   map[string]any{"prompt_tokens": 42, "completion_tokens": 7, "total_tokens": 49},
	})
}

func openaiRuntime(base string) *Runtime {
	seed := int64(7)
	return &Runtime{SchemaVersion: RuntimeSchemaVersion, ID: "openai", Kind: "openai", SDK: &SDK{Module: OpenAIModule, Version: "v3.96.0"},
		BaseURL: base, Auth: &Auth{APIKeyEnv: "TEST_OPENAI_KEY"}, Models: []string{"gpt-4o-mini"}, TimeoutSeconds: 2, MaxRetries: 1,
		Defaults: &Defaults{Seed: &seed}}
}

// env holds the key; the rest (DOME_EXEC_PATH, where TestMain put
// dome-openai) is the process's.
func env(k string) string {
	if k == "TEST_OPENAI_KEY" {
		return "sk-test-123"
	}
	return os.Getenv(k)
}

func newOpenAIForTest(t *testing.T, s *chatServer) Provider {
	t.Helper()
	p, err := New(openaiRuntime(s.URL+"/v1"), Options{Getenv: env})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestOpenAI_RealClientAgainstCompatibleServer runs the OpenAI Go SDK (in
// dome-openai, run as dome runs it) against an in-process server and checks
// what it sent: the system message
// (abilities, then the system prompt) before the user prompt, the model,
// temperature 0, the sampling seed, the token limit and the key from the
// environment.
func TestOpenAI_RealClientAgainstCompatibleServer(t *testing.T) {
	s := newChatServer(t)
	p := newOpenAIForTest(t, s)
	resp, err := p.Complete(context.Background(), Request{Agent: "a", Model: "gpt-4o-mini", System: "# Abilities\n\nA\n\n---\n\nYou are a.", Prompt: "do it", Temperature: 0, Seed: 7, MaxTokens: 64})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text != "the answer" || resp.Usage.PromptTokens != 42 || resp.Usage.CompletionTokens != 7 || p.Kind() != "openai" {
		t.Fatalf("%+v", resp)
	}
	if len(s.reqs) != 1 {
		t.Fatalf("%d requests", len(s.reqs))
	}
	r := s.reqs[0]
	if r.Path != "/v1/chat/completions" || r.Auth != "Bearer sk-test-123" || !strings.Contains(r.UserAgent, "OpenAI/Go 3.96.0") {
		t.Fatalf("%+v", r)
	}
	msgs := r.Body["messages"].([]any)
	m0, m1 := msgs[0].(map[string]any), msgs[1].(map[string]any)
	if len(msgs) != 2 || m0["role"] != "system" || !strings.HasPrefix(m0["content"].(string), "# Abilities") || m1["role"] != "user" || m1["content"] != "do it" {
		t.Fatalf("messages %v", msgs)
	}
	if r.Body["model"] != "gpt-4o-mini" || r.Body["temperature"] != 0.0 || r.Body["seed"] != 7.0 || r.Body["max_completion_tokens"] != 64.0 {
		t.Fatalf("body %v", r.Body)
	}
}

func TestOpenAI_Failures(t *testing.T) {
	cases := []struct {
		name    string
		respond func(w http.ResponseWriter, n int)
		code    string
		calls   int
	}{
		{"500 after retries", func(w http.ResponseWriter, n int) {
			w.Header().Set("Retry-After-Ms", "1")
			w.WriteHeader(500)
			io.WriteString(w, `{"error":{"message":"boom","type":"server_error"}}`)
		}, CodeHTTP, 2},
		{"401 is not retried", func(w http.ResponseWriter, n int) {
			w.WriteHeader(401)
			io.WriteString(w, `{"error":{"message":"bad key"}}`)
		}, CodeHTTP, 1},
		{"garbage", func(w http.ResponseWriter, n int) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `this is not json`)
		}, CodeBadResponse, 1},
		{"no choices", func(w http.ResponseWriter, n int) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"id":"x","object":"chat.completion","choices":[]}`)
		}, CodeBadResponse, 1},
		{"too large", func(w http.ResponseWriter, n int) { writeCompletion(w, strings.Repeat("x", 2<<20)) }, CodeOutputLimit, 1},
		{"timeout", func(w http.ResponseWriter, n int) { time.Sleep(3 * time.Second); writeCompletion(w, "late") }, CodeTimeout, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newChatServer(t)
			s.respond = tc.respond
			p := newOpenAIForTest(t, s)
			_, err := p.Complete(context.Background(), Request{Model: "gpt-4o-mini", System: "s", Prompt: "p"})
			if CodeOf(err) != tc.code {
				t.Fatalf("%v (%s), want %s", err, CodeOf(err), tc.code)
			}
			if tc.calls > 0 && len(s.reqs) != tc.calls {
				t.Fatalf("%d requests, want %d", len(s.reqs), tc.calls)
			}
		})
	}
}

func TestOpenAI_Config(t *testing.T) {
	s := newChatServer(t)
	rt := openaiRuntime(s.URL)
	// The pin is checked by dome-openai against the SDK it links.
	pinned := openaiRuntime(s.URL)
	pinned.SDK = &SDK{Module: OpenAIModule, Version: "v3.95.0"}
	p, err := New(pinned, Options{Getenv: env})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Complete(context.Background(), Request{Model: "gpt-4o-mini"}); CodeOf(err) != CodeConfig ||
		!strings.Contains(err.Error(), "pins github.com/openai/openai-go/v3 v3.95.0 but dome-openai links v3.96.0") || len(s.reqs) != 0 {
		t.Fatalf("pin: %v (%d requests)", err, len(s.reqs))
	}
	if _, err := New(rt, Options{Getenv: func(string) string { return "" }}); CodeOf(err) != CodeConfig || !strings.Contains(err.Error(), "TEST_OPENAI_KEY is not set") {
		t.Fatalf("key: %v", err)
	}
	p, _ = New(rt, Options{Getenv: env})
	if _, err := p.Complete(context.Background(), Request{Model: "gpt-5"}); CodeOf(err) != CodeModelNotAllowed || len(s.reqs) != 0 {
		t.Fatalf("allowlist: %v (%d requests)", err, len(s.reqs))
	}
	// --base-url points the runtime at any compatible server.
	other := newChatServer(t)
	p, _ = New(openaiRuntime("https://api.openai.invalid/v1"), Options{Getenv: env, BaseURL: other.URL})
	if _, err := p.Complete(context.Background(), Request{Model: "gpt-4o-mini"}); err != nil || len(other.reqs) != 1 || other.reqs[0].Path != "/chat/completions" {
		t.Fatalf("%v %+v", err, other.reqs)
	}
}

// TestOpenAI_Helper: dome-openai is found where pkg/helperexec looks, or
// named; missing, the runtime cannot be used, and the error says how to
// install it. The key reaches the helper through its environment, never
// its command line.
func TestOpenAI_Helper(t *testing.T) {
	s := newChatServer(t)
	rt := openaiRuntime(s.URL)
	empty := t.TempDir()
	noHelper := func(k string) string {
		switch k {
		case "TEST_OPENAI_KEY":
			return "sk-test-123"
		case "DOME_EXEC_PATH", "PATH":
			return empty
		}
		return ""
	}
	_, err := New(rt, Options{Getenv: noHelper, InstallHint: func(name string) string { return "install " + name + " v1.4.0" }})
	if CodeOf(err) != CodeConfig || !strings.Contains(err.Error(), "dome-openai: helper program not found: looked in DOME_EXEC_PATH ("+empty+")") ||
		!strings.Contains(err.Error(), "install dome-openai v1.4.0, or set DOME_EXEC_PATH") {
		t.Fatalf("%v", err)
	}
	p, err := New(rt, Options{Getenv: env})
	if err != nil {
		t.Fatal(err)
	}
	ep := p.(*execProvider)
	for _, a := range ep.argv {
		if strings.Contains(a, "sk-test-123") {
			t.Fatalf("the key is on the command line: %q", ep.argv)
		}
	}
	if !slices.Contains(ep.env, OpenAIKeyEnv+"=sk-test-123") {
		t.Fatal("the key is not in the helper's environment")
	}
	// A named helper that is not one: a failed provider, its stderr quoted.
	bad := script(t, `cat >/dev/null; echo 'not a model' >&2; exit 4`)
	p, _ = New(rt, Options{Getenv: env, Helper: bad})
	if _, err := p.Complete(context.Background(), Request{Model: "gpt-4o-mini"}); CodeOf(err) != CodeFailed || !strings.Contains(err.Error(), "not a model") {
		t.Fatalf("%v", err)
	}
	// An error answer with a code the provider does not give is no error answer.
	odd := script(t, `cat >/dev/null; echo '{"error":{"code":"MODEL_NOT_ALLOWED","message":"x"}}'; exit 1`)
	p, _ = New(rt, Options{Getenv: env, Helper: odd})
	if _, err := p.Complete(context.Background(), Request{Model: "gpt-4o-mini"}); CodeOf(err) != CodeFailed {
		t.Fatalf("%v", err)
	}
}
