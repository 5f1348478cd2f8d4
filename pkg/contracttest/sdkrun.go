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
	"path"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/dome-registry/dome/pkg/codegen"
)

//go:embed driver/driver.mjs
var tsDriver []byte

//go:embed driver/driver.py
var pyDriver []byte

// driverInput is what every driver reads on stdin.
type driverInput struct {
	Mock      string      `json:"mock"`
	Vectors   vectorsIn   `json:"vectors"`
	Scenarios []*scenario `json:"scenarios"`
}

type vectorsIn struct {
	Hosts []string `json:"hosts"`
	URLs  []string `json:"urls"`
}

type errOut struct {
	Code      string `json:"code"`
	Message   string `json:"message"`
	Retryable bool   `json:"retryable"`
}

type stepOut struct {
	Status  int             `json:"status"`
	Body    json.RawMessage `json:"body,omitempty"`
	Error   *errOut         `json:"error,omitempty"`
	ErrorOf *errOut         `json:"error_of,omitempty"`
}

type scenarioOut struct {
	Name  string    `json:"name"`
	Error *errOut   `json:"error,omitempty"`
	Steps []stepOut `json:"steps"`
}

type driverOutput struct {
	// Transport counts what the TypeScript client's requests carried: an
	// AbortSignal, an undici dispatcher (driver.mjs).
	Transport *struct {
		Requests   int `json:"requests"`
		Signal     int `json:"signal"`
		Dispatcher int `json:"dispatcher"`
	} `json:"transport"`
	Hosts []string `json:"hosts"`
	URLs  []struct {
		Error string `json:"error"`
	} `json:"urls"`
	Scenarios []scenarioOut `json:"scenarios"`
}

// mockServer answers each scenario step as planned and records what it got.
type mockServer struct {
	srv    *httptest.Server
	mu     sync.Mutex
	steps  map[string]*step
	count  map[string]int
	first  map[string]*recorded
	served map[string]http.Handler // golden steps a real server answers (Options.Server)
}

func newMock(scenarios []*scenario, server func(string) (http.Handler, error)) (*mockServer, error) {
	m := &mockServer{steps: map[string]*step{}, count: map[string]int{}, first: map[string]*recorded{}, served: map[string]http.Handler{}}
	for _, s := range scenarios {
		for i, st := range s.Steps {
			key := fmt.Sprintf("%s#%d", s.Name, i)
			m.steps[key] = st
			if server != nil && s.kind == "golden" && st.golden != nil {
				h, err := server(s.caseName)
				if err != nil {
					return nil, fmt.Errorf("the server of golden case %s: %w", s.caseName, err)
				}
				m.served[key] = h
			}
		}
	}
	m.srv = httptest.NewServer(http.HandlerFunc(m.serve))
	return m, nil
}

func (m *mockServer) serve(w http.ResponseWriter, r *http.Request) {
	key := r.Header.Get("X-Dome-Case")
	body, _ := io.ReadAll(io.LimitReader(r.Body, 8<<20))
	m.mu.Lock()
	st := m.steps[key]
	n := m.count[key]
	m.count[key] = n + 1
	if m.first[key] == nil {
		h := r.Header.Clone()
		h.Del("X-Dome-Case")
		m.first[key] = &recorded{Method: r.Method, Path: r.URL.EscapedPath(), Query: r.URL.Query(), Header: h, Body: body}
	}
	h := m.served[key]
	m.mu.Unlock()
	if h != nil {
		r.Header.Del("X-Dome-Case")
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
		h.ServeHTTP(w, r)
		return
	}
	if st == nil || len(st.mock) == 0 {
		http.Error(w, "no such scenario step "+key, http.StatusTeapot)
		return
	}
	res := st.mock[min(n, len(st.mock)-1)]
	if res.Delay > 0 {
		t := time.NewTimer(res.Delay)
		select {
		case <-t.C:
		case <-r.Context().Done(): // the client gave up
			t.Stop()
			return
		}
	}
	if res.Close {
		if hj, ok := w.(http.Hijacker); ok {
			if c, _, err := hj.Hijack(); err == nil {
				c.Close()
				return
			}
		}
	}
	for h, v := range res.Headers {
		w.Header().Set(h, v)
	}
	if len(res.Body) > 0 && w.Header().Get("Content-Type") == "" {
		w.Header().Set("Content-Type", "application/json")
	}
	if res.Cut {
		// net/http closes a connection whose answer is shorter than its
		// Content-Length.
		w.Header().Set("Content-Length", fmt.Sprint(len(res.Body)+100))
	}
	w.WriteHeader(res.Status)
	if res.Stall > 0 && len(res.Body) > 1 {
		w.Write(res.Body[:1])
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
		t := time.NewTimer(res.Stall)
		select {
		case <-t.C:
		case <-r.Context().Done():
			t.Stop()
			return
		}
		w.Write(res.Body[1:])
		return
	}
	w.Write(res.Body)
}

