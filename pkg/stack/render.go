package stack

import (
	"fmt"
	"strings"
)

// RenderMermaid draws a plan as a Mermaid flowchart: the chosen order as a
// chain of solid arrows between layers, hunk-level overlaps as dotted
// links, file-level overlaps as dotted links labelled "file", and rejected
// proposals apart with their reason codes.
func RenderMermaid(p StackPlan) string {
	var b strings.Builder
	fmt.Fprintf(&b, "flowchart TD\n")
	fmt.Fprintf(&b, "  start[%q]\n", "start "+short(p.StartRef))
	ids := nodeIDs(p)
	prev := "start"
	for _, o := range p.OrderedProposals {
		n := ids[o.ProposalID]
		fmt.Fprintf(&b, "  %s[%q]\n", n, fmt.Sprintf("%d. %s (%s)", o.Position, o.ProposalID, o.PriorityGroup))
		fmt.Fprintf(&b, "  %s --> %s\n", prev, n)
		prev = n
	}
	for _, r := range p.Rejected {
		n := ids[r.ProposalID]
		fmt.Fprintf(&b, "  %s[%q]:::rejected\n", n, fmt.Sprintf("%s rejected: %s/%s", r.ProposalID, r.ReasonClass, r.ReasonCode))
	}
	for _, e := range p.OverlapGraph.Edges {
		label := "hunk"
		if e.Level == "file" {
			label = "file"
		}
		fmt.Fprintf(&b, "  %s -. %s .- %s\n", ids[e.A], label, ids[e.B])
	}
	fmt.Fprintf(&b, "  classDef rejected fill:#fdd,stroke:#c00\n")
	return b.String()
}

// RenderDot draws a plan in Graphviz DOT, with the same conventions.
func RenderDot(p StackPlan) string {
	var b strings.Builder
	fmt.Fprintf(&b, "digraph %q {\n  rankdir=TB;\n  node [shape=box];\n", p.StackPlanID)
	fmt.Fprintf(&b, "  start [label=%q, shape=ellipse];\n", "start "+short(p.StartRef))
	ids := nodeIDs(p)
	prev := "start"
	for _, o := range p.OrderedProposals {
		n := ids[o.ProposalID]
		fmt.Fprintf(&b, "  %s [label=%q];\n", n, fmt.Sprintf("%d. %s\\n%s", o.Position, o.ProposalID, o.PriorityGroup))
		fmt.Fprintf(&b, "  %s -> %s;\n", prev, n)
		prev = n
	}
	for _, r := range p.Rejected {
		fmt.Fprintf(&b, "  %s [label=%q, color=red, style=dashed];\n", ids[r.ProposalID], fmt.Sprintf("%s\\nrejected: %s/%s", r.ProposalID, r.ReasonClass, r.ReasonCode))
	}
	for _, e := range p.OverlapGraph.Edges {
		style := "dotted"
		if e.Level == "file" {
			style = "dashed"
		}
		fmt.Fprintf(&b, "  %s -> %s [dir=none, style=%s, label=%q, constraint=false];\n", ids[e.A], ids[e.B], style, e.Level)
	}
	b.WriteString("}\n")
	return b.String()
}

// nodeIDs gives every proposal of a plan a diagram-safe node id (n1, n2, ...
// in sorted proposal id order).
func nodeIDs(p StackPlan) map[string]string {
	seen := map[string]bool{}
	var all []string
	add := func(id string) {
		if !seen[id] {
			seen[id] = true
			all = append(all, id)
		}
	}
	for _, o := range p.OrderedProposals {
		add(o.ProposalID)
	}
	for _, r := range p.Rejected {
		add(r.ProposalID)
	}
	for _, n := range p.OverlapGraph.Nodes {
		add(n)
	}
	sortStrings(all)
	out := map[string]string{}
	for i, id := range all {
		out[id] = fmt.Sprintf("n%d", i+1)
	}
	return out
}

func short(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}
