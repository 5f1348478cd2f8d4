package domeotel

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/dome-registry/dome/pkg/ledger"
)

// collector is an OTLP/HTTP traces endpoint that counts the spans it took.
type collector struct {
	mu    sync.Mutex
	spans int
	ua    string
}

func (c *collector) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var m coltracepb.ExportTraceServiceRequest
	if r.URL.Path != "/v1/traces" || proto.Unmarshal(body, &m) != nil {
		http.Error(w, "want OTLP/HTTP protobuf at /v1/traces", http.StatusBadRequest)
		return
	}
	c.mu.Lock()
	c.ua = r.Header.Get("User-Agent")
	for _, rs := range m.ResourceSpans {
		for _, ss := range rs.ScopeSpans {
			c.spans += len(ss.Spans)
		}
	}
	c.mu.Unlock()
	out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	w.Write(out)
}

// writeRun writes a small ledger: a run with one attempt.
func writeRun(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "r1")
	l, err := ledger.Open(dir, "r1")
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	for i, e := range []struct {
		topic   string
		payload map[string]any
	}{
		{"stack.initialized", map[string]any{"wave_id": "wave-1", "base_ref": "a1"}},
		{"task.dispatched", map[string]any{"task_id": "docs.1", "node_id": "docs", "node_execution_id": "nx-1", "wave_id": "wave-1", "attempt": 1}},
		{"task.completed", map[string]any{"task_id": "docs.1", "node_id": "docs", "node_execution_id": "nx-1", "wave_id": "wave-1", "attempt": 1, "reason": "ok"}},
		{"run.stopped", map[string]any{"reason": "constraints_met", "head_ref": "b2"}},
	} {
		if _, err := l.AppendPayload(e.topic, t0.Add(time.Duration(i)*time.Second), e.payload); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestMain_ExportsToACollector(t *testing.T) {
	c := &collector{}
	srv := httptest.NewServer(c)
	defer srv.Close()
	dir := writeRun(t)
	var out, errOut bytes.Buffer
	args := []string{Name, "export", "--run-dir", dir, "--run", "r1", "--endpoint", srv.URL + "/v1/traces", "--service-version", "v9.9.9", "--json"}
	if code := Main(context.Background(), args, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	var res struct {
		RunID    string `json:"run_id"`
		TraceID  string `json:"trace_id"`
		Spans    int    `json:"spans"`
		Endpoint string `json:"endpoint"`
	}
	if err := json.Unmarshal(out.Bytes(), &res); err != nil || res.RunID != "r1" || res.Spans != 3 || c.spans != 3 || len(res.TraceID) != 32 {
		t.Fatalf("%v %s (collector took %d spans)", err, out.String(), c.spans)
	}
	// Again, in text: the same trace.
	out.Reset()
	if code := Main(context.Background(), args[:len(args)-1], &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	if want := "run r1: trace " + res.TraceID + ", 3 spans exported to " + srv.URL + "/v1/traces\n"; out.String() != want {
		t.Fatalf("%q, want %q", out.String(), want)
	}
}

func TestMain_Failures(t *testing.T) {
	dir := writeRun(t)
	dead := httptest.NewServer(http.NotFoundHandler())
	dead.Close()
	cases := []struct {
		name string
		args []string
		code int
		msg  string
	}{
		{"no subcommand", nil, 2, "name the subcommand"},
		{"missing flags", []string{"export", "--run", "r1"}, 2, "are required"},
		{"bad run id", []string{"export", "--run-dir", dir, "--run", "../x", "--endpoint", "http://h:1"}, 2, "--run"},
		{"bad endpoint", []string{"export", "--run-dir", dir, "--run", "r1", "--endpoint", "localhost:4318"}, 2, "want http(s)://"},
		{"extra argument", []string{"export", "--run-dir", dir, "--run", "r1", "--endpoint", "http://h:1", "x"}, 2, "unexpected argument"},
		{"no ledger", []string{"export", "--run-dir", filepath.Join(dir, "nothing"), "--run", "r1", "--endpoint", dead.URL}, 1, ""},
		{"no collector", []string{"export", "--run-dir", dir, "--run", "r1", "--endpoint", dead.URL + "/v1/traces"}, 1, "hint: is the collector listening"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			code := Main(context.Background(), append([]string{Name}, tc.args...), &out, &errOut)
			if code != tc.code || !strings.Contains(errOut.String(), tc.msg) || !strings.HasPrefix(errOut.String(), "dome-otel: ") || out.Len() != 0 {
				t.Fatalf("exit %d, stderr %q, stdout %q; want %d and %q", code, errOut.String(), out.String(), tc.code, tc.msg)
			}
		})
	}
	var out bytes.Buffer
	if code := Main(context.Background(), []string{Name, "--version"}, &out, io.Discard); code != 0 || !strings.HasPrefix(out.String(), "dome-otel ") {
		t.Fatalf("--version: %d %q", code, out.String())
	}
}
