package ledger

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/dome-registry/dome/pkg/canonical"
	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/dome-registry/dome/pkg/readlimit"
)

// SchemaVersion is the envelope version every event carries.
const SchemaVersion = "dome.event.envelope/v1"

// EventsDir is the folder of a run directory holding the events.
const EventsDir = "events"

// lockName is the writer lock inside the events folder.
const lockName = ".lock"

// seqDigits is the zero padding of sequence numbers in file names.
const seqDigits = 12

// MaxEventBytes bounds one event file.
const MaxEventBytes = 16 << 20

// Event is one envelope. Payload holds canonical JSON.
type Event struct {
	SchemaVersion string          `json:"schema_version"`
	Sequence      int64           `json:"sequence"`
	EventID       string          `json:"event_id"`
	TS            string          `json:"ts"`
	Topic         string          `json:"topic"`
	RunID         string          `json:"run_id"`
	Payload       json.RawMessage `json:"payload"`
}

// unsigned is an event without its event_id: what event_id digests.
type unsigned struct {
	SchemaVersion string          `json:"schema_version"`
	Sequence      int64           `json:"sequence"`
	TS            string          `json:"ts"`
	Topic         string          `json:"topic"`
	RunID         string          `json:"run_id"`
	Payload       json.RawMessage `json:"payload"`
}

// ComputeID returns the event_id e must carry: the digest of the canonical
// event without event_id.
func ComputeID(e Event) (string, error) {
	b, err := canonical.Marshal(unsigned{e.SchemaVersion, e.Sequence, e.TS, e.Topic, e.RunID, e.Payload})
	if err != nil {
		return "", err
	}
	return canonical.Digest(b), nil
}

// FileName returns the file name of the event with sequence seq.
func FileName(seq int64) string {
	return fmt.Sprintf("event.%0*d.json", seqDigits, seq)
}

