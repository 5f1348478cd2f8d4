package workflow

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

func nodes(spec string) []Node {
	// "a:b,c d e:a" -> a depends on b and c; d; e depends on a
	var out []Node
	for _, f := range strings.Fields(spec) {
		id, deps, _ := strings.Cut(f, ":")
		n := Node{ID: id}
		if deps != "" {
			n.Deps = strings.Split(deps, ",")
		}
		out = append(out, n)
	}
	return out
}

func problems(t *testing.T, err error) []Problem {
	t.Helper()
	var ie *IntegrityError
	if !errors.As(err, &ie) {
		t.Fatalf("want an *IntegrityError, got %v", err)
	}
	return ie.Problems
}

func TestBuild_IntegrityProblems(t *testing.T) {
	tests := []struct {
		name  string
		spec  Spec
		codes []string
		nodes [][]string
		msg   string
	}{
		{"duplicate id", Spec{Nodes: nodes("a b a")}, []string{ProblemDuplicateID}, [][]string{{"a"}}, `duplicate node id "a" (nodes 0 and 2)`},
		{"empty id", Spec{Nodes: []Node{{ID: ""}}}, []string{ProblemEmptyID}, [][]string{{}}, "node 0 has an empty id"},
		{"unknown dependency with a hint", Spec{Nodes: nodes("build test:biuld")}, []string{ProblemUnknownDep}, [][]string{{"test", "biuld"}},
			`node "test" depends on "biuld", which is not a node (did you mean "build"?)`},
		{"self dependency", Spec{Nodes: nodes("a:a")}, []string{ProblemSelfDep}, [][]string{{"a"}}, `node "a" depends on itself`},
		{"duplicate dependency", Spec{Nodes: nodes("a b:a,a")}, []string{ProblemDuplicateDep}, [][]string{{"b", "a"}}, `node "b" lists dependency "a" twice`},
		{"two-node cycle", Spec{Nodes: nodes("a:b b:a")}, []string{ProblemCycle}, [][]string{{"a", "b", "a"}},
			"cycle a -> b -> a (each node depends on the next): remove a dependency, or declare the cycle as a loop with max_iterations"},
		{"shortest cycle through the first node", Spec{Nodes: nodes("x a:c b:a c:b,a2 a2:a")}, []string{ProblemCycle}, [][]string{{"a", "c", "b", "a"}},
			"cycle a -> c -> b -> a (each node depends on the next); the cycle's nodes are a, b, c, a2"},
		{"two cycles", Spec{Nodes: nodes("a:b b:a c:d d:c")}, []string{ProblemCycle, ProblemCycle}, [][]string{{"a", "b", "a"}, {"c", "d", "c"}}, ""},
		{"loop does not match the cycle", Spec{Nodes: nodes("a:c b:a c:b"), Loops: []Loop{{ID: "l", Nodes: []string{"a", "b"}, MaxIterations: 2}}},
			[]string{ProblemCycle}, [][]string{{"a", "c", "b", "a"}}, `declared loop "l" (a, b) does not list exactly these nodes`},
		{"loop unbounded", Spec{Nodes: nodes("a:b b:a"), Loops: []Loop{{Nodes: []string{"a", "b"}, MaxIterations: 0}}},
			[]string{ProblemLoopUnbounded}, [][]string{{"a", "b"}}, `loop "a": max_iterations 0 is not within 1..1000: a declared cycle must be bounded`},
		{"loop over nodes without a cycle", Spec{Nodes: nodes("a b:a"), Loops: []Loop{{ID: "l", Nodes: []string{"a", "b"}, MaxIterations: 2}}},
			[]string{ProblemLoopNotACycle}, [][]string{{"a", "b"}}, `loop "l" lists a, b, which do not form one cycle`},
		{"loop with an unknown node", Spec{Nodes: nodes("a:b b:a"), Loops: []Loop{{Nodes: []string{"a", "zz"}, MaxIterations: 2}}},
			[]string{ProblemLoopUnknownNode}, [][]string{{"zz"}}, `loop "a" lists "zz", which is not a node`},
		{"node in two loops", Spec{Nodes: nodes("a:b b:a"), Loops: []Loop{{ID: "x", Nodes: []string{"a", "b"}, MaxIterations: 2}, {ID: "y", Nodes: []string{"b", "a"}, MaxIterations: 2}}},
			[]string{ProblemLoopOverlap, ProblemLoopOverlap}, [][]string{{"a"}, {"b"}}, ""},
		{"unknown group", Spec{Nodes: []Node{{ID: "a", Group: "urgent"}}, Groups: []string{"critical"}}, []string{ProblemUnknownGroup}, [][]string{{"a"}},
			`node "a": priority group "urgent" is not declared (declared: critical)`},
		{"forward dependency in a sequential workflow", Spec{Nodes: nodes("a:c b c"), Sequential: true}, []string{ProblemForwardDep}, [][]string{{"a", "c"}},
			`step "a" depends on "c", a later step: steps run in array order`},
		{"risk out of range", Spec{Nodes: []Node{{ID: "a", Risk: 1001}}}, []string{ProblemBadRisk}, [][]string{{"a"}}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Build(tt.spec)
			ps := problems(t, err)
			var codes []string
			var ns [][]string
			for _, p := range ps {
				codes = append(codes, p.Code)
				ns = append(ns, p.Nodes)
			}
			if !reflect.DeepEqual(codes, tt.codes) || !reflect.DeepEqual(ns, tt.nodes) {
				t.Fatalf("problems %v %v, want %v %v (%v)", codes, ns, tt.codes, tt.nodes, err)
			}
			if tt.msg != "" && !strings.Contains(ps[0].Message, tt.msg) {
				t.Fatalf("message %q, want it to contain %q", ps[0].Message, tt.msg)
			}
		})
	}
}

