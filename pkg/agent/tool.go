package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"

	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/dome-registry/dome/pkg/schemaval"
)

// Tool result error codes.
const (
	CodeToolNotFound     = "TOOL_NOT_FOUND"    // no tool by that name
	CodeInvalidInput     = "INVALID_INPUT"     // the input fails the tool's JSON Schema
	CodePermissionDenied = "PERMISSION_DENIED" // the grant does not allow the call
	CodeToolFailed       = "TOOL_FAILED"       // the tool ran and failed
	CodeInvalidOutput    = "INVALID_OUTPUT"    // the tool answered what is not JSON
)

// Tool is one callable tool: a skill operation, named <tool>/<operationId>.
type Tool struct {
	Name        string
	Description string
	// Input is the JSON Schema every input must pass before Run is called.
	Input *schemaval.Schema
	// Access describes a call for the grant: the paths it reads or writes
	// and the hosts it reaches (nil: none).
	Access func(input json.RawMessage) Access
	// Run does the work; it is called only with a valid, granted input.
	Run func(ctx context.Context, tc ToolContext, input json.RawMessage) (json.RawMessage, error)
}

// ToolContext is who calls a tool, and what else the grant lets it read.
type ToolContext struct {
	Agent string
	// CanRead reports whether the caller's grant lets it read path: for a
	// tool that reads more than the paths its call declares (a search
	// over a tree skips what the grant does not allow).
	CanRead func(path string) bool
}

// Access is what one call touches, checked against the grant.
type Access struct {
	ReadPaths  []string
	WritePaths []string
	Hosts      []string
}

// Call is one tool call as the Authorizer sees it.
type Call struct {
	Agent  string // the calling agent
	Method string // the tool's name, <tool>/<operationId>
	Access
}

// DeniedError is an Authorizer's refusal, with the grant's reason code.
type DeniedError struct {
	Reason  string // e.g. METHOD_NOT_GRANTED, PATH_OUTSIDE_ROOTS, EXPIRED
	Message string
}

func (e *DeniedError) Error() string { return e.Message + " (" + e.Reason + ")" }

// Authorizer decides whether a call is allowed: the agent's grant. It is
// asked after the input passed the tool's schema and before the tool runs.
type Authorizer interface {
	Authorize(ctx context.Context, call Call) error
}

// ReadChecker is an Authorizer that can also say, path by path, what an
// agent's grant lets it read.
type ReadChecker interface {
	CanRead(agent, path string) bool
}

// ToolError is the error part of a failed ToolResult.
type ToolError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Reason  string `json:"reason,omitempty"` // the grant's reason code, for PERMISSION_DENIED
	Field   string `json:"field,omitempty"`  // the JSON pointer, for INVALID_INPUT
}

// ToolResult is the outcome of one tool call. It cannot be changed once
// made: its fields are unexported and its accessors return copies.
type ToolResult struct {
	tool    string
	success bool
	output  []byte
	err     ToolError
}

func successResult(tool string, out json.RawMessage) *ToolResult {
	return &ToolResult{tool: tool, success: true, output: append([]byte(nil), out...)}
}

func failedResult(tool string, e ToolError) *ToolResult {
	return &ToolResult{tool: tool, err: e}
}

// ToolName returns the tool the call named.
func (r *ToolResult) ToolName() string { return r.tool }

// Success reports whether the tool ran and answered.
func (r *ToolResult) Success() bool { return r.success }

// Output returns a copy of the tool's JSON output (nil when it failed).
func (r *ToolResult) Output() json.RawMessage {
	if !r.success {
		return nil
	}
	return append(json.RawMessage(nil), r.output...)
}

// Err returns the error of a failed call (nil on success).
func (r *ToolResult) Err() *ToolError {
	if r.success {
		return nil
	}
	e := r.err
	return &e
}

type toolResultJSON struct {
	Tool    string          `json:"tool"`
	Success bool            `json:"success"`
	Output  json.RawMessage `json:"output,omitempty"`
	Error   *ToolError      `json:"error,omitempty"`
}

