package agent

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/dome-registry/dome/pkg/errkind"
)

// TestINV_AGT_001_InvalidProfileRejected: every profile passes the schema
// and the rules before registration; a refused profile names the field and
// never enters the set.
func TestINV_AGT_001_InvalidProfileRejected(t *testing.T) {
	cases := []struct {
		name  string
		edit  func(p *Profile)
		field string
	}{
		{"no name", func(p *Profile) { p.Name = "" }, "/name"},
		{"upper-case id", func(p *Profile) { p.ID = "Planner" }, "/id"},
		{"id with underscore", func(p *Profile) { p.ID = "go_tester" }, "/id"},
		{"double hyphen", func(p *Profile) { p.ID = "a--b" }, "/id"},
		{"no system prompt", func(p *Profile) { p.SystemPrompt = "" }, "/systemPrompt"},
		{"wrong schema version", func(p *Profile) { p.SchemaVersion = "dome.agent/v2" }, "/schemaVersion"},
		{"no model", func(p *Profile) { p.Provider.Model = "" }, "/provider/model"},
		{"ability twice", func(p *Profile) { p.CoreAbilities = []string{"a"}; p.Abilities = []string{"a"} }, "/abilities/0"},
		{"example also excluded", func(p *Profile) { p.ExampleTasks = []string{"Write docs"}; p.NotForTasks = []string{"write  DOCS!"} }, "/notForTasks/0"},
		{"two actions in a step", func(p *Profile) {
			p.Workflow = &Workflow{Steps: []Step{{ID: "a", Prompt: "x", Delegate: &DelegateCall{Agent: "b", Task: "y"}}}}
		}, "/workflow/steps/0"},
		{"step without action", func(p *Profile) { p.Workflow = &Workflow{Steps: []Step{{ID: "a"}}} }, "/workflow/steps/0"},
		{"duplicate step id", func(p *Profile) { p.Workflow = steps("a", "a") }, "/workflow/steps/1/id"},
		{"forward dependency in array order", func(p *Profile) { p.Workflow = steps("a:b", "b") }, "/workflow/steps/0/dependsOn/0"},
		{"cycle in a DAG", func(p *Profile) { p.Workflow = steps("a:c", "b:a", "c:b"); p.Workflow.MaxConcurrency = 2 }, "/workflow/steps"},
		{"unknown dependency", func(p *Profile) { p.Workflow = steps("a", "b:x") }, "/workflow/steps/1/dependsOn/0"},
		{"placeholder of a later step", func(p *Profile) {
			p.Workflow = steps("a", "b")
			p.Workflow.Steps[0].Prompt = "use {{steps.b.output}}"
		}, "/workflow/steps/0/prompt"},
		{"placeholder of a step not depended on (DAG)", func(p *Profile) {
			p.Workflow = steps("a", "b")
			p.Workflow.MaxConcurrency = 2
			p.Workflow.Steps[1].Prompt = "use {{steps.a.output}}"
		}, "/workflow/steps/1/prompt"},
		{"bad placeholder", func(p *Profile) { p.Workflow = steps("a"); p.Workflow.Steps[0].Prompt = "{{steps.a}}" }, "/workflow/steps/0/prompt"},
		{"delegate to itself", func(p *Profile) {
			p.Workflow = &Workflow{Steps: []Step{{ID: "a", Delegate: &DelegateCall{Agent: p.ID, Task: "t"}}}}
		}, "/workflow/steps/0/delegate/agent"},
		{"delegate not allowed", func(p *Profile) {
			p.Workflow = &Workflow{Steps: []Step{{ID: "a", Delegate: &DelegateCall{Agent: "other", Task: "t"}}}}
		}, "/workflow/steps/0/delegate/agent"},
		{"allowed delegates list itself", func(p *Profile) { p.Delegation = &Delegation{AllowedDelegates: []string{p.ID}} }, "/delegation/allowedDelegates/0"},
		{"tool step without a grant source", func(p *Profile) {
			p.Workflow = &Workflow{Steps: []Step{{ID: "a", Tool: &ToolCall{Name: "repo-read/read_file"}}}}
		}, "/workflow/steps/0/tool"},
		{"bad failure strategy", func(p *Profile) { p.Workflow = steps("a"); p.Workflow.FailureStrategy = "retryForever" }, "/workflow/failureStrategy"},
		{"concurrency zero is unset, but negative is refused", func(p *Profile) { p.Workflow = steps("a"); p.Workflow.MaxConcurrency = -1 }, "/workflow/maxConcurrency"},
	}
	v := NewValidator()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := profile("planner")
			tc.edit(p)
			set := NewSet(v)
			err := set.Create("planner.agent.json", p)
			if err == nil {
				t.Fatal("accepted")
			}
			var ie *errkind.InputError
			if !errors.As(err, &ie) {
				t.Fatalf("%T %v: not an input error", err, err)
			}
			if !strings.HasPrefix(ie.Field, tc.field) {
				t.Fatalf("field %q, want %q (%v)", ie.Field, tc.field, err)
			}
			if CodeOf(err) != CodeInvalidProfile {
				t.Fatalf("code %q", CodeOf(err))
			}
			if set.Len() != 0 {
				t.Fatal("a refused profile entered the set")
			}
		})
	}
	// The same rules hold for files, JSON and YAML.
	good := `{"schemaVersion":"dome.agent/v1","id":"x","name":"X","description":"d","systemPrompt":"s","enabled":true,"provider":{"runtime":"r","model":"m"}}`
	if _, err := v.Parse("x.agent.json", []byte(good)); err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string]string{
		"x.agent.json": strings.Replace(good, `"enabled":true`, `"enabled":true,"colour":"blue"`, 1),
		"y.agent.json": strings.Replace(good, `"name":"X"`, `"name":"X","name":"Y"`, 1),
		"z.agent.yaml": "schemaVersion: dome.agent/v1\nid: z\nname: Z\ndescription: d\nsystemPrompt: s\nenabled: yes\nprovider: {runtime: r, model: m}\n",
	} {
		if _, err := v.Parse(name, []byte(data)); err == nil {
			t.Errorf("%s accepted", name)
		}
	}
	yaml := "schemaVersion: dome.agent/v1\nid: z\nname: Z\ndescription: d\nsystemPrompt: s\nenabled: true\nprovider: {runtime: r, model: m}\n"
	p, err := v.Parse("z.agent.yaml", []byte(yaml))
	if err != nil || p.ID != "z" {
		t.Fatalf("YAML profile: %v", err)
	}
}