func TestBuild_ProblemPointsAtTheField(t *testing.T) {
	_, err := Build(Spec{Nodes: nodes("a b:a,zz c:b,c")})
	ps := problems(t, err)
	if len(ps) != 2 || ps[0].Node != 1 || ps[0].Dep != 1 || ps[1].Node != 2 || ps[1].Dep != 1 {
		t.Fatalf("want node/dep indices (1,1) and (2,1), got %+v", ps)
	}
	_, err = Build(Spec{Nodes: nodes("a:c b:a c:b")})
	ps = problems(t, err)
	if ps[0].Path != "a -> c -> b -> a" || ps[0].Node != 0 || ps[0].Dep != 0 {
		t.Fatalf("cycle problem %+v", ps[0])
	}
}

func TestBuild_DeclaredLoopPasses(t *testing.T) {
	g, err := Build(Spec{Nodes: nodes("spec impl:spec,review review:impl ship:review"),
		Loops: []Loop{{ID: "review-loop", Nodes: []string{"impl", "review"}, MaxIterations: 3}}})
	if err != nil {
		t.Fatal(err)
	}
	if got := levelIDs(g); got != "[spec] [impl review] [ship]" {
		t.Fatalf("levels %s", got)
	}
	if id, pos, ok := g.LoopOf(2); !ok || id != "review-loop" || pos != 1 {
		t.Fatalf("LoopOf(review) = %q %d %v", id, pos, ok)
	}
	if g.Descendants(0) != 3 || g.Descendants(1) != 2 || g.Descendants(2) != 2 || g.Descendants(3) != 0 {
		t.Fatalf("descendants %v", g.desc)
	}
}

func levelIDs(g *Graph) string {
	var parts []string
	for _, l := range g.Levels() {
		var ids []string
		for _, i := range l {
			ids = append(ids, g.Node(i).ID)
		}
		parts = append(parts, "["+strings.Join(ids, " ")+"]")
	}
	return strings.Join(parts, " ")
}

func TestBuild_LevelsCriticalPathDescendants(t *testing.T) {
	// a -> b -> d, a -> c, e alone; d also needs c
	g, err := Build(Spec{Nodes: nodes("a b:a c:a d:b,c e")})
	if err != nil {
		t.Fatal(err)
	}
	if got := levelIDs(g); got != "[a e] [b c] [d]" {
		t.Fatalf("levels %s", got)
	}
	wantCrit := []int{3, 2, 2, 1, 1}
	wantDesc := []int{3, 1, 1, 0, 0}
	for i := range wantCrit {
		if g.CriticalPath(i) != wantCrit[i] || g.Descendants(i) != wantDesc[i] {
			t.Fatalf("node %s: critical %d descendants %d, want %d %d", g.Node(i).ID, g.CriticalPath(i), g.Descendants(i), wantCrit[i], wantDesc[i])
		}
	}
}

