package ledger

import (
	"reflect"
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

// FuzzDecodeSameAsChecked: Decode's one-pass path accepts exactly what the
// check-by-check decoder accepts, with the same event, and otherwise fails
// with its message.
func FuzzDecodeSameAsChecked(f *testing.F) {
	f.Add([]byte(`{"event_id":"sha256:00","payload":{},"run_id":"r","schema_version":"dome.event.envelope/v1","sequence":1,"topic":"a.b","ts":"2026-01-02T03:04:05Z"}`))
	f.Add([]byte(`{"event_id":"x","payload":{"k":",\"payload\":"},"run_id":"r"}`))
	for _, p := range []string{`{}`, `{"x":"y"}`, `{"a":[1,2.5,{"b":null}],"payload":"p"}`, `{"s":"\u00e9\n"}`} {
		e := Event{SchemaVersion: SchemaVersion, Sequence: 3, TS: "2026-01-02T03:04:05Z", Topic: "stack.initialized", RunID: "r1", Payload: []byte(p)}
		e.EventID, _ = ComputeID(e)
		if b, err := canonicalEvent(e); err == nil {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got, gerr := Decode(data)
		want, werr := decodeChecked(data)
		if (gerr == nil) != (werr == nil) || gerr != nil && gerr.Error() != werr.Error() {
			t.Fatalf("Decode error %v, decodeChecked %v", gerr, werr)
		}
		if gerr == nil && !reflect.DeepEqual(got, want) {
			t.Fatalf("Decode = %+v, decodeChecked = %+v", got, want)
		}
	})
}
