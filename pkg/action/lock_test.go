package action

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
)

// memStore is a minimal in-memory Store for lock tests.
type memStore map[string]map[string]Record

func (m memStore) Publish(_ context.Context, r Record) (PublishResult, error) {
	if m[r.Name] == nil {
		m[r.Name] = map[string]Record{}
	}
	m[r.Name][r.Version] = r
	return PublishResult{Created: true, Record: r}, nil
}
func (m memStore) Get(_ context.Context, n, v string) (Record, error) {
	vs, ok := m[n]
	if !ok {
		return Record{}, ErrActionNotFound
	}
	r, ok := vs[v]
	if !ok {
		return Record{}, ErrVersionNotFound
	}
	return r, nil
}
func (m memStore) List(context.Context) ([]Summary, error) {
	var out []Summary
	for n, vs := range m {
		var recs []Record
		for _, r := range vs {
			recs = append(recs, r)
		}
		out = append(out, SummaryOf(n, recs))
	}
	return out, nil
}
func (m memStore) Deprecate(ctx context.Context, n, v string, d *Deprecation) (Record, error) {
	r, err := m.Get(ctx, n, v)
	if err != nil {
		return r, err
	}
	r.Deprecation = d
	m[n][v] = r
	return r, nil
}
func (memStore) Ready(context.Context) error { return nil }
func (memStore) Close() error                { return nil }

func TestLock_ResolveMarshalParseCheck(t *testing.T) {
	key, trusted := testKey(t, "dev-root-1", 1)
	store := memStore{}
	ctx := context.Background()
	for _, v := range []string{"1.0.0", "1.1.0", "2.0.0-rc.1"} {
		doc := strings.Replace(moveDoc, `"1.1.0"`, `"`+v+`"`, 1)
		signed, err := Sign(key, []byte(doc))
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := Publish(ctx, store, signed, trusted); err != nil {
			t.Fatal(err)
		}
	}
	req, err := ParseLockRequest("files.move@^1.0.0")
	if err != nil {
		t.Fatal(err)
	}
	e, _, err := ResolveEntry(ctx, store, req, trusted)
	if err != nil || e.Version != "1.1.0" || e.KID != "dev-root-1" || e.Range != "^1.0.0" {
		t.Fatalf("ResolveEntry = %+v, %v", e, err)
	}
	l := &Lock{Actions: []LockEntry{e}}
	data := l.Marshal()
	back, err := ParseLock(data)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(back.Marshal(), data) {
		t.Fatalf("lock does not round-trip:\n%s", data)
	}
	if f, err := CheckLock(ctx, store, back, trusted); err != nil || len(f) != 0 {
		t.Fatalf("CheckLock of a fresh lock = %+v, %v", f, err)
	}
	// A newer version in range is a note; a changed hash is a problem.
	signed, _ := Sign(key, []byte(strings.Replace(moveDoc, `"1.1.0"`, `"1.2.0"`, 1)))
	Publish(ctx, store, signed, trusted)
	f, _ := CheckLock(ctx, store, back, trusted)
	if len(f) != 1 || f[0].Problem || !strings.Contains(f[0].Detail, "now resolves to 1.2.0") {
		t.Fatalf("findings = %+v", f)
	}
	back.Actions[0].Hash = "sha256:" + strings.Repeat("0", 64)
	f, _ = CheckLock(ctx, store, back, trusted)
	if len(f) < 1 || !f[0].Problem || !strings.Contains(f[0].Detail, "the lock says sha256:0000") {
		t.Fatalf("findings = %+v", f)
	}

	// No match and unknown action.
	req, _ = ParseLockRequest("files.move@^3")
	if _, _, err := ResolveEntry(ctx, store, req, trusted); !errors.Is(err, ErrNoMatch) {
		t.Fatalf("no match: %v", err)
	}
	req, _ = ParseLockRequest("files.nope")
	if _, _, err := ResolveEntry(ctx, store, req, trusted); !errors.Is(err, ErrActionNotFound) {
		t.Fatalf("unknown: %v", err)
	}
	// A tampered version in range is an error, not skipped.
	rec := store["files.move"]["1.2.0"]
	rec.Document = bytes.Replace(rec.Document, []byte("Move"), []byte("Nuke"), 1)
	store["files.move"]["1.2.0"] = rec
	req, _ = ParseLockRequest("files.move@^1")
	if _, _, err := ResolveEntry(ctx, store, req, trusted); !errors.Is(err, ErrBadSignature) {
		t.Fatalf("tampered: %v", err)
	}
}

func TestParseLock_Refusals(t *testing.T) {
	good := `{"lock_version": 1, "actions": [{"name": "a", "range": "^1", "version": "1.0.0", "hash": "sha256:` + strings.Repeat("a", 64) + `", "kid": "k"}]}`
	if _, err := ParseLock([]byte(good)); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{
		`{"lock_version": 2, "actions": []}`,
		`{"lock_version": 1, "actions": [], "x": 1}`,
		`{"lock_version": 1, "lock_version": 1, "actions": []}`,
		strings.Replace(good, `"^1"`, `"^x"`, 1),
		strings.Replace(good, `"1.0.0"`, `"1.0"`, 1),
		strings.Replace(good, `"kid": "k"`, `"kid": ""`, 1),
		strings.Replace(good, `"kid": "k"`, `"kid": "k", "revision": "abc"`, 1),
		strings.Replace(good, `]}`, `, `+good[strings.Index(good, "{\"name"):len(good)-2]+`]}`, 1),
	} {
		if _, err := ParseLock([]byte(bad)); err == nil || !IsInvalid(err) {
			t.Errorf("ParseLock(%s) = %v, want ErrInvalid", bad, err)
		}
	}
}

func FuzzParseLock(f *testing.F) {
	f.Add([]byte(`{"lock_version": 1, "actions": [{"name": "a", "range": "^1", "version": "1.0.0", "hash": "sha256:` + strings.Repeat("a", 64) + `", "kid": "k"}]}`))
	f.Add([]byte(`{"lock_version": 1, "actions": []}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		l, err := ParseLock(data)
		if err != nil {
			return
		}
		again, err := ParseLock(l.Marshal())
		if err != nil || !bytes.Equal(again.Marshal(), l.Marshal()) {
			t.Fatalf("Marshal does not round-trip: %v\n%s", err, l.Marshal())
		}
	})
}
