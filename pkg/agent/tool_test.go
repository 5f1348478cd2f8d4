package agent

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/dome-registry/dome/pkg/schemaval"
)

type allowAll struct{ calls atomic.Int32 }

func (a *allowAll) Authorize(context.Context, Call) error { a.calls.Add(1); return nil }

type denyPaths struct{}

func (denyPaths) Authorize(_ context.Context, c Call) error {
	for _, p := range c.ReadPaths {
		if strings.HasPrefix(p, "secret/") {
			return &DeniedError{Reason: "PATH_DENIED", Message: "path " + p + " is denied by the grant"}
		}
	}
	return nil
}

func readFileTool(ran *atomic.Int32) *Tool {
	return &Tool{
		Name:  "repo-read/read_file",
		Input: schemaval.MustCompile("read_file", []byte(`{"type":"object","additionalProperties":false,"required":["path"],"properties":{"path":{"type":"string","minLength":1,"maxLength":200}}}`)),
		Access: func(in json.RawMessage) Access {
			var x struct{ Path string }
			json.Unmarshal(in, &x)
			return Access{ReadPaths: []string{x.Path}}
		},
		Run: func(_ context.Context, _ ToolContext, in json.RawMessage) (json.RawMessage, error) {
			ran.Add(1)
			return json.RawMessage(`{"content":"hello","lines":[1,2]}`), nil
		},
	}
}

// TestINV_TOOL_001_InvalidInputRejected: inputs are validated against the
// tool's JSON Schema before any tool code runs, and before the grant is
// asked.
func TestINV_TOOL_001_InvalidInputRejected(t *testing.T) {
	var ran atomic.Int32
	auth := &allowAll{}
	x, err := NewExecutor(auth, readFileTool(&ran))
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range []string{`{}`, `{"path":""}`, `{"path":7}`, `{"path":"a","extra":1}`, `[1]`, `{"path":"a","path":"b"}`, `{"path":`} {
		res := x.Execute(context.Background(), "repo-read/read_file", json.RawMessage(in))
		if res.Success() || res.Err().Code != CodeInvalidInput {
			t.Fatalf("%s: %+v", in, res.Err())
		}
	}
	if ran.Load() != 0 || auth.calls.Load() != 0 {
		t.Fatalf("invalid input reached the tool (%d runs) or the grant (%d checks)", ran.Load(), auth.calls.Load())
	}
	res := x.Execute(context.Background(), "repo-read/read_file", json.RawMessage(`{"path":"a"}`))
	if !res.Success() || ran.Load() != 1 || auth.calls.Load() != 1 {
		t.Fatalf("valid input: %+v", res.Err())
	}
	res = x.Execute(context.Background(), "repo-read/read_file", json.RawMessage(`{"path":"x"}`))
	b, _ := json.Marshal(res)
	if !strings.Contains(string(b), `"success":true`) {
		t.Fatalf("%s", b)
	}
	// The grant is asked with what the call touches, and refuses with its
	// reason code; the tool does not run.
	y, _ := NewExecutor(denyPaths{}, readFileTool(&ran))
	res = y.Execute(context.Background(), "repo-read/read_file", json.RawMessage(`{"path":"secret/key"}`))
	if res.Success() || res.Err().Code != CodePermissionDenied || res.Err().Reason != "PATH_DENIED" || ran.Load() != 2 {
		t.Fatalf("denied: %+v (ran %d)", res.Err(), ran.Load())
	}
	if _, err := NewExecutor(nil, readFileTool(&ran)); err == nil {
		t.Fatal("an executor without an authorizer")
	}
}

// TestINV_TOOL_002_ResultImmutable: a result cannot be changed after it is
// made: its fields are unexported and what its accessors return are copies.
func TestINV_TOOL_002_ResultImmutable(t *testing.T) {
	var ran atomic.Int32
	x, _ := NewExecutor(&allowAll{}, readFileTool(&ran))
	res := x.Execute(context.Background(), "repo-read/read_file", json.RawMessage(`{"path":"a"}`))
	before, _ := json.Marshal(res)
	out := res.Output()
	for i := range out {
		out[i] = 'X'
	}
	if e := res.Err(); e != nil {
		t.Fatal("a successful result has an error")
	}
	failed := x.Execute(context.Background(), "nope", nil)
	e := failed.Err()
	e.Code, e.Message = "OK", "tampered"
	after, _ := json.Marshal(res)
	if string(before) != string(after) || string(res.Output()) != `{"content":"hello","lines":[1,2]}` {
		t.Fatalf("the result changed: %s -> %s", before, after)
	}
	if failed.Err().Code != CodeToolNotFound {
		t.Fatalf("the failed result changed: %+v", failed.Err())
	}
}

// TestINV_TOOL_003_UnknownToolReturnsError: an unknown tool is a result
// with TOOL_NOT_FOUND and the tool's name, never a panic.
func TestINV_TOOL_003_UnknownToolReturnsError(t *testing.T) {
	var ran atomic.Int32
	x, _ := NewExecutor(&allowAll{}, readFileTool(&ran))
	if x.IsToolAvailable("repo-read/write_file") || !x.IsToolAvailable("repo-read/read_file") {
		t.Fatal("IsToolAvailable")
	}
	for _, ex := range []*Executor{x, nil} {
		res := ex.Execute(context.Background(), "repo-read/write_file", json.RawMessage(`{"path":"a"}`))
		if res.Success() || res.Err().Code != CodeToolNotFound || !strings.Contains(res.Err().Message, "repo-read/write_file") || res.ToolName() != "repo-read/write_file" {
			t.Fatalf("%+v", res.Err())
		}
	}
	// A tool that panics or answers garbage is a failed result too.
	bad := &Tool{Name: "t/panic", Input: schemaval.MustCompile("any", []byte(`{"type":"object"}`)),
		Run: func(context.Context, ToolContext, json.RawMessage) (json.RawMessage, error) { panic("boom") }}
	garbage := &Tool{Name: "t/garbage", Input: schemaval.MustCompile("any", []byte(`{"type":"object"}`)),
		Run: func(context.Context, ToolContext, json.RawMessage) (json.RawMessage, error) {
			return json.RawMessage("{nope"), nil
		}}
	y, _ := NewExecutor(&allowAll{}, bad, garbage)
	if r := y.Execute(context.Background(), "t/panic", nil); r.Err().Code != CodeToolFailed {
		t.Fatalf("panic: %+v", r.Err())
	}
	if r := y.Execute(context.Background(), "t/garbage", nil); r.Err().Code != CodeInvalidOutput {
		t.Fatalf("garbage: %+v", r.Err())
	}
}
