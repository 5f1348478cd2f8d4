package ledger

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/dome-registry/dome/pkg/canonical"
)

// Log is the single writer of one run's events. Open it, Append, Close.
type Log struct {
	runDir string
	dir    string
	runID  string
	lock   *os.File
	next   int64
	last   Event
	events []Event
	held   int // events OpenAfter took from the caller instead of reading them
}

// Open opens the run in runDir (creating its events folder) for writing:
// it takes the writer lock (ErrLocked when another process holds it),
// removes the temporary files a crashed writer left, and reads and validates
// the events already there.
func Open(runDir, runID string) (*Log, error) {
	return open(runDir, runID, nil)
}

// OpenAfter is Open for a writer that read the run's events (Read) before
// it took the lock: held are those events, and only the ones appended
// since are read. An append-only log never changes the events it holds;
// a folder holding fewer events than held is read whole again.
func OpenAfter(runDir, runID string, held []Event) (*Log, error) {
	return open(runDir, runID, held)
}

func open(runDir, runID string, held []Event) (*Log, error) {
	if err := CheckRunID(runID); err != nil {
		return nil, err
	}
	dir := filepath.Join(runDir, EventsDir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("ledger: %w", err)
	}
	lf, err := lockFile(filepath.Join(dir, lockName))
	if err != nil {
		return nil, err
	}
	l := &Log{runDir: runDir, dir: dir, runID: runID, lock: lf}
	ls, err := list(dir)
	if err != nil {
		l.Close()
		return nil, err
	}
	for _, t := range ls.temps {
		os.Remove(filepath.Join(dir, t))
	}
	if len(ls.temps) > 0 {
		syncDir(dir)
	}
	if len(ls.seqs) < len(held) {
		held = nil
	}
	for i, e := range held {
		if e.Sequence != int64(i+1) || e.RunID != runID {
			held = nil // not what Read returned for this run
			break
		}
	}
	more, err := ls.readFrom(dir, runID, int64(len(held)))
	if err != nil {
		l.Close()
		return nil, err
	}
	evs := append(held[:len(held):len(held)], more...)
	l.events, l.held = evs, len(held)
	l.next = int64(len(evs)) + 1
	if len(evs) > 0 {
		l.last = evs[len(evs)-1]
	}
	return l, nil
}

// Held is how many of Events OpenAfter took from its caller: 0 when it
// read the folder whole.
func (l *Log) Held() int { return l.held }

// Events returns the events read at Open and appended since.
func (l *Log) Events() []Event { return l.events }

// Next returns the sequence the next Append will use.
func (l *Log) Next() int64 { return l.next }

// RunID returns the run the log belongs to.
func (l *Log) RunID() string { return l.runID }

// Build returns the event Append would write (with its event_id), without
// writing it, so a caller can check it folds before it is appended.
func (l *Log) Build(topic string, ts time.Time, payload any) (Event, error) {
	if l.lock == nil {
		return Event{}, errors.New("ledger: the log is closed")
	}
	if err := CheckTopic(topic); err != nil {
		return Event{}, err
	}
	p, err := canonical.Marshal(payload)
	if err != nil {
		return Event{}, fmt.Errorf("ledger: %s payload: %w", topic, err)
	}
	if len(p) == 0 || p[0] != '{' {
		return Event{}, fmt.Errorf("ledger: %s payload: want a JSON object", topic)
	}
	e := Event{SchemaVersion: SchemaVersion, Sequence: l.next, TS: FormatTS(ts), Topic: topic, RunID: l.runID, Payload: json.RawMessage(p)}
	if e.EventID, err = ComputeID(e); err != nil {
		return Event{}, err
	}
	return e, nil
}

