package stack

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/dome-registry/dome/pkg/artifact"
	"github.com/dome-registry/dome/pkg/canonical"
	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/dome-registry/dome/pkg/ledger"
	"github.com/dome-registry/dome/pkg/readlimit"
	"github.com/dome-registry/dome/pkg/signing"
)

// Run is a run open for writing: it holds the ledger's writer lock and the
// state folded from the events. Record is the only way to change it.
type Run struct {
	Layout Layout
	State  State
	log    *ledger.Log

	deferState bool    // DeferState: state.json is written by FlushState or Close
	dirty      bool    // events recorded since state.json was last written
	policy     *Policy // the pinned policy, once read (Policy)
}

// ErrNoRun is returned when a run has no events (it was never initialized).
var ErrNoRun = errors.New("no such run")

// OpenRun opens the run for writing: it takes the writer lock, folds every
// event and, when state.json lags behind the events (a crash between the
// event and the state write), rewrites it. create allows a run without
// events (for init).
func OpenRun(l Layout, create bool) (*Run, error) {
	return openRun(l, create, nil, nil)
}

// OpenRunAfter is OpenRun for a caller that loaded the run (LoadState)
// before taking the lock, so that the run is read and folded once: only
// the events appended since are read and folded into st. It takes st and
// evs over.
func OpenRunAfter(l Layout, st State, evs []ledger.Event) (*Run, error) {
	return openRun(l, false, &st, evs)
}

func openRun(l Layout, create bool, held *State, heldEvents []ledger.Event) (*Run, error) {
	if err := ledger.CheckRunID(l.RunID); err != nil {
		return nil, &errkind.InputError{Source: "--run", Field: l.RunID, Problem: err.Error()}
	}
	if !create {
		if _, err := os.Stat(l.EventsDir()); err != nil {
			return nil, runNotFound(l)
		}
	}
	if held == nil || len(heldEvents) == 0 || held.Sequence != int64(len(heldEvents)) {
		held, heldEvents = nil, nil
	}
	log, err := ledger.OpenAfter(l.Root, l.RunID, heldEvents)
	if err != nil {
		if errors.Is(err, ledger.ErrLocked) {
			return nil, &errkind.CheckError{Problem: fmt.Sprintf("run %s: %v", l.RunID, err), Hint: "wait for the other dome stack command to finish"}
		}
		return nil, err
	}
	var st State
	if evs := log.Events(); held != nil && log.Held() == len(heldEvents) {
		st, err = foldOnto(*held, evs[len(heldEvents):])
	} else {
		st, err = Fold(l.RunID, evs)
	}
	if err != nil {
		log.Close()
		return nil, fmt.Errorf("run %s: %w", l.RunID, err)
	}
	if !create && !st.Initialized {
		log.Close()
		return nil, runNotFound(l)
	}
	r := &Run{Layout: l, State: st, log: log}
	if len(log.Events()) > 0 {
		want, err := st.Marshal()
		if err != nil {
			r.Close()
			return nil, err
		}
		if have, err := readlimit.ReadFile(l.StatePath(), MaxProposalBytes); err != nil || !bytes.Equal(have, want) {
			if err := ledger.WriteFileDurable(l.StatePath(), want); err != nil {
				r.Close()
				return nil, fmt.Errorf("write %s: %w", l.StatePath(), err)
			}
		}
	}
	return r, nil
}

func runNotFound(l Layout) error {
	return &errkind.InputError{Source: "--run", Field: l.RunID, Problem: fmt.Sprintf("%v: %s has no events", ErrNoRun, l.Root),
		Hint: "start it with dome stack init --run " + l.RunID + " --base SHA", Err: ErrNoRun}
}

// Events returns the run's events: those read when it was opened and those
// recorded since. The caller must not change them.
func (r *Run) Events() []ledger.Event { return r.log.Events() }

// Close writes state.json if DeferState left it behind, and releases the
// writer lock.
func (r *Run) Close() error {
	err := r.FlushState()
	if cerr := r.log.Close(); err == nil {
		err = cerr
	}
	return err
}

// DeferState makes Record stop writing state.json after every event; the
// next FlushState or Close writes it once. A loop that records many events
// (apply of a long plan) pays for the state (O(size of the run)) once
// instead of per event. A crash in between leaves state.json behind the
// events, which the next OpenRun rewrites (and replay reports until then).
func (r *Run) DeferState() { r.deferState = true }

