package agent

import (
	"context"
	"strings"
	"testing"

	"github.com/dome-registry/dome/pkg/agent/provider"
)

var testAbilities = map[string]string{
	"core-a": "---\ntitle: Core A\n---\nAlways know A: the house rules.",
	"core-b": "# Core B\n\nAlways know B.",
	"go":     "---\ntitle: Go testing\ntags: [go, tests]\n---\nTable-driven tests; fuzz every parser.",
	"sql":    "# SQL\n\nIndexes, query plans and migrations.",
	"docs":   "# Docs\n\nWrite tests for docs examples too; keep pages short.",
}

func abilityProfile() *Profile {
	p := profile("coder")
	p.CoreAbilities = []string{"core-b", "core-a"}
	p.Abilities = []string{"sql", "docs", "go"}
	p.Workflow = steps("only")
	return p
}

// TestINV_AGT_ABL_001_InjectedBeforePrompt: the abilities are in the
// system prompt of the request the provider receives, ahead of the agent's
// own system prompt, and the user prompt carries none of them.
func TestINV_AGT_ABL_001_InjectedBeforePrompt(t *testing.T) {
	c := catalogOf(t, testAbilities, abilityProfile())
	m := &fakeModel{}
	res, err := runnerWith(c, m, nil).Start(context.Background(), StartOptions{RunID: "r1", Agent: "coder", Task: "write go tests"})
	if err != nil || res.Status != StatusSucceeded {
		t.Fatalf("%v %+v", err, res)
	}
	if len(m.calls) != 1 {
		t.Fatalf("%d calls", len(m.calls))
	}
	req := m.calls[0]
	ia, ib, ig, is := strings.Index(req.System, "Always know A"), strings.Index(req.System, "Always know B"), strings.Index(req.System, "Table-driven"), strings.Index(req.System, "You are coder.")
	if ia < 0 || ib < 0 || ig < 0 || is < 0 || !(ib < ia && ia < ig && ig < is) {
		t.Fatalf("system prompt order (core-b %d, core-a %d, go %d, system %d):\n%s", ib, ia, ig, is, req.System)
	}
	if strings.Contains(req.Prompt, "Always know") || !strings.HasPrefix(req.System, "# Abilities") {
		t.Fatalf("abilities in the wrong place: system %q prompt %q", req.System, req.Prompt)
	}
}

// TestINV_AGT_ABL_002_CoreAbilitiesAlwaysIncluded: core abilities come
// first, whatever the task, and task-matched ones follow by relevance.
func TestINV_AGT_ABL_002_CoreAbilitiesAlwaysIncluded(t *testing.T) {
	c := catalogOf(t, testAbilities, abilityProfile())
	p, _ := c.Agents.Get("coder")
	for task, want := range map[string]string{
		"calibrate the flux capacitor":   "core-b,core-a",
		"write go tests":                 "core-b,core-a,go,docs", // go: 2 head terms (go, tests); docs: "tests" in its text
		"tune the sql indexes and tests": "core-b,core-a,sql,go,docs",
	} {
		inj, err := c.Abilities.Inject(p, task)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, a := range inj.Abilities {
			got = append(got, a.ID)
		}
		if strings.Join(got, ",") != want {
			t.Errorf("%q: %v, want %s", task, got, want)
		}
		if !inj.Abilities[0].Core || !inj.Abilities[1].Core {
			t.Errorf("%q: core abilities not first: %+v", task, inj.Abilities)
		}
	}
}

