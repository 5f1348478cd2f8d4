package xdiff

import (
	"bytes"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dome-registry/dome/internal/gittest"
)

// checkDiffs compares Diff with git on every pair and fails on the first
// disagreement.
func checkDiffs(t *testing.T, ps []pair) {
	t.Helper()
	want := gitDiffs(t, ps)
	for i, p := range ps {
		got := Diff(Lines(p.a), Lines(p.b))
		if fmt.Sprint(got) != fmt.Sprint(want[i]) {
			dump(t, fmt.Sprintf("diff%d", i), p.a, p.b)
			t.Fatalf("case %d (%d/%d lines): %s", i, len(Lines(p.a)), len(Lines(p.b)), firstDifference(got, want[i]))
		}
	}
}

// firstDifference shows where two change lists part.
func firstDifference(got, want []Change) string {
	i := 0
	for i < len(got) && i < len(want) && got[i] == want[i] {
		i++
	}
	show := func(cs []Change) string {
		return fmt.Sprint(cs[i:min(len(cs), i+4)])
	}
	return fmt.Sprintf("change %d of dome's %d, git's %d:\ndome %s\ngit  %s", i, len(got), len(want), show(got), show(want))
}

// dump writes a failing case's inputs under $DOME_XDIFF_DUMP, if set, to
// study it.
func dump(t *testing.T, name string, files ...[]byte) {
	dir := os.Getenv("DOME_XDIFF_DUMP")
	if dir == "" {
		return
	}
	for i, f := range files {
		p := filepath.Join(dir, fmt.Sprintf("%s.%d", name, i))
		if err := os.WriteFile(p, f, 0o644); err != nil {
			t.Log(err)
		}
	}
	t.Logf("inputs in %s/%s.*", dir, name)
}

// TestDiffMatchesGit: the same hunks as `git diff --diff-algorithm=myers
// --no-indent-heuristic -U0` on every generated pair.
func TestDiffMatchesGit(t *testing.T) {
	gittest.Need(t)
	checkDiffs(t, cases(1))
}

// TestDiffMatchesGitMore: the same on many more small and medium pairs
// around the bounds of the set-aside rules, and code-like texts.
func TestDiffMatchesGitMore(t *testing.T) {
	gittest.Need(t)
	checkDiffs(t, moreCases(11, 1500))
}

// TestDiffMatchesGitLarge: large inputs where the bounds decide: a text of
// few distinct lines long enough for the frequent-line bound to reach
// 1024, large code-like texts with many edits (the cost bounds and the
// long-run rule), unrelated texts, and a file past a million lines where
// the bound stays at its cap.
func TestDiffMatchesGitLarge(t *testing.T) {
	gittest.Need(t)
	if testing.Short() {
		t.Skip("large inputs")
	}
	r := rand.New(rand.NewSource(5))
	var ps []pair
	a := gen(r, 270000, 3)
	ps = append(ps, pair{a, mutate(r, a, 400, 3)})
	a = genCode(r, 30000, 300)
	ps = append(ps, pair{a, mutateWith(r, a, 3000, 300, true)})
	a = genCode(r, 8000, 20)
	ps = append(ps, pair{a, genCode(r, 8000, 20)})
	a = gen(r, 20000, 60)
	ps = append(ps, pair{a, mutate(r, a, 4000, 60)})
	// past a million lines the frequent-line bound stops at 1024: a lone
	// "}" among 1.1 million unmatched lines, against 1023 or 1024 "}"
	var big strings.Builder
	for i := 0; i < 1100000; i++ {
		if i == 550000 {
			big.WriteString("}\n")
		}
		fmt.Fprintf(&big, "a%d\n", i)
	}
	for _, n := range []int{1023, 1024} {
		ps = append(ps, pair{[]byte(big.String()), bytes.Repeat([]byte("}\n"), n)})
	}
	checkDiffs(t, ps)
}

// TestDiffEdges pins small decisions: where an ambiguous block lands and
// the ends of files.
func TestDiffEdges(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want string
	}{
		{"", "", "[]"},
		{"", "x\n", "[{0 0 0 1}]"},
		{"x\n", "", "[{0 0 1 0}]"},
		{"x", "x\n", "[{0 0 1 1}]"},
		// an inserted copy of a repeated line goes lowest
		{"a\na\na\n", "a\na\na\na\n", "[{3 3 0 1}]"},
		// a deleted block slides down as far as it can
		{"x\na\nb\na\nb\ny\n", "x\na\nb\ny\n", "[{3 3 2 0}]"},
		// unless it can face a change of the other side on the way
		{"a\nb\nc\nb\nc\nd\n", "a\nX\nb\nc\nd\n", "[{1 1 2 1}]"},
	} {
		got := fmt.Sprint(Diff(Lines([]byte(c.a)), Lines([]byte(c.b))))
		if got != c.want {
			t.Errorf("Diff(%q, %q) = %s, want %s", c.a, c.b, got, c.want)
		}
	}
}

