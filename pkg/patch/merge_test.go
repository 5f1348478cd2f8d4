package patch

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Merge3 against `git merge-file -p -L ours -L base -L theirs`.
func TestMerge3_MatchesGitMergeFile(t *testing.T) {
	base := "1\n2\n3\n4\n5\n6\n7\n8\n9\n"
	cases := []struct {
		name, ours, theirs string
		conflicts          int
	}{
		{"disjoint edits", "1\nTWO\n3\n4\n5\n6\n7\n8\n9\n", "1\n2\n3\n4\n5\n6\n7\nEIGHT\n9\n", 0},
		{"same edit both sides", "1\n2\nX\n4\n5\n6\n7\n8\n9\n", "1\n2\nX\n4\n5\n6\n7\n8\n9\n", 0},
		{"insert and delete apart", "0\n1\n2\n3\n4\n5\n6\n7\n8\n9\n", "1\n2\n3\n4\n5\n6\n7\n8\n", 0},
		{"conflicting edits", "1\n2\n3\nours\n5\n6\n7\n8\n9\n", "1\n2\n3\ntheirs\n5\n6\n7\n8\n9\n", 1},
		{"conflict with common prefix", "1\n2\n3\nsame\nours\n6\n7\n8\n9\n", "1\n2\n3\nsame\ntheirs\n6\n7\n8\n9\n", 1},
		{"no final newline on one side", "1\n2\n3\n4\n5\n6\n7\n8\nnine", "1\n2\n3\n4\n5\n6\n7\n8\n9\nten\n", 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, conflicts := Merge3([]byte(base), []byte(c.ours), []byte(c.theirs), MergeLabels{Ours: "ours", Theirs: "theirs"})
			if len(conflicts) != c.conflicts {
				t.Errorf("%d conflicts, want %d:\n%s", len(conflicts), c.conflicts, got)
			}
			dir := gitRepo(t, nil)
			for n, d := range map[string]string{"o": c.ours, "b": base, "t": c.theirs} {
				os.WriteFile(filepath.Join(dir, n), []byte(d), 0o644)
			}
			want, _ := runErr(dir, nil, "merge-file", "-p", "-L", "ours", "-L", "base", "-L", "theirs", "o", "b", "t")
			if string(got) != want {
				t.Errorf("dome:\n%s\ngit merge-file:\n%s", got, want)
			}
		})
	}
}

func TestApply_ThreeWay(t *testing.T) {
	orig := base20
	// The patch was made against orig; the tree has moved on in two places.
	dir := gitRepo(t, map[string]tf{"a.txt": {data: orig}})
	patchText := "diff --git a/a.txt b/a.txt\nindex " + BlobID([]byte(orig)).String()[:7] + ".." + BlobID([]byte(strings.Replace(orig, "line 10\n", "LINE 10\n", 1))).String()[:7] + " 100644\n--- a/a.txt\n+++ b/a.txt\n@@ -7,7 +7,7 @@\n line 7\n line 8\n line 9\n-line 10\n+LINE 10\n line 11\n line 12\n line 13\n"
	_ = dir
	st := NewMemStore(nil)
	st.WriteBlob([]byte(orig)) // the preimage is in the object store
	t.Run("clean merge", func(t *testing.T) {
		cur := strings.NewReplacer("line 8\n", "eight\n", "line 2\n", "two\n").Replace(orig)
		root := build(t, st, map[string]tf{"a.txt": {data: cur}})
		p := mustParse(t, patchText)
		if _, err := Apply(st, root, p, Options{}); err == nil {
			t.Fatal("strict apply should fail: line 8 changed in the context")
		}
		res, err := Apply(st, root, p, Options{ThreeWay: true})
		if err != nil {
			t.Fatalf("three-way: %v", err)
		}
		got := files(t, st, res.Tree)["a.txt"].data
		if want := strings.Replace(cur, "line 10\n", "LINE 10\n", 1); got != want || res.Files[0].Method != "three-way" {
			t.Errorf("got %q (%s)", got, res.Files[0].Method)
		}
	})
	t.Run("conflict", func(t *testing.T) {
		cur := strings.Replace(orig, "line 10\n", "ten\n", 1)
		root := build(t, st, map[string]tf{"a.txt": {data: cur}})
		p := mustParse(t, patchText)
		_, err := Apply(st, root, p, Options{ThreeWay: true})
		var ce *ConflictError
		if !errors.As(err, &ce) || ce.Conflicts[0].Hunk != 1 || ce.Conflicts[0].Reason != reasonMergeConflict {
			t.Fatalf("err = %v", err)
		}
		res, err := Apply(st, root, p, Options{ThreeWay: true, WriteConflicts: true})
		if !errors.As(err, &ce) || res.Tree.IsZero() {
			t.Fatalf("write conflicts: %v", err)
		}
		got := files(t, st, res.Tree)["a.txt"].data
		if !strings.Contains(got, "<<<<<<< ours\nten\n=======\nLINE 10\n>>>>>>> theirs\n") {
			t.Errorf("markers missing:\n%s", got)
		}
	})
	t.Run("preimage missing", func(t *testing.T) {
		other := NewMemStore(nil)
		root := build(t, other, map[string]tf{"a.txt": {data: strings.Replace(orig, "line 9\n", "nine\n", 1)}})
		_, err := Apply(other, root, mustParse(t, patchText), Options{ThreeWay: true})
		var ce *ConflictError
		if !errors.As(err, &ce) || !strings.Contains(ce.Conflicts[0].Reason, "not in the repository") {
			t.Fatalf("err = %v", err)
		}
	})
}
