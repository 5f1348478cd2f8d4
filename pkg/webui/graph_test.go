package webui

import (
	"strings"
	"testing"

	"github.com/dome-registry/dome/pkg/stack"
	"github.com/dome-registry/dome/pkg/workflow"
)

func TestParseMermaid_WhatDomePrints(t *testing.T) {
	plan := stack.StackPlan{StackPlanID: "plan-1", StartRef: strings.Repeat("a", 40),
		OrderedProposals: []stack.PlannedProposal{{Position: 1, ProposalID: "w2-bye", PriorityGroup: "independent"}, {Position: 2, ProposalID: `w1 "q" <x>`, PriorityGroup: "overlapping"}},
		Rejected:         []stack.Rejected{{ProposalID: "w3", ReasonClass: "conflict", ReasonCode: "conflict"}},
		OverlapGraph:     stack.OverlapGraph{Edges: []stack.OverlapEdge{{A: `w1 "q" <x>`, B: "w3", Level: "hunk"}}}}
	g, err := ParseMermaid(stack.RenderMermaid(plan))
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Nodes) != 4 || len(g.Edges) != 3 || g.Nodes[0].Label != "start aaaaaaaaaaaa" {
		t.Fatalf("stack plan: %+v", g)
	}
	var rejected, quoted bool
	for _, n := range g.Nodes {
		rejected = rejected || n.Class == "rejected" && strings.Contains(n.Label, "conflict/conflict")
		quoted = quoted || strings.Contains(n.Label, `w1 "q" <x>`)
	}
	if !rejected || !quoted {
		t.Errorf("labels: %+v", g.Nodes)
	}
	d, err := Layout(g)
	if err != nil {
		t.Fatal(err)
	}
	if d.Width <= 0 || d.Height <= 0 || len(d.Boxes) != 4 || len(d.Lines) != 3 {
		t.Errorf("layout: %+v", d)
	}

	wg, err := workflow.Build(workflow.Spec{Nodes: []workflow.Node{{ID: "a"}, {ID: "b", Deps: []string{"a"}, Group: "g<1>"}, {ID: "c", Deps: []string{"a"}}, {ID: "d", Deps: []string{"b", "c"}}}})
	if err != nil {
		t.Fatal(err)
	}
	g, err = ParseMermaid(workflow.RenderMermaid(wg))
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Groups) != 3 || len(g.Nodes) != 4 || len(g.Edges) != 4 || g.Nodes[1].Label != "b (g<1>)" || g.Nodes[1].Group != 1 {
		t.Fatalf("work graph: %+v", g)
	}
	d, err = Layout(g)
	if err != nil || len(d.Bands) != 3 {
		t.Fatalf("layout: %v %+v", err, d)
	}
	if d.Boxes[0].Y >= d.Boxes[1].Y || d.Boxes[1].Y != d.Boxes[2].Y || d.Boxes[3].Y <= d.Boxes[1].Y {
		t.Errorf("waves are not rows: %+v", d.Boxes)
	}
}

func TestParseMermaid_Refuses(t *testing.T) {
	for _, src := range []string{
		"",
		"graph TD\n",
		"flowchart TD\n  a[\"x\"] --> \n",
		"flowchart TD\n  a b c\n",
		"flowchart TD\n  <script>[\"x\"]\n",
		"flowchart TD\n  a[\"x\"]:::<b>\n",
		"flowchart TD\n  subgraph w[\"w\"]\n",
		"flowchart TD\n  end\n",
		"flowchart TD\n  a -. x b\n",
	} {
		if _, err := ParseMermaid(src); err == nil {
			t.Errorf("%q: no error", src)
		}
	}
}

func FuzzParseMermaid(f *testing.F) {
	f.Add("flowchart TD\n  start[\"start\"]\n  n1[\"1. a (x)\"]\n  start --> n1\n  n2[\"b\"]:::rejected\n  n1 -. hunk .- n2\n  classDef rejected fill:#fdd\n")
	f.Add("flowchart TD\n  subgraph wave1[\"wave 1\"]\n    n1[\"a\"]\n  end\n  subgraph wave2[\"wave 2\"]\n    n2[\"b #quot;x#quot;\"]\n  end\n  n1 --> n2\n  n2 -. \"loop l, at most 3\" .-> n1\n")
	f.Add("flowchart LR\n  a --> b\n  b --> a\n")
	f.Fuzz(func(t *testing.T, src string) {
		g, err := ParseMermaid(src)
		if err != nil {
			return
		}
		d, err := Layout(g)
		if err != nil {
			return
		}
		if len(d.Boxes) != len(g.Nodes) || len(d.Lines) != len(g.Edges) {
			t.Fatalf("%d boxes for %d nodes, %d lines for %d edges", len(d.Boxes), len(g.Nodes), len(d.Lines), len(g.Edges))
		}
		for _, b := range d.Boxes {
			if b.X < 0 || b.Y < 0 || b.X+b.W > d.Width || b.Y+b.H > d.Height {
				t.Fatalf("box %+v outside %dx%d", b, d.Width, d.Height)
			}
		}
	})
}