// parseFileName returns the sequence an event file name carries.
func parseFileName(name string) (int64, bool) {
	if !strings.HasPrefix(name, "event.") || !strings.HasSuffix(name, ".json") {
		return 0, false
	}
	digits := strings.TrimSuffix(strings.TrimPrefix(name, "event."), ".json")
	if len(digits) != seqDigits {
		return 0, false
	}
	for i := 0; i < len(digits); i++ {
		if digits[i] < '0' || digits[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(digits, 10, 64)
	if err != nil || n < 1 {
		return 0, false
	}
	return n, true
}

// isTemp reports whether name is a temporary file a writer leaves behind
// when it dies between create and rename.
func isTemp(name string) bool {
	return strings.HasPrefix(name, ".event.") && strings.Contains(name, ".tmp-")
}

// CheckRunID checks a run id: 1 to 64 of [A-Za-z0-9._-], starting with a
// letter or digit (it names a directory and a git ref component).
func CheckRunID(id string) error {
	if id == "" || len(id) > 64 {
		return fmt.Errorf("run id %q: want 1 to 64 characters", id)
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || i > 0 && (c == '.' || c == '_' || c == '-')
		if !ok {
			return fmt.Errorf("run id %q: use letters, digits, '.', '_' and '-', starting with a letter or digit", id)
		}
	}
	if strings.HasSuffix(id, ".lock") || strings.Contains(id, "..") {
		return fmt.Errorf("run id %q: must not contain '..' or end with .lock", id)
	}
	return nil
}

// CheckTopic checks a topic: dot-separated lowercase words of [a-z0-9_].
func CheckTopic(t string) error {
	if t == "" || len(t) > 128 {
		return fmt.Errorf("topic %q: want 1 to 128 characters", t)
	}
	for _, w := range strings.Split(t, ".") {
		if w == "" {
			return fmt.Errorf("topic %q: empty word", t)
		}
		for i := 0; i < len(w); i++ {
			if c := w[i]; !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
				return fmt.Errorf("topic %q: use lowercase words of a-z, 0-9 and _ separated by dots", t)
			}
		}
	}
	return nil
}

// FormatTS formats an event time: RFC 3339 in UTC.
func FormatTS(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

func checkTS(ts string) error {
	if _, err := time.Parse(time.RFC3339Nano, ts); err != nil || !strings.HasSuffix(ts, "Z") {
		return fmt.Errorf("ts %q: want an RFC 3339 UTC time such as 2026-01-02T03:04:05Z", ts)
	}
	return nil
}

// CorruptError reports a ledger that does not validate: a gap, a file that
// does not parse, an event whose id does not check. It is a failed check
// (errkind.IsCheck).
type CorruptError struct {
	File     string // path of the offending file or folder
	Sequence int64  // 0 when not about one event
	Problem  string
}

func (e *CorruptError) Error() string {
	return fmt.Sprintf("ledger %s: %s", e.File, e.Problem)
}

// Unwrap makes a CorruptError a failed check for the exit code mapping.
func (e *CorruptError) Unwrap() error {
	return &errkind.CheckError{Problem: e.Error(), Hint: "the event log was edited or damaged; restore ops/runs/<run_id>/events from a copy"}
}

// ErrLocked is returned by Open when another process writes the run.
var ErrLocked = errors.New("another process is writing this run")

// Decode parses and checks one event file's bytes: strict JSON (no duplicate
// or unknown members, every member present), the canonical form, a known
// schema_version, a valid topic and ts, and an event_id that checks. It does
// not check the sequence or run id against a log (Read does).
//
// Reading a run reads every event, so the usual case, a canonical event
// that checks, takes one decoding pass after the canonical transform and
// digests the canonical bytes as they are; anything else goes through
// decodeChecked, which names the first problem.
func Decode(data []byte) (Event, error) {
	if len(data) > MaxEventBytes {
		return decodeChecked(data)
	}
	cd, err := canonical.Transform(data)
	if err != nil || !bytes.Equal(cd, data) {
		return decodeChecked(data)
	}
	var f struct {
		SchemaVersion *string         `json:"schema_version"`
		Sequence      *int64          `json:"sequence"`
		EventID       *string         `json:"event_id"`
		TS            *string         `json:"ts"`
		Topic         *string         `json:"topic"`
		RunID         *string         `json:"run_id"`
		Payload       json.RawMessage `json:"payload"`
	}
	dec := json.NewDecoder(bytes.NewReader(cd))
	dec.DisallowUnknownFields()
	if dec.Decode(&f) != nil || f.SchemaVersion == nil || f.Sequence == nil || f.EventID == nil || f.TS == nil || f.Topic == nil || f.RunID == nil || f.Payload == nil {
		return decodeChecked(data)
	}
	e := Event{SchemaVersion: *f.SchemaVersion, Sequence: *f.Sequence, EventID: *f.EventID, TS: *f.TS, Topic: *f.Topic, RunID: *f.RunID, Payload: f.Payload}
	if e.SchemaVersion != SchemaVersion || e.Sequence < 1 || CheckTopic(e.Topic) != nil || CheckRunID(e.RunID) != nil || checkTS(e.TS) != nil ||
		len(e.Payload) == 0 || e.Payload[0] != '{' || !plain(e.EventID) || !plain(e.TS) {
		return decodeChecked(data)
	}
	// The checked strings need no escaping, so the canonical event is their
	// concatenation, members in key order (encoding/json matched the keys
	// without regard to case: comparing with cd holds them to their case).
	// Its id digests the same bytes without the event_id member.
	u := make([]byte, 0, len(cd))
	u = append(u, `{"payload":`...)
	u = append(u, e.Payload...)
	u = append(u, `,"run_id":"`...)
	u = append(u, e.RunID...)
	u = append(u, `","schema_version":"`...)
	u = append(u, e.SchemaVersion...)
	u = append(u, `","sequence":`...)
	u = strconv.AppendInt(u, e.Sequence, 10)
	u = append(u, `,"topic":"`...)
	u = append(u, e.Topic...)
	u = append(u, `","ts":"`...)
	u = append(u, e.TS...)
	u = append(u, `"}`...)
	head := `{"event_id":"` + e.EventID + `",`
	if len(cd) != len(head)+len(u)-1 || string(cd[:len(head)]) != head || !bytes.Equal(cd[len(head):], u[1:]) || canonical.Digest(u) != e.EventID {
		return decodeChecked(data)
	}
	return e, nil
}

// plain reports whether s is printable ASCII that JSON writes without
// escapes.
func plain(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// decodeChecked is Decode one check at a time, each with its own message.
func decodeChecked(data []byte) (Event, error) {
	var e Event
	if len(data) > MaxEventBytes {
		return e, fmt.Errorf("event is %d bytes, over the limit of %d", len(data), MaxEventBytes)
	}
	cd, err := canonical.Transform(data)
	if err != nil {
		return e, fmt.Errorf("not strict JSON: %w", err)
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(cd, &raw); err != nil {
		return e, fmt.Errorf("want a JSON object: %w", err)
	}
	var missing []string
	for _, k := range []string{"schema_version", "sequence", "event_id", "ts", "topic", "run_id", "payload"} {
		if _, ok := raw[k]; !ok {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		return e, fmt.Errorf("missing %s", strings.Join(missing, ", "))
	}
	dec := json.NewDecoder(bytes.NewReader(cd))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&e); err != nil {
		return e, fmt.Errorf("bad envelope: %w", err)
	}
	if e.SchemaVersion != SchemaVersion {
		return e, fmt.Errorf("schema_version %q is not supported, want %q", e.SchemaVersion, SchemaVersion)
	}
	if e.Sequence < 1 {
		return e, fmt.Errorf("sequence %d: want 1 or more", e.Sequence)
	}
	if err := CheckTopic(e.Topic); err != nil {
		return e, err
	}
	if err := CheckRunID(e.RunID); err != nil {
		return e, err
	}
	if err := checkTS(e.TS); err != nil {
		return e, err
	}
	if len(e.Payload) == 0 || e.Payload[0] != '{' {
		return e, fmt.Errorf("payload: want a JSON object")
	}
	want, err := ComputeID(e)
	if err != nil {
		return e, err
	}
	if e.EventID != want {
		return e, fmt.Errorf("event_id %s does not check: the event hashes to %s", e.EventID, want)
	}
	// What dome writes is canonical; anything else was edited.
	if enc, err := canonical.Marshal(e); err != nil || !bytes.Equal(enc, data) {
		return e, fmt.Errorf("the file is not the canonical form of its event (edited by hand?)")
	}
	return e, nil
}

// listing is what an events folder holds.
type listing struct {
	seqs  []int64
	temps []string
}

func list(dir string) (listing, error) {
	var l listing
	ents, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return l, nil
		}
		return l, fmt.Errorf("read %s: %w", dir, err)
	}
	for _, de := range ents {
		name := de.Name()
		switch {
		case name == lockName || name == lockName+".excl":
		case isTemp(name):
			l.temps = append(l.temps, name)
		default:
			seq, ok := parseFileName(name)
			if !ok || !de.Type().IsRegular() {
				return l, &CorruptError{File: filepath.Join(dir, name), Problem: "unexpected file in the events folder (want event.<12 digits>.json)"}
			}
			l.seqs = append(l.seqs, seq)
		}
	}
	sort.Slice(l.seqs, func(i, j int) bool { return l.seqs[i] < l.seqs[j] })
	for i, s := range l.seqs {
		if s != int64(i+1) {
			missing := int64(i + 1)
			return l, &CorruptError{File: filepath.Join(dir, FileName(missing)), Sequence: missing,
				Problem: fmt.Sprintf("event %d is missing (the log has %d event files, the next present is %d)", missing, len(l.seqs), s)}
		}
	}
	return l, nil
}

// Read reads and validates every event of the run in runDir (the folder
// ops/runs/<run_id>), in sequence order. A run without events gives none.
// It takes no lock: a writer renames whole files into place.
func Read(runDir, runID string) ([]Event, error) {
	return ReadFrom(runDir, runID, 0)
}

// ReadFrom reads and validates the events of the run in runDir that come
// after sequence after, in order: a reader that already holds events
// 1..after (an append-only log never changes them) reads only what was
// appended since. The folder is listed whole, so a gap anywhere is still an
// error; a log shorter than after gives none.
func ReadFrom(runDir, runID string, after int64) ([]Event, error) {
	dir := filepath.Join(runDir, EventsDir)
	l, err := list(dir)
	if err != nil {
		return nil, err
	}
	return l.readFrom(dir, runID, after)
}

// readFrom is ReadFrom of the events folder dir, listed as l.
func (l listing) readFrom(dir, runID string, after int64) ([]Event, error) {
	if after < 0 {
		after = 0
	}
	if after > int64(len(l.seqs)) {
		after = int64(len(l.seqs))
	}
	out := make([]Event, 0, int64(len(l.seqs))-after)
	for _, seq := range l.seqs[after:] {
		e, err := readOne(dir, seq, runID)
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, nil
}

func readOne(dir string, seq int64, runID string) (Event, error) {
	path := filepath.Join(dir, FileName(seq))
	data, err := readlimit.ReadFile(path, MaxEventBytes)
	if err != nil {
		return Event{}, &CorruptError{File: path, Sequence: seq, Problem: "cannot read: " + err.Error()}
	}
	e, err := Decode(data)
	if err != nil {
		return Event{}, &CorruptError{File: path, Sequence: seq, Problem: err.Error()}
	}
	if e.Sequence != seq {
		return Event{}, &CorruptError{File: path, Sequence: seq, Problem: fmt.Sprintf("the file name says sequence %d, the event says %d", seq, e.Sequence)}
	}
	if runID != "" && e.RunID != runID {
		return Event{}, &CorruptError{File: path, Sequence: seq, Problem: fmt.Sprintf("run_id %q, want %q", e.RunID, runID)}
	}
	return e, nil
}

// Validate checks the whole log of the run in runDir and returns the number
// of events.
func Validate(runDir, runID string) (int, error) {
	evs, err := Read(runDir, runID)
	return len(evs), err
}

func canonicalEvent(e Event) ([]byte, error) { return canonical.Marshal(e) }