func TestBuild_Sequential(t *testing.T) {
	g, err := Build(Spec{Nodes: nodes("one two three:one"), Sequential: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := levelIDs(g); got != "[one] [two] [three]" {
		t.Fatalf("levels %s", got)
	}
	if fmt.Sprint(g.Deps(2)) != "[0 1]" {
		t.Fatalf("deps of three %v", g.Deps(2))
	}
}

func TestBuild_DescendantsWindowed(t *testing.T) {
	// A graph big enough to need several bitset windows: a chain with
	// fan-out, checked against a plain traversal.
	const n = 3000
	var ns []Node
	for i := 0; i < n; i++ {
		nd := Node{ID: fmt.Sprintf("n%05d", i)}
		if i > 0 {
			nd.Deps = append(nd.Deps, fmt.Sprintf("n%05d", (i-1)/2))
		}
		if i > 7 && i%7 == 0 {
			nd.Deps = append(nd.Deps, fmt.Sprintf("n%05d", i-5))
		}
		ns = append(ns, nd)
	}
	g, err := Build(Spec{Nodes: ns})
	if err != nil {
		t.Fatal(err)
	}
	for _, i := range []int{0, 1, 2, 5, 100, 1499, 2999} {
		seen := map[int]bool{}
		stack := []int{i}
		for len(stack) > 0 {
			v := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			for _, r := range g.Dependents(v) {
				if !seen[r] {
					seen[r] = true
					stack = append(stack, r)
				}
			}
		}
		if g.Descendants(i) != len(seen) {
			t.Fatalf("node %d: descendants %d, traversal %d", i, g.Descendants(i), len(seen))
		}
	}
}

func TestBuild_LongChainNoRecursion(t *testing.T) {
	const n = 200000
	ns := make([]Node, n)
	for i := range ns {
		ns[i].ID = fmt.Sprintf("n%d", i)
		if i > 0 {
			ns[i].Deps = []string{ns[i-1].ID}
		}
	}
	ns[0].Deps = []string{ns[n-1].ID} // one cycle through all of them
	_, err := Build(Spec{Nodes: ns})
	ps := problems(t, err)
	if len(ps) != 1 || ps[0].Code != ProblemCycle || len(ps[0].Nodes) != n+1 {
		t.Fatalf("want one cycle of %d nodes, got %d problems", n, len(ps))
	}
}

func TestRender_Golden(t *testing.T) {
	g, err := Build(Spec{Nodes: []Node{{ID: "spec"}, {ID: "impl", Deps: []string{"spec", "review"}, Group: "critical"},
		{ID: "review", Deps: []string{"impl"}}, {ID: `say "hi"`, Deps: []string{"review"}}},
		Loops: []Loop{{ID: "rl", Nodes: []string{"impl", "review"}, MaxIterations: 2}}})
	if err != nil {
		t.Fatal(err)
	}
	wantM := `flowchart TD
  subgraph wave1["wave 1"]
    n1["spec"]
  end
  subgraph wave2["wave 2"]
    n2["impl (critical)"]
    n3["review"]
  end
  subgraph wave3["wave 3"]
    n4["say #quot;hi#quot;"]
  end
  n1 --> n2
  n3 -. "loop rl, at most 2" .-> n2
  n2 --> n3
  n3 --> n4
`
	if got := RenderMermaid(g); got != wantM {
		t.Fatalf("mermaid:\n%s\nwant:\n%s", got, wantM)
	}
	wantD := `digraph work {
  rankdir=TB;
  node [shape=box];
  subgraph cluster_wave1 {
    label="wave 1";
    n1 [label="spec"];
  }
  subgraph cluster_wave2 {
    label="wave 2";
    n2 [label="impl (critical)"];
    n3 [label="review"];
  }
  subgraph cluster_wave3 {
    label="wave 3";
    n4 [label="say \"hi\""];
  }
  n1 -> n2;
  n3 -> n2 [style=dashed, label="loop rl, at most 2", constraint=false];
  n2 -> n3;
  n3 -> n4;
}
`
	if got := RenderDot(g); got != wantD {
		t.Fatalf("dot:\n%s\nwant:\n%s", got, wantD)
	}
}