func (m *mockServer) requests(key string) (int, *recorded) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.count[key], m.first[key]
}

func (m *mockServer) scenarioRequests(s *scenario) int {
	n := 0
	for i := range s.Steps {
		c, _ := m.requests(fmt.Sprintf("%s#%d", s.Name, i))
		n += c
	}
	return n
}

// clientFiles returns a client's files with its manifest.
func clientFiles(c *codegen.Client) map[string][]byte {
	files := map[string][]byte{codegen.ManifestFile: c.Encoded}
	for _, f := range c.Files {
		files[f.Path] = f.Data
	}
	return files
}

// tampered returns a copy of the client's files changed as a loader
// scenario says.
func tampered(c *codegen.Client, how string) (map[string][]byte, error) {
	files := clientFiles(c)
	first := c.Manifest.Outputs[0].Path
	m := *c.Manifest
	m.Outputs = append([]codegen.OutputRef(nil), c.Manifest.Outputs...)
	zero := "sha256:" + strings.Repeat("0", 64)
	reencode := false
	switch how {
	case "file":
		files[first] = append(append([]byte{}, files[first]...), '\n')
	case "missing":
		delete(files, first)
	case "manifest-space":
		files[codegen.ManifestFile] = append(bytes.TrimSuffix(c.Encoded, []byte("\n")), []byte(" \n")...)
	case "manifest-digest":
		m.Outputs[0].SHA256, reencode = zero, true
	case "manifest-input":
		m.Inputs.ProfileDigest, reencode = zero, true
	case "manifest-hash":
		m.ClientArtifactHash, reencode = zero, true
	}
	if reencode {
		b, err := m.Encode()
		if err != nil {
			return nil, err
		}
		files[codegen.ManifestFile] = b
	}
	return files, nil
}

