package agentlock

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/dome-registry/dome/pkg/errkind"
)

const validAgents = `---
name: hello-agent
version: "0.1.0"
description: ignored by dome
requires:
  mcp:
    - category: audiences
      permissions: [audiences.read, segments.read]
    - category: reporting
      permissions:
        - reports.read
constraints:
  data:
    sensitivity: pii.low
    residency: us-only
  actions:
    forbid: [email.send-external]
trust:
  requireSigned: true
---
# body is ignored: ---
`

func TestParseAgents_Valid(t *testing.T) {
	a, err := ParseAgents("agents.md", []byte(validAgents))
	if err != nil {
		t.Fatal(err)
	}
	want := Agent{
		Name: "hello-agent", Version: "0.1.0",
		Requires: Requires{MCP: []Requirement{
			{Category: "audiences", Permissions: []string{"audiences.read", "segments.read"}},
			{Category: "reporting", Permissions: []string{"reports.read"}},
		}},
		Constraints: Constraints{Data: DataConstraints{Sensitivity: "pii.low", Residency: "us-only"}, Actions: ActionConstraints{Forbid: []string{"email.send-external"}}},
		Trust:       Trust{RequireSigned: true},
	}
	got := *a
	got.lines = nil
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
	if a.Line("audiences") != 7 || a.Line("reporting") != 9 {
		t.Errorf("requirement lines: %d, %d; want 7, 9", a.Line("audiences"), a.Line("reporting"))
	}
}

func TestParseAgents_OptionalSectionsAbsent(t *testing.T) {
	a, err := ParseAgents("agents.md", []byte("---\r\nname: a\r\nversion: '1'\r\nrequires: {mcp: [{category: c, permissions: [p]}]}\r\n---\r\n"))
	if err != nil {
		t.Fatal(err)
	}
	if a.Constraints.Data.Residency != "" || a.Trust.RequireSigned {
		t.Errorf("optional sections must stay empty: %+v", a)
	}
	// A byte order mark and "..." as the closing line are accepted.
	if _, err := ParseAgents("agents.md", []byte("\xef\xbb\xbf---\nname: a\nversion: '1'\nrequires: {mcp: [{category: c, permissions: [p]}]}\n...\n")); err != nil {
		t.Fatal(err)
	}
}

// mdDoc wraps YAML lines in an agents.md (the YAML starts on line 2).
func mdDoc(lines ...string) string {
	return "---\n" + strings.Join(lines, "\n") + "\n---\n# Agent\n"
}

var okRequires = []string{"requires:", "  mcp:", "    - category: c", "      permissions: [p]"}

func withBase(extra ...string) string {
	return mdDoc(append([]string{"name: a", `version: "1"`}, append(okRequires, extra...)...)...)
}

