package grantfile

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dome-registry/dome/pkg/grant"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func sp(jti string, exp time.Duration) grant.Spend {
	return grant.Spend{Issuer: "coord", JTI: jti, ProfileID: "tp-1", ExpiresAt: t0.Add(exp), SpentAt: t0}
}

func open(t *testing.T, dir string) *Store {
	t.Helper()
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestTornTailIsCutAndNeverCounted(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := open(t, dir)
	if err := s.Spend(ctx, sp("a", time.Hour)); err != nil {
		t.Fatal(err)
	}
	// A writer killed mid-append leaves part of a line.
	f, _ := os.OpenFile(filepath.Join(dir, LogName), os.O_WRONLY|os.O_APPEND, 0)
	f.WriteString(`{"op":"spend","spend":{"issuer":"coord","jti":"torn"`)
	f.Close()
	r := open(t, dir)
	if st, err := r.Lookup(ctx, "coord", "torn", "tp-1"); err != nil || st.Spent != nil {
		t.Fatalf("torn record: %+v %v", st, err)
	}
	if err := r.Spend(ctx, sp("b", time.Hour)); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(filepath.Join(dir, LogName))
	if strings.Contains(string(data), "torn") || strings.Count(string(data), "\n") != 2 {
		t.Fatalf("log after the cut:\n%s", data)
	}
	for _, jti := range []string{"a", "b"} {
		if st, _ := s.Lookup(ctx, "coord", jti, "tp-1"); st.Spent == nil {
			t.Fatalf("%s lost", jti)
		}
	}
}

func TestCorruptRecordFailsClosed(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := open(t, dir)
	if err := s.Spend(ctx, sp("a", time.Hour)); err != nil {
		t.Fatal(err)
	}
	f, _ := os.OpenFile(filepath.Join(dir, LogName), os.O_WRONLY|os.O_APPEND, 0)
	f.WriteString("{\"op\":\"spend\",\"spend\":{\"issuer\":\"coord\",\"jti\":\"../x\"}}\n")
	f.Close()
	if _, err := s.Lookup(ctx, "coord", "a", "tp-1"); err == nil || !strings.Contains(err.Error(), "record 2") {
		t.Fatalf("lookup over a corrupt log: %v", err)
	}
	if err := s.Spend(ctx, sp("c", time.Hour)); err == nil {
		t.Fatal("spend over a corrupt log succeeded")
	}
}

func TestRefusesSymlinks(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(t.TempDir(), "elsewhere")
	os.WriteFile(target, nil, 0o600)
	if err := os.Symlink(target, filepath.Join(dir, LogName)); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(dir); err == nil {
		t.Fatal("opened a log that is a symlink")
	}
	file := filepath.Join(t.TempDir(), "file")
	os.WriteFile(file, nil, 0o600)
	if _, err := Open(file); err == nil {
		t.Fatal("opened a file as the store folder")
	}
}

func TestPruneSeenByOtherHandles(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	a, b := open(t, dir), open(t, dir)
	for _, s := range []grant.Spend{sp("old", time.Minute), sp("new", time.Hour)} {
		if err := a.Spend(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	if st, _ := b.Lookup(ctx, "coord", "old", "tp-1"); st.Spent == nil {
		t.Fatal("b does not see a's spend")
	}
	n, err := a.Prune(ctx, t0.Add(10*time.Minute))
	if err != nil || n != 1 {
		t.Fatalf("prune: %d %v", n, err)
	}
	if st, _ := b.Lookup(ctx, "coord", "old", "tp-1"); st.Spent != nil {
		t.Fatal("b still sees the pruned spend")
	}
	if err := b.Spend(ctx, sp("new", time.Hour)); !errors.Is(err, grant.ErrSpent) {
		t.Fatalf("b after the prune: %v", err)
	}
	if err := b.Spend(ctx, sp("third", time.Hour)); err != nil {
		t.Fatal(err)
	}
	if st, _ := a.Lookup(ctx, "coord", "third", "tp-1"); st.Spent == nil {
		t.Fatal("a does not see b's spend after the prune")
	}
}

func TestCompaction(t *testing.T) {
	ctx := context.Background()
	s := open(t, t.TempDir())
	s.compactAt = 40
	for i := 0; i < s.compactAt; i++ {
		x := sp("e"+strconv.Itoa(i), time.Second)
		if err := s.Spend(ctx, x); err != nil {
			t.Fatal(err)
		}
	}
	later := sp("live", time.Hour)
	later.SpentAt = t0.Add(time.Minute)
	if err := s.Spend(ctx, later); err != nil {
		t.Fatal(err)
	}
	if s.records > 10 {
		t.Fatalf("%d records after compaction, want the live ones only", s.records)
	}
	if st, _ := s.Lookup(ctx, "coord", "live", "tp-1"); st.Spent == nil {
		t.Fatal("compaction dropped a live spend")
	}
}

func FuzzParseRecord(f *testing.F) {
	f.Add([]byte(`{"op":"spend","spend":{"issuer":"coord","jti":"a","profile_id":"tp-1","grant":"","expires_at":"2026-01-02T03:04:05Z","spent_at":"2026-01-02T03:04:05Z"}}`))
	f.Add([]byte(`{"op":"revoke","revocation":{"issuer":"coord","kind":"jti","value":"a","until":"2026-01-02T04:04:05Z","revoked_at":"2026-01-02T03:04:05Z"}}`))
	f.Add([]byte(`{"op":"spend"}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		r, err := parseRecord(line)
		if err != nil {
			return
		}
		// What parses writes back to a line that parses to the same record.
		out, err := r.line()
		if err != nil {
			t.Fatal(err)
		}
		r2, err := parseRecord(out[:len(out)-1])
		if err != nil {
			t.Fatalf("round trip: %v\n%s", err, out)
		}
		out2, _ := r2.line()
		if string(out) != string(out2) {
			t.Fatalf("round trip changed the record:\n%s\n%s", out, out2)
		}
	})
}