func writeTree(dir string, files map[string][]byte) error {
	for rel, data := range files {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// driverRun is one run of a language's driver against its own mock server.
type driverRun struct {
	mode string // "" for Go and Python; for TypeScript, how attempts abort (driver.mjs)
	out  *driverOutput
	mock *mockServer
}

// tsModes are the TypeScript driver's runs: Node's own fetch, where the
// client aborts through undici dispatchers, and a fetch that drops them, as
// browsers do, where it aborts through AbortSignals.
var tsModes = []string{"node", "signal"}

// runDriver prepares a language's client in a temporary folder, builds it
// (go build, tsc, python3 -m compileall), writes the tampered copies the
// loader scenarios need and runs the driver against a fresh mock server:
// once, or for TypeScript once per mode of tsModes.
func runDriver(ctx context.Context, opts Options, c *codegen.Client, scenarios []*scenario, vec vectorsIn) ([]driverRun, error) {
	dir, err := os.MkdirTemp(opts.TempDir, "dome-sdk-"+c.Language+"-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	harness := map[string][]byte{}
	for _, h := range c.Bundle.Spec.Harness {
		harness[path.Base(h)] = c.Bundle.Files[h]
	}
	var clientDir string
	var cmd []string
	modes := []string{""}
	switch c.Language {
	case "go":
		if harness["go.mod"] == nil {
			return nil, fmt.Errorf("bundle %s has no harness/go.mod to build its client in", c.Bundle.Spec.ID)
		}
		clientDir = filepath.Join(dir, "client")
		if err := writeTree(dir, harness); err != nil {
			return nil, err
		}
		if err := writeTree(dir, map[string][]byte{"main.go": []byte(driverSource)}); err != nil {
			return nil, err
		}
		if err := writeTree(clientDir, clientFiles(c)); err != nil {
			return nil, err
		}
		bin := filepath.Join(dir, "driver")
		if _, err := runTool(ctx, opts, dir, nil, opts.Go, "build", "-o", bin, "."); err != nil {
			return nil, fmt.Errorf("go build of the generated client failed: %w", err)
		}
		cmd = []string{bin}
	case "ts":
		clientDir = filepath.Join(dir, "c")
		files := clientFiles(c)
		for k, v := range harness {
			files[k] = v
		}
		files["package.json"] = []byte(`{"type": "module"}` + "\n")
		if err := writeTree(clientDir, files); err != nil {
			return nil, err
		}
		if _, err := runTool(ctx, opts, clientDir, nil, opts.TSC, "-p", "tsconfig.json", "--noEmit", "false"); err != nil {
			return nil, fmt.Errorf("tsc over the generated client failed: %w", err)
		}
		if err := writeTree(dir, map[string][]byte{"driver.mjs": tsDriver}); err != nil {
			return nil, err
		}
		cmd = []string{opts.Node, filepath.Join(dir, "driver.mjs"), clientDir}
		modes = tsModes
	case "python":
		clientDir = filepath.Join(dir, "domeclient")
		if err := writeTree(clientDir, clientFiles(c)); err != nil {
			return nil, err
		}
		if _, err := runTool(ctx, opts, dir, nil, opts.Python, "-m", "compileall", "-q", "domeclient"); err != nil {
			return nil, fmt.Errorf("python3 -m compileall of the generated client failed: %w", err)
		}
		if err := writeTree(dir, map[string][]byte{"driver.py": pyDriver}); err != nil {
			return nil, err
		}
		cmd = []string{opts.Python, "-B", filepath.Join(dir, "driver.py"), dir}
	default:
		return nil, fmt.Errorf("no driver for language %s", c.Language)
	}
	var own []*scenario
	for _, s := range scenarios {
		cp := *s
		if s.tamper != "" && !strings.HasPrefix(s.tamper, "pin-") {
			files, err := tampered(c, s.tamper)
			if err != nil {
				return nil, err
			}
			cp.Dir = filepath.Join(dir, "tamper", strings.TrimPrefix(s.Name, "loader:"))
			if err := writeTree(cp.Dir, files); err != nil {
				return nil, err
			}
		}
		own = append(own, &cp)
	}
	var runs []driverRun
	for _, mode := range modes {
		args := cmd[1:]
		if mode != "" {
			args = append(append([]string(nil), args...), mode)
		}
		out, mock, err := runOnce(ctx, opts, c.Language, dir, own, vec, cmd[0], args)
		if err != nil {
			return nil, err
		}
		runs = append(runs, driverRun{mode: mode, out: out, mock: mock})
	}
	return runs, nil
}

// runOnce runs a driver command against a fresh mock server. The mock is
// closed when it returns; what it recorded stays readable.
func runOnce(ctx context.Context, opts Options, lang, dir string, own []*scenario, vec vectorsIn, name string, args []string) (*driverOutput, *mockServer, error) {
	mock, err := newMock(own, opts.Server)
	if err != nil {
		return nil, nil, err
	}
	defer mock.srv.Close()
	in, err := json.Marshal(driverInput{Mock: mock.srv.URL, Vectors: vec, Scenarios: own})
	if err != nil {
		return nil, nil, err
	}
	out, err := runTool(ctx, opts, dir, in, name, args...)
	if err != nil {
		return nil, nil, fmt.Errorf("the %s contract driver failed: %w", lang, err)
	}
	var res driverOutput
	if err := json.Unmarshal(out, &res); err != nil {
		return nil, nil, fmt.Errorf("the %s contract driver printed %q: %w", lang, truncate(out), err)
	}
	if len(res.Scenarios) != len(own) {
		return nil, nil, fmt.Errorf("the %s contract driver ran %d of %d scenarios", lang, len(res.Scenarios), len(own))
	}
	return &res, mock, nil
}

func truncate(b []byte) string {
	if len(b) > 300 {
		return string(b[:300]) + "..."
	}
	return string(b)
}

// evaluate checks one language's outcome of one scenario against the plan.
func evaluate(lang string, s *scenario, out *scenarioOut, mock *mockServer, base string) []string {
	var p []string
	say := func(format string, a ...any) { p = append(p, lang+" client: "+fmt.Sprintf(format, a...)) }
	if s.wantErr != "" {
		switch {
		case out.Error == nil:
			say("made the client, want error %s", s.wantErr)
		case out.Error.Code != s.wantErr:
			say("error %s (%s), want %s", out.Error.Code, out.Error.Message, s.wantErr)
		}
		if n := mock.scenarioRequests(s); n != 0 {
			say("%d requests reached the server, want none", n)
		}
		return p
	}
	if out.Error != nil {
		say("cannot make the client: %s: %s", out.Error.Code, out.Error.Message)
		return p
	}
	idx := 0
	for i, st := range s.Steps {
		key := fmt.Sprintf("%s#%d", s.Name, i)
		n := max(1, st.Repeat)
		if idx+n > len(out.Steps) {
			say("step %d: the driver returned %d results", i, len(out.Steps))
			return p
		}
		for j := 0; j < n; j++ {
			r := out.Steps[idx+j]
			wantErr := st.wantErr
			if st.Repeat > 0 && j < st.okCount {
				wantErr = ""
			}
			label := fmt.Sprintf("step %d", i)
			if st.Repeat > 0 {
				label = fmt.Sprintf("step %d call %d", i, j+1)
			}
			switch {
			case wantErr != "" && r.Error == nil:
				say("%s: status %d, want error %s", label, r.Status, wantErr)
			case wantErr != "" && r.Error.Code != wantErr:
				say("%s: error %s (%s), want %s", label, r.Error.Code, r.Error.Message, wantErr)
			case wantErr == "" && r.Error != nil:
				say("%s: error %s: %s", label, r.Error.Code, r.Error.Message)
			case wantErr == "" && r.Status != st.wantStatus:
				say("%s: status %d, golden %d", label, r.Status, st.wantStatus)
			case wantErr == "" && st.wantErrorOf != "" && (r.ErrorOf == nil || r.ErrorOf.Code != st.wantErrorOf || r.ErrorOf.Retryable != st.wantRetry):
				say("%s: HTTP %d maps to %+v, want code %s retryable %v", label, r.Status, r.ErrorOf, st.wantErrorOf, st.wantRetry)
			case wantErr == "" && st.wantErrorOf == "" && r.ErrorOf != nil:
				say("%s: HTTP %d maps to error %s", label, r.Status, r.ErrorOf.Code)
			case wantErr != "" && st.wantRetry != r.Error.Retryable && st.golden == nil && s.kind == "errors":
				say("%s: %s retryable %v, want %v", label, r.Error.Code, r.Error.Retryable, st.wantRetry)
			}
			if wantErr == "" && st.golden != nil && len(st.golden.Response.Body) > 0 && len(r.Body) > 0 && !jsonEqual(r.Body, st.golden.Response.Body) {
				say("%s: the typed response re-encodes as %s, golden %s", label, compact(r.Body), compact(st.golden.Response.Body))
			}
		}
		idx += n
		count, rec := mock.requests(key)
		if st.wantRequests >= 0 && count != st.wantRequests {
			say("step %d: %d requests reached the server, want %d", i, count, st.wantRequests)
		}
		if st.golden != nil && st.wantErr == "" {
			for _, x := range compareRequest(st.route, st.golden, rec, base) {
				say("%s", x)
			}
		}
	}
	return p
}

// sameOutcome compares two languages' outcomes of a scenario: the same
// codes, statuses and retryability everywhere, and the same messages where
// the scenario says they are the language's own words.
func sameOutcome(s *scenario, a, b *scenarioOut) string {
	type view struct {
		Err   *errOut
		Steps []stepOut
	}
	strip := func(o *scenarioOut) view {
		v := view{}
		if o.Error != nil {
			e := *o.Error
			if !s.sameMessage {
				e.Message = ""
			}
			v.Err = &e
		}
		for _, st := range o.Steps {
			st.Body = nil
			if st.Error != nil {
				e := *st.Error
				if !s.sameMessage {
					e.Message = ""
				}
				st.Error = &e
			}
			v.Steps = append(v.Steps, st)
		}
		return v
	}
	x, _ := json.Marshal(strip(a))
	y, _ := json.Marshal(strip(b))
	if bytes.Equal(x, y) {
		return ""
	}
	return fmt.Sprintf("%s differs: %s vs %s", s.Name, truncate(x), truncate(y))
}
