package agent

import (
	"fmt"
	"slices"
	"strings"

	"github.com/dome-registry/dome/pkg/errkind"
)

// Selection scores, in thousandths of confidence: integers, so the same
// task and profiles give the same numbers on every machine.
const (
	ScoreExampleExact     = 600  // the task equals an example task (normalized)
	ScoreExampleSubstring = 400  // an example task and the task contain one another, on word boundaries
	ScoreNotForTask       = -500 // the task matches one of notForTasks the same way
	ScoreKeywordsMax      = 300  // every term of the task among the agent's terms
	ScoreFallback         = 500  // the standard agent when nothing matches
	scoreScale            = 1000
)

// Reason rules of an explanation.
const (
	RuleExampleExact     = "exampleTasks.exact"
	RuleExampleSubstring = "exampleTasks.substring"
	RuleNotForTask       = "notForTasks"
	RuleKeywords         = "keywords"
	RuleClamp            = "clamp"
	RuleFallback         = "fallback"
)

// Reason is one rule's contribution to a candidate's confidence.
type Reason struct {
	Rule   string  `json:"rule"`
	Delta  float64 `json:"delta"`
	Detail string  `json:"detail"`
}

// Candidate is an agent with its confidence in [0, 1].
type Candidate struct {
	AgentID    string   `json:"agentId"`
	Name       string   `json:"name"`
	Confidence float64  `json:"confidence"`
	Raw        float64  `json:"raw"` // before clamping
	Reasons    []Reason `json:"reasons"`
}

// Selection is the ranked result of Select: never empty.
type Selection struct {
	Task       string      `json:"task"`
	Normalized string      `json:"normalized"`
	Terms      []string    `json:"terms"`
	Fallback   bool        `json:"fallback"`
	Candidates []Candidate `json:"candidates"`
}

// Best returns the first candidate.
func (s Selection) Best() Candidate { return s.Candidates[0] }

// Selector ranks the enabled agents of a Set for a task. Build it once per
// Set: it prepares every profile's normalized examples and terms, so a
// selection only normalizes the task and compares.
type Selector struct {
	agents   []selAgent // in id order
	standard *selAgent
	// index lists, by term, the agents that can score with it: whose
	// keywords hold it, or one of whose example tasks has it. An agent
	// scores above 0 only through an example task or a keyword that shares
	// a term with the task, so a selection looks only at these.
	index  map[string][]int32
	always []int32 // agents with an example task made of stopwords only
}

type selAgent struct {
	id, name string
	examples []phrase
	notFor   []phrase
	keywords map[string]bool
}

type phrase struct {
	text  string // as written
	norm  string
	words []string
}

func newPhrase(s string) phrase {
	n := normalize(s)
	return phrase{text: s, norm: n, words: words(n)}
}

// NewSelector prepares the enabled agents of s. It fails when the standard
// agent is missing or disabled: selection must always have its fallback.
func NewSelector(s *Set) (*Selector, error) {
	if err := s.CheckStandard(); err != nil {
		return nil, err
	}
	sel := &Selector{}
	for _, id := range s.ids {
		p := s.byID[id].p
		if !p.Enabled {
			continue
		}
		a := selAgent{id: p.ID, name: p.Name}
		for _, t := range p.ExampleTasks {
			a.examples = append(a.examples, newPhrase(t))
		}
		for _, t := range p.NotForTasks {
			a.notFor = append(a.notFor, newPhrase(t))
		}
		kw := termSet(nil, p.Name, p.Description)
		termSet(kw, p.ExampleTasks...)
		termSet(kw, p.CoreAbilities...)
		termSet(kw, p.Abilities...)
		a.keywords = kw
		sel.agents = append(sel.agents, a)
	}
	sel.index = map[string][]int32{}
	for i := range sel.agents {
		a := &sel.agents[i]
		if a.id == StandardAgentID {
			sel.standard = a
		}
		seen := map[string]bool{}
		add := func(w string) {
			if !seen[w] {
				seen[w] = true
				sel.index[w] = append(sel.index[w], int32(i))
			}
		}
		for k := range a.keywords {
			add(k)
		}
		stopOnly := false
		for _, ex := range a.examples {
			n := 0
			for _, w := range ex.words {
				if !stopwords[w] {
					add(w)
					n++
				}
			}
			stopOnly = stopOnly || (n == 0 && len(ex.words) > 0)
		}
		if stopOnly {
			sel.always = append(sel.always, int32(i))
		}
	}
	return sel, nil
}

