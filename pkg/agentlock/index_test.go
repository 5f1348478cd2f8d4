package agentlock

import (
	"errors"
	"strings"
	"testing"

	"github.com/dome-registry/dome/pkg/errkind"
)

const server1 = `{"id": "a", "version": "1.0.0", "endpoint": "https://a", "categories": ["c"], "scopes": ["p"],
  "data": {"residency": "any", "maxSensitivity": "public"}, "trust": {"signed": true, "publisher": "P"}}`

func TestParseIndex_Valid(t *testing.T) {
	doc := `{"$schema": "x", "x-owner": "team", "servers": [
  {"id": "a", "version": "1.0.0", "endpoint": "https://a", "categories": ["c", "d"], "scopes": ["p", "q"],
   "data": {"residency": "us-only", "maxSensitivity": "pii.low"}, "trust": {"signed": false, "publisher": "P"},
   "policy": {"rateLimitPerMin": 60}, "actions": ["delete"], "x-notes": {"any": ["thing"]}}
]}`
	idx, err := ParseIndex("mcp.index.json", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	s := idx.Servers[0]
	if s.Key() != "a@1.0.0" || s.Data.Residency != "us-only" || s.Trust.Signed || *s.Policy.RateLimitPerMin != 60 || s.Actions[0] != "delete" {
		t.Errorf("decoded %+v", s)
	}
	if !strings.HasPrefix(idx.Digest, "sha256:") || len(idx.Digest) != 71 {
		t.Errorf("digest %q", idx.Digest)
	}
	empty, err := ParseIndex("i", []byte(`{"servers": []}`))
	if err != nil || len(empty.Servers) != 0 {
		t.Fatalf("an empty index is valid: %v", err)
	}
}

func TestParseIndex_BadInput(t *testing.T) {
	srv := func(repl ...string) string {
		s := server1
		for i := 0; i+1 < len(repl); i += 2 {
			if !strings.Contains(s, repl[i]) {
				t.Fatalf("fixture has no %q", repl[i])
			}
			s = strings.Replace(s, repl[i], repl[i+1], 1)
		}
		return "{\n\"servers\": [\n" + s + "\n]}"
	}
	tests := []struct {
		name, doc      string
		line           int
		field, problem string
		hint           string
	}{
		{"malformed", "{\"servers\": [\n" + server1 + ",\n]}", 4, "servers[1]", "not valid JSON", "trailing commas"},
		{"truncated", "{\"servers\": [\n" + server1, 3, "servers", "unexpected end of JSON input", ""},
		{"not json at all", "servers: []", 1, "", "not valid JSON", ""},
		{"duplicate key", "{\"servers\": [],\n \"servers\": []}", 2, "servers", `duplicate key "servers" (first at line 1)`, ""},
		{"bare array of non-servers", "[1]", 1, "servers[0]", "got integer, want object", ""},
		{"bare array, server without endpoint", "[\n" + strings.Replace(server1, `"endpoint": "https://a", `, ``, 1) + "]", 2, "servers[0]", "missing property 'endpoint'", "each server needs"},
		{"moving version latest", srv(`"version": "1.0.0"`, `"version": "latest"`), 3, "servers[0].version", `"latest" is a moving version (a tag that follows new releases)`, "write the exact version"},
		{"moving version main", srv(`"version": "1.0.0"`, `"version": "main"`), 3, "servers[0].version", "moving version", ""},
		{"moving version 1.x", srv(`"version": "1.0.0"`, `"version": "1.x"`), 3, "servers[0].version", "(a wildcard)", ""},
		{"snapshot", srv(`"version": "1.0.0"`, `"version": "2.1.0-SNAPSHOT"`), 3, "servers[0].version", "(a snapshot, rebuilt in place)", ""},
		{"range", srv(`"version": "1.0.0"`, `"version": "^1.2"`), 3, "servers[0].version", "does not match pattern", ""},
		{"missing servers", "{}", 1, "", "missing property 'servers'", ""},
		{"duplicate id@version", "{\"servers\": [\n" + server1 + ",\n" + server1 + "]}", 4, "servers[1]", "duplicate server a@1.0.0 (first at servers[0], line 2)", "bump the version"},
		{"missing endpoint", srv(`"endpoint": "https://a", `, ``), 3, "servers[0]", "missing property 'endpoint'", "each server needs"},
		{"missing data", srv(`"data": {"residency": "any", "maxSensitivity": "public"}, `, ``), 3, "servers[0]", "missing property 'data'", ""},
		{"signed is a string", srv(`"signed": true`, `"signed": "true"`), 4, "servers[0].trust.signed", "got string, want boolean", ""},
		{"scopes is a string", srv(`"scopes": ["p"]`, `"scopes": "p"`), 3, "servers[0].scopes", "got string, want array", ""},
		{"version is a number", srv(`"version": "1.0.0"`, `"version": 1`), 3, "servers[0].version", "got integer, want string", ""},
		{"unknown residency", srv(`"residency": "any"`, `"residency": "mars"`), 4, "servers[0].data.residency", `value must be one of "any", "us-only", "eu-only"`, ""},
		{"unknown sensitivity", srv(`"maxSensitivity": "public"`, `"maxSensitivity": "top-secret"`), 4, "servers[0].data.maxSensitivity", `value must be one of "public"`, ""},
		{"misspelt field", srv(`"scopes"`, `"scope"`), 3, "servers[0].scope", `unknown field "scope"`, "did you mean scopes?"},
		{"misspelt data field", srv(`"maxSensitivity"`, `"maxSensitvity"`), 4, "servers[0].data.maxSensitvity", `unknown field`, "did you mean maxSensitivity?"},
		{"negative rate limit", srv(`"trust"`, `"policy": {"rateLimitPerMin": -1}, "trust"`), 4, "servers[0].policy.rateLimitPerMin", "minimum", ""},
		{"id with @", srv(`"id": "a"`, `"id": "a@b"`), 3, "servers[0].id", "does not match pattern", ""},
		{"endpoint with |", srv(`"https://a"`, `"https://a|b"`), 3, "servers[0].endpoint", "does not match pattern", ""},
		{"scope with a comma", srv(`"scopes": ["p"]`, `"scopes": ["p,q"]`), 3, "servers[0].scopes[0]", "does not match pattern", ""},
		{"no categories", srv(`"categories": ["c"]`, `"categories": []`), 3, "servers[0].categories", "minItems", ""},
		{"repeated scope", srv(`"scopes": ["p"]`, `"scopes": ["p", "p"]`), 3, "servers[0].scopes[1]", "uniqueItems", "remove"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseIndex("mcp.index.json", []byte(tt.doc))
			if !errkind.IsInput(err) {
				t.Fatalf("got %v, want an input error", err)
			}
			var inv *InvalidError
			if !errors.As(err, &inv) {
				t.Fatalf("got %T", err)
			}
			for _, d := range inv.Diags {
				if d.Line == tt.line && d.Field == tt.field && strings.Contains(d.Problem, tt.problem) && strings.Contains(d.Hint, tt.hint) {
					return
				}
			}
			t.Errorf("no diagnostic at line %d field %q problem %q hint %q; got:\n%v", tt.line, tt.field, tt.problem, tt.hint, err)
		})
	}
}

