package xdiff

import (
	"bytes"
	"fmt"
	"math/rand"
	"os/exec"
	"testing"

	"github.com/dome-registry/dome/internal/gittest"
)

// mergeCases builds three-way cases from the diff pairs: theirs is a
// further edit of the base.
func mergeCases(seed int64, ps []pair) []triple {
	r := rand.New(rand.NewSource(seed))
	out := make([]triple, 0, len(ps))
	for _, p := range ps {
		edits := 1 + r.Intn(len(Lines(p.a))/20+3)
		out = append(out, triple{p.a, p.b, mutateWith(r, p.a, edits, 6, r.Intn(2) == 0)})
	}
	return out
}

// checkMerges compares Merge at level Zealous with git apply --3way, and
// returns how many cases merged cleanly and how many conflicted.
func checkMerges(t *testing.T, cs []triple) (clean, conflicted int) {
	t.Helper()
	want, n := gitApply3Way(t, cs)
	for i, c := range cs {
		got, conflicts := Merge(c.base, c.ours, c.theirs, MergeOptions{Ours: "ours", Theirs: "theirs", Level: Zealous})
		if !bytes.Equal(got, want[i]) || len(conflicts) != n[i] {
			dump(t, fmt.Sprintf("zmerge%d", i), c.base, c.ours, c.theirs)
			t.Fatalf("case %d: %d conflicts, git %d\n--- dome\n%s\n--- git\n%s\n--- base\n%s--- ours\n%s--- theirs\n%s",
				i, len(conflicts), n[i], got, want[i], c.base, c.ours, c.theirs)
		}
		if n[i] == 0 {
			clean++
		} else {
			conflicted++
		}
	}
	return clean, conflicted
}

