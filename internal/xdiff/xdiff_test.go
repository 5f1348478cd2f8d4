package xdiff

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/dome-registry/dome/internal/gittest"
)

// gen makes a text of n lines drawn from an alphabet of k distinct lines
// (few distinct lines: many ambiguous alignments, the hard case).
func gen(r *rand.Rand, n, k int) []byte {
	var b bytes.Buffer
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "l%d\n", r.Intn(k))
	}
	return b.Bytes()
}

// mutate edits a text: lines deleted, inserted, replaced, blocks moved.
func mutate(r *rand.Rand, data []byte, edits, k int) []byte {
	ls := Lines(data)
	for e := 0; e < edits; e++ {
		pos := 0
		if len(ls) > 0 {
			pos = r.Intn(len(ls) + 1)
		}
		switch r.Intn(4) {
		case 0: // delete a run
			n := min(1+r.Intn(4), len(ls)-pos)
			if n > 0 {
				ls = append(ls[:pos], ls[pos+n:]...)
			}
		case 1: // insert a run
			var ins []string
			for i := r.Intn(4); i >= 0; i-- {
				ins = append(ins, fmt.Sprintf("l%d\n", r.Intn(k)))
			}
			ls = append(ls[:pos], append(ins, ls[pos:]...)...)
		case 2: // replace a line
			if pos < len(ls) {
				ls[pos] = fmt.Sprintf("n%d\n", r.Intn(k))
			}
		case 3: // duplicate a block elsewhere
			if len(ls) > 4 {
				s := r.Intn(len(ls) - 3)
				blk := append([]string(nil), ls[s:s+3]...)
				ls = append(ls[:pos], append(blk, ls[pos:]...)...)
			}
		}
	}
	out := []byte(strings.Join(ls, ""))
	if len(out) > 0 && r.Intn(8) == 0 {
		out = out[:len(out)-1] // no newline at the end
	}
	return out
}

type pair struct{ a, b []byte }

// cases are the texts of the differential tests: small ones with many
// repeated lines, and large ones where the Myers pass hits git's cost
// limit and snake heuristics.
func cases(seed int64) []pair {
	r := rand.New(rand.NewSource(seed))
	var out []pair
	for i := 0; i < 150; i++ {
		k := 2 + r.Intn(8)
		a := gen(r, r.Intn(40), k)
		out = append(out, pair{a, mutate(r, a, 1+r.Intn(6), k)})
	}
	for i := 0; i < 6; i++ {
		k := 20 + r.Intn(200)
		a := gen(r, 2000+r.Intn(2000), k)
		out = append(out, pair{a, mutate(r, a, 200+r.Intn(600), k)})
	}
	// unrelated large texts: the cost limit decides
	out = append(out, pair{gen(r, 3000, 40), gen(r, 3000, 40)})
	// distinct lines in shuffled blocks longer than a snake; past 65536
	// diagonals git's cost limit rises above 256 and the snake heuristics
	// decide
	for _, n := range []int{4000, 4000, 36000} {
		a := gen(r, n, 1<<30)
		ls := Lines(a)
		var blocks [][]string
		for len(ls) > 0 {
			n := min(22+r.Intn(30), len(ls))
			blocks = append(blocks, ls[:n])
			ls = ls[n:]
		}
		r.Shuffle(len(blocks)/2, func(i, j int) { blocks[i], blocks[j] = blocks[j], blocks[i] })
		var b []byte
		for _, blk := range blocks {
			b = append(b, strings.Join(blk, "")...)
		}
		out = append(out, pair{a, mutate(r, b, 50, 1<<30)})
	}
	// one long common diagonal with, every few dozen lines, a line
	// replaced by a copy of a far one: an edit cost past 512 inside one
	// box, long snakes between the edits
	a := gen(r, 36000, 1<<30)
	ls := Lines(a)
	b := append([]string(nil), ls...)
	for i := 10; i < len(b); i += 25 + r.Intn(30) {
		b[i] = ls[r.Intn(len(ls))]
	}
	out = append(out, pair{a, []byte(strings.Join(b, ""))})
	return out
}