// candidates returns the indices of the agents that may score above 0 for
// a task with terms tt (every agent when the task has no terms).
func (sel *Selector) candidates(tt []string) []int32 {
	if len(tt) == 0 {
		out := make([]int32, len(sel.agents))
		for i := range out {
			out[i] = int32(i)
		}
		return out
	}
	mark := make([]bool, len(sel.agents))
	var out []int32
	take := func(l []int32) {
		for _, i := range l {
			if !mark[i] {
				mark[i] = true
				out = append(out, i)
			}
		}
	}
	for _, t := range tt {
		take(sel.index[t])
	}
	take(sel.always)
	return out
}

// match compares the task with a phrase: exact (normalized), substring
// (one contains the other as a run of whole words), or nothing.
func match(task phrase, p phrase) (exact, sub bool) {
	if p.norm == "" {
		return false, false
	}
	if task.norm == p.norm {
		return true, false
	}
	return false, containsRun(task.words, p.words) || containsRun(p.words, task.words)
}

// Select ranks the enabled agents for task: each gets the best of its
// example tasks (+0.6 for an exact match, +0.4 for a substring match), -0.5
// when the task matches one of its notForTasks, and up to +0.3 for the
// share of the task's terms among its own (name, description, example
// tasks, abilities); the sum is clamped to [0, 1]. Agents above 0 are
// returned by confidence, highest first, ties by agent id; when none is
// above 0 the standard agent is returned alone with confidence 0.5.
func (sel *Selector) Select(task string) (Selection, error) {
	t := newPhrase(task)
	if t.norm == "" {
		return Selection{}, &errkind.InputError{Source: "task", Problem: "the task is empty (or has no letters or digits)", Hint: "describe the task in words"}
	}
	tt := terms(task)
	out := Selection{Task: task, Normalized: t.norm, Terms: tt, Candidates: []Candidate{}}
	type scored struct {
		i     int32 // index in id order: the tie-break
		score int
		raw   int
	}
	var hits []scored
	for _, i := range sel.candidates(tt) {
		score := sel.agents[i].score(t, tt, nil)
		raw := score
		if score > scoreScale {
			score = scoreScale
		}
		if score > 0 {
			hits = append(hits, scored{i, score, raw})
		}
	}
	slices.SortFunc(hits, func(a, b scored) int {
		if a.score != b.score {
			return b.score - a.score
		}
		return int(a.i - b.i)
	})
	out.Candidates = make([]Candidate, 0, len(hits))
	for _, h := range hits {
		a := &sel.agents[h.i]
		out.Candidates = append(out.Candidates, Candidate{AgentID: a.id, Name: a.name, Confidence: thousandths(h.score), Raw: thousandths(h.raw)})
	}
	if len(out.Candidates) == 0 {
		out.Fallback = true
		out.Candidates = append(out.Candidates, Candidate{AgentID: StandardAgentID, Name: sel.standard.name,
			Confidence: thousandths(ScoreFallback), Raw: thousandths(ScoreFallback)})
	}
	return out, nil
}

