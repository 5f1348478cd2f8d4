package webui

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The graphs on run pages are drawn from the Mermaid text the CLI prints
// (dome stack plan --format mermaid, dome run graph --format mermaid), so
// the page and the terminal can never disagree: ParseMermaid reads the
// subset of the flowchart syntax dome's renderers write, and Layout places
// it as an SVG drawn on the server (no script, no network).

// Graph is a parsed flowchart.
type Graph struct {
	Direction string
	Nodes     []GraphNode
	Edges     []GraphEdge
	Groups    []GraphGroup // subgraphs, in order (waves)
}

// GraphNode is one node: its id, label, class (":::rejected") and group.
type GraphNode struct {
	ID, Label, Class string
	Group            int // index into Groups, -1 for none
}

// GraphEdge links two nodes; Dotted is an overlap or feedback link.
type GraphEdge struct {
	From, To string
	Dotted   bool
	Arrow    bool
	Label    string
}

// GraphGroup is a subgraph.
type GraphGroup struct{ ID, Label string }

// MaxGraphLines bounds the text ParseMermaid reads.
const MaxGraphLines = 200000

// ParseMermaid reads a flowchart written by dome's renderers. Anything
// outside that subset is an error naming the line.
func ParseMermaid(src string) (*Graph, error) {
	lines := strings.Split(strings.TrimRight(src, "\n"), "\n")
	if len(lines) > MaxGraphLines {
		return nil, fmt.Errorf("graph: %d lines, over the limit of %d", len(lines), MaxGraphLines)
	}
	g := &Graph{}
	index := map[string]int{}
	group := -1
	node := func(id string) (*GraphNode, error) {
		if !validGraphID(id) {
			return nil, fmt.Errorf("bad node id %q", id)
		}
		if i, ok := index[id]; ok {
			return &g.Nodes[i], nil
		}
		index[id] = len(g.Nodes)
		g.Nodes = append(g.Nodes, GraphNode{ID: id, Label: id, Group: group})
		return &g.Nodes[len(g.Nodes)-1], nil
	}
	for i, raw := range lines {
		line := strings.TrimSpace(raw)
		bad := func(format string, a ...any) error {
			return fmt.Errorf("graph line %d: %s", i+1, fmt.Sprintf(format, a...))
		}
		switch {
		case line == "":
			continue
		case i == 0 || g.Direction == "" && strings.HasPrefix(line, "flowchart "):
			dir, ok := strings.CutPrefix(line, "flowchart ")
			if !ok || (dir != "TD" && dir != "TB" && dir != "LR") {
				return nil, bad("want \"flowchart TD\", \"flowchart TB\" or \"flowchart LR\" first")
			}
			g.Direction = dir
		case strings.HasPrefix(line, "classDef "):
		case line == "end":
			if group < 0 {
				return nil, bad("end without subgraph")
			}
			group = -1
		case strings.HasPrefix(line, "subgraph "):
			if group >= 0 {
				return nil, bad("nested subgraph")
			}
			id, label, rest, err := splitNodeDecl(strings.TrimPrefix(line, "subgraph "))
			if err != nil || rest != "" {
				return nil, bad("subgraph: %v", orText(err, "trailing text "+strconv.Quote(rest)))
			}
			g.Groups = append(g.Groups, GraphGroup{ID: id, Label: label})
			group = len(g.Groups) - 1
		case strings.Contains(line, " --> "):
			a, b, _ := strings.Cut(line, " --> ")
			if err := g.edge(node, strings.TrimSpace(a), strings.TrimSpace(b), false, true, ""); err != nil {
				return nil, bad("%v", err)
			}
		case strings.Contains(line, " -. "):
			a, rest, _ := strings.Cut(line, " -. ")
			arrow := strings.Contains(rest, " .-> ")
			sep := " .- "
			if arrow {
				sep = " .-> "
			}
			label, b, ok := strings.Cut(rest, sep)
			if !ok {
				return nil, bad("dotted link without %q", strings.TrimSpace(sep))
			}
			if err := g.edge(node, strings.TrimSpace(a), strings.TrimSpace(b), true, arrow, unquoteLabel(strings.TrimSpace(label))); err != nil {
				return nil, bad("%v", err)
			}
		default:
			id, label, rest, err := splitNodeDecl(line)
			if err != nil {
				return nil, bad("%v", err)
			}
			n, err := node(id)
			if err != nil {
				return nil, bad("%v", err)
			}
			n.Label, n.Group = label, group
			if rest != "" {
				cls, ok := strings.CutPrefix(rest, ":::")
				if !ok || !validGraphID(cls) {
					return nil, bad("unexpected %q after the node", rest)
				}
				n.Class = cls
			}
		}
	}
	if g.Direction == "" {
		return nil, fmt.Errorf("graph: empty")
	}
	if group >= 0 {
		return nil, fmt.Errorf("graph: subgraph %s has no end", g.Groups[group].ID)
	}
	return g, nil
}