// FlushState writes state.json if events were recorded since it was last
// written.
func (r *Run) FlushState() error {
	if !r.dirty {
		return nil
	}
	data, err := r.State.Marshal()
	if err != nil {
		return err
	}
	if err := ledger.WriteFileDurable(r.Layout.StatePath(), data); err != nil {
		return fmt.Errorf("write %s: %w", r.Layout.StatePath(), err)
	}
	r.dirty = false
	return nil
}

// Record appends an event: it builds the envelope, folds it into the state
// (refusing an event that does not fold, before anything is written),
// appends it durably and writes state.json.
func (r *Run) Record(topic string, ts time.Time, payload any) (ledger.Event, error) {
	e, err := r.log.Build(topic, ts, payload)
	if err != nil {
		return e, err
	}
	next := r.State
	if err := next.Apply(e); err != nil {
		// Apply leaves the state as it was on error; keep the copy anyway.
		return e, fmt.Errorf("run %s: %w", r.Layout.RunID, err)
	}
	if err := r.log.Append(e); err != nil {
		// The state in memory moved on; fold again from the log to undo.
		if st, ferr := Fold(r.Layout.RunID, r.log.Events()); ferr == nil {
			r.State = st
		}
		return e, err
	}
	r.State = next
	r.dirty = true
	if r.deferState {
		return e, nil
	}
	return e, r.FlushState()
}

// WriteArtifact writes a sealed artifact document to path (durably) and
// returns the digest of its bytes and the path relative to the run.
func (r *Run) WriteArtifact(path string, doc []byte) (digest, rel string, err error) {
	if err := ledger.WriteFileDurable(path, doc); err != nil {
		return "", "", fmt.Errorf("write %s: %w", path, err)
	}
	return canonical.Digest(doc), r.Layout.Rel(path), nil
}

// WriteArtifacts writes several artifacts durably (see
// ledger.WriteFilesDurable) and returns the digest and the path relative to
// the run directory of each.
func (r *Run) WriteArtifacts(files []ledger.File) (digests, rels []string, err error) {
	if err := ledger.WriteFilesDurable(files); err != nil {
		return nil, nil, fmt.Errorf("write artifacts: %w", err)
	}
	for _, f := range files {
		digests = append(digests, canonical.Digest(f.Data))
		rels = append(rels, r.Layout.Rel(f.Path))
	}
	return digests, rels, nil
}

// NewHeader returns the standard header of a stack artifact.
func NewHeader(kind, objectID, runID, waveID, baseRef string, createdAt time.Time, producer string) artifact.Header {
	return artifact.Header{ArtifactKind: kind, Version: "1", ObjectID: objectID, RunID: runID, WaveID: waveID, BaseRef: baseRef,
		CreatedAt: artifact.FormatTime(createdAt), Producer: producer}
}

// Seal seals v under h, signed when key is not nil.
func Seal(h artifact.Header, v any, key *signing.PrivateKey) ([]byte, artifact.Header, error) {
	return artifact.SealValue(h, v, key)
}

// LoadState folds the events of a run without taking the writer lock.
func LoadState(l Layout) (State, []ledger.Event, error) {
	if _, err := os.Stat(l.EventsDir()); err != nil {
		return State{}, nil, runNotFound(l)
	}
	evs, err := ledger.Read(l.Root, l.RunID)
	if err != nil {
		return State{}, nil, err
	}
	st, err := foldRun(l, evs)
	return st, evs, err
}

// foldRun folds the events evs of the run l, as LoadState does.
func foldRun(l Layout, evs []ledger.Event) (State, error) {
	st, err := Fold(l.RunID, evs)
	if err != nil {
		return st, &errkind.CheckError{Problem: fmt.Sprintf("run %s: %v", l.RunID, err), Hint: "the events do not fold into a state; the log was edited or written by another tool"}
	}
	if !st.Initialized {
		return st, runNotFound(l)
	}
	return st, nil
}

// ReplayResult is what Replay found.
type ReplayResult struct {
	RunID     string `json:"run_id"`
	Events    int    `json:"events"`
	Sequence  int64  `json:"sequence"`
	Digest    string `json:"state_digest"` // of the re-derived state
	Stored    string `json:"stored_digest"`
	Equal     bool   `json:"equal"`
	FirstDiff string `json:"first_difference,omitempty"` // JSON pointer of the first differing field
	Detail    string `json:"detail,omitempty"`
}

