package stack

import (
	"bytes"
	"math/rand"
	"os"
	"strings"
	"testing"
	"time"
)

// planProposals is a set of proposals exercising every ordering rule.
func planProposals(f *fixture) map[string][]byte {
	main := baseFiles()["src/main.go"]
	lines := strings.SplitAfter(main, "\n")
	editLine := func(i int, s string) string {
		ls := append([]string{}, lines...)
		ls[i] = s
		return strings.Join(ls, "")
	}
	return map[string][]byte{
		// independent, low risk
		"a-docs":   f.propose(proposeArgs{id: "a-docs", changes: map[string]string{"docs/guide.md": "guide\nmore\n"}, intents: []string{"docs"}}),
		"b-readme": f.propose(proposeArgs{id: "b-readme", changes: map[string]string{"README.md": "# demo\n\nintro\n\nmore\n"}}),
		// two overlapping edits of nearby lines of main.go that both apply
		"c-main-top":  f.propose(proposeArgs{id: "c-main-top", changes: map[string]string{"src/main.go": editLine(4, "changed top\n")}}),
		"d-main-near": f.propose(proposeArgs{id: "d-main-near", changes: map[string]string{"src/main.go": editLine(7, "changed near\n")}}),
		// conflicts with c-main-top: the same line, edited differently
		"e-main-clash": f.propose(proposeArgs{id: "e-main-clash", changes: map[string]string{"src/main.go": editLine(4, "clash\n")}}),
		// a dependency change: last
		"f-deps": f.propose(proposeArgs{id: "f-deps", intents: []string{"deps"}, changes: map[string]string{"go.mod": "module demo\n\ngo 1.26\n\nrequire x v1\n"}}),
		// critical path: first
		"g-util": f.propose(proposeArgs{id: "g-util", constraints: DeclaredConstraints{CriticalPath: true}, changes: map[string]string{"src/util.go": "package src\n\nfunc A() int { return 10 }\n\nfunc B() int { return 2 }\n"}}),
		// the same change as a-docs under another id: redundant
		"h-docs-again": f.propose(proposeArgs{id: "h-docs-again", changes: map[string]string{"docs/guide.md": "guide\nmore\n"}, intents: []string{"docs"}}),
	}
}

func submitAll(t *testing.T, f *fixture, docs map[string][]byte, order []string) {
	t.Helper()
	r := f.open()
	defer r.Close()
	for i, id := range order {
		o, err := r.Submit(f.repo, id, docs[id], SubmitOptions{At: ts0.Add(time.Duration(i) * time.Second)})
		if err != nil || o.Outcome != OutcomeAccepted {
			t.Fatalf("submit %s: %+v %v", id, o, err)
		}
	}
}

func TestPlan_OrderAndRejections(t *testing.T) {
	f := newFixture(t)
	docs := planProposals(f)
	submitAll(t, f, docs, sortedKeys(docs))
	r := f.open()
	res, err := r.Plan(f.repo, PlanOptions{At: ts0, Producer: "test"})
	r.Close()
	if err != nil {
		t.Fatal(err)
	}
	var order []string
	for _, o := range res.Plan.OrderedProposals {
		order = append(order, o.ProposalID+":"+o.PriorityGroup)
	}
	want := "g-util:critical_path a-docs:independent b-readme:independent c-main-top:overlapping d-main-near:overlapping f-deps:dependencies"
	if got := strings.Join(order, " "); got != want {
		t.Errorf("order\n got %s\nwant %s", got, want)
	}
	var rej []string
	for _, x := range res.Plan.Rejected {
		rej = append(rej, x.ProposalID+":"+x.ReasonClass+"/"+x.ReasonCode)
	}
	if got := strings.Join(rej, " "); got != "h-docs-again:redundant/duplicate_change e-main-clash:conflict/conflict" {
		t.Errorf("rejected: %s", got)
	}
	// The conflict was retried (reorder) before it was dropped.
	var actions []string
	for _, c := range res.Conflicts {
		actions = append(actions, c.ProposalID+":"+c.Action)
		if strings.Join(c.Against, ",") != "c-main-top,d-main-near" || c.ConflictFingerprint == "" || len(c.TieBreakOrder) != 3 {
			t.Errorf("conflict decision: %+v", c)
		}
	}
	if got := strings.Join(actions, " "); got != "e-main-clash:reorder e-main-clash:drop" {
		t.Errorf("conflict actions: %s", got)
	}
	// Overlap graph: hunk edges between the three main.go edits.
	var edges []string
	for _, e := range res.Plan.OverlapGraph.Edges {
		edges = append(edges, e.A+"-"+e.B+":"+e.Level)
	}
	if got := strings.Join(edges, " "); got != "c-main-top-d-main-near:hunk c-main-top-e-main-clash:hunk d-main-near-e-main-clash:hunk" {
		t.Errorf("edges: %s", got)
	}
	// The plan, its decisions and the state agree; replay holds.
	st, _, err := LoadState(f.layout)
	if err != nil {
		t.Fatal(err)
	}
	if st.Plan.StackPlanID != res.Plan.StackPlanID || st.Proposals["e-main-clash"].Status != StatusRejected || st.Proposals["g-util"].Status != StatusPlanned {
		t.Errorf("state after plan: %+v", st.Plan)
	}
	for _, d := range st.Plan.Decisions {
		if _, err := os.Stat(f.layout.Abs(d.Path)); err != nil {
			t.Errorf("decision %s: %v", d.ID, err)
		}
	}
	// Planning again with nothing new records nothing.
	r = f.open()
	again, err := r.Plan(f.repo, PlanOptions{At: ts0.Add(time.Hour), Producer: "test"})
	r.Close()
	if err != nil || !again.Unchanged || !bytes.Equal(again.Doc, res.Doc) {
		t.Fatalf("second plan: unchanged=%v err=%v", again.Unchanged, err)
	}
	if res, err := Replay(f.layout); err != nil || !res.Equal {
		t.Fatalf("replay: %+v %v", res, err)
	}
}