// FuzzDiff checks that Diff's changes turn a into b, and that they are
// git's (one git process per input; without git only the first).
func FuzzDiff(f *testing.F) {
	f.Add([]byte("a\nb\nc\n"), []byte("a\nc\nd\n"))
	f.Add([]byte("}\n\nx\n}\n\n}\n"), []byte("}\ny\n\n}\nz\n\n"))
	_, err := exec.LookPath("git")
	withGit := err == nil
	f.Fuzz(func(t *testing.T, a, b []byte) {
		la, lb := Lines(a), Lines(b)
		cs := Diff(la, lb)
		var out []string
		i := 0
		for _, c := range cs {
			if c.I1 < i || c.I1+c.Chg1 > len(la) || c.I2+c.Chg2 > len(lb) {
				t.Fatalf("bad change %+v", c)
			}
			out = append(out, la[i:c.I1]...)
			out = append(out, lb[c.I2:c.I2+c.Chg2]...)
			i = c.I1 + c.Chg1
		}
		out = append(out, la[i:]...)
		if strings.Join(out, "") != string(b) {
			t.Fatal("the changes do not turn a into b")
		}
		if !withGit || len(a) > 1<<14 || len(b) > 1<<14 || bytes.IndexByte(a, 0) >= 0 || bytes.IndexByte(b, 0) >= 0 {
			return // git diffs NUL-holding files as binary
		}
		if want := gitDiffs(t, []pair{{a, b}})[0]; fmt.Sprint(cs) != fmt.Sprint(want) {
			t.Fatalf("dome %v\ngit %v", cs, want)
		}
	})
}

// ruleCases are inputs built to sit on the edges of the set-aside rules,
// each measured against git when the rule was written: how many unmatched
// neighbours set a frequent line aside (and how the frequent lines among
// them weigh), which file's length bounds "frequent", and how far the
// neighbourhood reaches.
func ruleCases() []pair {
	lines := func(parts ...any) []byte {
		var b strings.Builder
		for i := 0; i < len(parts); i += 2 {
			for j := 0; j < parts[i+1].(int); j++ {
				if p := parts[i].(string); strings.HasSuffix(p, "%d") {
					fmt.Fprintf(&b, p+"\n", j)
				} else {
					b.WriteString(p + "\n")
				}
			}
		}
		return []byte(b.String())
	}
	var out []pair
	// one to four frequent lines between runs of unmatched ones
	for nf := 1; nf <= 4; nf++ {
		for d := 4; d <= 18; d++ {
			out = append(out, pair{lines("}", 40), lines("p%d", d/2, "}", nf, "q%d", d-d/2)})
		}
	}
	// lopsided runs
	for before := 1; before <= 7; before++ {
		for after := 1; after <= 7; after++ {
			out = append(out, pair{lines("}", 20), lines("p%d", before, "}", 1, "q%d", after)})
		}
	}
	// "}" occurs 6 times in b: frequent for 8-line a (bound 4), not for
	// 64-line b (bound 16); the bound is the line's own file's
	out = append(out, pair{lines("p%d", 4, "}", 1, "q%d", 3), lines("z%d", 29, "}", 6, "y%d", 29)})
	out = append(out, pair{lines("z%d", 29, "}", 6, "y%d", 29), lines("p%d", 4, "}", 1, "q%d", 3)})
	// counts at the bound exactly: 4 in a 4..15-line file
	for n := 1; n <= 6; n++ {
		out = append(out, pair{lines("}", n), lines("u%d", 1, "}", 1, "v%d", 3)})
	}
	// the neighbourhood reaches 100 lines: 100 frequent lines, 60
	// unmatched, the line, G unmatched
	for g := 62; g <= 69; g++ {
		out = append(out, pair{lines("}", 100, "{", 40), lines("x", 1, "}", 100, "p%d", 60, "{", 1, "q%d", g)})
	}
	return out
}

// TestDiffSetAsideRules: the inputs on the edges of the set-aside rules
// get git's hunks.
func TestDiffSetAsideRules(t *testing.T) {
	gittest.Need(t)
	checkDiffs(t, ruleCases())
}

// TestDiffMatchesGitHeuristics: inputs past the cost bounds, where git
// gives up on a shortest script: its long-run rule and furthest-point rule
// must pick the same cuts.
func TestDiffMatchesGitHeuristics(t *testing.T) {
	gittest.Need(t)
	if testing.Short() {
		t.Skip("large inputs")
	}
	checkDiffs(t, heuristicCases(21))
}
