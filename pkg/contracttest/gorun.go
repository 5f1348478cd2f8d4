package contracttest

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"sync"

	"github.com/dome-registry/dome/pkg/codegen"
)

// driverSource is the program the Go check builds next to the generated
// client: it reads calls as JSON on stdin, makes each one through the
// client's ClientWithResponses (found by reflection, so it works for every
// operation shape oapi-codegen emits) and prints what came back.
//
// It lives in driver/main.go.txt (not .go: it imports the generated client
// package, which exists only in the temporary module the check builds).
//
//go:embed driver/main.go.txt
var driverSource string

// goCall is one call of the driver.
type goCall struct {
	Case        string            `json:"case"`
	Method      string            `json:"method"`
	PathParams  []json.RawMessage `json:"path_params"`
	Params      json.RawMessage   `json:"params,omitempty"`
	Body        json.RawMessage   `json:"body,omitempty"`
	ContentType string            `json:"content_type,omitempty"`
	Headers     map[string]string `json:"headers"`
}

type goResult struct {
	Case       string          `json:"case"`
	Status     int             `json:"status"`
	TypedField string          `json:"typed_field,omitempty"`
	Typed      json.RawMessage `json:"typed,omitempty"`
	Error      string          `json:"error,omitempty"`
}

// recorded is a request the mock server saw.
type recorded struct {
	Method string
	Path   string
	Query  map[string][]string
	Header http.Header
	Body   []byte
}

// runGo builds the Go client in a temporary module (the bundle's harness
// go.mod and go.sum), runs the driver against an in-process mock server
// that answers each case with its golden response, and compares the
// request the client sent with the golden request and the typed response
// with the golden body. It returns problems per case name.
func runGo(ctx context.Context, opts Options, c *codegen.Client, spec *specOps, cases []*Case) (map[string][]string, error) {
	dir, err := os.MkdirTemp(opts.TempDir, "dome-contract-go-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	for _, h := range c.Bundle.Spec.Harness {
		if err := os.WriteFile(filepath.Join(dir, path.Base(h)), c.Bundle.Files[h], 0o644); err != nil {
			return nil, err
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "go.mod")); err != nil {
		return nil, fmt.Errorf("bundle %s has no harness/go.mod to build its client in", c.Bundle.Spec.ID)
	}
	if err := os.MkdirAll(filepath.Join(dir, "client"), 0o755); err != nil {
		return nil, err
	}
	for _, f := range c.Files {
		if strings.HasSuffix(f.Path, ".go") {
			if err := os.WriteFile(filepath.Join(dir, "client", filepath.Base(f.Path)), f.Data, 0o644); err != nil {
				return nil, err
			}
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(driverSource), 0o644); err != nil {
		return nil, err
	}
	bin := filepath.Join(dir, "driver")
	if _, err := runTool(ctx, opts, dir, nil, opts.Go, "build", "-o", bin, "."); err != nil {
		return nil, fmt.Errorf("go build of the generated client failed: %w", err)
	}
	// The mock server: each request names its case in X-Dome-Case.
	byName := map[string]*Case{}
	for _, k := range cases {
		byName[k.Name] = k
	}
	var mu sync.Mutex
	seen := map[string]*recorded{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		k := byName[r.Header.Get("X-Dome-Case")]
		if k == nil {
			http.Error(w, "unknown case", http.StatusTeapot)
			return
		}
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		seen[k.Name] = &recorded{Method: r.Method, Path: r.URL.Path, Query: r.URL.Query(), Header: r.Header.Clone(), Body: body}
		mu.Unlock()
		for h, v := range k.Response.Headers {
			w.Header().Set(h, v)
		}
		if len(k.Response.Body) > 0 && w.Header().Get("Content-Type") == "" {
			w.Header().Set("Content-Type", "application/json")
		}
		w.WriteHeader(k.Response.Status)
		w.Write(k.Response.Body)
	}))
	defer srv.Close()
	var calls []goCall
	for _, k := range cases {
		r := spec.ops[k.OperationID]
		call := goCall{Case: k.Name, Method: symbolOf(c, k.OperationID), Headers: map[string]string{}}
		for _, p := range pathParamNames(r.path) {
			b, _ := json.Marshal(k.Request.PathParams[p])
			call.PathParams = append(call.PathParams, b)
		}
		params := map[string]any{}
		for q, v := range k.Request.Query {
			params[q] = v
		}
		for h, v := range k.Request.Headers {
			if r.headerPs[strings.ToLower(h)] {
				params[headerParamName(r, h)] = v
			} else {
				call.Headers[h] = v
			}
		}
		if len(params) > 0 {
			call.Params, _ = json.Marshal(params)
		}
		if len(k.Request.Body) > 0 {
			call.Body = k.Request.Body
			call.ContentType = r.bodyContentType()
			if ct := headerValue(k.Request.Headers, "Content-Type"); ct != "" {
				call.ContentType = ct
			}
		}
		calls = append(calls, call)
	}
	in, _ := json.Marshal(calls)
	out, err := runTool(ctx, opts, dir, in, bin, srv.URL)
	if err != nil {
		return nil, fmt.Errorf("the contract driver failed: %w", err)
	}
	var results []goResult
	if err := json.Unmarshal(out, &results); err != nil {
		return nil, fmt.Errorf("the contract driver printed %q: %w", out, err)
	}
	problems := map[string][]string{}
	for _, res := range results {
		k := byName[res.Case]
		if res.Error != "" {
			problems[k.Name] = append(problems[k.Name], "go client: "+res.Error)
			continue
		}
		mu.Lock()
		rec := seen[k.Name]
		mu.Unlock()
		problems[k.Name] = append(problems[k.Name], compareRequest(spec.ops[k.OperationID], k, rec)...)
		if res.Status != k.Response.Status {
			problems[k.Name] = append(problems[k.Name], fmt.Sprintf("go client: status %d, golden %d", res.Status, k.Response.Status))
		}
		if res.Typed != nil && len(k.Response.Body) > 0 && !jsonEqual(res.Typed, k.Response.Body) {
			problems[k.Name] = append(problems[k.Name], fmt.Sprintf("go client: the typed response (%s) re-encodes as %s, golden %s", res.TypedField, compact(res.Typed), compact(k.Response.Body)))
		}
	}
	return problems, nil
}

