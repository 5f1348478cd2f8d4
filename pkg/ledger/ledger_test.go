package ledger

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dome-registry/dome/pkg/errkind"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func writeRun(t *testing.T, n int) string {
	t.Helper()
	dir := t.TempDir()
	l, err := Open(dir, "run-1")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for i := 0; i < n; i++ {
		if _, err := l.AppendPayload("task.progress", t0.Add(time.Duration(i)*time.Second), map[string]any{"i": i}); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestAppendRead_RoundTrip(t *testing.T) {
	dir := writeRun(t, 3)
	evs, err := Read(dir, "run-1")
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 3 {
		t.Fatalf("got %d events", len(evs))
	}
	for i, e := range evs {
		if e.Sequence != int64(i+1) || e.Topic != "task.progress" || e.RunID != "run-1" || e.SchemaVersion != SchemaVersion {
			t.Errorf("event %d: %+v", i, e)
		}
		if id, _ := ComputeID(e); id != e.EventID {
			t.Errorf("event %d: id %s, want %s", i, e.EventID, id)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "events", "event.000000000003.json")); err != nil {
		t.Fatalf("zero-padded name: %v", err)
	}
	// Reopen continues the sequence.
	l, err := Open(dir, "run-1")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if l.Next() != 4 {
		t.Fatalf("next = %d, want 4", l.Next())
	}
}

func TestEventID_Deterministic(t *testing.T) {
	a, b := writeRun(t, 2), writeRun(t, 2)
	for _, n := range []string{FileName(1), FileName(2)} {
		x, _ := os.ReadFile(filepath.Join(a, "events", n))
		y, _ := os.ReadFile(filepath.Join(b, "events", n))
		if string(x) != string(y) {
			t.Fatalf("%s differs between two identical runs", n)
		}
	}
}

func TestRead_Damage(t *testing.T) {
	cases := []struct {
		name    string
		damage  func(t *testing.T, dir string)
		wantErr string // "" = reads fine
	}{
		{"crash leftover temp file is ignored", func(t *testing.T, dir string) {
			os.WriteFile(filepath.Join(dir, "events", ".event.000000000004.json.tmp-123"), []byte(`{"half`), 0o644)
		}, ""},
		{"gap", func(t *testing.T, dir string) {
			os.Remove(filepath.Join(dir, "events", FileName(2)))
		}, "event 2 is missing"},
		{"tampered payload", func(t *testing.T, dir string) {
			p := filepath.Join(dir, "events", FileName(2))
			b, _ := os.ReadFile(p)
			os.WriteFile(p, []byte(strings.Replace(string(b), `"i":1`, `"i":7`, 1)), 0o644)
		}, "does not check"},
		{"renamed file", func(t *testing.T, dir string) {
			os.Rename(filepath.Join(dir, "events", FileName(3)), filepath.Join(dir, "events", FileName(4)))
		}, "event 3 is missing"},
		{"unknown member", func(t *testing.T, dir string) {
			p := filepath.Join(dir, "events", FileName(1))
			b, _ := os.ReadFile(p)
			os.WriteFile(p, []byte(strings.Replace(string(b), `{"event_id"`, `{"extra":1,"event_id"`, 1)), 0o644)
		}, "unknown field"},
		{"not canonical", func(t *testing.T, dir string) {
			p := filepath.Join(dir, "events", FileName(1))
			b, _ := os.ReadFile(p)
			os.WriteFile(p, append(b, '\n'), 0o644)
		}, "not the canonical form"},
		{"stray file", func(t *testing.T, dir string) {
			os.WriteFile(filepath.Join(dir, "events", "event.5.json"), []byte(`{}`), 0o644)
		}, "unexpected file"},
		{"truncated", func(t *testing.T, dir string) {
			p := filepath.Join(dir, "events", FileName(3))
			b, _ := os.ReadFile(p)
			os.WriteFile(p, b[:len(b)/2], 0o644)
		}, "not strict JSON"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := writeRun(t, 3)
			tc.damage(t, dir)
			_, err := Read(dir, "run-1")
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("Read: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("Read error = %v, want %q", err, tc.wantErr)
			}
			var ce *CorruptError
			if !errors.As(err, &ce) || !errkind.IsCheck(err) {
				t.Fatalf("want a *CorruptError that is a check failure, got %T", err)
			}
		})
	}
}

func TestOpen_CleansTempFiles(t *testing.T) {
	dir := writeRun(t, 1)
	tmp := filepath.Join(dir, "events", ".event.000000000002.json.tmp-999")
	os.WriteFile(tmp, []byte("x"), 0o644)
	l, err := Open(dir, "run-1")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if _, err := os.Stat(tmp); !os.IsNotExist(err) {
		t.Fatalf("temp file left: %v", err)
	}
}

