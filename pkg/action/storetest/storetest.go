// Package storetest is the conformance suite every action.Store passes (the
// git store, the PostgreSQL store): acceptance tests A to F at the
// store level, idempotent republish, concurrent publishers of one
// (name, version) and of many, and listing order with latest_version. A new
// backend is done when Run passes against it. It also hands out the fixed,
// test-only signing key the suite signs with.
package storetest

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/dome-registry/dome/pkg/action"
	"github.com/dome-registry/dome/pkg/signing"
)

// KID is the key id of the suite's test-only key.
const KID = "storetest-only-key"

// Key returns the suite's fixed, test-only Ed25519 key (never trust it
// outside tests) and a trusted key set holding it.
func Key(t testing.TB) (signing.PrivateKey, *signing.TrustedKeys) {
	t.Helper()
	seed := make([]byte, ed25519.SeedSize)
	copy(seed, "dome storetest: test-only key!!")
	k := signing.PrivateKey{KID: KID, Key: ed25519.NewKeyFromSeed(seed)}
	ts, err := signing.NewTrustedKeys(k.Public())
	if err != nil {
		t.Fatal(err)
	}
	return k, ts
}

// Signed returns the prepared record of an action document name@version
// with the given description, signed with Key.
func Signed(t testing.TB, name, version, description string) action.Record {
	t.Helper()
	doc := map[string]any{
		"name":        name,
		"version":     version,
		"description": description,
		"input": map[string]any{
			"type":       "object",
			"required":   []string{"path"},
			"properties": map[string]any{"path": map[string]any{"type": "string"}},
		},
	}
	raw, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	key, _ := Key(t)
	signed, err := action.Sign(key, raw)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := action.Prepare(signed)
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

// Run runs the suite. newStore returns a new, empty store for each subtest;
// Run closes it.
func Run(t *testing.T, newStore func(t *testing.T) action.Store) {
	tests := []struct {
		name string
		fn   func(t *testing.T, s action.Store)
	}{
		{"A_CanonicalBytesIgnoreKeyOrder", testCanonical},
		{"B_SignedVersionVerifies", testVerifies},
		{"C_TamperDetected", testTamper},
		{"D_ListVersionsAndLatest", testList},
		{"E_NotFound", testNotFound},
		{"F_ImmutableConflict", testConflict},
		{"IdempotentRepublish", testIdempotent},
		{"Deprecation", testDeprecation},
		{"InvalidRecordRefused", testInvalid},
		{"Concurrent50PublishersOneVersion", testConcurrentOne},
		{"ConcurrentPublishersDistinctVersions", testConcurrentMany},
		{"Ready", func(t *testing.T, s action.Store) {
			if err := s.Ready(context.Background()); err != nil {
				t.Fatalf("Ready: %v", err)
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newStore(t)
			defer func() {
				if err := s.Close(); err != nil {
					t.Errorf("Close: %v", err)
				}
			}()
			tc.fn(t, s)
		})
	}
}

func publish(t *testing.T, s action.Store, rec action.Record) action.PublishResult {
	t.Helper()
	res, err := s.Publish(context.Background(), rec)
	if err != nil {
		t.Fatalf("Publish %s@%s: %v", rec.Name, rec.Version, err)
	}
	return res
}

func get(t *testing.T, s action.Store, name, version string) action.Record {
	t.Helper()
	rec, err := s.Get(context.Background(), name, version)
	if err != nil {
		t.Fatalf("Get %s@%s: %v", name, version, err)
	}
	return rec
}

func sameRecord(t *testing.T, what string, got, want action.Record) {
	t.Helper()
	if got.Name != want.Name || got.Version != want.Version || got.Hash != want.Hash || !bytes.Equal(got.Document, want.Document) {
		t.Fatalf("%s: got %s@%s %s\n%s\nwant %s@%s %s\n%s", what, got.Name, got.Version, got.Hash, got.Document, want.Name, want.Version, want.Hash, want.Document)
	}
}

// reordered writes a document's members in reverse order, indented.
func reordered(t *testing.T, doc []byte) []byte {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(doc, &m); err != nil {
		t.Fatal(err)
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Sort(sort.Reverse(sort.StringSlice(keys)))
	var b strings.Builder
	b.WriteString("{\n")
	for i, k := range keys {
		if i > 0 {
			b.WriteString(",\n")
		}
		fmt.Fprintf(&b, "  %q :  %s", k, m[k])
	}
	b.WriteString("\n}\n")
	return []byte(b.String())
}

func testCanonical(t *testing.T, s action.Store) {
	rec := Signed(t, "files.move", "1.0.0", "Move a file from A to B")
	again, err := action.Prepare(reordered(t, rec.Document))
	if err != nil {
		t.Fatal(err)
	}
	sameRecord(t, "reordered document", again, rec)
	if res := publish(t, s, rec); !res.Created {
		t.Fatal("first publish: Created = false")
	}
	res := publish(t, s, again)
	if res.Created {
		t.Fatal("publishing the same document with its keys reordered created a new version")
	}
	sameRecord(t, "republish result", res.Record, rec)
}

func testVerifies(t *testing.T, s action.Store) {
	_, trusted := Key(t)
	rec := Signed(t, "files.move", "1.1.0", "Move a file")
	res := publish(t, s, rec)
	if !res.Created {
		t.Fatal("Created = false for a new version")
	}
	sameRecord(t, "publish result", res.Record, rec)
	got := get(t, s, "files.move", "1.1.0")
	sameRecord(t, "Get", got, rec)
	if v := action.VerifyRecord(got, trusted); !v.Verified || v.KID != KID || v.Hash != rec.Hash {
		t.Fatalf("VerifyRecord of the stored record: %+v", v)
	}
}

func testTamper(t *testing.T, s action.Store) {
	_, trusted := Key(t)
	rec := Signed(t, "files.move", "1.0.0", "Move a file")
	publish(t, s, rec)
	got := get(t, s, "files.move", "1.0.0")
	for _, i := range []int{0, len(got.Document) / 3, len(got.Document) / 2, len(got.Document) - 2} {
		tampered := got
		tampered.Document = bytes.Clone(got.Document)
		tampered.Document[i] ^= 0x01
		if v := action.VerifyRecord(tampered, trusted); v.Verified || v.Reason == "" {
			t.Fatalf("byte %d changed: %+v", i, v)
		}
	}
	// Changing the returned bytes must not change what the store holds.
	got.Document[len(got.Document)/2] ^= 0x01
	sameRecord(t, "Get after the caller changed its copy", get(t, s, "files.move", "1.0.0"), rec)
}

func testList(t *testing.T, s action.Store) {
	ctx := context.Background()
	if l, err := s.List(ctx); err != nil || len(l) != 0 {
		t.Fatalf("List of an empty store = %v, %v; want none", l, err)
	}
	for _, r := range []action.Record{
		Signed(t, "files.move", "1.0.0", "v1.0.0"),
		Signed(t, "zeta.tool", "0.1.0-alpha", "zeta alpha"),
		Signed(t, "files.move", "1.10.0", "v1.10.0"),
		Signed(t, "files.move", "2.0.0-rc.1", "v2 candidate"),
		Signed(t, "files.move", "1.9.0", "v1.9.0"),
		Signed(t, "alpha", "3.0.0", "alpha three"),
		Signed(t, "files.move", "1.10.0-rc.2", "v1.10.0 candidate"),
	} {
		publish(t, s, r)
	}
	got, err := s.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := []action.Summary{
		{Name: "alpha", LatestVersion: "3.0.0", Versions: []string{"3.0.0"}, Description: "alpha three"},
		{Name: "files.move", LatestVersion: "1.10.0", Versions: []string{"1.0.0", "1.9.0", "1.10.0-rc.2", "1.10.0", "2.0.0-rc.1"}, Description: "v1.10.0"},
		{Name: "zeta.tool", LatestVersion: "0.1.0-alpha", Versions: []string{"0.1.0-alpha"}, Description: "zeta alpha"},
	}
	if len(got) != len(want) {
		t.Fatalf("List = %+v\nwant %+v", got, want)
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.Name != w.Name || g.LatestVersion != w.LatestVersion || !slices.Equal(g.Versions, w.Versions) || g.Description != w.Description || g.Deprecated != nil {
			t.Fatalf("List[%d] = %+v\nwant %+v", i, g, w)
		}
	}
}

// testDeprecation: a deprecation is metadata beside the immutable document:
// it shows in Get and List, moves latest_version off the version, survives an
// identical republish, can be cleared, and is refused for unknown versions
// and without a reason.
func testDeprecation(t *testing.T, s action.Store) {
	ctx := context.Background()
	old := publish(t, s, Signed(t, "files.move", "1.0.0", "v1")).Record
	cur := publish(t, s, Signed(t, "files.move", "1.1.0", "v1.1")).Record
	reason := "broken path handling; use 1.0.0 until 1.2.0"
	rec, err := s.Deprecate(ctx, "files.move", "1.1.0", &action.Deprecation{Reason: reason})
	if err != nil {
		t.Fatalf("Deprecate: %v", err)
	}
	if rec.Deprecation == nil || rec.Deprecation.Reason != reason {
		t.Fatalf("Deprecate returned %+v", rec.Deprecation)
	}
	sameRecord(t, "the deprecated version", rec, cur)
	got := get(t, s, "files.move", "1.1.0")
	sameRecord(t, "Get of the deprecated version", got, cur)
	if got.Deprecation == nil || got.Deprecation.Reason != reason {
		t.Fatalf("Get: deprecation %+v, want %q", got.Deprecation, reason)
	}
	if d := get(t, s, "files.move", "1.0.0").Deprecation; d != nil {
		t.Fatalf("1.0.0 is deprecated too: %+v", d)
	}
	list := func() action.Summary {
		t.Helper()
		l, err := s.List(ctx)
		if err != nil || len(l) != 1 {
			t.Fatalf("List = %+v, %v", l, err)
		}
		return l[0]
	}
	if sum := list(); sum.LatestVersion != "1.0.0" || len(sum.Deprecated) != 1 || sum.Deprecated["1.1.0"] != reason || !slices.Equal(sum.Versions, []string{"1.0.0", "1.1.0"}) {
		t.Fatalf("List after deprecating 1.1.0: %+v", sum)
	}
	// again, the same: no change; an identical republish keeps it
	if _, err := s.Deprecate(ctx, "files.move", "1.1.0", &action.Deprecation{Reason: reason}); err != nil {
		t.Fatalf("Deprecate again: %v", err)
	}
	if res := publish(t, s, Signed(t, "files.move", "1.1.0", "v1.1")); res.Created || res.Record.Deprecation == nil || res.Record.Deprecation.Reason != reason {
		t.Fatalf("an identical republish of a deprecated version: created %v, deprecation %+v", res.Created, res.Record.Deprecation)
	}
	if d := get(t, s, "files.move", "1.1.0").Deprecation; d == nil || d.Reason != reason {
		t.Fatalf("after an identical republish: %+v", d)
	}
	// refusals
	for _, bad := range []*action.Deprecation{{Reason: ""}, {Reason: "  "}, {Reason: "a\nb"}, {Reason: strings.Repeat("x", action.MaxDeprecationReason+1)}} {
		if _, err := s.Deprecate(ctx, "files.move", "1.0.0", bad); !errors.Is(err, action.ErrInvalid) {
			t.Fatalf("Deprecate with reason %q: %v, want ErrInvalid", bad.Reason, err)
		}
	}
	if _, err := s.Deprecate(ctx, "files.move", "9.9.9", &action.Deprecation{Reason: "x"}); !errors.Is(err, action.ErrVersionNotFound) {
		t.Fatalf("Deprecate of an unknown version: %v", err)
	}
	if _, err := s.Deprecate(ctx, "files.copy", "1.0.0", &action.Deprecation{Reason: "x"}); !errors.Is(err, action.ErrActionNotFound) {
		t.Fatalf("Deprecate of an unknown action: %v", err)
	}
	// every version deprecated: latest is the highest again
	if _, err := s.Deprecate(ctx, "files.move", "1.0.0", &action.Deprecation{Reason: "old"}); err != nil {
		t.Fatal(err)
	}
	if sum := list(); sum.LatestVersion != "1.1.0" || len(sum.Deprecated) != 2 {
		t.Fatalf("List with every version deprecated: %+v", sum)
	}
	// cleared
	for _, v := range []string{"1.0.0", "1.1.0"} {
		rec, err := s.Deprecate(ctx, "files.move", v, nil)
		if err != nil || rec.Deprecation != nil {
			t.Fatalf("clear %s: %+v, %v", v, rec.Deprecation, err)
		}
	}
	if _, err := s.Deprecate(ctx, "files.move", "1.0.0", nil); err != nil {
		t.Fatalf("clear a version that is not deprecated: %v", err)
	}
	if sum := list(); sum.LatestVersion != "1.1.0" || sum.Deprecated != nil {
		t.Fatalf("List after clearing: %+v", sum)
	}
	sameRecord(t, "1.0.0 after all that", get(t, s, "files.move", "1.0.0"), old)
}

func testNotFound(t *testing.T, s action.Store) {
	ctx := context.Background()
	if _, err := s.Get(ctx, "files.move", "1.0.0"); !errors.Is(err, action.ErrActionNotFound) {
		t.Fatalf("Get in an empty store: %v, want ErrActionNotFound", err)
	}
	publish(t, s, Signed(t, "files.move", "1.0.0", "x"))
	if _, err := s.Get(ctx, "files.copy", "1.0.0"); !errors.Is(err, action.ErrActionNotFound) {
		t.Fatalf("Get of an unknown action: %v, want ErrActionNotFound", err)
	}
	for _, v := range []string{"1.0.1", "1.0.0-rc.1", "9.9.9"} {
		if _, err := s.Get(ctx, "files.move", v); !errors.Is(err, action.ErrVersionNotFound) {
			t.Fatalf("Get of unknown version %s: %v, want ErrVersionNotFound", v, err)
		}
	}
}

func testConflict(t *testing.T, s action.Store) {
	first := Signed(t, "files.move", "1.0.0", "first")
	second := Signed(t, "files.move", "1.0.0", "second")
	publish(t, s, first)
	_, err := s.Publish(context.Background(), second)
	if !errors.Is(err, action.ErrImmutableConflict) {
		t.Fatalf("publishing other bytes under the same version: %v, want ErrImmutableConflict", err)
	}
	sameRecord(t, "Get after the conflict", get(t, s, "files.move", "1.0.0"), first)
}

func testIdempotent(t *testing.T, s action.Store) {
	rec := Signed(t, "files.move", "1.0.0", "x")
	first := publish(t, s, rec)
	for i := range 3 {
		res := publish(t, s, rec)
		if res.Created {
			t.Fatalf("republish %d: Created = true", i)
		}
		sameRecord(t, "republish result", res.Record, rec)
		if res.Record.Revision != first.Record.Revision {
			t.Fatalf("republish %d: revision %q, first publish said %q", i, res.Record.Revision, first.Record.Revision)
		}
	}
	l, err := s.List(context.Background())
	if err != nil || len(l) != 1 || len(l[0].Versions) != 1 {
		t.Fatalf("List after republishing = %+v, %v", l, err)
	}
}

func testInvalid(t *testing.T, s action.Store) {
	good := Signed(t, "files.move", "1.0.0", "x")
	for _, bad := range []struct{ name, version string }{{"../escape", "1.0.0"}, {"files.move", "../../x"}, {"", "1.0.0"}, {"Files", "1.0.0"}, {"files.move", "1.0"}} {
		r := good
		r.Name, r.Version = bad.name, bad.version
		if _, err := s.Publish(context.Background(), r); !errors.Is(err, action.ErrInvalid) {
			t.Errorf("Publish %q@%q: %v, want ErrInvalid", bad.name, bad.version, err)
		}
	}
	if l, err := s.List(context.Background()); err != nil || len(l) != 0 {
		t.Fatalf("List after refused publishes = %+v, %v", l, err)
	}
}

func testConcurrentOne(t *testing.T, s action.Store) {
	const n = 50
	recs := make([]action.Record, n)
	for i := range recs {
		recs[i] = Signed(t, "files.move", "1.0.0", fmt.Sprintf("publisher %d", i))
	}
	var wg sync.WaitGroup
	results := make([]action.PublishResult, n)
	errs := make([]error, n)
	start := make(chan struct{})
	for i := range recs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			results[i], errs[i] = s.Publish(context.Background(), recs[i])
		}()
	}
	close(start)
	wg.Wait()
	winner := -1
	for i := range recs {
		switch {
		case errs[i] == nil && results[i].Created:
			if winner >= 0 {
				t.Fatalf("publishers %d and %d both created files.move@1.0.0", winner, i)
			}
			winner = i
		case errors.Is(errs[i], action.ErrImmutableConflict):
		default:
			t.Fatalf("publisher %d: created=%v err=%v, want a conflict", i, results[i].Created, errs[i])
		}
	}
	if winner < 0 {
		t.Fatal("no publisher created files.move@1.0.0")
	}
	sameRecord(t, "the stored version", get(t, s, "files.move", "1.0.0"), recs[winner])
	l, err := s.List(context.Background())
	if err != nil || len(l) != 1 || !slices.Equal(l[0].Versions, []string{"1.0.0"}) {
		t.Fatalf("List = %+v, %v", l, err)
	}
}

func testConcurrentMany(t *testing.T, s action.Store) {
	const n = 20
	var wg sync.WaitGroup
	recs := make([]action.Record, n)
	for i := range recs {
		recs[i] = Signed(t, fmt.Sprintf("tool-%d", i%4), fmt.Sprintf("1.%d.0", i), "x")
	}
	errs := make([]error, n)
	start := make(chan struct{})
	for i := range recs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			var res action.PublishResult
			res, errs[i] = s.Publish(context.Background(), recs[i])
			if errs[i] == nil && !res.Created {
				errs[i] = errors.New("Created = false for a new version")
			}
		}()
	}
	close(start)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("publisher %d (%s@%s): %v", i, recs[i].Name, recs[i].Version, err)
		}
	}
	for _, r := range recs {
		sameRecord(t, "after concurrent publishes", get(t, s, r.Name, r.Version), r)
	}
	l, err := s.List(context.Background())
	if err != nil || len(l) != 4 {
		t.Fatalf("List = %+v, %v", l, err)
	}
	total := 0
	for _, sum := range l {
		total += len(sum.Versions)
	}
	if total != n {
		t.Fatalf("List holds %d versions, want %d: a publish was lost", total, n)
	}
}
