package contracttest

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"net/http"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"

	"github.com/dome-registry/dome/pkg/codegen"
)

// driverSource is the program the Go check builds next to the generated
// client: it reads scenarios as JSON on stdin, makes the client (DomeLoad or
// DomeNew), runs each call through its ClientWithResponses (found by
// reflection, so it works for every operation shape oapi-codegen emits) and
// prints what came back.
//
// It lives in driver/main.go.txt (not .go: it imports the generated client
// package, which exists only in the temporary module the check builds).
//
//go:embed driver/main.go.txt
var driverSource string

// recorded is a request the mock server saw.
type recorded struct {
	Method string
	Path   string
	Query  map[string][]string
	Header http.Header
	Body   []byte
}

// compareRequest checks what a client sent against the golden request;
// base is the path of the base URL the client was given.
func compareRequest(r *route, k *Case, rec *recorded, base string) []string {
	if rec == nil {
		return []string{"no request reached the mock server"}
	}
	var p []string
	if rec.Method != r.method {
		p = append(p, fmt.Sprintf("method %s, golden %s", rec.Method, r.method))
	}
	if want := base + expandPath(r.path, k.Request.PathParams); rec.Path != want {
		p = append(p, fmt.Sprintf("path %s, golden %s", rec.Path, want))
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
		p = append(p, fmt.Sprintf("query %v, golden %v", got, want))
	}
	for h, v := range k.Request.Headers {
		if rec.Header.Get(h) != v {
			p = append(p, fmt.Sprintf("header %s: %q, golden %q", h, rec.Header.Get(h), v))
		}
	}
	switch {
	case len(k.Request.Body) == 0 && len(rec.Body) > 0:
		p = append(p, fmt.Sprintf("sent a body %s, golden has none", compact(rec.Body)))
	case len(k.Request.Body) > 0 && !jsonEqual(rec.Body, k.Request.Body):
		p = append(p, fmt.Sprintf("body %s, golden %s", compact(rec.Body), compact(k.Request.Body)))
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
