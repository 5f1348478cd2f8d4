package agent

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"
)

func selector(t *testing.T, ps ...*Profile) *Selector {
	t.Helper()
	set := NewSet(NewValidator())
	if err := set.Create("standard", profile(StandardAgentID)); err != nil {
		t.Fatal(err)
	}
	for _, p := range ps {
		if err := set.Create(p.ID, p); err != nil {
			t.Fatal(err)
		}
	}
	sel, err := NewSelector(set)
	if err != nil {
		t.Fatal(err)
	}
	return sel
}

func withExamples(id string, examples, notFor []string) *Profile {
	p := profile(id)
	p.Name, p.Description = "Agent", "an agent"
	p.ExampleTasks, p.NotForTasks = examples, notFor
	return p
}

func candidate(s Selection, id string) (Candidate, bool) {
	for _, c := range s.Candidates {
		if c.AgentID == id {
			return c, true
		}
	}
	return Candidate{}, false
}

// TestINV_AGT_SEL_001_SelectionDeterministic: the same task and profiles
// give the same result, whatever order the profiles were registered in.
func TestINV_AGT_SEL_001_SelectionDeterministic(t *testing.T) {
	var ps []*Profile
	for i := 0; i < 40; i++ {
		ps = append(ps, withExamples(fmt.Sprintf("agent-%02d", i), []string{"write unit tests", fmt.Sprintf("task number %d", i%7)}, nil))
	}
	task := "Write unit tests for task number 3"
	var first []byte
	for round := 0; round < 5; round++ {
		shuffled := append([]*Profile(nil), ps...)
		rand.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		s, err := selector(t, shuffled...).Explain(task)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(s)
		if first == nil {
			first = b
		} else if string(b) != string(first) {
			t.Fatalf("round %d differs:\n%s\n%s", round, b, first)
		}
	}
}

// TestINV_AGT_SEL_002_ConfidenceInRange: every confidence is within [0, 1];
// a raw score below 0 is clamped (and the explanation says so).
func TestINV_AGT_SEL_002_ConfidenceInRange(t *testing.T) {
	sel := selector(t,
		withExamples("a", []string{"deploy the service"}, []string{"deploy the service to production"}),
		withExamples("b", []string{"deploy the service to production"}, nil),
		withExamples("c", nil, []string{"deploy"}))
	for _, task := range []string{"deploy the service to production", "deploy", "service", "nothing matches here", "Deploy the service"} {
		s, err := sel.Explain(task)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range s.Candidates {
			if c.Confidence < 0 || c.Confidence > 1 {
				t.Fatalf("%q: %s has confidence %v", task, c.AgentID, c.Confidence)
			}
		}
	}
	s, _ := sel.Explain("deploy")
	c, _ := candidate(s, "c")
	if c.Confidence != 0 || c.Raw >= 0 || !strings.Contains(fmt.Sprint(c.Reasons), "clamped to 0") {
		t.Fatalf("c on 'deploy': %+v", c)
	}
}

// TestINV_AGT_SEL_003_ResultsSortedByConfidence: best first, ties by agent
// id.
func TestINV_AGT_SEL_003_ResultsSortedByConfidence(t *testing.T) {
	sel := selector(t,
		withExamples("zeta", []string{"review code"}, nil),
		withExamples("alpha", []string{"review code"}, nil),
		withExamples("mid", []string{"review code for security"}, nil),
		withExamples("low", nil, nil))
	s, err := sel.Select("review code")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for i, c := range s.Candidates {
		got = append(got, fmt.Sprintf("%s=%.3f", c.AgentID, c.Confidence))
		if i > 0 {
			prev := s.Candidates[i-1]
			if prev.Confidence < c.Confidence || prev.Confidence == c.Confidence && prev.AgentID > c.AgentID {
				t.Fatalf("out of order: %v", got)
			}
		}
	}
	if s.Best().AgentID != "alpha" || s.Candidates[1].AgentID != "zeta" {
		t.Fatalf("ranking %v", got)
	}
}

// TestINV_AGT_SEL_004_FallbackToStandard: no match gives the standard agent
// at 0.5; selection never returns nothing.
func TestINV_AGT_SEL_004_FallbackToStandard(t *testing.T) {
	sel := selector(t, withExamples("writer", []string{"write documentation"}, nil))
	for _, task := range []string{"calibrate the flux capacitor", "zzz"} {
		s, err := sel.Select(task)
		if err != nil {
			t.Fatal(err)
		}
		if !s.Fallback || len(s.Candidates) != 1 || s.Best().AgentID != StandardAgentID || s.Best().Confidence != 0.5 {
			t.Fatalf("%q: %+v", task, s)
		}
	}
	s, _ := sel.Explain("calibrate the flux capacitor")
	if !strings.Contains(fmt.Sprint(s.Candidates[0].Reasons), RuleFallback) {
		t.Fatalf("the explanation does not say fallback: %+v", s.Candidates[0])
	}
	if _, err := sel.Select("  !!  "); err == nil {
		t.Fatal("an empty task was accepted")
	}
	// A disabled agent is never selected.
	off := withExamples("writer", []string{"write documentation"}, nil)
	off.Enabled = false
	s, _ = selector(t, off).Select("write documentation")
	if s.Best().AgentID != StandardAgentID {
		t.Fatalf("a disabled agent was selected: %+v", s)
	}
}

