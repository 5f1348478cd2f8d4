package actiongit

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/dome-registry/dome/pkg/action"
	"github.com/dome-registry/dome/pkg/action/storetest"
)

func TestParseDeprecations(t *testing.T) {
	good, err := parseDeprecations([]byte(`{"1.0.0":{"reason":"use 2.0.0"},"2.0.0-rc.1":{"reason":"superseded"}}`), "f")
	if err != nil || len(good) != 2 || good["1.0.0"] != "use 2.0.0" {
		t.Fatalf("%v %v", good, err)
	}
	for _, tc := range []struct{ in, want string }{
		{`[]`, "want {"},
		{`{"1.0.0":{"reason":"a"},"1.0.0":{"reason":"b"}}`, "duplicate"},
		{`{"1.0":{"reason":"a"}}`, "1.0"},
		{`{"1.0.0":{"reason":""}}`, "needs a reason"},
		{`{"1.0.0":{"reason":"a","by":"me"}}`, "unknown field"},
		{`{"1.0.0":"a"}`, "want {"},
		{`{"1.0.0":{"reason":"a\u0007"}}`, "control character"},
		{`{`, "f:"},
	} {
		if _, err := parseDeprecations([]byte(tc.in), "f"); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.in, err, tc.want)
		}
	}
	b, err := marshalDeprecations(map[string]string{"2.0.0": "b", "1.0.0": "a"})
	if err != nil || string(b) != `{"1.0.0":{"reason":"a"},"2.0.0":{"reason":"b"}}` {
		t.Fatalf("marshal: %s %v", b, err)
	}
}

// FuzzParseDeprecations: never panics, and what it accepts writes back to a
// canonical file that parses to the same deprecations.
func FuzzParseDeprecations(f *testing.F) {
	f.Add([]byte(`{"1.0.0":{"reason":"use 2.0.0"}}`))
	f.Add([]byte(`{"1.0.0-rc.1":{"reason":"x"},"2.0.0":{"reason":"\u00e9"}}`))
	f.Add([]byte(`{}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := parseDeprecations(data, "f")
		if err != nil {
			return
		}
		b, err := marshalDeprecations(m)
		if err != nil {
			t.Fatal(err)
		}
		m2, err := parseDeprecations(b, "f")
		if err != nil || len(m2) != len(m) {
			t.Fatalf("round trip: %v %v", m2, err)
		}
		for v, r := range m {
			if m2[v] != r {
				t.Fatalf("round trip changed %s: %q -> %q", v, r, m2[v])
			}
		}
	})
}

// TestDeprecationsFileEditedByHand: a deprecations file that does not parse
// keeps reads going (without its deprecations), fails the audit naming it,
// and blocks Deprecate until it is fixed.
func TestDeprecationsFileEditedByHand(t *testing.T) {
	ctx := context.Background()
	s := open(t, newBare(t), Options{})
	defer s.Close()
	for _, v := range []string{"1.0.0", "1.1.0"} {
		if _, err := s.Publish(ctx, storetest.Signed(t, "files.move", v, "x")); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Deprecate(ctx, "files.move", "1.1.0", &action.Deprecation{Reason: "use 1.0.0"}); err != nil {
		t.Fatal(err)
	}
	forge(t, s, "hand edit", map[string][]byte{DeprecationsPath("files.move"): []byte(`{"1.1.0": {"reason": "use 1.0.0",}}`)})
	rec, err := s.Get(ctx, "files.move", "1.1.0")
	if err != nil || rec.Deprecation != nil {
		t.Fatalf("Get: %+v %v", rec.Deprecation, err)
	}
	if l, err := s.List(ctx); err != nil || len(l) != 1 || l[0].LatestVersion != "1.1.0" {
		t.Fatalf("List: %+v %v", l, err)
	}
	rep, err := s.Audit(ctx, AuditOptions{})
	if err != nil || rep.OK() || rep.Violations[0].Kind != KindInvalid || rep.Violations[0].Path != DeprecationsPath("files.move") {
		t.Fatalf("audit: %+v %v", rep, err)
	}
	if _, err := s.Deprecate(ctx, "files.move", "1.0.0", &action.Deprecation{Reason: "x"}); !errors.Is(err, action.ErrInvalid) || !strings.Contains(err.Error(), "deprecations.json") {
		t.Fatalf("Deprecate over a bad file: %v", err)
	}
	// fixed by hand: everything is back
	forge(t, s, "fix", map[string][]byte{DeprecationsPath("files.move"): []byte(`{"1.1.0":{"reason":"use 1.0.0"}}`)})
	if rec, _ := s.Get(ctx, "files.move", "1.1.0"); rec.Deprecation == nil {
		t.Fatal("deprecation lost after the fix")
	}
	if rep, err := s.Audit(ctx, AuditOptions{}); err != nil || !rep.OK() {
		t.Fatalf("audit after the fix: %+v %v", rep, err)
	}
}

// TestDeprecateRacesPublish: deprecations and publishes from two Stores on
// one repository (as from two processes) all land: every version is
// published, the deprecations set last are there, and the audit is clean.
func TestDeprecateRacesPublish(t *testing.T) {
	ctx := context.Background()
	dir := newBare(t)
	a, b := open(t, dir, Options{}), open(t, dir, Options{})
	defer a.Close()
	defer b.Close()
	if _, err := a.Publish(ctx, storetest.Signed(t, "files.move", "1.0.0", "x")); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for i := 0; i < 12; i++ {
		wg.Add(2)
		go func(i int) {
			defer wg.Done()
			s := []*Store{a, b}[i%2]
			if _, err := s.Publish(ctx, storetest.Signed(t, "files.move", fmt.Sprintf("2.%d.0", i), "x")); err != nil {
				errs <- err
			}
		}(i)
		go func(i int) {
			defer wg.Done()
			s := []*Store{b, a}[i%2]
			if _, err := s.Deprecate(ctx, "files.move", "1.0.0", &action.Deprecation{Reason: fmt.Sprintf("reason %d", i%3)}); err != nil {
				errs <- err
			}
		}(i)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	l, err := a.List(ctx)
	if err != nil || len(l) != 1 || len(l[0].Versions) != 13 || l[0].Deprecated["1.0.0"] == "" {
		t.Fatalf("List: %+v %v", l, err)
	}
	if rep, err := a.Audit(ctx, AuditOptions{}); err != nil || !rep.OK() {
		t.Fatalf("audit: %+v %v", rep, err)
	}
}
