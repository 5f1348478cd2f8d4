package aicontract

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/dome-registry/dome/pkg/schemaval"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// Spec 8.1: the same request twice gives the same contractText, byte for
// byte, and the same id; generatedAt is not part of either.
func TestResolve_Deterministic(t *testing.T) {
	src := repoCatalog(t)
	c, err := LoadCatalog(src)
	if err != nil {
		t.Fatal(err)
	}
	req := Request{ProjectID: "acme-web", CommandID: "create-component", UserInput: "Button with variants"}
	a, err := Resolve(c, src, req, Options{GeneratedAt: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	b, err := Resolve(c, src, req, Options{GeneratedAt: time.Date(2030, 6, 7, 8, 9, 10, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	if a.Contract.ContractText != b.Contract.ContractText || a.Contract.ID != b.Contract.ID {
		t.Fatalf("not deterministic")
	}
	if a.Contract.Meta.GeneratedAt != "2026-01-02T03:04:05Z" || b.Contract.Meta.GeneratedAt != "2030-06-07T08:09:10Z" {
		t.Errorf("generatedAt: %s, %s", a.Contract.Meta.GeneratedAt, b.Contract.Meta.GeneratedAt)
	}
	// Whitespace in the input is collapsed: same contract, same id.
	c2, _ := Resolve(c, src, Request{ProjectID: "acme-web", CommandID: "create-component", UserInput: "  Button\n\twith   variants "}, Options{})
	if c2.Contract.ID != a.Contract.ID || c2.Contract.ContractText != a.Contract.ContractText {
		t.Errorf("whitespace changed the contract")
	}
	// Another input: another id.
	d, _ := Resolve(c, src, Request{ProjectID: "acme-web", CommandID: "create-component", UserInput: "Card"}, Options{})
	if d.Contract.ID == a.Contract.ID {
		t.Errorf("the input must be part of the id")
	}
}

// The catalog's order (rules, presets, keys) never changes the contract.
func TestResolve_CatalogOrderDoesNotMatter(t *testing.T) {
	f := newFixture()
	f.rules = append(f.rules, rule("a-warn", "warn", true, "generate"), rule("z-info", "info", true, "generate"), rule("m-error", "error", true, "generate"))
	f.rule("m-error")["contributesConstraints"] = map[string]any{"allowNewDependencies": false, "paths": []any{"b", "a"}}
	first := f.resolve(t, "proj", "gen", "x")
	for range 20 {
		rand.Shuffle(len(f.rules), func(i, j int) { f.rules[i], f.rules[j] = f.rules[j], f.rules[i] })
		rand.Shuffle(len(f.commands), func(i, j int) { f.commands[i], f.commands[j] = f.commands[j], f.commands[i] })
		got := f.resolve(t, "proj", "gen", "x")
		if got.Contract.ContractText != first.Contract.ContractText || got.Contract.ID != first.Contract.ID {
			t.Fatalf("order changed the contract:\n%s\nvs\n%s", got.Contract.ContractText, first.Contract.ContractText)
		}
	}
	if appliedIDs(first) != "base-error,m-error,a-warn,z-info" {
		t.Errorf("rules by severity then id: %s", appliedIDs(first))
	}
}

// Spec 8.2: a rule not applicable to the intent is not in the contract.
func TestResolve_IntentFiltering(t *testing.T) {
	f := newFixture()
	f.rules = append(f.rules, rule("refactor-only", "warn", true, "refactor"))
	gen := f.resolve(t, "proj", "gen", "x")
	if strings.Contains(gen.Contract.ContractText, "refactor-only") || strings.Contains(gen.Contract.ContractText, "review-only") {
		t.Errorf("generate contract holds rules of other intents:\n%s", gen.Contract.ContractText)
	}
	if appliedIDs(gen) != "base-error" {
		t.Errorf("applied %s", appliedIDs(gen))
	}
	ref := f.resolve(t, "proj", "ref", "x")
	if !strings.Contains(ref.Contract.ContractText, "Directive of refactor-only.") || ref.Contract.IntentID != "refactor" {
		t.Errorf("refactor contract lacks its rule:\n%s", ref.Contract.ContractText)
	}
	rev := f.resolve(t, "proj", "rev", "x")
	if appliedIDs(rev) != "review-only" {
		t.Errorf("review: %s", appliedIDs(rev))
	}
}

// Spec 8.4: no toggles, the ruleset defaults; toggles switch rules on and off.
func TestResolve_DefaultsAndToggles(t *testing.T) {
	f := newFixture()
	f.rules = append(f.rules, rule("opt-in", "warn", false, "generate"), rule("opt-out", "warn", true, "generate"))
	if got := appliedIDs(f.resolve(t, "proj", "gen", "x")); got != "base-error,opt-out" {
		t.Errorf("defaults: %s", got)
	}
	f.projects["proj"]["toggles"] = map[string]any{"opt-in": true, "opt-out": false, "review-only": true}
	if got := appliedIDs(f.resolve(t, "proj", "gen", "x")); got != "base-error,opt-in" {
		t.Errorf("toggled: %s (review-only is on but not for generate)", got)
	}
}

// Spec 8.3 and step 6: conflict precedence.
func TestResolve_Conflicts(t *testing.T) {
	type rl struct {
		id, sev   string
		on        bool
		conflicts []string
	}
	tests := []struct {
		name      string
		rules     []rl
		blocked   string // reason, or "" for ok
		applied   string
		dropped   string // id>winner,...
		conflicts string // a|b,...
	}{
		{"error vs error blocks", []rl{{"e1", "error", true, []string{"e2"}}, {"e2", "error", true, nil}}, ConflictingRules, "", "", "e1|e2"},
		{"declared on one side is enough", []rl{{"e1", "error", true, nil}, {"e2", "error", true, []string{"e1"}}}, ConflictingRules, "", "", "e1|e2"},
		{"all error pairs are listed", []rl{{"e1", "error", true, []string{"e2", "e3"}}, {"e2", "error", true, nil}, {"e3", "error", true, []string{"e2"}}}, ConflictingRules, "", "", "e1|e2,e1|e3,e2|e3"},
		{"warn vs error drops warn", []rl{{"w", "warn", true, []string{"e"}}, {"e", "error", true, nil}}, "", "base-error,e", "w>e", ""},
		{"info vs warn drops info", []rl{{"i", "info", true, nil}, {"w", "warn", true, []string{"i"}}}, "", "base-error,w", "i>w", ""},
		{"info vs error drops info", []rl{{"i", "info", true, []string{"e"}}, {"e", "error", true, nil}}, "", "base-error,e", "i>e", ""},
		{"info vs info drops both", []rl{{"i1", "info", true, []string{"i2"}}, {"i2", "info", true, nil}}, "", "base-error", "i1>i2,i2>i1", ""},
		{"warn vs warn blocks", []rl{{"w1", "warn", true, []string{"w2"}}, {"w2", "warn", true, nil}}, ConflictingRules, "", "", "w1|w2"},
		{"a warn dropped by an error no longer blocks another warn", []rl{{"w1", "warn", true, []string{"w2", "e"}}, {"w2", "warn", true, nil}, {"e", "error", true, nil}}, "", "base-error,e,w2", "w1>e", ""},
		{"a conflict with a disabled rule does nothing", []rl{{"e1", "error", true, []string{"e2"}}, {"e2", "error", false, nil}}, "", "base-error,e1", "", ""},
		{"error vs error blocks even when warns would drop", []rl{{"e1", "error", true, []string{"e2"}}, {"e2", "error", true, nil}, {"w", "warn", true, []string{"e1"}}}, ConflictingRules, "", "", "e1|e2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture()
			for _, r := range tt.rules {
				m := rule(r.id, r.sev, r.on, "generate")
				if r.conflicts != nil {
					var c []any
					for _, x := range r.conflicts {
						c = append(c, x)
					}
					m["conflictsWith"] = c
				}
				f.rules = append(f.rules, m)
			}
			res := f.resolve(t, "proj", "gen", "x")
			if tt.blocked != "" {
				if res.Status != "blocked" || res.Blocked.Reason != tt.blocked {
					t.Fatalf("got %+v, want blocked %s", res, tt.blocked)
				}
				var pairs []string
				for _, c := range res.Blocked.Details.Conflicts {
					pairs = append(pairs, c.A+"|"+c.B)
					if c.Why == "" {
						t.Errorf("conflict without why")
					}
				}
				if strings.Join(pairs, ",") != tt.conflicts {
					t.Errorf("conflicts %v, want %s", pairs, tt.conflicts)
				}
				return
			}
			if res.Status != "ok" {
				t.Fatalf("blocked: %+v", res.Blocked)
			}
			if got := appliedIDs(res); got != tt.applied {
				t.Errorf("applied %s, want %s", got, tt.applied)
			}
			var dropped []string
			for _, d := range res.Contract.Meta.RulesDropped {
				dropped = append(dropped, d.ID+">"+d.DroppedFor)
			}
			if strings.Join(dropped, ",") != tt.dropped {
				t.Errorf("dropped %v, want %s", dropped, tt.dropped)
			}
			for _, d := range res.Contract.Meta.RulesDropped {
				if strings.Contains(res.Contract.ContractText, "Directive of "+d.ID+".") {
					t.Errorf("dropped rule %s is in the contract", d.ID)
				}
			}
		})
	}
}

// Step 7: preset, then rules, then project overrides.
func TestResolve_ConstraintPrecedence(t *testing.T) {
	f := newFixture() // the preset sets maxFilesChanged 9, styling plain
	f.rules = append(f.rules, rule("five", "warn", true, "generate"), rule("same", "info", true, "generate"))
	f.rule("five")["contributesConstraints"] = map[string]any{"maxFilesChanged": 5, "allowNewDependencies": false}
	f.rule("same")["contributesConstraints"] = map[string]any{"allowNewDependencies": false}
	res := f.resolve(t, "proj", "gen", "x")
	got, _ := json.Marshal(res.Contract.Meta.ConstraintsApplied)
	if string(got) != `{"allowNewDependencies":false,"maxFilesChanged":5,"styling":"plain"}` {
		t.Errorf("rules over preset: %s", got)
	}
	f.projects["proj"]["constraintOverrides"] = map[string]any{"maxFilesChanged": 2, "styling": "fancy", "paths": []any{"x/"}}
	res = f.resolve(t, "proj", "gen", "x")
	got, _ = json.Marshal(res.Contract.Meta.ConstraintsApplied)
	if string(got) != `{"allowNewDependencies":false,"maxFilesChanged":2,"paths":["x/"],"styling":"fancy"}` {
		t.Errorf("project over rules: %s", got)
	}
	for _, want := range []string{"- maxFilesChanged: 2\n", "- paths: [\"x/\"]\n", "- styling: \"fancy\"\n", "- allowNewDependencies: false\n"} {
		if !strings.Contains(res.Contract.ContractText, want) {
			t.Errorf("contract lacks %q", want)
		}
	}
}

// Every blocked reason.
func TestResolve_BlockedReasons(t *testing.T) {
	tests := []struct {
		name                 string
		edit                 func(f *fixture)
		project, command     string
		reason, msg, details string
	}{
		{"missing project", nil, "nope", "gen", MissingProject, `project "nope" not found (policy/contracts/projects/nope.json); projects: proj`, ""},
		{"project id that cannot be a file", nil, "../proj", "gen", MissingProject, `project "../proj" not found`, ""},
		{"missing project comes first", nil, "nope", "nope", MissingProject, "", ""},
		{"unknown command", nil, "proj", "gem", UnknownCommand, `command "gem" is not in policy/contracts/commands.json; did you mean gen? commands: gen, ref, rev`, ""},
		{"missing preset", func(f *fixture) { f.projects["proj"]["stackPresetId"] = "q" }, "proj", "gen", InvalidConfiguration, `project "proj" uses stack preset "q", which is not in policy/contracts/presets.json; did you mean p? presets: p`, ""},
		{"toggle of an unknown rule", func(f *fixture) { f.projects["proj"]["toggles"] = map[string]any{"base-eror": true} }, "proj", "gen", InvalidConfiguration, `project "proj" toggles rule "base-eror", which is not in policy/contracts/rules.json; did you mean base-error?`, ""},
		{"override of an undeclared constraint", func(f *fixture) { f.projects["proj"]["constraintOverrides"] = map[string]any{"maxFiles": 1} }, "proj", "gen", InvalidConfiguration, `project "proj" overrides maxFiles: constraint "maxFiles" is not declared in constraints.json`, ""},
		{"override of the wrong type", func(f *fixture) { f.projects["proj"]["constraintOverrides"] = map[string]any{"maxFilesChanged": "3"} }, "proj", "gen", InvalidConfiguration, `constraint "maxFilesChanged" is an integer, got "3"`, ""},
		{"override below the minimum", func(f *fixture) { f.projects["proj"]["constraintOverrides"] = map[string]any{"maxFilesChanged": -1} }, "proj", "gen", InvalidConfiguration, "must be at least 0, got -1", ""},
		{"override outside the enum", func(f *fixture) { f.projects["proj"]["constraintOverrides"] = map[string]any{"styling": "wild"} }, "proj", "gen", InvalidConfiguration, "must be one of plain, fancy", ""},
		{"two rules set one key differently", func(f *fixture) {
			f.rules = append(f.rules, rule("two", "warn", true, "generate"), rule("three", "info", true, "generate"))
			f.rule("two")["contributesConstraints"] = map[string]any{"maxFilesChanged": 2}
			f.rule("three")["contributesConstraints"] = map[string]any{"maxFilesChanged": 3}
		}, "proj", "gen", InvalidConfiguration, "applied rules set one constraint to different values: two and three", "two|three|both set constraint maxFilesChanged: two sets 2, three sets 3"},
		{"error vs error", func(f *fixture) {
			f.rules = append(f.rules, rule("other-error", "error", true, "generate"))
			f.rule("other-error")["conflictsWith"] = []any{"base-error"}
		}, "proj", "gen", ConflictingRules, "conflicting rules for gen (generate): base-error and other-error", "base-error|other-error|error rule base-error and error rule other-error conflict (other-error lists base-error in conflictsWith); two error rules cannot both hold: disable one in the project's toggles"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture()
			if tt.edit != nil {
				tt.edit(f)
			}
			res := f.resolve(t, tt.project, tt.command, "some input")
			if res.Status != "blocked" || res.Blocked.Reason != tt.reason || res.Contract != nil {
				t.Fatalf("got %+v, want blocked %s", res, tt.reason)
			}
			if !strings.Contains(res.Blocked.Message, tt.msg) {
				t.Errorf("message %q lacks %q", res.Blocked.Message, tt.msg)
			}
			if tt.details != "" {
				c := res.Blocked.Details.Conflicts[0]
				if got := c.A + "|" + c.B + "|" + c.Why; got != tt.details {
					t.Errorf("details %q, want %q", got, tt.details)
				}
			}
			checkSchema(t, res)
		})
	}
}

func TestNormalizeInput(t *testing.T) {
	for _, tt := range []struct{ in, want, problem string }{
		{"Button with variants", "Button with variants", ""},
		{" a\n\n b\t c ", "a b c", ""},
		{"", "", ""},
		{"ünïcödé ✓", "ünïcödé ✓", ""},
		{"a\x00b", "", "control character U+0000"},
		{"a\x1b[31mb", "", "control character U+001B"},
		{"\xff", "", "not valid UTF-8"},
		{strings.Repeat("x", MaxInputChars+1), "", "more than 4000"},
	} {
		got, err := NormalizeInput(tt.in)
		if tt.problem != "" {
			if !errkind.IsInput(err) || !strings.Contains(err.Error(), tt.problem) {
				t.Errorf("%q: got %v, want an input error with %q", tt.in, err, tt.problem)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("%q: got %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}

// Spec 7: the log names project, command, intent, rules, constraints and
// status, and never the user input.
func TestLog_NoRawInput(t *testing.T) {
	f := newFixture()
	secret := "build the login form for alice@example.com with token sk-12345"
	res := f.resolve(t, "proj", "gen", secret)
	e := res.Log(Request{ProjectID: "proj", CommandID: "gen", UserInput: secret})
	b, _ := json.Marshal(e)
	for _, frag := range []string{"alice", "sk-12345", "login form"} {
		if strings.Contains(string(b), frag) {
			t.Errorf("log holds the input: %s", b)
		}
	}
	if e.UserInputDigest != InputDigest(secret) || e.UserInputChars != len(secret) || e.Status != "ok" || e.IntentID != "generate" ||
		strings.Join(e.RulesApplied, ",") != "base-error" || e.ContractID != res.Contract.ID {
		t.Errorf("log entry %+v", e)
	}
	blockedRes := f.resolve(t, "proj", "nope", secret)
	e = blockedRes.Log(Request{ProjectID: "proj", CommandID: "nope", UserInput: secret})
	if e.Status != "blocked" || e.BlockedReason != UnknownCommand || e.IntentID != "" || len(e.RulesApplied) != 0 || e.ContractID != "" {
		t.Errorf("blocked log entry %+v", e)
	}
}

func checkSchema(t *testing.T, res *Result) {
	t.Helper()
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	doc, _, err := schemaval.DecodeLocated(b)
	if err != nil {
		t.Fatal(err)
	}
	if v := schema(SchemaResult).Violations(doc); len(v) > 0 {
		t.Errorf("result breaks result.schema.json: %v\n%s", v, b)
	}
}

// TestGolden: the contract text of every example command in every example
// project (policy/contracts/), compared with testdata/golden/ (go test
// -update rewrites them), and the ResolveResult of one.
func TestGolden(t *testing.T) {
	src := repoCatalog(t)
	c, err := LoadCatalog(src)
	if err != nil {
		t.Fatal(err)
	}
	projects, err := ListProjects(src)
	if err != nil || len(projects) == 0 {
		t.Fatalf("projects: %v %v", projects, err)
	}
	inputs := map[string]string{
		"create-component": "Button with variants", "create-page": "Pricing page with three plans",
		"add-endpoint": "POST /orders creates an order", "refactor-component": "Split Header into Logo and Nav",
		"extract-function": "Move price formatting into formatPrice", "review-change": "Review the checkout diff",
	}
	for _, p := range projects {
		for _, cmd := range c.Commands {
			in, ok := inputs[cmd.ID]
			if !ok {
				t.Fatalf("no golden input for command %s", cmd.ID)
			}
			res, err := Resolve(c, src, Request{ProjectID: p, CommandID: cmd.ID, UserInput: in}, Options{GeneratedAt: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)})
			if err != nil {
				t.Fatal(err)
			}
			if res.Status != "ok" {
				t.Fatalf("%s/%s blocked: %+v", p, cmd.ID, res.Blocked)
			}
			checkSchema(t, res)
			golden(t, filepath.Join("golden", p, cmd.ID+".txt"), []byte(res.Contract.ContractText))
			if p == "acme-web" && cmd.ID == "create-component" {
				var buf bytes.Buffer
				enc := json.NewEncoder(&buf)
				enc.SetIndent("", "  ")
				enc.SetEscapeHTML(false)
				if err := enc.Encode(res); err != nil {
					t.Fatal(err)
				}
				golden(t, "golden/acme-web/create-component.result.json", buf.Bytes())
			}
		}
	}
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (go test -update rewrites it):\n%s", name, got)
	}
}

func TestResolve_MalformedProjectIsInputError(t *testing.T) {
	f := newFixture()
	src := f.source(t)
	src[ProjectsDir+"/proj.json"] = []byte("{\n  \"schemaVersion\": \"dome.contract_project/v1\",\n  \"id\": \"proj\",\n  \"stackPresetId\": \"p\",\n  \"toggles\": {\"x\": \"yes\"}\n}")
	c, err := LoadCatalog(src)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Resolve(c, src, Request{ProjectID: "proj", CommandID: "gen"}, Options{})
	var inv *schemaval.InvalidError
	if !errors.As(err, &inv) || inv.Diags[0].Line != 5 || inv.Diags[0].Field != "toggles.x" {
		t.Fatalf("got %v", err)
	}
	src[ProjectsDir+"/proj.json"] = []byte(`{"schemaVersion": "dome.contract_project/v1", "id": "other", "stackPresetId": "p"}`)
	_, err = Resolve(c, src, Request{ProjectID: "proj", CommandID: "gen"}, Options{})
	if !errkind.IsInput(err) || !strings.Contains(err.Error(), `id "other" differs from the file name proj.json`) {
		t.Fatalf("got %v", err)
	}
}