func orText(err error, s string) string {
	if err != nil {
		return err.Error()
	}
	return s
}

func (g *Graph) edge(node func(string) (*GraphNode, error), a, b string, dotted, arrow bool, label string) error {
	if _, err := node(a); err != nil {
		return err
	}
	if _, err := node(b); err != nil {
		return err
	}
	g.Edges = append(g.Edges, GraphEdge{From: a, To: b, Dotted: dotted, Arrow: arrow, Label: label})
	return nil
}

// splitNodeDecl splits `id["label"]rest`.
func splitNodeDecl(s string) (id, label, rest string, err error) {
	open := strings.IndexByte(s, '[')
	if open <= 0 || !strings.HasSuffix(s, "]") && !strings.Contains(s, "]:::") {
		return "", "", "", fmt.Errorf("want id[\"label\"], got %q", s)
	}
	id = s[:open]
	if !validGraphID(id) {
		return "", "", "", fmt.Errorf("bad node id %q", id)
	}
	body := s[open+1:]
	end := strings.LastIndex(body, "]")
	if end < 0 {
		return "", "", "", fmt.Errorf("unclosed label in %q", s)
	}
	return id, unquoteLabel(body[:end]), body[end+1:], nil
}

// unquoteLabel reads a label as dome writes it: a Go-quoted string (the
// stack renderer) or a double-quoted Mermaid string with #quot;-style
// entities (the workflow renderer).
func unquoteLabel(s string) string {
	if u, err := strconv.Unquote(s); err == nil && strings.HasPrefix(s, `"`) {
		s = u
	} else if len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"' {
		s = s[1 : len(s)-1]
	}
	return strings.NewReplacer("#quot;", `"`, "#lt;", "<", "#gt;", ">", "#amp;", "&", "#35;", "#").Replace(s)
}