// TestIndexDigest_OrderIndependent: reordering servers, their categories,
// scopes and actions, and the keys of the JSON does not change the digest;
// changing a value does.
func TestIndexDigest_OrderIndependent(t *testing.T) {
	servers := []string{
		`{"id": "a", "version": "1.0.0", "endpoint": "e", "categories": ["x", "y"], "scopes": ["p", "q", "r"], "data": {"residency": "any", "maxSensitivity": "public"}, "trust": {"signed": true, "publisher": "P"}, "actions": ["m", "n"]}`,
		`{"id": "a", "version": "2.0.0", "endpoint": "e", "categories": ["x"], "scopes": ["p"], "data": {"residency": "any", "maxSensitivity": "public"}, "trust": {"signed": true, "publisher": "P"}}`,
		`{"id": "b", "version": "1.0.0", "endpoint": "e", "categories": ["x"], "scopes": ["p"], "data": {"residency": "any", "maxSensitivity": "public"}, "trust": {"signed": false, "publisher": "P"}}`,
	}
	base, err := ParseIndex("i", []byte(`{"servers": [`+strings.Join(servers, ",")+`]}`))
	if err != nil {
		t.Fatal(err)
	}
	shuffled := []string{
		servers[2],
		`{"trust": {"publisher": "P", "signed": true}, "scopes": ["r", "p", "q"], "actions": ["n", "m"], "categories": ["y", "x"], "version": "1.0.0", "id": "a", "endpoint": "e", "data": {"maxSensitivity": "public", "residency": "any"}}`,
		servers[1],
	}
	other, err := ParseIndex("i", []byte(`{"servers": [`+strings.Join(shuffled, ",")+`]}`))
	if err != nil {
		t.Fatal(err)
	}
	if base.Digest != other.Digest {
		t.Errorf("digest depends on order: %s vs %s", base.Digest, other.Digest)
	}
	edited, err := ParseIndex("i", []byte(`{"servers": [`+strings.Replace(strings.Join(servers, ","), `"endpoint": "e"`, `"endpoint": "f"`, 1)+`]}`))
	if err != nil {
		t.Fatal(err)
	}
	if edited.Digest == base.Digest {
		t.Errorf("an edited endpoint must change the digest")
	}
}

// The index written per server, as a bare list, is the same index as
// {"servers": [...]}: same servers, same digest.
func TestParseIndex_BareList(t *testing.T) {
	wrapped, err := ParseIndex("i", []byte(`{"servers": [`+server1+`]}`))
	if err != nil {
		t.Fatal(err)
	}
	bare, err := ParseIndex("i", []byte(`[`+server1+`]`))
	if err != nil {
		t.Fatal(err)
	}
	if bare.Digest != wrapped.Digest || len(bare.Servers) != 1 || bare.Servers[0].Key() != "a@1.0.0" {
		t.Fatalf("bare list %+v (%s), wrapped %+v (%s)", bare.Servers, bare.Digest, wrapped.Servers, wrapped.Digest)
	}
	if empty, err := ParseIndex("i", []byte(`[]`)); err != nil || len(empty.Servers) != 0 {
		t.Fatalf("an empty list: %v", err)
	}
}

func TestMovingVersion(t *testing.T) {
	for _, tc := range []struct {
		v      string
		moving bool
	}{
		{"1.0.0", false}, {"v1.4.2", false}, {"2024-05-01", false}, {"r42", false}, {"1.0.0-rc.1", false},
		{"latest", true}, {"LATEST", true}, {"vlatest", true}, {"stable", true}, {"main", true}, {"nightly", true},
		{"1.x", true}, {"1.2.X", true}, {"*", true}, {"^1.0.0", true}, {">=1", true}, {"1.0.0-SNAPSHOT", true},
	} {
		if got := MovingVersion(tc.v) != ""; got != tc.moving {
			t.Errorf("MovingVersion(%q) = %q, want moving=%v", tc.v, MovingVersion(tc.v), tc.moving)
		}
	}
}