// TestINV_AGT_002_DuplicateIDRejected: ids are unique; create and update
// are distinct.
func TestINV_AGT_002_DuplicateIDRejected(t *testing.T) {
	set := NewSet(NewValidator())
	if err := set.Create("a.agent.json", profile("writer")); err != nil {
		t.Fatal(err)
	}
	err := set.Create("b.agent.yaml", profile("writer"))
	if CodeOf(err) != CodeDuplicateID || !strings.Contains(err.Error(), "a.agent.json") || !errkind.IsInput(err) {
		t.Fatalf("second create: %v (%s)", err, CodeOf(err))
	}
	if err := set.Update("c.agent.json", profile("reviewer")); CodeOf(err) != CodeAgentNotFound {
		t.Fatalf("update of an unknown agent: %v", err)
	}
	p := profile("writer")
	p.Description = "a new description"
	if err := set.Update("a.agent.json", p); err != nil {
		t.Fatal(err)
	}
	got, _ := set.Get("writer")
	if got.Description != "a new description" || set.Len() != 1 {
		t.Fatalf("update did not replace: %+v", got)
	}
	// The set keeps its own copy: changing the caller's value or what Get
	// returned changes nothing.
	p.Description = "changed after update"
	got.Name = "changed after get"
	again, _ := set.Get("writer")
	if again.Description != "a new description" || again.Name != "Agent writer" {
		t.Fatalf("the set shares memory with its callers: %+v", again)
	}
	// A registry with two files for one id is refused, naming both.
	a, _ := json.Marshal(profile("writer"))
	_, err = LoadCatalog("c", []File{{"registry/agents/standard.agent.json", mustJSON(profile("standard"))}, {"registry/agents/writer.agent.json", a}, {"registry/agents/writer.agent.yaml", a}}, nil, nil, LoadOptions{})
	if err == nil || !strings.Contains(err.Error(), "writer.agent.json") || !strings.Contains(err.Error(), "already registered") {
		t.Fatalf("duplicate files: %v", err)
	}
	// The file name carries the id.
	_, err = LoadCatalog("c", []File{{"registry/agents/standard.agent.json", mustJSON(profile("standard"))}, {"registry/agents/other.agent.json", a}}, nil, nil, LoadOptions{})
	if err == nil || !strings.Contains(err.Error(), `"writer", but the file is named for "other"`) {
		t.Fatalf("misnamed file: %v", err)
	}
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

func TestStandardAgentRequired(t *testing.T) {
	set := NewSet(NewValidator())
	if err := set.CheckStandard(); CodeOf(err) != CodeStandardRequired {
		t.Fatalf("empty set: %v", err)
	}
	off := profile(StandardAgentID)
	off.Enabled = false
	if err := set.Create("s", off); err != nil {
		t.Fatal(err)
	}
	if err := set.CheckStandard(); CodeOf(err) != CodeStandardRequired || !strings.Contains(err.Error(), "disabled") {
		t.Fatalf("disabled standard: %v", err)
	}
	on := profile(StandardAgentID)
	if err := set.Update("s", on); err != nil {
		t.Fatal(err)
	}
	if err := set.Update("s", off); CodeOf(err) != CodeStandardRequired {
		t.Fatalf("disabling the standard agent: %v", err)
	}
	if _, err := NewSelector(NewSet(NewValidator())); CodeOf(err) != CodeStandardRequired {
		t.Fatalf("a selector without the standard agent: %v", err)
	}
	_, err := LoadCatalog("c", []File{{"registry/agents/writer.agent.json", mustJSON(profile("writer"))}}, nil, nil, LoadOptions{})
	if CodeOf(err) != CodeStandardRequired {
		t.Fatalf("a registry without the standard agent: %v", err)
	}
}

func TestExampleRegistryLoads(t *testing.T) {
	c := exampleCatalog(t)
	want := []string{"api-designer", "go-tester", "planner", "repo-scout", "reviewer", "standard", "writer"}
	if got := c.Agents.IDs(); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("agents %v, want %v", got, want)
	}
	p, _ := c.Agents.Get("planner")
	if len(p.Workflow.Steps) != 4 || p.Workflow.Steps[1].Kind() != "delegate" {
		t.Fatalf("planner: %+v", p.Workflow)
	}
}

