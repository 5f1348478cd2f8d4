package otelexport_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/dome-registry/dome/pkg/ledger"
	"github.com/dome-registry/dome/pkg/otelexport"
)

// receiver is an OTLP/HTTP traces endpoint that decodes what it gets.
type receiver struct {
	mu     sync.Mutex
	bodies [][]byte
	reqs   []*coltracepb.ExportTraceServiceRequest
}

func (r *receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if req.URL.Path != "/v1/traces" || req.Header.Get("Content-Type") != "application/x-protobuf" {
		http.Error(w, "want POST /v1/traces application/x-protobuf", http.StatusBadRequest)
		return
	}
	var body io.Reader = req.Body
	if req.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(req.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		body = zr
	}
	b, _ := io.ReadAll(body)
	var m coltracepb.ExportTraceServiceRequest
	if err := proto.Unmarshal(b, &m); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	r.mu.Lock()
	r.bodies = append(r.bodies, b)
	r.reqs = append(r.reqs, &m)
	r.mu.Unlock()
	out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	w.Write(out)
}

func (r *receiver) spans() []*tracepb.Span {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []*tracepb.Span
	for _, m := range r.reqs {
		for _, rs := range m.ResourceSpans {
			for _, ss := range rs.ScopeSpans {
				out = append(out, ss.Spans...)
			}
		}
	}
	return out
}

// run is the ledger of a small wave run: two waves, three attempts (one
// timed out and retried), a dead letter, a gate and a promotion.
func run() []ledger.Event {
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	var evs []ledger.Event
	add := func(topic string, payload any) {
		b, _ := json.Marshal(payload)
		n := int64(len(evs) + 1)
		evs = append(evs, ledger.Event{SchemaVersion: "dome.event/v1", Sequence: n, EventID: fmt.Sprintf("ev-%02d", n),
			TS: ledger.FormatTS(t0.Add(time.Duration(n) * time.Second)), Topic: topic, RunID: "r1", Payload: b})
	}
	task := func(topic, task, node, nx, wave, reason, detail string, attempt int) {
		add(topic, map[string]any{"task_id": task, "node_id": node, "node_execution_id": nx, "wave_id": wave, "attempt": attempt,
			"worker_id": "worker-" + task, "reason": reason, "detail": detail})
	}
	add("stack.initialized", map[string]any{"wave_id": "wave-1", "base_ref": "a1"})
	add("run.started", map[string]any{"base_ref": "a1", "dispatcher": "nats://127.0.0.1:4222", "determinism_seed": "s"})
	task("task.dispatched", "docs.1", "docs", "nx-1", "wave-1", "", "", 1)
	task("task.dispatched", "tests.1", "tests", "nx-2", "wave-1", "", "", 1)
	add("task.progress", map[string]any{"task_id": "docs.1", "node_id": "docs", "wave_id": "wave-1", "detail": "running on worker daemon w1 (delivery 1)"})
	add("gateway.call", map[string]any{"node_execution_id": "nx-1", "call": map[string]any{"method": "patch-proposal/submit_patch", "status": 200}, "idempotency_key": "nx-1:submit_patch:1"})
	task("task.completed", "docs.1", "docs", "nx-1", "wave-1", "ok", "", 1)
	task("task.ack", "docs.1", "docs", "nx-1", "wave-1", "ok", "", 1)
	add("run.dispatch.dead_letter", map[string]any{"node_execution_id": "nx-2", "reason": "EXPIRED", "daemon_id": "w2", "disposition": "terminated", "delivery": 2})
	task("task.timeout", "tests.1", "tests", "nx-2", "wave-1", "timeout", "worker daemon w1 stopped answering", 1)
	task("task.completed", "tests.1", "tests", "nx-2", "wave-1", "timeout", "worker daemon w1 stopped answering", 1)
	task("task.dispatched", "tests.2", "tests", "nx-3", "wave-1", "", "", 2)
	task("task.completed", "tests.2", "tests", "nx-3", "wave-1", "ok", "", 2)
	add("run.integrated", map[string]any{"wave_id": "wave-1", "head_ref": "b2"})
	add("stack.wave.advanced", map[string]any{"wave_id": "wave-2", "base_ref": "b2"})
	add("gate.computed", map[string]any{"gate_id": "g1", "head_ref": "b2", "passed": true, "reason_codes": []string{}})
	add("promotion.computed", map[string]any{"decision_id": "p1", "from_head_ref": "b2", "to_ref": "refs/heads/waves/r1", "allowed": true})
	add("run.stopped", map[string]any{"reason": "constraints_met", "head_ref": "b2", "promoted": true})
	return evs
}