// TestMergeMatchesGit: byte-identical output and the same number of
// conflicts as `git merge-file` (level ZealousAlnum) on three-way cases
// built from the pairs.
func TestMergeMatchesGit(t *testing.T) {
	gittest.Need(t)
	dir := t.TempDir()
	clean, conflicted := 0, 0
	cs := mergeCases(3, cases(3))
	cs = append(cs, mergeCases(4, moreCases(4, 150))...)
	for i, c := range cs {
		got, conflicts := Merge(c.base, c.ours, c.theirs, MergeOptions{Ours: "ours", Theirs: "theirs", Level: ZealousAlnum})
		want, n := gitMergeFile(t, dir, c)
		if !bytes.Equal(got, want) || len(conflicts) != min(n, 127) {
			dump(t, fmt.Sprintf("amerge%d", i), c.base, c.ours, c.theirs)
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

// TestMergeZealousMatchesGit: the same at level Zealous (the level of git
// apply --3way, which dome's --three-way follows) against git apply
// --3way, on many more cases.
func TestMergeZealousMatchesGit(t *testing.T) {
	gittest.Need(t)
	cs := mergeCases(5, cases(6))
	cs = append(cs, mergeCases(7, moreCases(8, 1200))...)
	clean, conflicted := checkMerges(t, cs)
	t.Logf("%d clean, %d with conflicts", clean, conflicted)
	if clean == 0 || conflicted == 0 {
		t.Fatal("the cases do not exercise both outcomes")
	}
}

// TestMergeCases pins the decisions git makes at the edges: changes that
// touch conflict, identical changes do not, conflicts narrow to the lines
// that differ and join across few lines, markers follow the line ends.
func TestMergeCases(t *testing.T) {
	base := "1\n2\n3\n4\n5\n6\n7\n8\n9\n"
	for _, c := range []struct {
		name                      string
		base, ours, theirs, level string
		want                      string
		conflicts                 int
	}{
		{"separate", base, "1\nX\n3\n4\n5\n6\n7\n8\n9\n", "1\n2\n3\n4\n5\n6\n7\nY\n9\n", "", "1\nX\n3\n4\n5\n6\n7\nY\n9\n", 0},
		{"adjacent lines conflict", base, "1\n2\nX\n4\n5\n6\n7\n8\n9\n", "1\n2\n3\nY\n5\n6\n7\n8\n9\n", "", "1\n2\n<<<<<<< ours\nX\n4\n=======\n3\nY\n>>>>>>> theirs\n5\n6\n7\n8\n9\n", 1},
		{"insert next to a change", base, "1\n2\nX\n4\n5\n6\n7\n8\n9\n", "1\n2\n3\nI\n4\n5\n6\n7\n8\n9\n", "", "1\n2\n<<<<<<< ours\nX\n=======\n3\nI\n>>>>>>> theirs\n4\n5\n6\n7\n8\n9\n", 1},
		{"identical", base, "1\nX\n3\n4\n5\n6\n7\n8\n9\n", "1\nX\n3\n4\n5\n6\n7\n8\n9\n", "", "1\nX\n3\n4\n5\n6\n7\n8\n9\n", 0},
		{"narrowed", base, "1\nA\nB\nC\n5\n6\n7\n8\n9\n", "1\nA\nZ\nC\n5\n6\n7\n8\n9\n", "", "1\nA\n<<<<<<< ours\nB\n=======\nZ\n>>>>>>> theirs\nC\n5\n6\n7\n8\n9\n", 1},
		{"joined", base, "1\nA\n3\n4\n5\nB\n7\n8\n9\n", "1\nC\n3\n4\n5\nD\n7\n8\n9\n", "", "1\n<<<<<<< ours\nA\n3\n4\n5\nB\n=======\nC\n3\n4\n5\nD\n>>>>>>> theirs\n7\n8\n9\n", 1},
		{"four lines apart", base, "A\n2\n3\n4\n5\nB\n7\n8\n9\n", "C\n2\n3\n4\n5\nD\n7\n8\n9\n", "", "<<<<<<< ours\nA\n=======\nC\n>>>>>>> theirs\n2\n3\n4\n5\n<<<<<<< ours\nB\n=======\nD\n>>>>>>> theirs\n7\n8\n9\n", 2},
		{"a change between is not joined over", base, "1\nA\n3\n4\n5\nB\n7\n8\n9\n", "1\nC\n3\nX\n5\nD\n7\n8\n9\n", "", "1\n<<<<<<< ours\nA\n=======\nC\n>>>>>>> theirs\n3\nX\n5\n<<<<<<< ours\nB\n=======\nD\n>>>>>>> theirs\n7\n8\n9\n", 2},
		{"braces joined with alnum", "1\n2\n}\n}\n}\n}\n7\n8\n", "1\nA\n}\n}\n}\n}\nB\n8\n", "1\nC\n}\n}\n}\n}\nD\n8\n", "alnum", "1\n<<<<<<< ours\nA\n}\n}\n}\n}\nB\n=======\nC\n}\n}\n}\n}\nD\n>>>>>>> theirs\n8\n", 1},
		{"braces not joined without", "1\n2\n}\n}\n}\n}\n7\n8\n", "1\nA\n}\n}\n}\n}\nB\n8\n", "1\nC\n}\n}\n}\n}\nD\n8\n", "", "1\n<<<<<<< ours\nA\n=======\nC\n>>>>>>> theirs\n}\n}\n}\n}\n<<<<<<< ours\nB\n=======\nD\n>>>>>>> theirs\n8\n", 2},
		{"alnum does not join across x", "1\n2\nx\nx\nx\nx\n7\n8\n", "1\nA\nx\nx\nx\nx\nB\n8\n", "1\nC\nx\nx\nx\nx\nD\n8\n", "alnum", "1\n<<<<<<< ours\nA\n=======\nC\n>>>>>>> theirs\nx\nx\nx\nx\n<<<<<<< ours\nB\n=======\nD\n>>>>>>> theirs\n8\n", 2},
		{"alnum does not join across 5", "1\n2\n5\n5\n5\n5\n7\n8\n", "1\nA\n5\n5\n5\n5\nB\n8\n", "1\nC\n5\n5\n5\n5\nD\n8\n", "alnum", "1\n<<<<<<< ours\nA\n=======\nC\n>>>>>>> theirs\n5\n5\n5\n5\n<<<<<<< ours\nB\n=======\nD\n>>>>>>> theirs\n8\n", 2},
		{"alnum does not join across X", "1\n2\nX\nX\nX\nX\n7\n8\n", "1\nA\nX\nX\nX\nX\nB\n8\n", "1\nC\nX\nX\nX\nX\nD\n8\n", "alnum", "1\n<<<<<<< ours\nA\n=======\nC\n>>>>>>> theirs\nX\nX\nX\nX\n<<<<<<< ours\nB\n=======\nD\n>>>>>>> theirs\n8\n", 2},
		{"alnum joins across _", "1\n2\n_\n_\n_\n_\n7\n8\n", "1\nA\n_\n_\n_\n_\nB\n8\n", "1\nC\n_\n_\n_\n_\nD\n8\n", "alnum", "1\n<<<<<<< ours\nA\n_\n_\n_\n_\nB\n=======\nC\n_\n_\n_\n_\nD\n>>>>>>> theirs\n8\n", 1},
		{"alnum joins across é", "1\n2\né\né\né\né\n7\n8\n", "1\nA\né\né\né\né\nB\n8\n", "1\nC\né\né\né\né\nD\n8\n", "alnum", "1\n<<<<<<< ours\nA\né\né\né\né\nB\n=======\nC\né\né\né\né\nD\n>>>>>>> theirs\n8\n", 1},
		{"alnum joins across tab;", "1\n2\n\t;\n\t;\n\t;\n\t;\n7\n8\n", "1\nA\n\t;\n\t;\n\t;\n\t;\nB\n8\n", "1\nC\n\t;\n\t;\n\t;\n\t;\nD\n8\n", "alnum", "1\n<<<<<<< ours\nA\n\t;\n\t;\n\t;\n\t;\nB\n=======\nC\n\t;\n\t;\n\t;\n\t;\nD\n>>>>>>> theirs\n8\n", 1},
		{"eager keeps two", base, "1\nA\n3\n4\n5\nB\n7\n8\n9\n", "1\nC\n3\n4\n5\nD\n7\n8\n9\n", "eager", "1\n<<<<<<< ours\nA\n=======\nC\n>>>>>>> theirs\n3\n4\n5\n<<<<<<< ours\nB\n=======\nD\n>>>>>>> theirs\n7\n8\n9\n", 2},
		{"minimal keeps identical", base, "1\nX\n3\n4\n5\n6\n7\n8\n9\n", "1\nX\n3\n4\n5\n6\n7\n8\n9\n", "minimal", "1\n<<<<<<< ours\nX\n=======\nX\n>>>>>>> theirs\n3\n4\n5\n6\n7\n8\n9\n", 1},
		{"unterminated sides", "a\nb", "a\nX", "a\nY", "", "a\n<<<<<<< ours\nX\n=======\nY\n>>>>>>> theirs\n", 1},
		{"CRLF", "a\r\nb\r\nc\r\n", "a\r\nX\r\nc\r\n", "a\r\nY\r\nc\r\n", "", "a\r\n<<<<<<< ours\r\nX\r\n=======\r\nY\r\n>>>>>>> theirs\r\nc\r\n", 1},
		{"CRLF unterminated", "a\r\nb", "a\r\nX", "a\r\nY", "", "a\r\n<<<<<<< ours\r\nX\r\n=======\r\nY\r\n>>>>>>> theirs\r\n", 1},
		{"CRLF per conflict", "a\r\nb\r\nc\nd\ne\nf\ng\n", "a\r\nX\r\nc\nd\ne\nf\nZ\n", "a\r\nY\r\nc\nd\ne\nf\nW\n", "", "a\r\n<<<<<<< ours\r\nX\r\n=======\r\nY\r\n>>>>>>> theirs\r\nc\nd\ne\nf\n<<<<<<< ours\nZ\n=======\nW\n>>>>>>> theirs\n", 2},
		{"LF when base's first line is", "b\nc\r\n", "X\nc\r\n", "Y\nc\r\n", "", "<<<<<<< ours\nX\n=======\nY\n>>>>>>> theirs\nc\r\n", 1},
		{"CRLF from base when the sides say nothing", "b\r\nc\r\n", "X", "Y", "", "<<<<<<< ours\r\nX\r\n=======\r\nY\r\n>>>>>>> theirs\r\n", 1},
		{"LF when a side's line before is", "a\r\nb\nc\n", "a\r\nX\nc\n", "a\nb\nc\nY\n", "", "<<<<<<< ours\na\r\nX\n=======\na\nb\n>>>>>>> theirs\nc\nY\n", 1},
		{"LF without a base line", "", "X", "Y\r\n", "", "<<<<<<< ours\nX\n=======\nY\r\n>>>>>>> theirs\n", 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			lv := map[string]Level{"": Zealous, "eager": Eager, "minimal": Minimal, "alnum": ZealousAlnum}[c.level]
			got, cs := Merge([]byte(c.base), []byte(c.ours), []byte(c.theirs), MergeOptions{Ours: "ours", Theirs: "theirs", Level: lv})
			if string(got) != c.want || len(cs) != c.conflicts {
				t.Fatalf("got %d conflicts:\n%q\nwant %d:\n%q", len(cs), got, c.conflicts, c.want)
			}
		})
	}
}

// TestMergeMarkers: marker size and missing labels.
func TestMergeMarkers(t *testing.T) {
	got, _ := Merge([]byte("a\nb\n"), []byte("a\nX\n"), []byte("a\nY\n"), MergeOptions{MarkerSize: 3, Level: Zealous})
	if want := "a\n<<<\nX\n===\nY\n>>>\n"; string(got) != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

// TestMergeConflictRanges: the base lines each conflict came from.
func TestMergeConflictRanges(t *testing.T) {
	base := "1\n2\n3\n4\n5\n6\n7\n8\n9\n"
	_, cs := Merge([]byte(base), []byte("1\nA\nB\nC\n5\n6\n7\nQ\n9\n"), []byte("1\nA\nZ\nC\n5\n6\n7\nR\n9\n"), MergeOptions{Level: Zealous})
	if len(cs) != 2 || cs[0] != (Conflict{1, 4}) || cs[1] != (Conflict{7, 8}) {
		t.Fatalf("conflicts %+v", cs)
	}
}

// FuzzMerge compares Merge with `git merge-file` on texts the fuzzer
// derives (one git process per input; skipped without git).
func FuzzMerge(f *testing.F) {
	f.Add([]byte("1\n2\n3\n"), []byte("1\nX\n3\n"), []byte("1\n2\nY\n"))
	f.Add([]byte("a\nb\na\nb\n"), []byte("a\nb\n"), []byte("b\na\nb\n"))
	f.Add([]byte("x"), []byte("y"), []byte("x\n"))
	f.Add([]byte("a\r\nb\r\n}\n}\n}\n}\nc\n"), []byte("a\r\nX\r\n}\n}\n}\n}\nc\n"), []byte("a\nY\n}\n}\n}\n}\nZ"))
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
		want, n := gitMergeFile(t, dir, triple{base, ours, theirs})
		if !bytes.Equal(got, want) || len(conflicts) != min(n, 127) {
			t.Fatalf("%d conflicts, git %d\n--- dome\n%q\n--- git\n%q", len(conflicts), n, got, want)
		}
	})
}

// FuzzMergeZealous compares Merge at level Zealous with git apply --3way
// (five git processes per input; skipped without git).
func FuzzMergeZealous(f *testing.F) {
	f.Add([]byte("1\n2\n3\n"), []byte("1\nX\n3\n"), []byte("1\n2\nY\n"))
	f.Add([]byte("1\n2\n}\n}\n}\n}\n7\n8\n"), []byte("1\nA\n}\n}\n}\n}\nB\n8\n"), []byte("1\nC\n}\n}\n}\n}\nD\n8\n"))
	if _, err := exec.LookPath("git"); err != nil {
		f.Skip("git binary not found")
	}
	f.Fuzz(func(t *testing.T, base, ours, theirs []byte) {
		for _, d := range [][]byte{base, ours, theirs} {
			if len(d) > 4096 || bytes.IndexByte(d, 0) >= 0 || bytes.Contains(d, []byte("<<<<<<<")) {
				return // binary to git, or markers that would confuse the count
			}
		}
		got, conflicts := Merge(base, ours, theirs, MergeOptions{Ours: "ours", Theirs: "theirs", Level: Zealous})
		want, n := gitApply3Way(t, []triple{{base, ours, theirs}})
		if !bytes.Equal(got, want[0]) || len(conflicts) != n[0] {
			t.Fatalf("%d conflicts, git %d\n--- dome\n%q\n--- git\n%q", len(conflicts), n[0], got, want[0])
		}
	})
}