// Append writes e (made by Build for the current sequence) durably.
func (l *Log) Append(e Event) error {
	if l.lock == nil {
		return errors.New("ledger: the log is closed")
	}
	if e.Sequence != l.next || e.RunID != l.runID {
		return fmt.Errorf("ledger: event %d of run %q does not follow %d of %q", e.Sequence, e.RunID, l.next-1, l.runID)
	}
	if want, err := ComputeID(e); err != nil || want != e.EventID {
		return fmt.Errorf("ledger: event %d: event_id does not check", e.Sequence)
	}
	data, err := canonical.Marshal(e)
	if err != nil {
		return fmt.Errorf("ledger: %w", err)
	}
	if len(data) > MaxEventBytes {
		return fmt.Errorf("ledger: event %s is %d bytes, over the limit of %d", e.Topic, len(data), MaxEventBytes)
	}
	name := FileName(e.Sequence)
	path := filepath.Join(l.dir, name)
	if _, err := os.Lstat(path); err == nil {
		return &CorruptError{File: path, Sequence: e.Sequence, Problem: "the event file already exists: another writer ignored the lock"}
	}
	if err := writeDurable(l.dir, "."+name+".tmp-", path, data); err != nil {
		return fmt.Errorf("ledger: write %s: %w", path, err)
	}
	l.events = append(l.events, e)
	l.last = e
	l.next++
	return nil
}

// AppendPayload is Build then Append.
func (l *Log) AppendPayload(topic string, ts time.Time, payload any) (Event, error) {
	e, err := l.Build(topic, ts, payload)
	if err != nil {
		return Event{}, err
	}
	return e, l.Append(e)
}

// Close releases the writer lock.
func (l *Log) Close() error {
	if l.lock == nil {
		return nil
	}
	err := unlockFile(l.lock)
	l.lock = nil
	return err
}

// writeDurable writes data to path through a temporary file in dir: create,
// write, fsync, rename, fsync the directory.
func writeDurable(dir, tmpPrefix, path string, data []byte) error {
	if err := writeRenamed(dir, tmpPrefix, path, data); err != nil {
		return err
	}
	return syncDir(dir)
}

// writeRenamed is writeDurable but the fsync of the directory, which the
// caller owes before anything may depend on the rename.
func writeRenamed(dir, tmpPrefix, path string, data []byte) error {
	tmp, err := os.CreateTemp(dir, tmpPrefix+"*")
	if err != nil {
		return err
	}
	name := tmp.Name()
	fail := func(err error) error { tmp.Close(); os.Remove(name); return err }
	if _, err := tmp.Write(data); err != nil {
		return fail(err)
	}
	if err := tmp.Chmod(0o644); err != nil {
		return fail(err)
	}
	if err := tmp.Sync(); err != nil {
		return fail(err)
	}
	if err := tmp.Close(); err != nil {
		os.Remove(name)
		return err
	}
	if err := os.Rename(name, path); err != nil {
		os.Remove(name)
		return err
	}
	return nil
}

// WriteFileDurable writes data to path atomically (temporary file in the
// same folder, fsync, rename, fsync of the folder), creating the folder. It
// is the write discipline of the ledger, offered to the packages that keep
// files beside it (state.json, artifacts).
func WriteFileDurable(path string, data []byte) error {
	return WriteFilesDurable([]File{{Path: path, Data: data}})
}

// File is one file of WriteFilesDurable.
type File struct {
	Path string
	Data []byte
}

// WriteFilesDurable writes each file as WriteFileDurable does, but syncs
// each folder once, after the last rename into it: a batch of files costs
// one folder fsync instead of one per file. When it returns nil every file
// is durable; on error some may already be in place, each whole.
func WriteFilesDurable(files []File) error {
	var dirs []string
	seen := map[string]bool{}
	for _, f := range files {
		dir := filepath.Dir(f.Path)
		if !seen[dir] {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return err
			}
			seen[dir] = true
			dirs = append(dirs, dir)
		}
		if err := writeRenamed(dir, "."+filepath.Base(f.Path)+".tmp-", f.Path, f.Data); err != nil {
			return err
		}
	}
	for _, dir := range dirs {
		if err := syncDir(dir); err != nil {
			return err
		}
	}
	return nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
