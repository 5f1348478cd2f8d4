package workflow

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// MaxLoopIterations bounds Loop.MaxIterations: a declared cycle runs at most
// this many times.
const MaxLoopIterations = 1000

// Node is one vertex of a workflow graph: a task of a work queue or a step
// of an agent workflow.
type Node struct {
	ID     string   // unique, not empty
	Deps   []string // ids of the nodes that must succeed before this one starts
	Group  string   // priority group, the first tie-break ("" ranks after every named group)
	Digest string   // task spec digest, the third tie-break (any stable string)
	// Class groups nodes whose attempts share a confidence record (for
	// example the container or runtime card that runs them).
	Class string
	// Needs are capacity keys an attempt holds while it runs; keys that
	// Policy.Capacity bounds are scarce and raise the node's rarity.
	Needs []string
	// Risk is a penalty in permille (0..1000): broad changes, lockfiles,
	// admin capabilities. Higher risk runs later.
	Risk int
	// Compensable says the node has a compensating step, run by the
	// rollback strategy when a later node fails.
	Compensable bool
}

// Loop declares that a cycle is intended: its nodes run in iterations, in
// the order listed, at most MaxIterations times. A dependency on a later
// node of the list reads that node's result from the previous iteration.
type Loop struct {
	ID            string   // a name; defaults to the first node's id
	Nodes         []string // exactly the nodes of one cycle, in iteration order
	MaxIterations int      // 1..MaxLoopIterations
}

// Spec is the input of Build.
type Spec struct {
	Nodes []Node
	Loops []Loop
	// Groups orders the priority groups (the first wins ties); when empty,
	// groups rank by name. Unnamed nodes rank after every named group.
	Groups []string
	// Sequential makes every node depend on the node before it, so nodes
	// run one after the other in array order (agent workflow steps). A
	// dependency on a later node is then refused.
	Sequential bool
}

// Problem codes of an IntegrityError.
const (
	ProblemEmptyID          = "empty_node_id"
	ProblemDuplicateID      = "duplicate_node_id"
	ProblemUnknownDep       = "unknown_dependency"
	ProblemSelfDep          = "self_dependency"
	ProblemDuplicateDep     = "duplicate_dependency"
	ProblemForwardDep       = "forward_dependency"
	ProblemCycle            = "cycle"
	ProblemUnknownGroup     = "unknown_priority_group"
	ProblemDuplicateGroup   = "duplicate_priority_group"
	ProblemLoopUnknownNode  = "loop_unknown_node"
	ProblemLoopNotACycle    = "loop_not_a_cycle"
	ProblemLoopUnbounded    = "loop_unbounded"
	ProblemLoopOverlap      = "loop_overlap"
	ProblemLoopInSequential = "loop_in_sequential_workflow"
	ProblemBadRisk          = "risk_out_of_range"
)

// Problem is one integrity failure. Nodes names the nodes involved; for a
// cycle it is the path, with its first node repeated at the end.
type Problem struct {
	Code     string   `json:"code"`
	Nodes    []string `json:"nodes"`
	Node     int      `json:"node"`           // index in Spec.Nodes where it is reported, or -1
	Dep      int      `json:"dep"`            // index in that node's Deps, or -1
	LoopIdx  int      `json:"loop"`           // index in Spec.Loops, or -1
	GroupIdx int      `json:"group"`          // index in Spec.Groups, or -1
	Message  string   `json:"message"`        // a sentence naming the nodes
	Path     string   `json:"path,omitempty"` // a cycle's path "a -> b -> a"
}

// IntegrityError lists every problem Build found, in a stable order.
type IntegrityError struct {
	Problems []Problem
}