// TestINV_AGT_ABL_003_TokenBudgetRespected: the injected block never
// exceeds the budget, counted with the BPE tokenizer; what does not fit is
// truncated or left out with a warning.
func TestINV_AGT_ABL_003_TokenBudgetRespected(t *testing.T) {
	long := "---\ntitle: Long\n---\n" + strings.Repeat("Table-driven tests keep behaviour visible. ", 200)
	abs := map[string]string{"core-a": testAbilities["core-a"], "long": long, "go": testAbilities["go"]}
	p := profile("coder")
	p.CoreAbilities = []string{"core-a"}
	p.Abilities = []string{"long", "go"}
	tok := NewTokenizer()
	for _, budget := range []int{40, 80, 200, 600, 5000} {
		p.AbilityTokenBudget = budget
		c := catalogOf(t, abs, p)
		pp, _ := c.Agents.Get("coder")
		inj, err := c.Abilities.Inject(pp, "table-driven tests in go")
		if err != nil {
			t.Fatal(err)
		}
		block := strings.TrimSuffix(inj.System, pp.SystemPrompt)
		if n := tok.Count(block); n > budget || n != inj.Tokens {
			t.Fatalf("budget %d: the block counts %d tokens (reported %d)", budget, n, inj.Tokens)
		}
		if !strings.Contains(block, "Always know A") {
			t.Fatalf("budget %d: the core ability is missing", budget)
		}
		full := tok.Count(injectionHeader+(&Ability{Title: "Long", Body: strings.TrimSpace(long[strings.Index(long, "Table"):])}).section()) > budget
		if full && len(inj.Warnings) == 0 {
			t.Fatalf("budget %d: cut without a warning: %+v", budget, inj)
		}
		if budget == 5000 && (len(inj.Warnings) != 0 || len(inj.Abilities) != 3) {
			t.Fatalf("budget %d: %+v", budget, inj)
		}
		// go (relevance 6) before long (3): long is the one cut.
		if budget == 200 && (len(inj.Abilities) != 3 || !inj.Abilities[2].Truncated || !strings.Contains(block, "[truncated]") || len(inj.Omitted) != 0) {
			t.Fatalf("budget %d: want long truncated: %+v", budget, inj)
		}
		if budget == 40 && (len(inj.Omitted) != 1 || inj.Omitted[0] != "long" || len(inj.Warnings) != 1) {
			t.Fatalf("budget %d: want long left out with a warning: %+v", budget, inj)
		}
	}
	// Core abilities over the budget are a registry error, found at load.
	p.AbilityTokenBudget = 5
	rt := mustJSON(testRuntime())
	_, err := LoadCatalog("c", []File{{"registry/agents/standard.agent.json", mustJSON(profile("standard"))}, {"registry/agents/coder.agent.json", mustJSON(p)}},
		[]File{{"registry/agents/runtimes/test.runtime.json", rt}}, []File{{"registry/abilities/core-a.md", []byte(abs["core-a"])}, {"registry/abilities/long.md", []byte(long)}, {"registry/abilities/go.md", []byte(abs["go"])}},
		LoadOptions{Tokenizer: tok})
	if err == nil || !strings.Contains(err.Error(), "over the abilityTokenBudget of 5") {
		t.Fatalf("core over budget: %v", err)
	}
}

func TestTokenizer_CountsAndTruncates(t *testing.T) {
	tok := NewTokenizer()
	// cl100k_base reference counts (tiktoken).
	for s, want := range map[string]int{"hello world": 2, "": 0, "tiktoken is great!": 6} {
		if got := tok.Count(s); got != want {
			t.Errorf("Count(%q) = %d, want %d", s, got, want)
		}
	}
	s := strings.Repeat("héllo wörld 🌍 ", 50)
	for n := 1; n < 60; n += 7 {
		cut := tok.Truncate(s, n)
		if tok.Count(cut) > n || !strings.HasPrefix(s, cut) {
			t.Fatalf("Truncate(%d) = %q (%d tokens)", n, cut, tok.Count(cut))
		}
	}
}

func TestParseAbility_BadInput(t *testing.T) {
	for name, data := range map[string]string{
		"a.md":       "---\ntitle: [1, 2]\n---\nbody",
		"b.md":       "---\ncolour: red\n---\nbody",
		"c.md":       "---\ntitle: x\n---\n   ",
		"Bad_ID.md":  "body",
		"d.md":       "\xff\xfe",
		"e.md":       "---\ntags: {a: b}\n---\nbody",
		"f.md":       "---\ntitle: &a x\nother: *a\n---\nbody",
		"g.markdown": "body",
	} {
		if _, err := ParseAbility("registry/abilities/"+name, []byte(data)); err == nil {
			t.Errorf("%s accepted", name)
		}
	}
	a, err := ParseAbility("registry/abilities/ok.md", []byte("# Title From Heading\n\ntext"))
	if err != nil || a.Title != "Title From Heading" {
		t.Fatalf("%v %+v", err, a)
	}
	_ = provider.Request{}
}