// Explain is Select with every candidate's reasons, and every enabled agent
// listed (those at 0 after the ranked ones, by id).
func (sel *Selector) Explain(task string) (Selection, error) {
	s, err := sel.Select(task)
	if err != nil {
		return s, err
	}
	t := newPhrase(task)
	ranked := map[string]bool{}
	for i := range s.Candidates {
		ranked[s.Candidates[i].AgentID] = true
	}
	var zero []Candidate
	for i := range sel.agents {
		a := &sel.agents[i]
		var reasons []Reason
		raw := a.score(t, s.Terms, &reasons)
		if raw > scoreScale {
			reasons = append(reasons, Reason{Rule: RuleClamp, Delta: thousandths(scoreScale - raw), Detail: fmt.Sprintf("raw score %s clamped to 1", fmtScore(raw))})
		} else if raw < 0 {
			reasons = append(reasons, Reason{Rule: RuleClamp, Delta: thousandths(-raw), Detail: fmt.Sprintf("raw score %s clamped to 0", fmtScore(raw))})
		}
		if reasons == nil {
			reasons = []Reason{}
		}
		if ranked[a.id] {
			for k := range s.Candidates {
				if s.Candidates[k].AgentID == a.id {
					s.Candidates[k].Reasons = reasons
				}
			}
			continue
		}
		zero = append(zero, Candidate{AgentID: a.id, Name: a.name, Confidence: 0, Raw: thousandths(raw), Reasons: reasons})
	}
	if s.Fallback {
		s.Candidates[0].Reasons = append(s.Candidates[0].Reasons, Reason{Rule: RuleFallback, Delta: thousandths(ScoreFallback),
			Detail: "no agent scored above 0: the standard agent, at 0.5"})
		// The standard agent is the fallback, not also a zero.
		for k := range zero {
			if zero[k].AgentID == StandardAgentID {
				s.Candidates[0].Reasons = append(zero[k].Reasons, s.Candidates[0].Reasons...)
				zero = append(zero[:k], zero[k+1:]...)
				break
			}
		}
	}
	s.Candidates = append(s.Candidates, zero...)
	return s, nil
}

// score returns the agent's raw score in thousandths; with reasons set it
// also records why.
func (a *selAgent) score(t phrase, taskTerms []string, reasons *[]Reason) int {
	score := 0
	best, bestEx := 0, ""
	for _, ex := range a.examples {
		exact, sub := match(t, ex)
		switch {
		case exact && best < ScoreExampleExact:
			best, bestEx = ScoreExampleExact, ex.text
		case sub && best < ScoreExampleSubstring:
			best, bestEx = ScoreExampleSubstring, ex.text
		}
	}
	if best > 0 {
		score += best
		if reasons != nil {
			rule := RuleExampleSubstring
			if best == ScoreExampleExact {
				rule = RuleExampleExact
			}
			*reasons = append(*reasons, Reason{Rule: rule, Delta: thousandths(best), Detail: fmt.Sprintf("example task %q", bestEx)})
		}
	}
	for _, nf := range a.notFor {
		if exact, sub := match(t, nf); exact || sub {
			score += ScoreNotForTask
			if reasons != nil {
				*reasons = append(*reasons, Reason{Rule: RuleNotForTask, Delta: thousandths(ScoreNotForTask), Detail: fmt.Sprintf("not for %q", nf.text)})
			}
			break
		}
	}
	if len(taskTerms) > 0 {
		n := 0
		var matched []string
		for _, tm := range taskTerms {
			if a.keywords[tm] {
				n++
				if reasons != nil {
					matched = append(matched, tm)
				}
			}
		}
		if n > 0 {
			d := ScoreKeywordsMax * n / len(taskTerms)
			score += d
			if reasons != nil {
				*reasons = append(*reasons, Reason{Rule: RuleKeywords, Delta: thousandths(d),
					Detail: fmt.Sprintf("%d of %d task terms: %s", n, len(taskTerms), strings.Join(matched, ", "))})
			}
		}
	}
	return score
}

func thousandths(v int) float64 { return float64(v) / scoreScale }

func fmtScore(v int) string { return fmt.Sprintf("%.3g", thousandths(v)) }