// TestParseAgents_BadInput: every problem names the line, the field and
// what is wrong, and is an input error (exit 2).
func TestParseAgents_BadInput(t *testing.T) {
	tests := []struct {
		name, doc      string
		line           int
		field, problem string
		hint           string
	}{
		{"no frontmatter", "# just markdown\n", 1, "", "no YAML frontmatter", "start the file"},
		{"unclosed", "---\nname: a\n", 1, "", "never closed", "end the frontmatter"},
		{"empty", "---\n---\n", 2, "", "frontmatter is empty", ""},
		{"bad yaml", mdDoc("name: a", "version: [1", "x: y"), 0, "", "invalid YAML", ""},
		{"yaml tab", mdDoc("name: a", "\tversion: 1"), 3, "", "a tab in the indentation", "spaces"},
		{"not a mapping", mdDoc("- a", "- b"), 2, "", "got array, want object", ""},
		{"missing name", mdDoc(append([]string{`version: "1"`}, okRequires...)...), 2, "", "missing property 'name'", "add name:"},
		{"missing version", mdDoc(append([]string{"name: a"}, okRequires...)...), 2, "", "missing property 'version'", "quoted"},
		{"missing requires", mdDoc("name: a", `version: "1"`), 2, "", "missing property 'requires'", "requires:"},
		{"missing mcp", mdDoc("name: a", `version: "1"`, "requires: {}"), 4, "requires", "missing property 'mcp'", "add mcp:"},
		{"empty requirement list", mdDoc("name: a", `version: "1"`, "requires:", "  mcp: []"), 5, "requires.mcp", "minItems: got 0, want 1", "at least one requirement"},
		{"requirement without category", mdDoc("name: a", `version: "1"`, "requires:", "  mcp:", "    - permissions: [p]"), 6, "requires.mcp[0]", "missing property 'category'", "category: <name>"},
		{"requirement without permissions", mdDoc("name: a", `version: "1"`, "requires:", "  mcp:", "    - category: c"), 6, "requires.mcp[0]", "missing property 'permissions'", ""},
		{"empty permissions", mdDoc("name: a", `version: "1"`, "requires:", "  mcp:", "    - category: c", "      permissions: []"), 7, "requires.mcp[0].permissions", "minItems", "scopes"},
		{"version is a number", mdDoc(append([]string{"name: a", "version: 1.0"}, okRequires...)...), 3, "version", "got number, want string", "quote"},
		{"name is a number", mdDoc(append([]string{"name: 42", `version: "1"`}, okRequires...)...), 2, "name", "got integer, want string", "quote"},
		{"permissions is a string", mdDoc("name: a", `version: "1"`, "requires:", "  mcp:", "    - category: c", "      permissions: p"), 7, "requires.mcp[0].permissions", "got string, want array", "write a list"},
		{"requireSigned is a string", withBase("trust:", "  requireSigned: yes please"), 9, "trust.requireSigned", "got string, want boolean", ""},
		{"unknown sensitivity", withBase("constraints:", "  data:", "    sensitivity: secret"), 10, "constraints.data.sensitivity", `value must be one of "public", "internal"`, ""},
		{"unknown residency", withBase("constraints:", "  data:", "    residency: apac-only"), 10, "constraints.data.residency", `value must be one of "any", "us-only", "eu-only"`, ""},
		{"misspelt constraint", withBase("constraints:", "  data:", "    residancy: us-only"), 10, "constraints.data.residancy", `unknown field "residancy"`, "did you mean residency?"},
		{"misspelt trust", withBase("trust:", "  requiresigned: true"), 9, "trust.requiresigned", `unknown field`, "did you mean requireSigned?"},
		{"duplicate key", mdDoc("name: a", "name: b"), 3, "name", `duplicate key "name" (first at line 2)`, ""},
		{"duplicate category", mdDoc("name: a", `version: "1"`, "requires:", "  mcp:", "    - {category: c, permissions: [p]}", "    - {category: c, permissions: [q]}"), 7, "requires.mcp[1].category", `category "c" is already required on line 6`, "merge"},
		{"duplicate permission", mdDoc("name: a", `version: "1"`, "requires:", "  mcp:", "    - {category: c, permissions: [p, p]}"), 6, "requires.mcp[0].permissions[1]", "uniqueItems", "remove"},
		{"scope with a comma", mdDoc("name: a", `version: "1"`, "requires:", "  mcp:", "    - {category: c, permissions: ['a,b']}"), 6, "requires.mcp[0].permissions[0]", "does not match pattern", "commas"},
		{"alias", mdDoc("name: &n a", "version: *n"), 3, "version", "aliases", ""},
		{"merge key", mdDoc("base: &b {x: 1}", "other:", "  <<: *b"), 4, "other", "merge keys", ""},
		{"custom tag", mdDoc("name: !secret a"), 2, "name", "YAML tag !secret", ""},
		{"capitalised field", withBase("Constraints:", "  data: {residency: us-only}"), 8, "Constraints", `unknown field "Constraints" looks like "constraints"`, "did you mean constraints?"},
		{"misspelt top-level field", withBase("contraints: {}"), 8, "contraints", `looks like "constraints"`, ""},
		{"requirements for requires", mdDoc("name: a", `version: "1"`, "requirements:", "  mcp: []"), 2, "", "missing property 'requires'", ""},
		{"requirements is flagged too", mdDoc("name: a", `version: "1"`, "requirements:", "  mcp: []"), 4, "requirements", `looks like "requires"`, ""},
		{"infinity", mdDoc("name: a", "x: .inf"), 3, "x", ".inf is not a JSON number", "quote"},
		{"float overflow", mdDoc("name: a", "x: 1e400"), 3, "x", "1e400 is out of the range of a JSON number", ""},
		{"tagged merge key", mdDoc("base: {x: 1}", "other:", "  !!merge <<: {y: 2}"), 4, "other", "merge keys", "write the keys out"},
		// YAML 1.2 core: 010 is the integer 10 (not octal 8): still not a string.
		{"octal-looking version", mdDoc(append([]string{"name: a", "version: 010"}, okRequires...)...), 3, "version", "got integer, want string", "quote"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseAgents("agents.md", []byte(tt.doc))
			if !errkind.IsInput(err) {
				t.Fatalf("got %v, want an input error", err)
			}
			var inv *InvalidError
			if !errors.As(err, &inv) {
				t.Fatalf("got %T, want *InvalidError", err)
			}
			for _, d := range inv.Diags {
				if d.File == "agents.md" && (tt.line == 0 || d.Line == tt.line) && d.Field == tt.field && strings.Contains(d.Problem, tt.problem) && strings.Contains(d.Hint, tt.hint) {
					return
				}
			}
			t.Errorf("no diagnostic at line %d, field %q with problem %q and hint %q; got:\n%v", tt.line, tt.field, tt.problem, tt.hint, err)
		})
	}
}

