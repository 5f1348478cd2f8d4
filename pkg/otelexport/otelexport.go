// Package otelexport projects a wave run's ledger onto OpenTelemetry
// spans and exports them over OTLP/HTTP (go.opentelemetry.io/otel's
// otlptracehttp exporter): one trace per run, a span for the run, one per
// wave, one per task attempt (task.dispatched to task.completed, with its
// progress, timeout, acknowledgement, gateway writes and dead letters as
// span events), one for the gate and one for the promotion. The spans are
// derived from the ControlEvents alone, never the other way round: the
// trace id is a digest of the run id and the ledger's first event id, each
// span id a digest of the trace id and what the span is (the attempt's
// node execution id, the wave id), and every time is an event's ts, so a
// re-export gives the same ids and the same spans. Where the two disagree
// the ledger wins: export again.
package otelexport

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"sort"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/dome-registry/dome/pkg/ledger"
	"github.com/dome-registry/dome/pkg/stack"
)

// Scope is the instrumentation scope of the spans.
const Scope = "github.com/dome-registry/dome/pkg/otelexport"

// Trace is a run's spans.
type Trace struct {
	RunID   string
	TraceID trace.TraceID
	Spans   tracetest.SpanStubs
}

// ids derives the trace's ids.
type ids struct{ trace trace.TraceID }

func newIDs(runID, firstEventID string) ids {
	h := sha256.Sum256([]byte("dome.otel.trace/v1\x00" + runID + "\x00" + firstEventID))
	var t trace.TraceID
	copy(t[:], h[:16])
	if !t.IsValid() {
		t[15] = 1
	}
	return ids{trace: t}
}

func (i ids) span(kind, key string) trace.SpanID {
	h := sha256.Sum256([]byte("dome.otel.span/v1\x00" + i.trace.String() + "\x00" + kind + "\x00" + key))
	var s trace.SpanID
	copy(s[:], h[:8])
	if !s.IsValid() {
		s[7] = 1
	}
	return s
}

func (i ids) ctx(kind, key string) trace.SpanContext {
	return trace.NewSpanContext(trace.SpanContextConfig{TraceID: i.trace, SpanID: i.span(kind, key), TraceFlags: trace.FlagsSampled})
}

// runTopic payloads read here (the coordinator's, decoded loosely: only
// what the spans show).
type startedPayload struct {
	BaseRef    string `json:"base_ref"`
	Dispatcher string `json:"dispatcher"`
	Seed       string `json:"determinism_seed"`
}

type stoppedPayload struct {
	Reason   string `json:"reason"`
	Detail   string `json:"detail"`
	HeadRef  string `json:"head_ref"`
	Promoted bool   `json:"promoted"`
}

type integratedPayload struct {
	WaveID  string `json:"wave_id"`
	HeadRef string `json:"head_ref"`
}

type deadLetterPayload struct {
	NodeExecutionID string `json:"node_execution_id"`
	Reason          string `json:"reason"`
	DaemonID        string `json:"daemon_id"`
	Disposition     string `json:"disposition"`
	Delivery        uint64 `json:"delivery"`
}

type writePayload struct {
	NodeExecutionID string `json:"node_execution_id"`
	Call            struct {
		Method string `json:"method"`
		Status int    `json:"status"`
		Reason string `json:"reason"`
	} `json:"call"`
	IdempotencyKey string `json:"idempotency_key"`
}

type decisionPayload struct {
	Decision struct {
		Action          string `json:"action"`
		NodeID          string `json:"node_id"`
		NodeExecutionID string `json:"node_execution_id"`
		Reason          string `json:"reason"`
	} `json:"decision"`
}

