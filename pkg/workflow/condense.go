package workflow

import (
	"fmt"
	"math/bits"
	"slices"
	"strings"
)

// condense finds the strongly connected components (iterative Tarjan, so a
// 100,000-node chain cannot exhaust the stack), matches every cycle with a
// declared loop and orders the components so that dependencies come first.
func (g *Graph) condense(loops []Loop) []Problem {
	var probs []Problem
	n := len(g.nodes)
	loopOf := make([]int, n)
	for i := range loopOf {
		loopOf[i] = -1
	}
	for li, l := range loops {
		name := l.ID
		if name == "" && len(l.Nodes) > 0 {
			name = l.Nodes[0]
		}
		info := loopInfo{id: name, pos: map[int]int{}, max: l.MaxIterations}
		if l.MaxIterations < 1 || l.MaxIterations > MaxLoopIterations {
			probs = append(probs, Problem{Code: ProblemLoopUnbounded, Node: -1, Dep: -1, LoopIdx: li, GroupIdx: -1, Nodes: l.Nodes,
				Message: fmt.Sprintf("loop %q: max_iterations %d is not within 1..%d: a declared cycle must be bounded", name, l.MaxIterations, MaxLoopIterations)})
		}
		if len(l.Nodes) < 2 {
			probs = append(probs, Problem{Code: ProblemLoopNotACycle, Node: -1, Dep: -1, LoopIdx: li, GroupIdx: -1, Nodes: l.Nodes,
				Message: fmt.Sprintf("loop %q lists %d node(s): a loop lists the two or more nodes of one cycle", name, len(l.Nodes))})
		}
		for _, id := range l.Nodes {
			i, ok := g.index[id]
			switch {
			case !ok:
				probs = append(probs, Problem{Code: ProblemLoopUnknownNode, Node: -1, Dep: -1, LoopIdx: li, GroupIdx: -1, Nodes: []string{id},
					Message: fmt.Sprintf("loop %q lists %q, which is not a node", name, id)})
			case loopOf[i] >= 0:
				probs = append(probs, Problem{Code: ProblemLoopOverlap, Node: -1, Dep: -1, LoopIdx: li, GroupIdx: -1, Nodes: []string{id},
					Message: fmt.Sprintf("node %q is listed in loop %q and again in loop %q", id, g.loops[loopOf[i]].id, name)})
			default:
				loopOf[i] = li
				info.pos[i] = len(info.members)
				info.members = append(info.members, i)
			}
		}
		g.loops = append(g.loops, info)
	}
	if len(probs) > 0 {
		return probs
	}

	sccs := g.tarjan()
	matched := make([]bool, len(loops))
	g.comp = make([]int, n)
	for _, members := range sccs {
		c := component{members: members, loop: -1}
		if len(members) > 1 {
			li := loopOf[members[0]]
			whole := li >= 0 && len(g.loops[li].members) == len(members)
			for _, m := range members {
				whole = whole && loopOf[m] == li
			}
			if !whole {
				probs = append(probs, g.cycleProblem(members, loopOf))
				continue
			}
			matched[li] = true
			c.loop = li
			c.members = g.loops[li].members
		}
		for _, m := range c.members {
			g.comp[m] = len(g.comps)
		}
		g.comps = append(g.comps, c)
	}
	for li, l := range g.loops {
		if !matched[li] && !anyCycle(probs, l.members, g) {
			probs = append(probs, Problem{Code: ProblemLoopNotACycle, Node: -1, Dep: -1, LoopIdx: li, GroupIdx: -1, Nodes: loops[li].Nodes,
				Message: fmt.Sprintf("loop %q lists %s, which do not form one cycle: a loop lists exactly the nodes of one cycle",
					l.id, strings.Join(loops[li].Nodes, ", "))})
		}
	}
	return probs
}

// anyCycle reports whether a cycle problem already names one of members
// (the loop was declared but does not match the cycle: one message is enough).
func anyCycle(probs []Problem, members []int, g *Graph) bool {
	for _, p := range probs {
		if p.Code != ProblemCycle {
			continue
		}
		for _, id := range p.Nodes {
			for _, m := range members {
				if g.nodes[m].ID == id {
					return true
				}
			}
		}
	}
	return false
}

// tarjan returns the strongly connected components of the dependency graph,
// each component after every component it depends on.
func (g *Graph) tarjan() [][]int {
	n := len(g.nodes)
	idx := make([]int, n) // 0: not visited; else visit order + 1
	low := make([]int, n)
	onStack := make([]bool, n)
	var stack []int
	type frame struct{ v, next int }
	var call []frame
	counter := 0
	var out [][]int
	visit := func(v int) {
		counter++
		idx[v], low[v] = counter, counter
		stack = append(stack, v)
		onStack[v] = true
		call = append(call, frame{v: v})
	}
	for s := 0; s < n; s++ {
		if idx[s] != 0 {
			continue
		}
		visit(s)
		for len(call) > 0 {
			f := &call[len(call)-1]
			v := f.v
			if f.next < len(g.deps[v]) {
				w := g.deps[v][f.next]
				f.next++
				if idx[w] == 0 {
					visit(w)
				} else if onStack[w] {
					low[v] = min(low[v], idx[w])
				}
				continue
			}
			if low[v] == idx[v] {
				var members []int
				for {
					w := stack[len(stack)-1]
					stack = stack[:len(stack)-1]
					onStack[w] = false
					members = append(members, w)
					if w == v {
						break
					}
				}
				slices.Sort(members)
				out = append(out, members)
			}
			call = call[:len(call)-1]
			if len(call) > 0 {
				p := call[len(call)-1].v
				low[p] = min(low[p], low[v])
			}
		}
	}
	return out
}