// compareRequest checks what the client sent against the golden request.
func compareRequest(r *route, k *Case, rec *recorded) []string {
	if rec == nil {
		return []string{"go client: no request reached the mock server"}
	}
	var p []string
	if rec.Method != r.method {
		p = append(p, fmt.Sprintf("go client: method %s, golden %s", rec.Method, r.method))
	}
	if want := expandPath(r.path, k.Request.PathParams); rec.Path != want {
		p = append(p, fmt.Sprintf("go client: path %s, golden %s", rec.Path, want))
	}
	want := queryValues(k.Request.Query)
	got := map[string][]string{}
	for q, vs := range rec.Query {
		got[q] = append([]string(nil), vs...)
	}
	for _, m := range []map[string][]string{want, got} {
		for q := range m {
			sort.Strings(m[q])
		}
	}
	if !reflect.DeepEqual(want, got) && !(len(want) == 0 && len(got) == 0) {
		p = append(p, fmt.Sprintf("go client: query %v, golden %v", got, want))
	}
	for h, v := range k.Request.Headers {
		if rec.Header.Get(h) != v {
			p = append(p, fmt.Sprintf("go client: header %s: %q, golden %q", h, rec.Header.Get(h), v))
		}
	}
	switch {
	case len(k.Request.Body) == 0 && len(rec.Body) > 0:
		p = append(p, fmt.Sprintf("go client: sent a body %s, golden has none", compact(rec.Body)))
	case len(k.Request.Body) > 0 && !jsonEqual(rec.Body, k.Request.Body):
		p = append(p, fmt.Sprintf("go client: body %s, golden %s", compact(rec.Body), compact(k.Request.Body)))
	}
	return p
}

func pathParamNames(tmpl string) []string {
	var out []string
	rest := tmpl
	for {
		i := strings.IndexByte(rest, '{')
		j := strings.IndexByte(rest, '}')
		if i < 0 || j < i {
			return out
		}
		out = append(out, rest[i+1:j])
		rest = rest[j+1:]
	}
}

// headerParamName returns the spec's spelling of a header parameter (the
// generated Params struct's json tag).
func headerParamName(r *route, h string) string {
	for _, p := range params(r) {
		if p.in == "header" && strings.EqualFold(p.name, h) {
			return p.name
		}
	}
	return h
}

type openapiParam struct{ name, in string }

func params(r *route) []*openapiParam {
	var out []*openapiParam
	for _, pr := range append(append(r.item.Parameters[:0:0], r.item.Parameters...), r.op.Parameters...) {
		if pr.Value != nil {
			out = append(out, &openapiParam{pr.Value.Name, pr.Value.In})
		}
	}
	return out
}

func headerValue(h map[string]string, name string) string {
	for k, v := range h {
		if strings.EqualFold(k, name) {
			return v
		}
	}
	return ""
}

func symbolOf(c *codegen.Client, opID string) string {
	for _, o := range c.Index.Operations {
		if o.OperationID == opID {
			return o.Symbol
		}
	}
	return ""
}

func jsonEqual(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return bytes.Equal(bytes.TrimSpace(a), bytes.TrimSpace(b))
	}
	return reflect.DeepEqual(x, y)
}

func compact(b []byte) string {
	var buf bytes.Buffer
	if json.Compact(&buf, b) != nil {
		return string(b)
	}
	s := buf.String()
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	return s
}

// runTool runs a toolchain command in dir with opts.Env (plus GOWORK=off,
// GOFLAGS=-mod=readonly for go) and returns its stdout; the error carries
// the tail of stderr.
func runTool(ctx context.Context, opts Options, dir string, stdin []byte, name string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(append([]string{}, opts.Env...), "GOWORK=off", "GOFLAGS=-mod=readonly", "CGO_ENABLED=0")
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = strings.TrimSpace(stdout.String())
		}
		if len(msg) > 2000 {
			msg = "..." + msg[len(msg)-2000:]
		}
		return nil, fmt.Errorf("%s %s: %v\n%s", filepath.Base(name), strings.Join(args, " "), err, msg)
	}
	return stdout.Bytes(), nil
}