func (e *IntegrityError) Error() string {
	if len(e.Problems) == 1 {
		return e.Problems[0].Message
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d graph problems: ", len(e.Problems))
	for i, p := range e.Problems {
		if i == 5 {
			fmt.Fprintf(&b, "; and %d more", len(e.Problems)-5)
			break
		}
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(p.Message)
	}
	return b.String()
}

// Graph is a checked workflow graph with its static scores. It is immutable
// and safe for concurrent readers.
type Graph struct {
	nodes     []Node
	index     map[string]int
	deps      [][]int // sorted, unique; implicit sequential edges included
	rdeps     [][]int // dependents, sorted
	comp      []int   // component (in topological order) of each node
	comps     []component
	loops     []loopInfo
	level     []int
	critical  []int
	desc      []int
	groupRank []int
	groups    []string // named groups in rank order
	maxCrit   int
	maxDesc   int
}

type component struct {
	members []int // node indices; a loop's in iteration order
	loop    int   // index into loops, or -1
}

type loopInfo struct {
	id      string
	members []int
	pos     map[int]int // node -> position in the iteration order
	max     int
}

// Build checks spec and computes the graph's waves and static scores. It
// returns an *IntegrityError listing every problem when the graph is not a
// DAG (outside declared loops) or names nodes that do not exist.
func Build(spec Spec) (*Graph, error) {
	g := &Graph{nodes: spec.Nodes, index: make(map[string]int, len(spec.Nodes))}
	var probs []Problem
	add := func(p Problem) { probs = append(probs, p) }
	for i, n := range spec.Nodes {
		if n.ID == "" {
			add(Problem{Code: ProblemEmptyID, Node: i, Dep: -1, LoopIdx: -1, GroupIdx: -1, Nodes: []string{},
				Message: fmt.Sprintf("node %d has an empty id", i)})
			continue
		}
		if j, dup := g.index[n.ID]; dup {
			add(Problem{Code: ProblemDuplicateID, Node: i, Dep: -1, LoopIdx: -1, GroupIdx: -1, Nodes: []string{n.ID},
				Message: fmt.Sprintf("duplicate node id %q (nodes %d and %d)", n.ID, j, i)})
			continue
		}
		g.index[n.ID] = i
		if n.Risk < 0 || n.Risk > 1000 {
			add(Problem{Code: ProblemBadRisk, Node: i, Dep: -1, LoopIdx: -1, GroupIdx: -1, Nodes: []string{n.ID},
				Message: fmt.Sprintf("node %q: risk %d is outside 0..1000", n.ID, n.Risk)})
		}
	}
	g.deps = make([][]int, len(spec.Nodes))
	hints := 0 // near-miss suggestions are costly: offer a few
	for i, n := range spec.Nodes {
		seen := map[string]bool{}
		for j, d := range n.Deps {
			switch k, ok := g.index[d]; {
			case d == n.ID:
				add(Problem{Code: ProblemSelfDep, Node: i, Dep: j, LoopIdx: -1, GroupIdx: -1, Nodes: []string{n.ID},
					Message: fmt.Sprintf("node %q depends on itself", n.ID)})
			case seen[d]:
				add(Problem{Code: ProblemDuplicateDep, Node: i, Dep: j, LoopIdx: -1, GroupIdx: -1, Nodes: []string{n.ID, d},
					Message: fmt.Sprintf("node %q lists dependency %q twice", n.ID, d)})
			case !ok:
				hint := ""
				if hints < 10 {
					hint, hints = suggest(d, g.index), hints+1
				}
				add(Problem{Code: ProblemUnknownDep, Node: i, Dep: j, LoopIdx: -1, GroupIdx: -1, Nodes: []string{n.ID, d},
					Message: fmt.Sprintf("node %q depends on %q, which is not a node%s", n.ID, d, hint)})
			case spec.Sequential && k > i:
				add(Problem{Code: ProblemForwardDep, Node: i, Dep: j, LoopIdx: -1, GroupIdx: -1, Nodes: []string{n.ID, d},
					Message: fmt.Sprintf("step %q depends on %q, a later step: steps run in array order", n.ID, d)})
			default:
				g.deps[i] = append(g.deps[i], k)
			}
			seen[d] = true
		}
		if spec.Sequential && i > 0 && g.index[n.ID] == i {
			g.deps[i] = append(g.deps[i], i-1)
		}
		slices.Sort(g.deps[i])
		g.deps[i] = slices.Compact(g.deps[i])
	}
	probs = append(probs, g.rankGroups(spec)...)
	if spec.Sequential && len(spec.Loops) > 0 {
		add(Problem{Code: ProblemLoopInSequential, Node: -1, Dep: -1, LoopIdx: 0, GroupIdx: -1, Nodes: spec.Loops[0].Nodes,
			Message: "a sequential workflow cannot declare loops"})
	}
	// Cycles are found over the edges that resolved, so that one run of
	// validation reports them beside any unknown or duplicate ids.
	probs = append(probs, g.condense(spec.Loops)...)
	if len(probs) > 0 {
		sortProblems(probs)
		return nil, &IntegrityError{Problems: probs}
	}
	g.rdeps = make([][]int, len(g.nodes))
	for i, ds := range g.deps {
		for _, d := range ds {
			g.rdeps[d] = append(g.rdeps[d], i)
		}
	}
	g.scoreStatic()
	return g, nil
}

func sortProblems(probs []Problem) {
	order := func(p Problem) int {
		if p.Node >= 0 {
			return p.Node
		}
		return len(probs) + 1<<20
	}
	sort.SliceStable(probs, func(a, b int) bool {
		if oa, ob := order(probs[a]), order(probs[b]); oa != ob {
			return oa < ob
		}
		if probs[a].Dep != probs[b].Dep {
			return probs[a].Dep < probs[b].Dep
		}
		return probs[a].Message < probs[b].Message
	})
}

// suggest returns ` (did you mean "x"?)` for a near miss among ids. It is
// skipped for very large graphs, where the scan would cost more than the
// hint is worth.
func suggest(id string, index map[string]int) string {
	if len(index) > 20000 {
		return ""
	}
	best, bestD := "", 3
	for k := range index {
		d := editDistance(id, k, bestD+1)
		if d < bestD || (d == bestD && best != "" && k < best) {
			best, bestD = k, d
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf(" (did you mean %q?)", best)
}

// editDistance is Levenshtein's distance, giving up (returning limit) once
// it cannot be below limit.
func editDistance(a, b string, limit int) int {
	if d := len(a) - len(b); d >= limit || -d >= limit {
		return limit
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		rowMin := cur[0]
		for j := 1; j <= len(b); j++ {
			c := 1
			if a[i-1] == b[j-1] {
				c = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+c)
			rowMin = min(rowMin, cur[j])
		}
		if rowMin >= limit {
			return limit
		}
		prev, cur = cur, prev
	}
	return min(prev[len(b)], limit)
}

func (g *Graph) rankGroups(spec Spec) []Problem {
	var probs []Problem
	rank := map[string]int{}
	if len(spec.Groups) > 0 {
		for i, name := range spec.Groups {
			if _, dup := rank[name]; dup || name == "" {
				probs = append(probs, Problem{Code: ProblemDuplicateGroup, Node: -1, Dep: -1, LoopIdx: -1, GroupIdx: i, Nodes: []string{},
					Message: fmt.Sprintf("priority group %q is listed twice or empty", name)})
				continue
			}
			rank[name] = len(g.groups)
			g.groups = append(g.groups, name)
		}
	} else {
		var names []string
		for _, n := range spec.Nodes {
			if n.Group != "" {
				if _, ok := rank[n.Group]; !ok {
					rank[n.Group] = 0
					names = append(names, n.Group)
				}
			}
		}
		sort.Strings(names)
		for i, name := range names {
			rank[name] = i
		}
		g.groups = names
	}
	g.groupRank = make([]int, len(spec.Nodes))
	for i, n := range spec.Nodes {
		if n.Group == "" {
			g.groupRank[i] = len(g.groups)
			continue
		}
		r, ok := rank[n.Group]
		if !ok {
			probs = append(probs, Problem{Code: ProblemUnknownGroup, Node: i, Dep: -1, LoopIdx: -1, GroupIdx: -1, Nodes: []string{n.ID},
				Message: fmt.Sprintf("node %q: priority group %q is not declared (declared: %s)", n.ID, n.Group, strings.Join(g.groups, ", "))})
			continue
		}
		g.groupRank[i] = r
	}
	return probs
}

// Len returns the number of nodes.
func (g *Graph) Len() int { return len(g.nodes) }

// Node returns node i (in Spec order).
func (g *Graph) Node(i int) Node { return g.nodes[i] }

// Index returns the index of the node with id.
func (g *Graph) Index(id string) (int, bool) {
	i, ok := g.index[id]
	return i, ok
}

// Deps returns the indices of node i's dependencies (sorted; the implicit
// edge of a sequential workflow included).
func (g *Graph) Deps(i int) []int { return g.deps[i] }

// Dependents returns the indices of the nodes that depend on node i.
func (g *Graph) Dependents(i int) []int { return g.rdeps[i] }

// GroupRank returns the rank of node i's priority group (0 first).
func (g *Graph) GroupRank(i int) int { return g.groupRank[i] }

// Level returns node i's topological wave: 0 for nodes without
// dependencies, else one more than the highest level among its
// dependencies (the members of a loop share one level).
func (g *Graph) Level(i int) int { return g.level[i] }

// Levels returns the nodes of each topological wave, in Spec order.
func (g *Graph) Levels() [][]int {
	var out [][]int
	for i := range g.nodes {
		l := g.level[i]
		for len(out) <= l {
			out = append(out, nil)
		}
		out[l] = append(out[l], i)
	}
	return out
}

// CriticalPath returns the number of nodes on the longest chain from node i
// to a node nothing depends on, i included.
func (g *Graph) CriticalPath(i int) int { return g.critical[i] }

// Descendants returns how many nodes depend on node i, directly or not: its
// blocking score.
func (g *Graph) Descendants(i int) int { return g.desc[i] }

// LoopOf returns the loop node i belongs to, its position in the iteration
// order and whether it is in a loop.
func (g *Graph) LoopOf(i int) (id string, pos int, ok bool) {
	c := g.comps[g.comp[i]]
	if c.loop < 0 {
		return "", 0, false
	}
	l := g.loops[c.loop]
	return l.id, l.pos[i], true
}

// Loops returns the declared loops: id, members (iteration order) and bound.
func (g *Graph) Loops() []Loop {
	out := make([]Loop, len(g.loops))
	for i, l := range g.loops {
		ids := make([]string, len(l.members))
		for j, m := range l.members {
			ids[j] = g.nodes[m].ID
		}
		out[i] = Loop{ID: l.id, Nodes: ids, MaxIterations: l.max}
	}
	return out
}