func validGraphID(s string) bool {
	if s == "" || len(s) > 128 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// --- layout

// Drawing is a laid-out graph, in SVG user units.
type Drawing struct {
	Width, Height int
	Boxes         []Box
	Lines         []Line
	Bands         []Band // one per group (wave), behind the boxes
}

// Box is a node's rectangle; Text is its label cut to fit, Full the whole label.
type Box struct {
	X, Y, W, H int
	TX, TY     int
	Text, Full string
	Class      string
}

// Line is an edge: a straight segment or, for dotted links, a quadratic curve.
type Line struct {
	X1, Y1, X2, Y2, CX, CY int
	LX, LY                 int
	Curve, Dotted, Arrow   bool
	Label                  string
}

// Band is a group's area with its label.
type Band struct {
	X, Y, W, H int
	Label      string
}

// MaxDrawnNodes bounds what Layout draws; a larger graph is shown as its
// Mermaid and DOT text only.
const MaxDrawnNodes = 5000

const (
	boxH     = 28
	rowGap   = 26
	colGap   = 18
	margin   = 12
	charW    = 7
	maxChars = 44
)

// Layout places a graph top-down: a group (wave) per row band when the
// graph has groups, else rows by the longest path of solid edges; nodes no
// solid edge touches (rejected proposals) stand apart in a column on the right.
func Layout(g *Graph) (*Drawing, error) {
	if len(g.Nodes) > MaxDrawnNodes {
		return nil, fmt.Errorf("%d nodes: over the %d drawn on a page", len(g.Nodes), MaxDrawnNodes)
	}
	n := len(g.Nodes)
	index := make(map[string]int, n)
	for i, nd := range g.Nodes {
		index[nd.ID] = i
	}
	row := make([]int, n)
	solid := make([]bool, n)
	if len(g.Groups) > 0 {
		rowOfGroup := 0
		for i, nd := range g.Nodes {
			if nd.Group >= 0 {
				row[i] = nd.Group
				if nd.Group+1 > rowOfGroup {
					rowOfGroup = nd.Group + 1
				}
				solid[i] = true
			}
		}
		for i, nd := range g.Nodes {
			if nd.Group < 0 {
				row[i] = rowOfGroup
			}
		}
	} else {
		longestPath(g, index, row, solid)
	}
	// Rows, then the apart column.
	var rows [][]int
	var apart []int
	for i := range g.Nodes {
		if !solid[i] && n > 1 {
			apart = append(apart, i)
			continue
		}
		for len(rows) <= row[i] {
			rows = append(rows, nil)
		}
		rows[row[i]] = append(rows[row[i]], i)
	}
	d := &Drawing{}
	boxes := make([]Box, n)
	y := margin
	maxX := margin
	for r, ids := range rows {
		x := margin
		for _, i := range ids {
			b := makeBox(g.Nodes[i])
			b.X, b.Y = x, y
			b.TX, b.TY = x+b.W/2, y+boxH/2+4
			boxes[i] = b
			x += b.W + colGap
		}
		if x > maxX {
			maxX = x
		}
		if len(g.Groups) > 0 && r < len(g.Groups) {
			d.Bands = append(d.Bands, Band{X: 2, Y: y - rowGap/2 + 2, W: 0, H: boxH + rowGap - 4, Label: g.Groups[r].Label})
		}
		y += boxH + rowGap
	}
	ax, ay := maxX+colGap, margin
	for _, i := range apart {
		b := makeBox(g.Nodes[i])
		b.X, b.Y = ax, ay
		b.TX, b.TY = ax+b.W/2, ay+boxH/2+4
		boxes[i] = b
		ay += boxH + 10
		if ax+b.W > maxX {
			maxX = ax + b.W
		}
	}
	if ay > y {
		y = ay
	}
	d.Width, d.Height = maxX+margin, y+margin
	for i := range d.Bands {
		d.Bands[i].W = d.Width - 4
	}
	d.Boxes = boxes
	for _, e := range g.Edges {
		a, b := boxes[index[e.From]], boxes[index[e.To]]
		l := Line{Dotted: e.Dotted, Arrow: e.Arrow, Label: e.Label}
		if !e.Dotted {
			l.X1, l.Y1 = a.X+a.W/2, a.Y+a.H
			l.X2, l.Y2 = b.X+b.W/2, b.Y
			if b.Y <= a.Y { // back edge: from the side
				l.X1, l.Y1, l.X2, l.Y2 = a.X+a.W, a.Y+a.H/2, b.X+b.W, b.Y+b.H/2
				l.Curve = true
				l.CX, l.CY = max(l.X1, l.X2)+40, (l.Y1+l.Y2)/2
			}
		} else {
			l.X1, l.Y1 = a.X+a.W, a.Y+a.H/2
			l.X2, l.Y2 = b.X+b.W, b.Y+b.H/2
			if b.X > a.X+a.W { // side by side
				l.X1, l.X2 = a.X+a.W, b.X
				l.Y1, l.Y2 = a.Y+a.H/2, b.Y+b.H/2
			}
			l.Curve = true
			l.CX, l.CY = max(l.X1, l.X2)+30+abs(l.Y2-l.Y1)/6, (l.Y1+l.Y2)/2
			l.LX, l.LY = (l.X1+2*l.CX+l.X2)/4, (l.Y1+2*l.CY+l.Y2)/4
		}
		if l.Curve && l.CX+margin > d.Width {
			d.Width = l.CX + margin
		}
		d.Lines = append(d.Lines, l)
	}
	return d, nil
}

// longestPath gives each node touched by a solid edge the row of its
// longest path from a source (Kahn's order; nodes left in a cycle go last).
func longestPath(g *Graph, index map[string]int, row []int, solid []bool) {
	n := len(g.Nodes)
	succ := make([][]int, n)
	indeg := make([]int, n)
	for _, e := range g.Edges {
		if e.Dotted {
			continue
		}
		a, b := index[e.From], index[e.To]
		succ[a] = append(succ[a], b)
		indeg[b]++
		solid[a], solid[b] = true, true
	}
	queue := make([]int, 0, n)
	for i := 0; i < n; i++ {
		if indeg[i] == 0 {
			queue = append(queue, i)
		}
	}
	done := 0
	for len(queue) > 0 {
		u := queue[0]
		queue = queue[1:]
		done++
		for _, v := range succ[u] {
			if row[u]+1 > row[v] {
				row[v] = row[u] + 1
			}
			if indeg[v]--; indeg[v] == 0 {
				queue = append(queue, v)
			}
		}
	}
	if done < n {
		last := 0
		for i := range row {
			last = max(last, row[i])
		}
		for i := 0; i < n; i++ {
			if indeg[i] > 0 {
				row[i] = last + 1
			}
		}
	}
}

func makeBox(nd GraphNode) Box {
	text := nd.Label
	if utf8.RuneCountInString(text) > maxChars {
		text = string([]rune(text)[:maxChars-1]) + "…"
	}
	w := utf8.RuneCountInString(text)*charW + 20
	if w < 60 {
		w = 60
	}
	return Box{W: w, H: boxH, Text: text, Full: nd.Label, Class: nd.Class}
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