// TestINV_AGT_SEL_005_ExampleTasksBoost: a substring match adds 0.4, an
// exact (normalized) match 0.6.
func TestINV_AGT_SEL_005_ExampleTasksBoost(t *testing.T) {
	p := withExamples("tester", []string{"write unit tests"}, nil)
	p.Name, p.Description = "X", "Y" // no keyword overlap from these
	sel := selector(t, p)
	cases := []struct {
		task string
		want float64
		rule string
	}{
		{"Write  Unit-Tests!", 0.6 + 0.3, RuleExampleExact},              // every term is a keyword too
		{"write unit tests for the parser", 0.625, RuleExampleSubstring}, // 0.4 + 3 of 4 terms (for, the: stopwords)
		{"unit tests", 0.4 + 0.3, RuleExampleSubstring},                  // the task inside an example
		{"rewrite unit testsuite", 0.1, RuleKeywords},                    // word boundaries: no substring match
	}
	for _, tc := range cases {
		s, err := sel.Explain(tc.task)
		if err != nil {
			t.Fatal(err)
		}
		c, ok := candidate(s, "tester")
		if !ok || c.Confidence != tc.want || !strings.Contains(fmt.Sprint(c.Reasons), tc.rule) {
			t.Errorf("%q: %+v, want %.3f by %s", tc.task, c, tc.want, tc.rule)
		}
	}
}

// TestINV_AGT_SEL_006_NotForTasksReduce: a notForTasks match subtracts 0.5,
// can drive the confidence to 0 but not below, and an agent with strong
// other signals stays selectable.
func TestINV_AGT_SEL_006_NotForTasksReduce(t *testing.T) {
	strong := withExamples("strong", []string{"write documentation for the api"}, []string{"documentation"})
	weak := withExamples("weak", []string{"documentation review"}, []string{"write documentation"})
	sel := selector(t, strong, weak)
	s, err := sel.Explain("write documentation for the api")
	if err != nil {
		t.Fatal(err)
	}
	st, _ := candidate(s, "strong")
	if st.Confidence != 0.4 || !strings.Contains(fmt.Sprint(st.Reasons), RuleNotForTask) { // 0.6 + 0.3 - 0.5
		t.Fatalf("strong: %+v", st)
	}
	if s.Best().AgentID != "strong" {
		t.Fatalf("the strong agent is not selected: %+v", s.Candidates)
	}
	w, _ := candidate(s, "weak")
	if w.Confidence != 0 || w.Raw >= 0 {
		t.Fatalf("weak: %+v", w)
	}
}

func TestSelect_ExampleRegistry(t *testing.T) {
	sel, err := NewSelector(exampleCatalog(t).Agents)
	if err != nil {
		t.Fatal(err)
	}
	for task, want := range map[string]string{
		"write unit tests for the registry package": "go-tester",
		"Review a pull request":                     "reviewer",
		"plan a documentation change":               "planner",
		"draft a README section":                    "writer",
		"calibrate the flux capacitor":              "standard",
	} {
		s, err := sel.Select(task)
		if err != nil {
			t.Fatal(err)
		}
		if s.Best().AgentID != want {
			t.Errorf("%q: %s (%v), want %s", task, s.Best().AgentID, s.Candidates, want)
		}
	}
}

// TestSelect_IndexMatchesFullScan: the term index never leaves out an agent
// a full scan would rank, whatever the task.
func TestSelect_IndexMatchesFullScan(t *testing.T) {
	vocab := strings.Fields("the a of write review unit tests docs api plan deploy release the to for code security sql")
	r := rand.New(rand.NewPCG(1, 2))
	phrase := func() string {
		n := 1 + r.IntN(4)
		var w []string
		for i := 0; i < n; i++ {
			w = append(w, vocab[r.IntN(len(vocab))])
		}
		return strings.Join(w, " ")
	}
	var ps []*Profile
	for i := 0; i < 60; i++ {
		p := withExamples(fmt.Sprintf("agent-%02d", i), []string{phrase(), phrase()}, []string{phrase()})
		p.Description = phrase()
		if p.NotForTasks[0] == p.ExampleTasks[0] || p.NotForTasks[0] == p.ExampleTasks[1] || normalize(p.NotForTasks[0]) == normalize(p.ExampleTasks[0]) || normalize(p.NotForTasks[0]) == normalize(p.ExampleTasks[1]) {
			p.NotForTasks = nil
		}
		ps = append(ps, p)
	}
	sel := selector(t, ps...)
	for k := 0; k < 500; k++ {
		task := phrase()
		got, err := sel.Select(task)
		if err != nil {
			t.Fatal(err)
		}
		// The full scan: score every agent.
		tp, tt := newPhrase(task), terms(task)
		type sc struct {
			id    string
			score int
		}
		var all []sc
		for i := range sel.agents {
			if v := min(sel.agents[i].score(tp, tt, nil), scoreScale); v > 0 {
				all = append(all, sc{sel.agents[i].id, v})
			}
		}
		sort.SliceStable(all, func(i, j int) bool { return all[i].score > all[j].score })
		var want []string
		for _, c := range all {
			want = append(want, fmt.Sprintf("%s=%.3f", c.id, thousandths(c.score)))
		}
		if len(want) == 0 {
			want = []string{"standard=0.500"}
		}
		var have []string
		for _, c := range got.Candidates {
			have = append(have, fmt.Sprintf("%s=%.3f", c.AgentID, c.Confidence))
		}
		if strings.Join(have, " ") != strings.Join(want, " ") {
			t.Fatalf("%q:\n index %v\n  scan %v", task, have, want)
		}
	}
}