// MarshalJSON writes {"tool", "success", "output" | "error"}.
func (r *ToolResult) MarshalJSON() ([]byte, error) {
	return json.Marshal(toolResultJSON{Tool: r.tool, Success: r.success, Output: r.Output(), Error: r.Err()})
}

// Executor runs tools through an Authorizer. Every call goes: lookup
// (TOOL_NOT_FOUND), the input against the tool's JSON Schema
// (INVALID_INPUT), the grant (PERMISSION_DENIED with its reason code), then
// the tool. Failures are results, never panics or Go errors.
type Executor struct {
	tools map[string]*Tool
	auth  Authorizer
}

// NewExecutor returns an executor over tools, authorizing through auth.
func NewExecutor(auth Authorizer, tools ...*Tool) (*Executor, error) {
	if auth == nil {
		return nil, errors.New("agent: a tool executor needs an authorizer: tool calls go through a grant")
	}
	x := &Executor{tools: map[string]*Tool{}, auth: auth}
	for _, t := range tools {
		if t == nil || t.Name == "" || t.Input == nil || t.Run == nil {
			return nil, errors.New("agent: a tool needs a name, an input schema and a function")
		}
		if _, dup := x.tools[t.Name]; dup {
			return nil, fmt.Errorf("agent: tool %q registered twice", t.Name)
		}
		x.tools[t.Name] = t
	}
	return x, nil
}

// IsToolAvailable reports whether name is a tool of the executor.
func (x *Executor) IsToolAvailable(name string) bool {
	_, ok := x.tools[name]
	return ok
}

// Names returns the tools' names, sorted.
func (x *Executor) Names() []string {
	out := make([]string, 0, len(x.tools))
	for n := range x.tools {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Execute calls tool name with input, as no agent in particular.
func (x *Executor) Execute(ctx context.Context, name string, input json.RawMessage) *ToolResult {
	return x.ExecuteAs(ctx, "", name, input)
}

// ExecuteAs calls tool name with input for agent (whose grant decides).
func (x *Executor) ExecuteAs(ctx context.Context, agent, name string, input json.RawMessage) (res *ToolResult) {
	if x == nil || !x.IsToolAvailable(name) {
		return failedResult(name, ToolError{Code: CodeToolNotFound, Message: fmt.Sprintf("tool %q is not available", name)})
	}
	t := x.tools[name]
	if len(input) == 0 {
		input = json.RawMessage("{}")
	}
	if err := t.Input.Validate("input of "+name, input); err != nil {
		te := ToolError{Code: CodeInvalidInput, Message: err.Error()}
		var ie *errkind.InputError
		if errors.As(err, &ie) {
			te.Field, te.Message = ie.Field, ie.Problem
		}
		return failedResult(name, te)
	}
	call := Call{Agent: agent, Method: name}
	if t.Access != nil {
		call.Access = t.Access(input)
	}
	if err := x.auth.Authorize(ctx, call); err != nil {
		te := ToolError{Code: CodePermissionDenied, Message: err.Error()}
		var de *DeniedError
		if errors.As(err, &de) {
			te.Reason, te.Message = de.Reason, de.Message
		}
		return failedResult(name, te)
	}
	defer func() {
		if p := recover(); p != nil {
			res = failedResult(name, ToolError{Code: CodeToolFailed, Message: fmt.Sprintf("the tool panicked: %v", p)})
		}
	}()
	tc := ToolContext{Agent: agent, CanRead: func(string) bool { return false }}
	if rc, ok := x.auth.(ReadChecker); ok {
		tc.CanRead = func(p string) bool { return rc.CanRead(agent, p) }
	}
	out, err := t.Run(ctx, tc, input)
	if err != nil {
		return failedResult(name, ToolError{Code: CodeToolFailed, Message: err.Error()})
	}
	if !json.Valid(out) {
		return failedResult(name, ToolError{Code: CodeInvalidOutput, Message: "the tool answered what is not JSON"})
	}
	return successResult(name, out)
}
