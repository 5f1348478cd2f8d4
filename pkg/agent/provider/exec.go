package provider

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"
)

// execProvider runs a command per request.
type execProvider struct {
	rt   *Runtime
	argv []string
	env  []string
	// kind is "exec", or "openai" for the dome-openai helper, which may
	// also answer a provider error ({"error": {"code", "message",
	// "status"}}) with exit status 1.
	kind string
	// timeout bounds the command; limit its output.
	timeout time.Duration
	limit   int
}

func newExec(rt *Runtime, opts Options) (Provider, error) {
	if len(opts.Exec) == 0 || opts.Exec[0] == "" {
		return nil, &Error{Code: CodeConfig, Provider: rt.ID, Message: "the exec runtime needs a command: pass --exec 'PROGRAM ARGS...'"}
	}
	return &execProvider{rt: rt, argv: append([]string(nil), opts.Exec...), env: opts.Env, kind: "exec", timeout: rt.Timeout(), limit: rt.ResponseLimit()}, nil
}

func (p *execProvider) Kind() string { return p.kind }

// execResponse is what the command must print: one JSON object.
type execResponse struct {
	Text  *string `json:"text"`
	Model string  `json:"model"`
	Usage *Usage  `json:"usage"`
}

// helperError is the error answer of the dome-openai helper.
type helperError struct {
	Error *struct {
		Code    string `json:"code"`
		Message string `json:"message"`
		Status  int    `json:"status,omitempty"`
	} `json:"error"`
}

// limitedBuffer keeps at most max bytes and remembers that more came.
type limitedBuffer struct {
	buf  bytes.Buffer
	max  int
	over bool
}

func (b *limitedBuffer) Write(p []byte) (int, error) {
	if room := b.max - b.buf.Len(); room < len(p) {
		b.over = true
		if room > 0 {
			b.buf.Write(p[:room])
		}
		return len(p), nil
	}
	return b.buf.Write(p)
}

func (p *execProvider) Complete(ctx context.Context, req Request) (Response, error) {
	if err := p.rt.CheckModel(req.Model); err != nil {
		return Response{}, err
	}
	if ctx.Err() != nil {
		return Response{}, &Error{Code: CodeCancelled, Provider: p.rt.ID, Message: "cancelled: " + ctx.Err().Error(), Err: ctx.Err()}
	}
	req.SchemaVersion = RequestSchema
	body, err := json.Marshal(req)
	if err != nil {
		return Response{}, &Error{Code: CodeConfig, Provider: p.rt.ID, Message: "encode the request: " + err.Error(), Err: err}
	}
	cctx, cancel := context.WithTimeout(ctx, p.timeout)
	defer cancel()
	cmd := exec.CommandContext(cctx, p.argv[0], p.argv[1:]...)
	cmd.Env = p.env
	cmd.Stdin = bytes.NewReader(append(body, '\n'))
	stdout := &limitedBuffer{max: p.limit}
	stderr := &limitedBuffer{max: 8 << 10}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return killGroup(cmd.Process.Pid) }
	cmd.WaitDelay = 2 * time.Second // a grandchild holding the pipes must not keep us waiting
	if err := cmd.Start(); err != nil {
		return Response{}, &Error{Code: CodeFailed, Provider: p.rt.ID, Message: fmt.Sprintf("cannot start %s: %v", p.argv[0], err), Err: err}
	}
	werr := cmd.Wait()
	killGroup(cmd.Process.Pid) // leftovers of a command that exited
	switch {
	case ctx.Err() != nil:
		return Response{}, &Error{Code: CodeCancelled, Provider: p.rt.ID, Message: "cancelled: " + ctx.Err().Error(), Err: ctx.Err()}
	case errors.Is(cctx.Err(), context.DeadlineExceeded):
		return Response{}, &Error{Code: CodeTimeout, Provider: p.rt.ID, Message: fmt.Sprintf("%s did not answer within %s: process group killed", p.argv[0], p.timeout)}
	case werr != nil && p.kind == "openai" && !stdout.over:
		if err := p.decodeError(stdout.buf.Bytes()); err != nil {
			return Response{}, err
		}
		return Response{}, &Error{Code: CodeFailed, Provider: p.rt.ID, Message: fmt.Sprintf("%s failed: %v%s", p.argv[0], werr, stderrTail(stderr)), Err: werr}
	case werr != nil:
		return Response{}, &Error{Code: CodeFailed, Provider: p.rt.ID, Message: fmt.Sprintf("%s failed: %v%s", p.argv[0], werr, stderrTail(stderr)), Err: werr}
	case stdout.over:
		return Response{}, &Error{Code: CodeOutputLimit, Provider: p.rt.ID, Message: fmt.Sprintf("%s wrote more than %d bytes", p.argv[0], stdout.max)}
	}
	return p.decode(stdout.buf.Bytes())
}

func (p *execProvider) decode(out []byte) (Response, error) {
	bad := func(problem string) (Response, error) {
		return Response{}, &Error{Code: CodeBadResponse, Provider: p.rt.ID,
			Message: fmt.Sprintf("%s answered %s: %s; want one JSON object {\"text\": \"...\"}", p.argv[0], quoteBounded(out, 200), problem)}
	}
	if !utf8.Valid(out) {
		return bad("not UTF-8")
	}
	dec := json.NewDecoder(bytes.NewReader(out))
	dec.DisallowUnknownFields()
	var r execResponse
	if err := dec.Decode(&r); err != nil {
		return bad(err.Error())
	}
	if dec.More() {
		return bad("more than one JSON value")
	}
	if r.Text == nil {
		return bad(`no "text"`)
	}
	resp := Response{Text: *r.Text, Model: r.Model}
	if r.Usage != nil {
		if r.Usage.PromptTokens < 0 || r.Usage.CompletionTokens < 0 {
			return bad("negative token counts")
		}
		resp.Usage = *r.Usage
	}
	return resp, nil
}

// errorCodes are the codes the helper may answer (the allowlist and
// cancellation are decided here).
var errorCodes = map[string]bool{CodeTimeout: true, CodeBadResponse: true, CodeHTTP: true, CodeFailed: true, CodeConfig: true, CodeOutputLimit: true}

// decodeError reads the helper's error answer; nil when out is not one.
func (p *execProvider) decodeError(out []byte) error {
	var h helperError
	dec := json.NewDecoder(bytes.NewReader(out))
	dec.DisallowUnknownFields()
	if !utf8.Valid(out) || dec.Decode(&h) != nil || dec.More() || h.Error == nil || !errorCodes[h.Error.Code] {
		return nil
	}
	msg := h.Error.Message
	if len(msg) > 1000 {
		msg = msg[:1000] + "..."
	}
	return &Error{Code: h.Error.Code, Provider: p.rt.ID, Message: msg, Status: h.Error.Status}
}

func stderrTail(b *limitedBuffer) string {
	s := strings.TrimSpace(b.buf.String())
	if s == "" {
		return ""
	}
	if len(s) > 500 {
		s = "..." + s[len(s)-500:]
	}
	return "; stderr: " + s
}

// quoteBounded quotes at most n bytes of b.
func quoteBounded(b []byte, n int) string {
	if len(b) <= n {
		return fmt.Sprintf("%q", b)
	}
	return fmt.Sprintf("%q... (%d bytes)", b[:n], len(b))
}

func killGroup(pid int) error {
	if pid <= 0 {
		return nil
	}
	err := syscall.Kill(-pid, syscall.SIGKILL)
	if errors.Is(err, syscall.ESRCH) {
		return nil
	}
	return err
}
