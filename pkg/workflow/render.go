package workflow

import (
	"fmt"
	"strings"
)

// RenderMermaid draws the graph as a Mermaid flowchart: one subgraph per
// topological wave, an arrow from each dependency to its dependent, and a
// loop's feedback edges dotted with the loop's bound.
func RenderMermaid(g *Graph) string {
	var b strings.Builder
	b.WriteString("flowchart TD\n")
	for w, level := range g.Levels() {
		fmt.Fprintf(&b, "  subgraph wave%d[\"wave %d\"]\n", w+1, w+1)
		for _, i := range level {
			fmt.Fprintf(&b, "    n%d[\"%s\"]\n", i+1, mermaidText(g.label(i)))
		}
		b.WriteString("  end\n")
	}
	g.edges(func(from, to int, feedback string) {
		if feedback != "" {
			fmt.Fprintf(&b, "  n%d -. \"%s\" .-> n%d\n", from+1, mermaidText(feedback), to+1)
			return
		}
		fmt.Fprintf(&b, "  n%d --> n%d\n", from+1, to+1)
	})
	return b.String()
}

// RenderDot draws the graph in Graphviz DOT with the same conventions: one
// cluster per wave, feedback edges dashed.
func RenderDot(g *Graph) string {
	var b strings.Builder
	b.WriteString("digraph work {\n  rankdir=TB;\n  node [shape=box];\n")
	for w, level := range g.Levels() {
		fmt.Fprintf(&b, "  subgraph cluster_wave%d {\n    label=\"wave %d\";\n", w+1, w+1)
		for _, i := range level {
			fmt.Fprintf(&b, "    n%d [label=%s];\n", i+1, dotQuote(g.label(i)))
		}
		b.WriteString("  }\n")
	}
	g.edges(func(from, to int, feedback string) {
		if feedback != "" {
			fmt.Fprintf(&b, "  n%d -> n%d [style=dashed, label=%s, constraint=false];\n", from+1, to+1, dotQuote(feedback))
			return
		}
		fmt.Fprintf(&b, "  n%d -> n%d;\n", from+1, to+1)
	})
	b.WriteString("}\n")
	return b.String()
}

func (g *Graph) label(i int) string {
	n := g.nodes[i]
	if n.Group != "" {
		return n.ID + " (" + n.Group + ")"
	}
	return n.ID
}

// edges calls f for every dependency edge (dependency -> dependent) in
// graph order; a loop's edge to an earlier node is a feedback edge, labelled.
func (g *Graph) edges(f func(from, to int, feedback string)) {
	for i := range g.nodes {
		for _, d := range g.deps[i] {
			fb := ""
			if c := g.comps[g.comp[i]]; c.loop >= 0 && g.comp[d] == g.comp[i] {
				if l := g.loops[c.loop]; l.pos[d] > l.pos[i] {
					fb = fmt.Sprintf("loop %s, at most %d", l.id, l.max)
				}
			}
			f(d, i, fb)
		}
	}
}

// mermaidText escapes text for a quoted Mermaid label.
func mermaidText(s string) string {
	r := strings.NewReplacer(`"`, "#quot;", "<", "#lt;", ">", "#gt;", "\n", " ")
	return r.Replace(s)
}

// dotQuote quotes s as a DOT string.
func dotQuote(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)
	return `"` + r.Replace(s) + `"`
}