// Replay re-derives the state from the events alone and compares it, byte
// for byte, with state.json.
func Replay(l Layout) (ReplayResult, error) {
	st, evs, err := LoadState(l)
	if err != nil {
		return ReplayResult{}, err
	}
	return compareState(l, st, evs)
}

// ReplayEvents is Replay of the run's events evs, already read (a caller
// replaying the same ledger for its own state reads it once).
func ReplayEvents(l Layout, evs []ledger.Event) (ReplayResult, error) {
	st, err := foldRun(l, evs)
	if err != nil {
		return ReplayResult{}, err
	}
	return compareState(l, st, evs)
}

// compareState compares st, folded from evs, with state.json.
func compareState(l Layout, st State, evs []ledger.Event) (ReplayResult, error) {
	want, err := st.Marshal()
	if err != nil {
		return ReplayResult{}, err
	}
	res := ReplayResult{RunID: l.RunID, Events: len(evs), Sequence: st.Sequence, Digest: canonical.Digest(want)}
	have, err := readlimit.ReadFile(l.StatePath(), MaxProposalBytes)
	if err != nil {
		res.FirstDiff, res.Detail = "", fmt.Sprintf("cannot read %s: %v", l.StatePath(), err)
		return res, nil
	}
	res.Stored = canonical.Digest(have)
	if bytes.Equal(have, want) {
		res.Equal = true
		return res, nil
	}
	res.FirstDiff, res.Detail = FirstDifference(have, want)
	return res, nil
}

// FirstDifference returns the JSON pointer of the first field (in sorted key
// order) where two JSON documents differ, and a description; "" when the
// documents are equal as JSON (they may still differ in bytes).
func FirstDifference(stored, derived []byte) (string, string) {
	var a, b any
	if err := json.Unmarshal(stored, &a); err != nil {
		return "", "the stored state is not JSON: " + err.Error()
	}
	if err := json.Unmarshal(derived, &b); err != nil {
		return "", "the derived state is not JSON: " + err.Error()
	}
	ptr, detail, ok := diffValue("", a, b)
	if !ok {
		return "", "the documents are equal as JSON but not byte for byte (not canonical)"
	}
	return ptr, detail
}

func diffValue(ptr string, a, b any) (string, string, bool) {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok {
			return ptrOrRoot(ptr), "type differs", true
		}
		keys := map[string]bool{}
		for k := range x {
			keys[k] = true
		}
		for k := range y {
			keys[k] = true
		}
		sorted := make([]string, 0, len(keys))
		for k := range keys {
			sorted = append(sorted, k)
		}
		sort.Strings(sorted)
		for _, k := range sorted {
			p := ptr + "/" + escapePtr(k)
			xv, xok := x[k]
			yv, yok := y[k]
			switch {
			case !xok:
				return p, "missing from the stored state", true
			case !yok:
				return p, "not in the re-derived state", true
			}
			if q, d, ok := diffValue(p, xv, yv); ok {
				return q, d, true
			}
		}
		return "", "", false
	case []any:
		y, ok := b.([]any)
		if !ok {
			return ptrOrRoot(ptr), "type differs", true
		}
		for i := 0; i < len(x) && i < len(y); i++ {
			if q, d, ok := diffValue(ptr+"/"+strconv.Itoa(i), x[i], y[i]); ok {
				return q, d, true
			}
		}
		if len(x) != len(y) {
			return ptrOrRoot(ptr), fmt.Sprintf("stored has %d elements, re-derived %d", len(x), len(y)), true
		}
		return "", "", false
	default:
		xb, _ := json.Marshal(a)
		yb, _ := json.Marshal(b)
		if !bytes.Equal(xb, yb) {
			return ptrOrRoot(ptr), fmt.Sprintf("stored %s, re-derived %s", abbreviate(xb), abbreviate(yb)), true
		}
		return "", "", false
	}
}

func ptrOrRoot(p string) string {
	if p == "" {
		return "/"
	}
	return p
}

func escapePtr(k string) string {
	return strings.ReplaceAll(strings.ReplaceAll(k, "~", "~0"), "/", "~1")
}

func abbreviate(b []byte) string {
	if len(b) > 80 {
		return string(b[:77]) + "..."
	}
	return string(b)
}