func TestExport_OneTracePerRunSpansPerAttemptGateAndPromotion(t *testing.T) {
	rec := &receiver{}
	srv := httptest.NewServer(rec)
	defer srv.Close()
	tr, err := otelexport.Spans("r1", "test", run())
	if err != nil {
		t.Fatal(err)
	}
	if err := otelexport.Export(context.Background(), srv.URL+"/v1/traces", tr); err != nil {
		t.Fatal(err)
	}
	spans := rec.spans()
	byName := map[string]*tracepb.Span{}
	for _, s := range spans {
		if hex.EncodeToString(s.TraceId) != tr.TraceID.String() {
			t.Errorf("span %s: trace %x, want %s", s.Name, s.TraceId, tr.TraceID)
		}
		byName[s.Name] = s
	}
	want := []string{"dome run r1", "wave wave-1", "wave wave-2", "attempt docs.1", "attempt tests.1", "attempt tests.2", "gate", "promotion"}
	if len(spans) != len(want) {
		t.Fatalf("%d spans, want %d: %v", len(spans), len(want), byName)
	}
	for _, n := range want {
		if byName[n] == nil {
			t.Fatalf("no span %q", n)
		}
	}
	root := byName["dome run r1"]
	if len(root.ParentSpanId) != 0 || root.Status.Code != tracepb.Status_STATUS_CODE_OK {
		t.Errorf("root span: parent %x status %v", root.ParentSpanId, root.Status)
	}
	for _, n := range []string{"attempt docs.1", "attempt tests.1", "attempt tests.2"} {
		if !bytes.Equal(byName[n].ParentSpanId, byName["wave wave-1"].SpanId) {
			t.Errorf("%s: parent %x, want wave-1's %x", n, byName[n].ParentSpanId, byName["wave wave-1"].SpanId)
		}
	}
	for _, n := range []string{"wave wave-1", "gate", "promotion"} {
		if !bytes.Equal(byName[n].ParentSpanId, root.SpanId) {
			t.Errorf("%s: parent %x, want the run's", n, byName[n].ParentSpanId)
		}
	}
	timedOut := byName["attempt tests.1"]
	if timedOut.Status.Code != tracepb.Status_STATUS_CODE_ERROR {
		t.Errorf("the timed-out attempt's status: %v", timedOut.Status)
	}
	var evNames []string
	for _, e := range timedOut.Events {
		evNames = append(evNames, e.Name)
	}
	if fmt.Sprint(evNames) != "[run.dispatch.dead_letter task.timeout task.completed]" {
		t.Errorf("the timed-out attempt's events: %v", evNames)
	}
	docs := byName["attempt docs.1"]
	if time.Duration(docs.EndTimeUnixNano-docs.StartTimeUnixNano) != 4*time.Second {
		t.Errorf("docs.1 lasted %v, want 4s (dispatched at event 3, completed at 7)", time.Duration(docs.EndTimeUnixNano-docs.StartTimeUnixNano))
	}
	attrs := map[string]string{}
	for _, a := range docs.Attributes {
		attrs[a.Key] = a.Value.String()
	}
	if attrs["dome.node_execution_id"] == "" || attrs["dome.event_id"] == "" || attrs["dome.task_id"] == "" {
		t.Errorf("docs.1's correlation ids: %v", attrs)
	}

	// A re-export gives the same ids and the same bytes.
	tr2, _ := otelexport.Spans("r1", "test", run())
	if err := otelexport.Export(context.Background(), srv.URL+"/v1/traces", tr2); err != nil {
		t.Fatal(err)
	}
	if len(rec.bodies) != 2 || !bytes.Equal(rec.bodies[0], rec.bodies[1]) {
		t.Fatalf("a re-export differs (%d exports)", len(rec.bodies))
	}
}

func TestExport_AnotherRunAnotherTrace(t *testing.T) {
	a, _ := otelexport.Spans("r1", "test", run())
	evs := run()
	evs[0].EventID = "another"
	b, _ := otelexport.Spans("r1", "test", evs)
	if a.TraceID == b.TraceID {
		t.Fatal("two ledgers under one run id share a trace id")
	}
}
