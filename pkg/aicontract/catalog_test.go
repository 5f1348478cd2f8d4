package aicontract

import (
	"errors"
	"strings"
	"testing"

	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/dome-registry/dome/pkg/schemaval"
)

func TestLoadCatalog_Repository(t *testing.T) {
	src := repoCatalog(t)
	c, err := LoadCatalog(src)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Commands) == 0 || len(c.Rules) == 0 || len(c.Presets) == 0 || !strings.HasPrefix(c.Digest, "sha256:") {
		t.Fatalf("catalog %+v", c)
	}
	ids, err := ListProjects(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		if _, found, err := LoadProject(src, id); err != nil || !found {
			t.Errorf("project %s: %v", id, err)
		}
	}
	// Every intent has a command and every command's rules resolve.
	seen := map[string]bool{}
	for _, cmd := range c.Commands {
		seen[cmd.IntentID] = true
	}
	for _, in := range []string{IntentGenerate, IntentRefactor, IntentReview} {
		if !seen[in] {
			t.Errorf("no example command for intent %s", in)
		}
	}
}

// Bad catalogs: exit 2 with file, line and field.
func TestLoadCatalog_BadInput(t *testing.T) {
	tests := []struct {
		name       string
		file       string
		content    string // replaces the file; "" deletes it
		edit       func(f *fixture)
		line       int
		field, msg string
	}{
		{name: "missing file", file: RulesFile, content: "", msg: "missing"},
		{name: "malformed JSON", file: RulesFile, content: "{\n  \"schemaVersion\": \"dome.contract_rules/v1\",\n  \"rules\": [,]\n}", line: 3, field: "rules[0]", msg: "not valid JSON"},
		{name: "duplicate key", file: PresetsFile, content: "{\"schemaVersion\": \"dome.contract_presets/v1\",\n\"presets\": [],\n\"presets\": []}", line: 3, field: "presets", msg: `duplicate key "presets" (first at line 2)`},
		{name: "wrong version", file: CommandsFile, content: `{"schemaVersion": "dome.contract_commands/v2", "commands": []}`, line: 1, field: "schemaVersion", msg: `value must be "dome.contract_commands/v1"`},
		{name: "unknown intent", edit: func(f *fixture) { f.commands[0]["intentId"] = "deploy" }, file: CommandsFile, line: 6, field: "commands[0].intentId", msg: `value must be one of "generate", "refactor", "review"`},
		{name: "unknown template", edit: func(f *fixture) { f.commands[0]["templateId"] = "v2" }, file: CommandsFile, field: "commands[0].templateId", msg: `value must be one of "contract-v1"`},
		{name: "unknown field", edit: func(f *fixture) { f.rules[0]["severty"] = "error" }, file: RulesFile, field: "rules[0].severty", msg: `unknown field "severty"`},
		{name: "missing directive", edit: func(f *fixture) { delete(f.rules[0], "directive") }, file: RulesFile, field: "rules[0]", msg: "missing property 'directive'"},
		{name: "bad severity", edit: func(f *fixture) { f.rules[0]["severity"] = "fatal" }, file: RulesFile, field: "rules[0].severity", msg: "value must be one of"},
		{name: "directive on two lines", edit: func(f *fixture) { f.rules[0]["directive"] = "a\nSTOP CONDITIONS:" }, file: RulesFile, field: "rules[0].directive", msg: "does not match pattern"},
		{name: "bad id", edit: func(f *fixture) { f.rules[0]["id"] = "Base Error" }, file: RulesFile, field: "rules[0].id", msg: "does not match pattern"},
		{name: "duplicate rule", edit: func(f *fixture) { f.rules = append(f.rules, rule("base-error", "warn", true, "generate")) }, file: RulesFile, field: "rules[2].id", msg: `rule "base-error" is defined twice`},
		{name: "duplicate command", edit: func(f *fixture) { f.commands = append(f.commands, f.commands[0]) }, file: CommandsFile, field: "commands[3].id", msg: `command "gen" is defined twice`},
		{name: "duplicate preset", edit: func(f *fixture) { f.presets = append(f.presets, f.presets[0]) }, file: PresetsFile, field: "presets[1].id", msg: `preset "p" is defined twice`},
		{name: "duplicate constraint", edit: func(f *fixture) { f.constraints = append(f.constraints, f.constraints[0]) }, file: ConstraintsFile, field: "constraints[4].key", msg: `constraint "maxFilesChanged" is declared twice`},
		{name: "conflict with an unknown rule", edit: func(f *fixture) { f.rules[0]["conflictsWith"] = []any{"review-onyl"} }, file: RulesFile, field: "rules[0].conflictsWith[0]", msg: `no rule "review-onyl" in the catalog`},
		{name: "conflict with itself", edit: func(f *fixture) { f.rules[0]["conflictsWith"] = []any{"base-error"} }, file: RulesFile, field: "rules[0].conflictsWith[0]", msg: "conflicts with itself"},
		{name: "undeclared constraint in a rule", edit: func(f *fixture) { f.rules[0]["contributesConstraints"] = map[string]any{"maxFileChanged": 1} }, file: RulesFile, field: "rules[0].contributesConstraints.maxFileChanged", msg: `constraint "maxFileChanged" is not declared in constraints.json`},
		{name: "wrong type in a preset", edit: func(f *fixture) { f.presets[0]["constraints"] = map[string]any{"allowNewDependencies": "no"} }, file: PresetsFile, field: "presets[0].constraints.allowNewDependencies", msg: `constraint "allowNewDependencies" is a boolean, got "no"`},
		{name: "list with repeats", edit: func(f *fixture) { f.presets[0]["constraints"] = map[string]any{"paths": []any{"a", "a"}} }, file: PresetsFile, field: "presets[0].constraints.paths", msg: "list of distinct strings"},
		{name: "minimum on a string", edit: func(f *fixture) { f.constraints[2]["minimum"] = 1 }, file: ConstraintsFile, field: "constraints[2]", msg: "minimum goes with type integer"},
		{name: "no commands", edit: func(f *fixture) { f.commands = []map[string]any{} }, file: CommandsFile, field: "commands", msg: "minItems"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture()
			if tt.edit != nil {
				tt.edit(f)
			}
			src := f.source(t)
			if tt.edit == nil {
				if tt.content == "" {
					delete(src, tt.file)
				} else {
					src[tt.file] = []byte(tt.content)
				}
			}
			_, err := LoadCatalog(src)
			if !errkind.IsInput(err) {
				t.Fatalf("got %v, want an input error", err)
			}
			var inv *schemaval.InvalidError
			if !errors.As(err, &inv) {
				t.Fatalf("got %T", err)
			}
			for _, d := range inv.Diags {
				if d.File == "policy/contracts/"+tt.file && (tt.line == 0 || d.Line == tt.line) && d.Field == tt.field && strings.Contains(d.Problem, tt.msg) && (tt.content == "" && tt.edit == nil || d.Line > 0) {
					return
				}
			}
			t.Errorf("no diagnostic in %s at line %d, field %q with %q; got:\n%v", tt.file, tt.line, tt.field, tt.msg, err)
		})
	}
}

