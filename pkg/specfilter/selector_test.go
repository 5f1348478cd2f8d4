package specfilter

import (
	"os"
	"strings"
	"testing"
)

func TestParseSelector(t *testing.T) {
	tests := []struct {
		in   string
		kind SelectorKind
		err  string
	}{
		{"listPets", ByOperationID, ""},
		{"tag:pets", ByTag, ""},
		{"tag:", 0, "names no tag"},
		{"GET /pets/**", ByRoute, ""},
		{"get /pets", ByRoute, ""},
		{"* /v1/customers/{customer}", ByRoute, ""},
		{"FETCH /pets", 0, "not an HTTP method"},
		{"GET  /pets", 0, "exactly one space"},
		{"GET /pets x", 0, "exactly one space"},
		{"GET /pets/{id", 0, "unbalanced '{'"},
		{"GET /pets/id}", 0, "unbalanced '}'"},
		{"GET /pets/[", 0, "not a valid glob"},
		{"", 0, "empty selector"},
		{" listPets", 0, "leading or trailing spaces"},
		{"list\x01Pets", 0, "control character"},
		{strings.Repeat("a", 501), 0, "longer than 500"},
	}
	for _, tt := range tests {
		s, err := ParseSelector(tt.in)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("ParseSelector(%q) error = %v, want %q", tt.in, err, tt.err)
			}
			continue
		}
		if err != nil || s.Kind != tt.kind {
			t.Errorf("ParseSelector(%q) = %+v, %v; want kind %d", tt.in, s, err, tt.kind)
		}
	}
}

func TestSelectorMatch(t *testing.T) {
	customer := opRef{Method: "POST", Path: "/v1/customers/{customer}", ID: "PostCustomersCustomer", Tags: []string{"customers"}}
	charges := opRef{Method: "GET", Path: "/v1/charges", ID: "GetCharges"}
	charge := opRef{Method: "GET", Path: "/v1/charges/{charge}/refunds", ID: "GetChargeRefunds"}
	tests := []struct {
		sel  string
		op   opRef
		want bool
	}{
		// Path templates as selectors: the braces are literal (doublestar alone reads them as alternation).
		{"POST /v1/customers/{customer}", customer, true},
		{"POST /v1/customers/{id}", customer, false},
		{"* /v1/customers/*", customer, true},
		{"GET /v1/customers/{customer}", customer, false},
		{"post /v1/customers/**", customer, true},
		// "/x/**" also matches "/x" itself (doublestar).
		{"GET /v1/charges/**", charges, true},
		{"GET /v1/charges/**", charge, true},
		{"GET /v1/charges/*", charge, false},
		{"GET /v1/charges/{charge}/**", charge, true},
		// Alternation still works when there is a comma.
		{"* /v1/{charges,customers}/**", charge, true},
		{"* /v1/{charges,customers}/**", customer, true},
		{"* /v1/{refunds,payouts}/**", charge, false},
		{"tag:customers", customer, true},
		{"tag:customer", customer, false},
		{"GetCharges", charges, true},
		{"getcharges", charges, false},
	}
	for _, tt := range tests {
		s, err := ParseSelector(tt.sel)
		if err != nil {
			t.Fatalf("ParseSelector(%q): %v", tt.sel, err)
		}
		if got := s.match(tt.op); got != tt.want {
			t.Errorf("%q matches %s %s = %v, want %v", tt.sel, tt.op.Method, tt.op.Path, got, tt.want)
		}
	}
}