func TestOpen_SingleWriter(t *testing.T) {
	dir := writeRun(t, 1)
	l, err := Open(dir, "run-1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Open(dir, "run-1"); !errors.Is(err, ErrLocked) {
		t.Fatalf("second Open: %v, want ErrLocked", err)
	}
	l.Close()
	l2, err := Open(dir, "run-1")
	if err != nil {
		t.Fatalf("Open after Close: %v", err)
	}
	l2.Close()
}

// TestOpen_LockReleasedOnKill holds the lock in a child process, kills it
// with SIGKILL and takes the lock again.
func TestOpen_LockReleasedOnKill(t *testing.T) {
	if os.Getenv("DOME_LEDGER_HOLD") != "" {
		l, err := Open(os.Getenv("DOME_LEDGER_HOLD"), "run-1")
		if err != nil {
			os.Exit(3)
		}
		_ = l
		os.Stdout.WriteString("locked\n")
		time.Sleep(time.Minute)
		return
	}
	dir := writeRun(t, 1)
	cmd := exec.Command(os.Args[0], "-test.run", "^TestOpen_LockReleasedOnKill$")
	cmd.Env = append(os.Environ(), "DOME_LEDGER_HOLD="+dir)
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 7)
	if _, err := out.Read(buf); err != nil || string(buf) != "locked\n" {
		cmd.Process.Kill()
		t.Fatalf("child did not lock: %q %v", buf, err)
	}
	if _, err := Open(dir, "run-1"); !errors.Is(err, ErrLocked) {
		t.Fatalf("Open while the child holds the lock: %v", err)
	}
	cmd.Process.Kill()
	cmd.Wait()
	l, err := Open(dir, "run-1")
	if err != nil {
		t.Fatalf("Open after kill -9: %v", err)
	}
	l.Close()
}

func TestCheckNames(t *testing.T) {
	for _, tc := range []struct {
		id string
		ok bool
	}{{"run-1", true}, {"R.2_x", true}, {"", false}, {"-x", false}, {"a/b", false}, {"a..b", false}, {"x.lock", false}, {strings.Repeat("a", 65), false}} {
		if err := CheckRunID(tc.id); (err == nil) != tc.ok {
			t.Errorf("CheckRunID(%q) = %v", tc.id, err)
		}
	}
	for _, tc := range []struct {
		topic string
		ok    bool
	}{{"stack.proposal.submitted", true}, {"gate.computed", true}, {"Stack.x", false}, {"a..b", false}, {"", false}} {
		if err := CheckTopic(tc.topic); (err == nil) != tc.ok {
			t.Errorf("CheckTopic(%q) = %v", tc.topic, err)
		}
	}
}

func TestReadFrom_OnlyTheTail(t *testing.T) {
	dir := writeRun(t, 5)
	for _, tc := range []struct {
		after     int64
		wantFirst int64
		wantN     int
	}{{0, 1, 5}, {-3, 1, 5}, {2, 3, 3}, {5, 0, 0}, {9, 0, 0}} {
		evs, err := ReadFrom(dir, "run-1", tc.after)
		if err != nil {
			t.Fatalf("after %d: %v", tc.after, err)
		}
		if len(evs) != tc.wantN || tc.wantN > 0 && evs[0].Sequence != tc.wantFirst {
			t.Errorf("after %d: got %d events starting %v, want %d from %d", tc.after, len(evs), evs, tc.wantN, tc.wantFirst)
		}
	}
	// A gap before the tail is still an error.
	if err := os.Remove(filepath.Join(dir, "events", FileName(2))); err != nil {
		t.Fatal(err)
	}
	var ce *CorruptError
	if _, err := ReadFrom(dir, "run-1", 3); !errors.As(err, &ce) || ce.Sequence != 2 {
		t.Fatalf("gap at 2, reading after 3: %v", err)
	}
}

func TestOpenAfter_ReadsOnlyWhatWasAppended(t *testing.T) {
	dir := writeRun(t, 3)
	held, err := Read(dir, "run-1")
	if err != nil {
		t.Fatal(err)
	}
	// a writer appends two more between the read and the lock
	l, err := Open(dir, "run-1")
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		if _, err := l.AppendPayload("task.progress", t0, map[string]any{"late": i}); err != nil {
			t.Fatal(err)
		}
	}
	l.Close()
	all, err := Read(dir, "run-1")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		held []Event
	}{
		{"the events read before", held},
		{"none", nil},
		{"more than the folder holds: read whole", append(slices.Clone(all), all[0])},
		{"not a prefix of this run: read whole", []Event{{Sequence: 2, RunID: "run-1"}}},
		{"another run's", []Event{{Sequence: 1, RunID: "other"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, err := OpenAfter(dir, "run-1", tc.held)
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			if wantHeld := map[bool]int{true: 3}[tc.name == "the events read before"]; l.Held() != wantHeld {
				t.Errorf("held %d, want %d", l.Held(), wantHeld)
			}
			if got := l.Events(); !reflect.DeepEqual(got, all) || l.Next() != 6 {
				t.Fatalf("events %v, next %d; want the 5 of the folder", l.Events(), l.Next())
			}
		})
	}
}