func writeFiles(t testing.TB, dir string, files map[string][]byte) {
	t.Helper()
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

var hunkRE = regexp.MustCompile(`(?m)^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@`)

// gitDiff runs git's own xdiff (myers, no indent heuristic) with no context
// and reads back the changes.
func gitDiff(t testing.TB, dir string, a, b []byte) []Change {
	writeFiles(t, dir, map[string][]byte{"a": a, "b": b})
	cmd := exec.Command("git", "diff", "--no-index", "--no-color", "--no-indent-heuristic", "--diff-algorithm=myers", "-U0", "a", "b")
	cmd.Dir, cmd.Env = dir, gittest.Env()
	out, err := cmd.Output()
	var ee *exec.ExitError
	if err != nil && !(errors.As(err, &ee) && ee.ExitCode() == 1) {
		t.Fatalf("git diff: %v", err)
	}
	var cs []Change
	for _, m := range hunkRE.FindAllStringSubmatch(string(out), -1) {
		num := func(s string, def int) int {
			if s == "" {
				return def
			}
			n, _ := strconv.Atoi(s)
			return n
		}
		s1, n1, s2, n2 := num(m[1], 0), num(m[2], 1), num(m[3], 0), num(m[4], 1)
		if n1 > 0 {
			s1--
		}
		if n2 > 0 {
			s2--
		}
		cs = append(cs, Change{I1: s1, Chg1: n1, I2: s2, Chg2: n2})
	}
	return cs
}

// TestDiffMatchesGit: the same hunks as `git diff --diff-algorithm=myers
// --no-indent-heuristic -U0` on every generated pair.
func TestDiffMatchesGit(t *testing.T) {
	gittest.Need(t)
	dir := t.TempDir()
	for i, c := range cases(1) {
		got, want := Diff(Lines(c.a), Lines(c.b)), gitDiff(t, dir, c.a, c.b)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("case %d (%d/%d lines): dome %v\ngit %v", i, len(Lines(c.a)), len(Lines(c.b)), got, want)
		}
	}
}

// gitMergeFile runs `git merge-file -p` (level ZealousAlnum) and returns
// the result and the number of conflicts.
func gitMergeFile(t testing.TB, dir string, base, ours, theirs []byte) ([]byte, int) {
	writeFiles(t, dir, map[string][]byte{"base": base, "ours": ours, "theirs": theirs})
	cmd := exec.Command("git", "merge-file", "-p", "-L", "ours", "-L", "base", "-L", "theirs", "ours", "base", "theirs")
	cmd.Dir, cmd.Env = dir, gittest.Env()
	out, err := cmd.Output()
	n := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		n = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("git merge-file: %v", err)
	}
	return out, n
}

// TestMergeMatchesGit: byte-identical output and the same number of
// conflicts as `git merge-file` on three-way cases built from the pairs.
func TestMergeMatchesGit(t *testing.T) {
	gittest.Need(t)
	dir := t.TempDir()
	r := rand.New(rand.NewSource(2))
	clean, conflicted := 0, 0
	for i, c := range cases(3) {
		theirs := mutate(r, c.a, 1+r.Intn(len(Lines(c.a))/20+3), 6)
		got, conflicts := Merge(c.a, c.b, theirs, MergeOptions{Ours: "ours", Theirs: "theirs", Level: ZealousAlnum})
		want, n := gitMergeFile(t, dir, c.a, c.b, theirs)
		if !bytes.Equal(got, want) || len(conflicts) != min(n, 127) {
			t.Fatalf("case %d: %d conflicts, git %d\n--- dome\n%s\n--- git\n%s", i, len(conflicts), n, got, want)
		}
		if n == 0 {
			clean++
		} else {
			conflicted++
		}
	}
	t.Logf("%d clean, %d with conflicts", clean, conflicted)
	if clean == 0 || conflicted == 0 {
		t.Fatal("the cases do not exercise both outcomes")
	}
}