// cycleProblem describes the shortest cycle through the first member of an
// undeclared strongly connected component, as a path of dependencies.
func (g *Graph) cycleProblem(members []int, loopOf []int) Problem {
	in := make(map[int]bool, len(members))
	for _, m := range members {
		in[m] = true
	}
	start := members[0] // members are sorted: the first node in the file
	prev := map[int]int{start: -1}
	queue := []int{start}
	end := -1
	for len(queue) > 0 && end < 0 {
		v := queue[0]
		queue = queue[1:]
		for _, w := range g.deps[v] {
			if !in[w] {
				continue
			}
			if w == start {
				end = v
				break
			}
			if _, seen := prev[w]; !seen {
				prev[w] = v
				queue = append(queue, w)
			}
		}
	}
	var rev []int
	for v := end; v >= 0; v = prev[v] {
		rev = append(rev, v)
	}
	path := make([]string, 0, len(rev)+1)
	for i := len(rev) - 1; i >= 0; i-- {
		path = append(path, g.nodes[rev[i]].ID)
	}
	path = append(path, g.nodes[start].ID)
	dep := -1
	if len(rev) > 1 {
		dep = depIndex(g.nodes[start], path[1])
	} else {
		dep = depIndex(g.nodes[start], path[0])
	}
	p := strings.Join(path, " -> ")
	msg := fmt.Sprintf("cycle %s (each node depends on the next)", p)
	if len(members) > len(path)-1 {
		msg += fmt.Sprintf("; the cycle's nodes are %s", idList(g, members))
	}
	declared := map[int]bool{}
	for _, m := range members {
		if loopOf[m] >= 0 {
			declared[loopOf[m]] = true
		}
	}
	if len(declared) > 0 {
		var names []string
		for li := range g.loops {
			if declared[li] {
				names = append(names, fmt.Sprintf("%q (%s)", g.loops[li].id, idList(g, g.loops[li].members)))
			}
		}
		msg += "; declared loop " + strings.Join(names, ", ") + " does not list exactly these nodes"
	} else {
		msg += ": remove a dependency, or declare the cycle as a loop with max_iterations"
	}
	return Problem{Code: ProblemCycle, Node: start, Dep: dep, LoopIdx: -1, GroupIdx: -1, Nodes: path, Path: p, Message: msg}
}

func depIndex(n Node, id string) int {
	for j, d := range n.Deps {
		if d == id {
			return j
		}
	}
	return -1
}

func idList(g *Graph, idx []int) string {
	ids := make([]string, len(idx))
	for i, m := range idx {
		ids[i] = g.nodes[m].ID
	}
	return strings.Join(ids, ", ")
}

// scoreStatic computes levels, critical paths and descendant counts over the
// component DAG (components are in dependency order).
func (g *Graph) scoreStatic() {
	n := len(g.nodes)
	g.level = make([]int, n)
	g.critical = make([]int, n)
	g.desc = make([]int, n)
	clevel := make([]int, len(g.comps))
	for ci, c := range g.comps {
		l := 0
		for _, m := range c.members {
			for _, d := range g.deps[m] {
				if dc := g.comp[d]; dc != ci {
					l = max(l, clevel[dc]+1)
				}
			}
		}
		clevel[ci] = l
		for _, m := range c.members {
			g.level[m] = l
		}
	}
	ccrit := make([]int, len(g.comps))
	for ci := len(g.comps) - 1; ci >= 0; ci-- {
		c := g.comps[ci]
		best := 0
		for _, m := range c.members {
			for _, r := range g.rdeps[m] {
				if rc := g.comp[r]; rc != ci {
					best = max(best, ccrit[rc])
				}
			}
		}
		ccrit[ci] = len(c.members) + best
		for _, m := range c.members {
			g.critical[m] = ccrit[ci]
			g.maxCrit = max(g.maxCrit, ccrit[ci])
		}
	}
	g.countDescendants()
	for _, d := range g.desc {
		g.maxDesc = max(g.maxDesc, d)
	}
}

// countDescendants counts, for every node, the nodes that depend on it
// transitively: one bitset per component over a window of nodes, the
// windows sized so that the sets stay within about 32 MB whatever the size
// of the graph.
func (g *Graph) countDescendants() {
	n, nc := len(g.nodes), len(g.comps)
	if n == 0 {
		return
	}
	allWords := (n + 63) / 64
	words := max(1, min(allWords, (4<<20)/nc))
	buf := make([]uint64, nc*words)
	ccount := make([]int, nc)
	for lo := 0; lo < n; lo += words * 64 {
		hi := min(n, lo+words*64)
		clear(buf)
		for ci := nc - 1; ci >= 0; ci-- {
			b := buf[ci*words : (ci+1)*words]
			for _, m := range g.comps[ci].members {
				for _, r := range g.rdeps[m] {
					rc := g.comp[r]
					if rc == ci {
						continue
					}
					rb := buf[rc*words : (rc+1)*words]
					for w := range b {
						b[w] |= rb[w]
					}
					for _, x := range g.comps[rc].members {
						if x >= lo && x < hi {
							b[(x-lo)>>6] |= 1 << uint((x-lo)&63)
						}
					}
				}
			}
			for _, w := range b {
				ccount[ci] += bits.OnesCount64(w)
			}
		}
	}
	for ci, c := range g.comps {
		for _, m := range c.members {
			g.desc[m] = ccount[ci] + len(c.members) - 1
		}
	}
}