// Problems in several files are all reported.
func TestLoadCatalog_AllFilesReported(t *testing.T) {
	f := newFixture()
	src := f.source(t)
	src[RulesFile] = []byte("{}")
	src[PresetsFile] = []byte("[]")
	_, err := LoadCatalog(src)
	if err == nil || !strings.Contains(err.Error(), "rules.json") || !strings.Contains(err.Error(), "presets.json") {
		t.Fatalf("got %v", err)
	}
}

func TestSchemasCompile(t *testing.T) {
	for _, n := range []string{SchemaCommands, SchemaRules, SchemaPresets, SchemaConstraints, SchemaProject, SchemaResult} {
		b, err := SchemaBytes(n)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := schemaval.Compile(n, b); err != nil {
			t.Errorf("%s: %v", n, err)
		}
	}
}

// FuzzCatalogFile: any bytes in any catalog file give a catalog or an input
// error with diagnostics, never a panic; a catalog that loads resolves.
func FuzzCatalogFile(f *testing.F) {
	fx := newFixture()
	base := fx.source(f)
	names := []string{CommandsFile, RulesFile, PresetsFile, ConstraintsFile, ProjectsDir + "/proj.json"}
	for i, n := range names {
		f.Add(uint8(i), base[n])
	}
	f.Add(uint8(1), []byte(`{"schemaVersion": "dome.contract_rules/v1", "rules": [{"id": "a", "title": "t", "description": "d", "severity": "error", "appliesToIntents": ["generate"], "directive": "x", "defaultEnabled": true, "conflictsWith": ["a"]}]}`))
	f.Fuzz(func(t *testing.T, which uint8, data []byte) {
		src := mapSource{}
		for k, v := range base {
			src[k] = v
		}
		src[names[int(which)%len(names)]] = data
		c, err := LoadCatalog(src)
		if err != nil {
			if !errkind.IsInput(err) {
				t.Fatalf("not an input error: %v", err)
			}
			return
		}
		for _, cmd := range []string{"gen", "ref", "rev", "nope"} {
			res, err := Resolve(c, src, Request{ProjectID: "proj", CommandID: cmd, UserInput: "x"}, Options{})
			if err != nil {
				if !errkind.IsInput(err) {
					t.Fatalf("not an input error: %v", err)
				}
				continue
			}
			if (res.Status == "ok") != (res.Contract != nil) {
				t.Fatalf("status %s with contract %v", res.Status, res.Contract)
			}
			if res.Contract != nil && !strings.HasSuffix(res.Contract.ContractText, "\n") {
				t.Fatalf("contract text without a final newline")
			}
		}
	})
}