// TestMergeCases pins the decisions git makes at the edges: changes that
// touch conflict, identical changes do not, conflicts narrow to the lines
// that differ, CRLF markers.
func TestMergeCases(t *testing.T) {
	base := "1\n2\n3\n4\n5\n6\n7\n8\n9\n"
	for _, c := range []struct {
		name                string
		ours, theirs, level string
		want                string
		conflicts           int
	}{
		{"separate", "1\nX\n3\n4\n5\n6\n7\n8\n9\n", "1\n2\n3\n4\n5\n6\n7\nY\n9\n", "", "1\nX\n3\n4\n5\n6\n7\nY\n9\n", 0},
		{"adjacent lines conflict", "1\n2\nX\n4\n5\n6\n7\n8\n9\n", "1\n2\n3\nY\n5\n6\n7\n8\n9\n", "", "1\n2\n<<<<<<< ours\nX\n4\n=======\n3\nY\n>>>>>>> theirs\n5\n6\n7\n8\n9\n", 1},
		{"insert next to a change", "1\n2\nX\n4\n5\n6\n7\n8\n9\n", "1\n2\n3\nI\n4\n5\n6\n7\n8\n9\n", "", "1\n2\n<<<<<<< ours\nX\n=======\n3\nI\n>>>>>>> theirs\n4\n5\n6\n7\n8\n9\n", 1},
		{"identical", "1\nX\n3\n4\n5\n6\n7\n8\n9\n", "1\nX\n3\n4\n5\n6\n7\n8\n9\n", "", "1\nX\n3\n4\n5\n6\n7\n8\n9\n", 0},
		{"narrowed", "1\nA\nB\nC\n5\n6\n7\n8\n9\n", "1\nA\nZ\nC\n5\n6\n7\n8\n9\n", "", "1\nA\n<<<<<<< ours\nB\n=======\nZ\n>>>>>>> theirs\nC\n5\n6\n7\n8\n9\n", 1},
		{"joined", "1\nA\n3\n4\n5\nB\n7\n8\n9\n", "1\nC\n3\n4\n5\nD\n7\n8\n9\n", "", "1\n<<<<<<< ours\nA\n3\n4\n5\nB\n=======\nC\n3\n4\n5\nD\n>>>>>>> theirs\n7\n8\n9\n", 1},
		{"eager keeps two", "1\nA\n3\n4\n5\nB\n7\n8\n9\n", "1\nC\n3\n4\n5\nD\n7\n8\n9\n", "eager", "1\n<<<<<<< ours\nA\n=======\nC\n>>>>>>> theirs\n3\n4\n5\n<<<<<<< ours\nB\n=======\nD\n>>>>>>> theirs\n7\n8\n9\n", 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			lv := Zealous
			if c.level == "eager" {
				lv = Eager
			}
			got, cs := Merge([]byte(base), []byte(c.ours), []byte(c.theirs), MergeOptions{Ours: "ours", Theirs: "theirs", Level: lv})
			if string(got) != c.want || len(cs) != c.conflicts {
				t.Fatalf("got %d conflicts:\n%s\nwant %d:\n%s", len(cs), got, c.conflicts, c.want)
			}
		})
	}
	got, cs := Merge([]byte("a\r\nb\r\nc\r\n"), []byte("a\r\nX\r\nc\r\n"), []byte("a\r\nY\r\nc\r\n"), MergeOptions{Ours: "ours", Theirs: "theirs", Level: Zealous})
	if want := "a\r\n<<<<<<< ours\r\nX\r\n=======\r\nY\r\n>>>>>>> theirs\r\nc\r\n"; string(got) != want || len(cs) != 1 {
		t.Fatalf("CRLF: got %q", got)
	}
}

// FuzzMerge compares Merge with `git merge-file` on texts the fuzzer
// derives (one git process per input; skipped without git).
func FuzzMerge(f *testing.F) {
	f.Add([]byte("1\n2\n3\n"), []byte("1\nX\n3\n"), []byte("1\n2\nY\n"))
	f.Add([]byte("a\nb\na\nb\n"), []byte("a\nb\n"), []byte("b\na\nb\n"))
	f.Add([]byte("x"), []byte("y"), []byte("x\n"))
	if _, err := exec.LookPath("git"); err != nil {
		f.Skip("git binary not found")
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, base, ours, theirs []byte) {
		for _, d := range [][]byte{base, ours, theirs} {
			if len(d) > 4096 || bytes.IndexByte(d, 0) >= 0 {
				return // git merges NUL-holding files as binary
			}
		}
		got, conflicts := Merge(base, ours, theirs, MergeOptions{Ours: "ours", Theirs: "theirs", Level: ZealousAlnum})
		want, n := gitMergeFile(t, dir, base, ours, theirs)
		if !bytes.Equal(got, want) || len(conflicts) != min(n, 127) {
			t.Fatalf("%d conflicts, git %d\n--- dome\n%q\n--- git\n%q", len(conflicts), n, got, want)
		}
	})
}

// FuzzDiff checks that Diff's changes turn a into b.
func FuzzDiff(f *testing.F) {
	f.Add([]byte("a\nb\nc\n"), []byte("a\nc\nd\n"))
	f.Fuzz(func(t *testing.T, a, b []byte) {
		la, lb := Lines(a), Lines(b)
		var out []string
		i := 0
		for _, c := range Diff(la, lb) {
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
	})
}