func TestParseAgents_ReportsEveryProblem(t *testing.T) {
	doc := mdDoc("name: 1", "version: 2", "requires:", "  mcp:", "    - categry: c", "constraints:", "  data: {residency: mars}")
	_, err := ParseAgents("agents.md", []byte(doc))
	var inv *InvalidError
	if !errors.As(err, &inv) {
		t.Fatalf("got %v", err)
	}
	var got []string
	for _, d := range inv.Diags {
		got = append(got, d.Location()+" "+d.Field)
	}
	want := []string{
		"agents.md:2:7 name",
		"agents.md:3:10 version",
		"agents.md:6:7 requires.mcp[0]",
		"agents.md:6:7 requires.mcp[0].categry",
		"agents.md:8:21 constraints.data.residency",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %q\nwant %q", got, want)
	}
	if !strings.HasPrefix(err.Error(), "agents.md: 5 problems\n  agents.md:2:7: name: got integer, want string") {
		t.Errorf("message: %s", err)
	}
}

func TestParseAgents_TooLarge(t *testing.T) {
	_, err := ParseAgents("agents.md", make([]byte, maxAgentsBytes+1))
	if !errkind.IsInput(err) || !strings.Contains(err.Error(), "more than the limit") {
		t.Fatalf("got %v", err)
	}
}

func TestAgentDigest_IgnoresOrderProseAndUnknownKeys(t *testing.T) {
	a, err := ParseAgents("a", []byte(validAgents))
	if err != nil {
		t.Fatal(err)
	}
	reordered := `---
trust: {requireSigned: true}
constraints:
  actions: {forbid: [email.send-external]}
  data: {residency: us-only, sensitivity: pii.low}
requires:
  mcp:
    - {permissions: [reports.read], category: reporting}
    - {category: audiences, permissions: [segments.read, audiences.read]}
version: "0.1.0"
name: hello-agent
owner: someone else
date: 2026-01-01
tags: [x]
---
Other prose.
`
	b, err := ParseAgents("b", []byte(reordered))
	if err != nil {
		t.Fatal(err)
	}
	da, _ := a.Digest()
	db, _ := b.Digest()
	if da != db {
		t.Errorf("digests differ: %s %s", da, db)
	}
	c, err := ParseAgents("c", []byte(strings.Replace(validAgents, "pii.low", "pii.moderate", 1)))
	if err != nil {
		t.Fatal(err)
	}
	if dc, _ := c.Digest(); dc == da {
		t.Errorf("a changed constraint must change the digest")
	}
}

// TestYAMLValue_CoreSchema: the frontmatter reads scalars by the YAML 1.2
// core schema, as specs do (internal/yamlcore).
func TestYAMLValue_CoreSchema(t *testing.T) {
	v, _, d := yamlValue("agents.md", frontmatter{text: []byte("a: 010\nb: 08\nc: 1_000\nd: 0x1F\ne: yes\nf: 2024-05-01\ng: 1.50\n"), firstLine: 2})
	if d != nil {
		t.Fatal(d)
	}
	got, _ := json.Marshal(v)
	if want := `{"a":10,"b":8,"c":"1_000","d":31,"e":"yes","f":"2024-05-01","g":1.50}`; string(got) != want {
		t.Errorf("got %s, want %s", got, want)
	}
}