// TestPlan_SubmissionOrderDoesNotMatter plans the same proposals submitted
// in shuffled orders, in separate runs of identical repositories: the plan
// documents are byte for byte the same.
func TestPlan_SubmissionOrderDoesNotMatter(t *testing.T) {
	var first []byte
	rng := rand.New(rand.NewSource(7))
	for i := 0; i < 3; i++ {
		f := newFixture(t)
		docs := planProposals(f)
		order := sortedKeys(docs)
		rng.Shuffle(len(order), func(a, b int) { order[a], order[b] = order[b], order[a] })
		submitAll(t, f, docs, order)
		r := f.open()
		res, err := r.Plan(f.repo, PlanOptions{At: ts0, Producer: "test"})
		r.Close()
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			first = res.Doc
			continue
		}
		if !bytes.Equal(first, res.Doc) {
			t.Fatalf("submission order %v changed the plan:\n%s\n%s", order, first, res.Doc)
		}
	}
}

func TestPlan_TieBreaks(t *testing.T) {
	mk := func(id, created, digest string) *candidate {
		return &candidate{id: id, lp: &LoadedProposal{State: &ProposalState{ProposalID: id, CreatedAt: created, DiffDigest: digest}}}
	}
	cases := []struct {
		a, b *candidate
		less bool
	}{
		{mk("a", "2026-01-02T00:00:00Z", "sha256:9"), mk("b", "2026-01-01T00:00:00Z", "sha256:1"), true}, // proposal_id first
		{mk("a", "2026-01-01T00:00:00Z", "sha256:9"), mk("a", "2026-01-02T00:00:00Z", "sha256:1"), true}, // then created_at
		{mk("a", "2026-01-01T00:00:00Z", "sha256:1"), mk("a", "2026-01-01T00:00:00Z", "sha256:2"), true}, // then diff_digest
		{mk("a", "2026-01-01T00:00:00Z", "sha256:2"), mk("a", "2026-01-01T00:00:00Z", "sha256:1"), false},
	}
	for i, tc := range cases {
		if got := tieLess(tc.a, tc.b); got != tc.less {
			t.Errorf("case %d: tieLess = %v", i, got)
		}
	}
}

func TestRender(t *testing.T) {
	p := StackPlan{StackPlanID: "plan-1", StartRef: strings.Repeat("a", 40),
		OrderedProposals: []PlannedProposal{{Position: 1, ProposalID: "x", PriorityGroup: GroupIndependent}, {Position: 2, ProposalID: "y", PriorityGroup: GroupOverlapping}},
		Rejected:         []Rejected{{ProposalID: "z", ReasonClass: ClassConflict, ReasonCode: ReasonConflict}},
		OverlapGraph:     OverlapGraph{Nodes: []string{"x", "y"}, Edges: []OverlapEdge{{A: "y", B: "z", Level: "hunk"}}}}
	m := RenderMermaid(p)
	for _, want := range []string{"n1 --> n2", `n3["z rejected: conflict/conflict"]:::rejected`, "n2 -. hunk .- n3"} {
		if !strings.Contains(m, want) {
			t.Errorf("mermaid lacks %q:\n%s", want, m)
		}
	}
	d := RenderDot(p)
	for _, want := range []string{"n1 -> n2;", "n2 -> n3 [dir=none, style=dotted"} {
		if !strings.Contains(d, want) {
			t.Errorf("dot lacks %q:\n%s", want, d)
		}
	}
}