func TestCatalog_DelegationGraph(t *testing.T) {
	deleg := func(id string, to ...string) *Profile {
		p := profile(id)
		p.Delegation = &Delegation{AllowedDelegates: to}
		p.Workflow = &Workflow{}
		for _, d := range to {
			p.Workflow.Steps = append(p.Workflow.Steps, Step{ID: "to-" + d, Delegate: &DelegateCall{Agent: d, Task: "{{task}}"}})
		}
		return p
	}
	load := func(ps ...*Profile) error {
		files := []File{{"registry/agents/standard.agent.json", mustJSON(profile("standard"))}}
		for _, p := range ps {
			files = append(files, File{"registry/agents/" + p.ID + ".agent.json", mustJSON(p)})
		}
		rt := mustJSON(testRuntime())
		_, err := LoadCatalog("c", files, []File{{"registry/agents/runtimes/test.runtime.json", rt}}, nil, LoadOptions{})
		return err
	}
	if err := load(deleg("a", "b"), deleg("b", "c"), deleg("c", "a")); err == nil || !strings.Contains(err.Error(), "delegation cycle: a -> b -> c -> a") {
		t.Fatalf("cycle: %v", err)
	}
	two := 2
	a := deleg("a", "b")
	a.Delegation.MaxDepth = &two
	if err := load(a, deleg("b", "c"), deleg("c", "d"), profile("d")); err == nil || !strings.Contains(err.Error(), "a -> b -> c -> d is 3 deep, over maxDepth 2") {
		t.Fatalf("too deep: %v", err)
	}
	if err := load(a, deleg("b", "c"), profile("c")); err != nil {
		t.Fatalf("within maxDepth: %v", err)
	}
	if err := load(deleg("a", "ghost")); err == nil || !strings.Contains(err.Error(), `agent "ghost" does not exist`) {
		t.Fatalf("unknown delegate: %v", err)
	}
}