// Spans derives the trace of a run from its events (in ledger order).
func Spans(runID, version string, evs []ledger.Event) (*Trace, error) {
	if len(evs) == 0 {
		return nil, fmt.Errorf("run %s: the ledger has no events", runID)
	}
	id := newIDs(runID, evs[0].EventID)
	res := resource.NewSchemaless(attribute.String("service.name", "dome"), attribute.String("service.version", version),
		attribute.String("dome.run_id", runID))
	scope := instrumentation.Scope{Name: Scope, Version: version}
	ts := func(e ledger.Event) time.Time {
		t, _ := time.Parse(time.RFC3339Nano, e.TS)
		return t
	}
	root := id.ctx("run", runID)
	first, last := ts(evs[0]), ts(evs[len(evs)-1])
	runSpan := tracetest.SpanStub{Name: "dome run " + runID, SpanContext: root, SpanKind: trace.SpanKindInternal, StartTime: first, EndTime: last,
		Attributes: []attribute.KeyValue{attribute.String("dome.run_id", runID), attribute.Int64("dome.ledger.events", int64(len(evs)))},
		Resource:   res, InstrumentationScope: scope}
	type waveSpan struct {
		stub  tracetest.SpanStub
		ended bool
	}
	waves := map[string]*waveSpan{}
	var waveOrder []string
	openWave := func(w string, e ledger.Event, base string) *waveSpan {
		if ws := waves[w]; ws != nil {
			return ws
		}
		ws := &waveSpan{stub: tracetest.SpanStub{Name: "wave " + w, SpanContext: id.ctx("wave", w), Parent: root, SpanKind: trace.SpanKindInternal,
			StartTime: ts(e), EndTime: last, Resource: res, InstrumentationScope: scope,
			Attributes: []attribute.KeyValue{attribute.String("dome.run_id", runID), attribute.String("dome.wave_id", w), attribute.Int64("dome.ledger.sequence", e.Sequence)}}}
		if base != "" {
			ws.stub.Attributes = append(ws.stub.Attributes, attribute.String("dome.base_ref", base))
		}
		waves[w] = ws
		waveOrder = append(waveOrder, w)
		return ws
	}
	attempts := map[string]*tracetest.SpanStub{}
	var attemptOrder []string
	var gate, promo *tracetest.SpanStub
	lastIntegrated := first
	event := func(s *tracetest.SpanStub, e ledger.Event, attrs ...attribute.KeyValue) {
		attrs = append(attrs, attribute.Int64("dome.ledger.sequence", e.Sequence), attribute.String("dome.event_id", e.EventID))
		s.Events = append(s.Events, sdktrace.Event{Name: e.Topic, Time: ts(e), Attributes: attrs})
	}
	for _, e := range evs {
		switch e.Topic {
		case stack.TopicInitialized, stack.TopicWaveAdvanced:
			var p struct {
				WaveID  string `json:"wave_id"`
				BaseRef string `json:"base_ref"`
			}
			json.Unmarshal(e.Payload, &p)
			if p.WaveID != "" {
				openWave(p.WaveID, e, p.BaseRef)
			}
		case "run.started":
			var p startedPayload
			json.Unmarshal(e.Payload, &p)
			runSpan.Attributes = append(runSpan.Attributes, attribute.String("dome.base_ref", p.BaseRef), attribute.String("dome.dispatcher", p.Dispatcher),
				attribute.String("dome.determinism_seed", p.Seed))
			event(&runSpan, e)
		case "run.resumed", "run.halt":
			event(&runSpan, e, attribute.String("dome.payload", clip(string(e.Payload), 512)))
		case "run.decision":
			var p decisionPayload
			json.Unmarshal(e.Payload, &p)
			attrs := []attribute.KeyValue{attribute.String("dome.action", p.Decision.Action), attribute.String("dome.node_id", p.Decision.NodeID),
				attribute.String("dome.reason", p.Decision.Reason)}
			if a := attempts[p.Decision.NodeExecutionID]; a != nil {
				event(a, e, attrs...)
			} else {
				event(&runSpan, e, attrs...)
			}
		case "run.integrated":
			var p integratedPayload
			json.Unmarshal(e.Payload, &p)
			if ws := waves[p.WaveID]; ws != nil {
				ws.stub.EndTime, ws.ended = ts(e), true
				ws.stub.Attributes = append(ws.stub.Attributes, attribute.String("dome.head_ref", p.HeadRef))
				event(&ws.stub, e)
			}
			lastIntegrated = ts(e)
		case "run.stopped":
			var p stoppedPayload
			json.Unmarshal(e.Payload, &p)
			runSpan.EndTime = ts(e)
			runSpan.Attributes = append(runSpan.Attributes, attribute.String("dome.stop_reason", p.Reason), attribute.String("dome.head_ref", p.HeadRef),
				attribute.Bool("dome.promoted", p.Promoted))
			if p.Reason == "constraints_met" {
				runSpan.Status = sdktrace.Status{Code: codes.Ok}
			} else {
				runSpan.Status = sdktrace.Status{Code: codes.Error, Description: p.Reason + ": " + p.Detail}
			}
			event(&runSpan, e)
		case "run.dispatch.dead_letter":
			var p deadLetterPayload
			json.Unmarshal(e.Payload, &p)
			attrs := []attribute.KeyValue{attribute.String("dome.reason", p.Reason), attribute.String("dome.daemon_id", p.DaemonID),
				attribute.String("dome.disposition", p.Disposition), attribute.Int64("dome.delivery", int64(p.Delivery))}
			if a := attempts[p.NodeExecutionID]; a != nil {
				event(a, e, attrs...)
			} else {
				event(&runSpan, e, attrs...)
			}
		case stack.TopicTaskDispatched:
			var p stack.TaskPayload
			json.Unmarshal(e.Payload, &p)
			if p.NodeExecutionID == "" || attempts[p.NodeExecutionID] != nil {
				continue
			}
			parent := root
			if ws := waves[p.WaveID]; ws != nil {
				parent = ws.stub.SpanContext
			} else if p.WaveID != "" {
				parent = openWave(p.WaveID, e, "").stub.SpanContext
			}
			s := &tracetest.SpanStub{Name: "attempt " + p.TaskID, SpanContext: id.ctx("attempt", p.NodeExecutionID), Parent: parent,
				SpanKind: trace.SpanKindInternal, StartTime: ts(e), EndTime: last, Resource: res, InstrumentationScope: scope,
				Attributes: []attribute.KeyValue{attribute.String("dome.run_id", runID), attribute.String("dome.wave_id", p.WaveID),
					attribute.String("dome.node_id", p.NodeID), attribute.String("dome.task_id", p.TaskID), attribute.String("dome.node_execution_id", p.NodeExecutionID),
					attribute.Int("dome.attempt", p.Attempt), attribute.String("dome.worker_id", p.WorkerID), attribute.Int64("dome.ledger.sequence", e.Sequence),
					attribute.String("dome.event_id", e.EventID)}}
			attempts[p.NodeExecutionID] = s
			attemptOrder = append(attemptOrder, p.NodeExecutionID)
		case stack.TopicTaskProgress, stack.TopicTaskTimeout, stack.TopicTaskAck, stack.TopicTaskCompleted:
			var p stack.TaskPayload
			json.Unmarshal(e.Payload, &p)
			s := attempts[p.NodeExecutionID]
			if s == nil {
				for _, k := range attemptOrder { // task.progress names its task only
					if a := attempts[k]; a.Name == "attempt "+p.TaskID {
						s = a
					}
				}
			}
			if s == nil {
				continue
			}
			attrs := []attribute.KeyValue{}
			if p.Detail != "" {
				attrs = append(attrs, attribute.String("dome.detail", clip(p.Detail, 512)))
			}
			if p.Reason != "" {
				attrs = append(attrs, attribute.String("dome.reason", p.Reason))
			}
			event(s, e, attrs...)
			if e.Topic == stack.TopicTaskCompleted {
				s.EndTime = ts(e)
				s.Attributes = append(s.Attributes, attribute.String("dome.reason", p.Reason))
				if p.Reason == "ok" {
					s.Status = sdktrace.Status{Code: codes.Ok}
				} else {
					s.Status = sdktrace.Status{Code: codes.Error, Description: p.Reason + ": " + clip(p.Detail, 256)}
				}
			}
		case "gateway.call":
			var p writePayload
			json.Unmarshal(e.Payload, &p)
			if s := attempts[p.NodeExecutionID]; s != nil {
				event(s, e, attribute.String("dome.method", p.Call.Method), attribute.Int("dome.status", p.Call.Status),
					attribute.String("dome.idempotency_key", p.IdempotencyKey), attribute.String("dome.reason", p.Call.Reason))
			}
		case stack.TopicGateComputed:
			var p stack.GateComputedPayload
			json.Unmarshal(e.Payload, &p)
			gate = &tracetest.SpanStub{Name: "gate", SpanContext: id.ctx("gate", p.GateID), Parent: root, SpanKind: trace.SpanKindInternal,
				StartTime: lastIntegrated, EndTime: ts(e), Resource: res, InstrumentationScope: scope,
				Attributes: []attribute.KeyValue{attribute.String("dome.gate_id", p.GateID), attribute.String("dome.head_ref", p.HeadRef),
					attribute.Bool("dome.passed", p.Passed), attribute.StringSlice("dome.reason_codes", p.ReasonCodes), attribute.Int64("dome.ledger.sequence", e.Sequence),
					attribute.String("dome.event_id", e.EventID)}}
			if p.Passed {
				gate.Status = sdktrace.Status{Code: codes.Ok}
			} else {
				gate.Status = sdktrace.Status{Code: codes.Error, Description: fmt.Sprint(p.ReasonCodes)}
			}
		case stack.TopicPromotionComputed:
			var p stack.PromotionComputedPayload
			json.Unmarshal(e.Payload, &p)
			start := lastIntegrated
			if gate != nil {
				start = gate.EndTime
			}
			promo = &tracetest.SpanStub{Name: "promotion", SpanContext: id.ctx("promotion", p.DecisionID), Parent: root, SpanKind: trace.SpanKindInternal,
				StartTime: start, EndTime: ts(e), Resource: res, InstrumentationScope: scope,
				Attributes: []attribute.KeyValue{attribute.String("dome.decision_id", p.DecisionID), attribute.String("dome.to_ref", p.ToRef),
					attribute.String("dome.head_ref", p.FromHeadRef), attribute.Bool("dome.allowed", p.Allowed), attribute.StringSlice("dome.missing", p.Missing),
					attribute.Int64("dome.ledger.sequence", e.Sequence), attribute.String("dome.event_id", e.EventID)}}
			if p.Allowed {
				promo.Status = sdktrace.Status{Code: codes.Ok}
			}
		case stack.TopicPromoted:
			if promo != nil {
				promo.EndTime = ts(e)
				event(promo, e)
			}
		}
	}
	// A wave not integrated ends where the next began (or with the run).
	for i, w := range waveOrder {
		ws := waves[w]
		if !ws.ended && i+1 < len(waveOrder) {
			ws.stub.EndTime = waves[waveOrder[i+1]].stub.StartTime
		}
	}
	out := tracetest.SpanStubs{runSpan}
	for _, w := range waveOrder {
		out = append(out, waves[w].stub)
	}
	for _, k := range attemptOrder {
		s := attempts[k]
		if s.Status.Code == codes.Unset {
			s.Attributes = append(s.Attributes, attribute.Bool("dome.unfinished", true))
		}
		out = append(out, *s)
	}
	if gate != nil {
		out = append(out, *gate)
	}
	if promo != nil {
		out = append(out, *promo)
	}
	for i := range out {
		if out[i].EndTime.Before(out[i].StartTime) {
			out[i].EndTime = out[i].StartTime
		}
		sort.SliceStable(out[i].Events, func(a, b int) bool { return out[i].Events[a].Time.Before(out[i].Events[b].Time) })
	}
	return &Trace{RunID: runID, TraceID: id.trace, Spans: out}, nil
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}
