package ledger

import (
	"testing"
)

// FuzzDecode feeds arbitrary bytes to the event reader: it must never panic,
// and whatever it accepts must re-encode to the same bytes with an id that
// checks.
func FuzzDecode(f *testing.F) {
	f.Add([]byte(`{"event_id":"sha256:00","payload":{},"run_id":"r","schema_version":"dome.event.envelope/v1","sequence":1,"topic":"a.b","ts":"2026-01-02T03:04:05Z"}`))
	f.Add([]byte(`{}`))
	f.Add([]byte(`{"payload":{"a":[1,2,{"b":null}]}}`))
	e := Event{SchemaVersion: SchemaVersion, Sequence: 3, TS: "2026-01-02T03:04:05Z", Topic: "stack.initialized", RunID: "r1", Payload: []byte(`{"x":"y"}`)}
	e.EventID, _ = ComputeID(e)
	if b, err := canonicalEvent(e); err == nil {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		ev, err := Decode(data)
		if err != nil {
			return
		}
		b, err := canonicalEvent(ev)
		if err != nil || string(b) != string(data) {
			t.Fatalf("accepted event does not re-encode to its bytes")
		}
		if id, _ := ComputeID(ev); id != ev.EventID {
			t.Fatalf("accepted event with a bad id")
		}
	})
}
