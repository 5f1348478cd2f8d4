package specfilter

import (
	"strings"
	"testing"
)

// memVerdicts is a VerdictCache in memory that counts its lookups.
type memVerdicts struct {
	valid   map[string]bool
	lookups int
}

func (m *memVerdicts) Valid(d string) bool { m.lookups++; return m.valid[d] }
func (m *memVerdicts) RememberValid(d string) {
	if m.valid == nil {
		m.valid = map[string]bool{}
	}
	m.valid[d] = true
}

const invalidSpec = "openapi: 3.0.3\ninfo: {title: t, version: '1'}\npaths:\n  /a:\n    get:\n      operationId: a\n      responses:\n        '200':\n          description: ok\n          content:\n            application/json:\n              schema: {type: strin}\n"

func TestApply_DeferredValidationPlacesProblemsInTheReloadedInput(t *testing.T) {
	load := func() (*Document, error) { return LoadBytes("spec/openapi.yaml", []byte(invalidSpec), LoadOptions{}) }
	doc, err := load()
	if err != nil {
		t.Fatal(err)
	}
	_, inline := Apply(doc, profile(t, ""), Options{})
	res, err := Apply(doc, profile(t, ""), Options{DeferValidation: true})
	if err != nil {
		t.Fatalf("deferred: Apply validated: %v", err)
	}
	reloads := 0
	deferred := res.Validate(func() (*Document, error) { reloads++; return load() })
	if inline == nil || deferred == nil || inline.Error() != deferred.Error() {
		t.Errorf("inline: %v\ndeferred: %v", inline, deferred)
	}
	if !strings.Contains(deferred.Error(), "spec/openapi.yaml: line 5 (/paths/~1a/get)") || reloads != 1 {
		t.Errorf("deferred: %v (reloads %d)", deferred, reloads)
	}
	if err := res.Validate(load); err != nil {
		t.Errorf("a second Validate: %v", err)
	}
}

func TestApply_VerdictCacheRemembersOnlyValidOutputs(t *testing.T) {
	doc := loadShop(t)
	p := profile(t, "")
	v := &memVerdicts{}
	first, err := Apply(doc, p, Options{Verdicts: v})
	if err != nil {
		t.Fatal(err)
	}
	if !v.valid[first.Digest] || first.TakeLoaded() == nil {
		t.Fatalf("first run: verdicts %v, loaded document missing", v.valid)
	}
	// A hit skips kin-openapi: nothing loaded, same bytes.
	second, err := Apply(doc, p, Options{Verdicts: v})
	if err != nil {
		t.Fatal(err)
	}
	if string(second.JSON) != string(first.JSON) || second.TakeLoaded() != nil {
		t.Errorf("second run: the cache was not used")
	}
	// Deferred, with a hit: Validate never reloads.
	third, err := Apply(doc, p, Options{Verdicts: v, DeferValidation: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := third.Validate(func() (*Document, error) { t.Fatal("reloaded"); return nil, nil }); err != nil {
		t.Fatal(err)
	}
	// An invalid output is checked every time and never remembered.
	bad, err := LoadBytes("spec/openapi.yaml", []byte(invalidSpec), LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := Apply(bad, p, Options{Verdicts: v}); err == nil {
			t.Fatal("the invalid spec passed")
		}
	}
	if len(v.valid) != 1 {
		t.Errorf("remembered %d verdicts, want the valid one only", len(v.valid))
	}
	// A forged verdict is trusted: the cache must be the user's own.
	res, err := Apply(bad, p, Options{NoValidate: true})
	if err != nil {
		t.Fatal(err)
	}
	v.RememberValid(res.Digest)
	if _, err := Apply(bad, p, Options{Verdicts: v}); err != nil {
		t.Errorf("a remembered verdict was not used: %v", err)
	}
}