func TestParseProfile(t *testing.T) {
	ok := `{"schema_version":"dome.profile/v1","id":"ro","allow":{"operations":["tag:a","GET /x/**"]},"deny":{"operations":["del"]},
	"auth":{"mode":"apiKey"},"net":{"allow_hosts":["h"]},"io":{"read_roots":["r"],"write_roots":["w"],"deny_globs":["**/.env"]},
	"budgets":{"max_calls_by_family":{"a":1},"max_wall_seconds":5},"determinism":{"seed":1,"inputs_hash":"sha256:` + strings.Repeat("0", 64) + `"},
	"servers":[{"url":"https://x","description":"d"}],"strip_extensions":["x-internal"],"webhooks":{"operations":["POST *"]}}`
	p, err := ParseProfile("ro.profile.json", []byte(ok))
	if err != nil {
		t.Fatalf("ParseProfile: %v", err)
	}
	allow, deny, hooks := p.Selectors()
	if len(allow) != 2 || len(deny) != 1 || len(hooks) != 1 || p.Auth.Mode != "apiKey" || *p.Budgets.MaxWallSeconds != 5 {
		t.Errorf("parsed %+v", p)
	}
	bad := []struct{ name, in, field, want string }{
		{"unknown field", `{"schema_version":"dome.profile/v1","id":"p","colour":1}`, "/colour", "unknown field"},
		{"unknown nested field", `{"schema_version":"dome.profile/v1","id":"p","allow":{"operation":["a"]}}`, "/allow/operation", "unknown field"},
		{"duplicate key", `{"schema_version":"dome.profile/v1","id":"p","id":"q"}`, "/id", "duplicate"},
		{"bad selector", `{"schema_version":"dome.profile/v1","id":"p","deny":{"operations":["a","GET  /x"]}}`, "/deny/operations/1", "exactly one space"},
		{"id and file name", `{"schema_version":"dome.profile/v1","id":"q"}`, "/id", "does not match the file name"},
		{"bad version", `{"schema_version":"dome.profile/v2","id":"p"}`, "/schema_version", ""},
		{"strip needs x-", `{"schema_version":"dome.profile/v1","id":"p","strip_extensions":["internal"]}`, "/strip_extensions/0", ""},
		{"not JSON", `schema_version: x`, "", "JSON"},
	}
	for _, tt := range bad {
		_, err := ParseProfile("p.profile.json", []byte(tt.in))
		if err == nil {
			t.Errorf("%s: accepted", tt.name)
			continue
		}
		if !strings.Contains(err.Error(), tt.field) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %q, want field %q and %q", tt.name, err, tt.field, tt.want)
		}
	}
}

// The profile schema is shared with pkg/registry, which validates the
// profiles it reads with its own embedded copy: the two must not drift.
func TestProfileSchema_SameAsRegistry(t *testing.T) {
	reg, err := os.ReadFile("../registry/schemas/profile.schema.json")
	if err != nil {
		t.Skipf("pkg/registry's schema not found: %v", err)
	}
	if string(reg) != string(ProfileSchema()) {
		t.Errorf("pkg/specfilter/schema/profile.schema.json and pkg/registry/schemas/profile.schema.json differ; keep them identical")
	}
}

// Every field of Profile is in the schema and the other way round.
func TestProfileSchema_MatchesStruct(t *testing.T) {
	full := `{"schema_version":"dome.profile/v1","id":"p","description":"d","allow":{"operations":["a"]},"deny":{"operations":["b"]},
	"auth":{"mode":"none"},"net":{"allow_hosts":["h"]},"io":{"read_roots":["r"],"write_roots":["w"],"deny_globs":["g"]},
	"budgets":{"max_calls_by_family":{"f":1},"max_wall_seconds":1},"determinism":{"seed":1,"inputs_hash":"sha256:` + strings.Repeat("a", 64) + `"},
	"servers":[{"url":"u","description":"d"}],"strip_extensions":["x-a"],"webhooks":{"operations":["c"]}}`
	p, err := ParseProfile("p.profile.json", []byte(full))
	if err != nil {
		t.Fatalf("a profile using every schema field: %v", err)
	}
	if p.Description != "d" || p.IO.DenyGlobs[0] != "g" || p.Determinism.InputsHash == "" || p.Servers[0].Description != "d" || p.Webhooks == nil {
		t.Errorf("a schema field did not reach the struct: %+v", p)
	}
}

func FuzzParseSelector(f *testing.F) {
	for _, s := range []string{"listPets", "tag:pets", "GET /pets/{petId}", "* /{a,b}/**", "POST /x/{y,{z}}", "GET /\\{x\\}", "GET /[a-z]"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		sel, err := ParseSelector(s)
		if err != nil {
			return
		}
		sel.match(opRef{Method: "GET", Path: "/pets/{petId}", ID: "x", Tags: []string{"t"}})
		if sel.Raw != s {
			t.Fatalf("Raw = %q, want %q", sel.Raw, s)
		}
	})
}

func FuzzParseProfile(f *testing.F) {
	f.Add([]byte(`{"schema_version":"dome.profile/v1","id":"p","allow":{"operations":["a","tag:b","GET /c/**"]}}`))
	f.Add([]byte(`{"schema_version":"dome.profile/v1","id":"p","servers":[{"url":"x"}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := ParseProfile("p.profile.json", data)
		if err == nil && p.ID != "p" {
			t.Fatalf("id %q accepted for p.profile.json", p.ID)
		}
	})
}
