package provider

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func execRuntime(timeout int) *Runtime {
	return &Runtime{SchemaVersion: RuntimeSchemaVersion, ID: "local", Kind: "exec", Models: []string{"m1"}, TimeoutSeconds: timeout, MaxResponseBytes: 4096}
}

// script writes an executable bash script and returns its path.
func script(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "model.sh")
	if err := os.WriteFile(p, []byte("#!/usr/bin/env bash\nset -eu\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestExec_RequestAndResponse(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "request.json")
	sh := script(t, `cat > `+in+`; printf '{"text":"hi there","model":"m1","usage":{"promptTokens":5,"completionTokens":2}}'`)
	p, err := New(execRuntime(10), Options{Exec: []string{sh}})
	if err != nil {
		t.Fatal(err)
	}
	req := Request{RunID: "r", Agent: "a", Step: "s", Model: "m1", System: "sys", Prompt: "hello", Temperature: 0, Seed: 7}
	resp, err := p.Complete(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text != "hi there" || resp.Usage.PromptTokens != 5 || p.Kind() != "exec" {
		t.Fatalf("%+v", resp)
	}
	data, _ := os.ReadFile(in)
	var got Request
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	req.SchemaVersion = RequestSchema
	if got != req {
		t.Fatalf("the command read %+v, want %+v", got, req)
	}
}

func TestExec_Failures(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	cases := []struct {
		name, body string
		code       string
		msg        string
	}{
		{"garbage", `cat >/dev/null; echo 'I am not JSON'`, CodeBadResponse, "I am not JSON"},
		{"no text", `cat >/dev/null; echo '{"answer":"x"}'`, CodeBadResponse, `unknown field "answer"`},
		{"text not a string", `cat >/dev/null; echo '{"text":7}'`, CodeBadResponse, "cannot unmarshal"},
		{"two values", `cat >/dev/null; echo '{"text":"a"}{"text":"b"}'`, CodeBadResponse, "more than one"},
		{"empty", `cat >/dev/null`, CodeBadResponse, "EOF"},
		{"negative usage", `cat >/dev/null; echo '{"text":"a","usage":{"promptTokens":-1,"completionTokens":0}}'`, CodeBadResponse, "negative"},
		{"exit 3", `cat >/dev/null; echo 'model exploded' >&2; exit 3`, CodeFailed, "model exploded"},
		{"too much output", `cat >/dev/null; head -c 10000 /dev/zero | tr '\0' a`, CodeOutputLimit, "more than 4096 bytes"},
		{"timeout kills the group", `cat >/dev/null; sleep 30 & echo $! > ` + pidFile + `; wait`, CodeTimeout, "process group killed"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, _ := New(execRuntime(1), Options{Exec: []string{script(t, tc.body)}})
			start := time.Now()
			_, err := p.Complete(context.Background(), Request{Model: "m1", Prompt: "x"})
			if CodeOf(err) != tc.code || !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("%v (%s), want %s containing %q", err, CodeOf(err), tc.code, tc.msg)
			}
			if time.Since(start) > 5*time.Second {
				t.Fatalf("took %s", time.Since(start))
			}
		})
	}
	// The sleeping grandchild of the timed-out command is gone.
	data, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(data)))
	deadline := time.Now().Add(3 * time.Second)
	for syscall.Kill(pid, 0) == nil {
		if time.Now().After(deadline) {
			t.Fatalf("process %d survived the timeout", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestExec_RefusesBeforeRunning(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "ran")
	p, _ := New(execRuntime(5), Options{Exec: []string{script(t, `touch `+marker+`; echo '{"text":"x"}'`)}})
	if _, err := p.Complete(context.Background(), Request{Model: "gpt-5"}); CodeOf(err) != CodeModelNotAllowed {
		t.Fatalf("%v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := p.Complete(ctx, Request{Model: "m1"}); CodeOf(err) != CodeCancelled {
		t.Fatalf("%v", err)
	}
	if _, err := New(execRuntime(5), Options{}); CodeOf(err) != CodeConfig {
		t.Fatalf("no command: %v", err)
	}
	missing, err := New(execRuntime(5), Options{Exec: []string{"/nonexistent/model"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := missing.Complete(context.Background(), Request{Model: "m1"}); CodeOf(err) != CodeFailed {
		t.Fatalf("missing command: %v", err)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the command ran for a refused request")
	}
}

func TestParseRuntime(t *testing.T) {
	s := CompileRuntimeSchema()
	good := `{"schemaVersion":"dome.agent_runtime/v1","id":"openai","kind":"openai","sdk":{"module":"github.com/openai/openai-go/v3","version":"v3.96.0"},"baseUrl":"https://api.openai.com/v1","auth":{"apiKeyEnv":"OPENAI_API_KEY"},"models":["gpt-4o-mini"],"timeoutSeconds":60}`
	rt, err := ParseRuntime("openai.runtime.json", []byte(good), s)
	if err != nil || rt.SDK.Version != "v3.96.0" {
		t.Fatalf("%v %+v", err, rt)
	}
	for name, data := range map[string]string{
		"openai without auth":  strings.Replace(good, `"auth":{"apiKeyEnv":"OPENAI_API_KEY"},`, "", 1),
		"exec with a base URL": `{"schemaVersion":"dome.agent_runtime/v1","id":"x","kind":"exec","baseUrl":"http://x","models":["m"],"timeoutSeconds":1}`,
		"key in the file":      strings.Replace(good, `"apiKeyEnv":"OPENAI_API_KEY"`, `"apiKeyEnv":"OPENAI_API_KEY","apiKey":"sk-123"`, 1),
		"lower-case env name":  strings.Replace(good, `OPENAI_API_KEY`, `openai_key`, 1),
		"no models":            strings.Replace(good, `["gpt-4o-mini"]`, `[]`, 1),
		"other SDK":            strings.Replace(good, `github.com/openai/openai-go/v3`, `github.com/sashabaranov/go-openai`, 1),
		"file URL":             strings.Replace(good, `https://api.openai.com/v1`, `file:///etc/passwd`, 1),
	} {
		if _, err := ParseRuntime("x.runtime.json", []byte(data), s); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	temp, seed := 0.7, int64(3)
	rt.Defaults = &Defaults{Temperature: &temp, Seed: &seed, MaxTokens: 100}
	if got := rt.Sampling(nil, nil, 0); got != (Sampling{Temperature: 0.7, Seed: 3, MaxTokens: 100}) {
		t.Fatalf("%+v", got)
	}
	zero := 0.0
	if got := (&Runtime{}).Sampling(nil, nil, 0); got != (Sampling{}) {
		t.Fatalf("the deterministic default is temperature 0, seed 0: %+v", got)
	}
	if got := rt.Sampling(&zero, nil, 5); got.Temperature != 0 || got.MaxTokens != 5 {
		t.Fatalf("%+v", got)
	}
}
