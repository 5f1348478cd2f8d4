package patch

import (
	"errors"
	"strings"
	"testing"
)

// threeWayPatch is a patch made against pre, changing "line 10".
func threeWayPatch(pre string) string {
	post := strings.Replace(pre, "line 10\n", "LINE 10\n", 1)
	return "diff --git a/a.txt b/a.txt\nindex " + BlobID([]byte(pre)).String() + ".." + BlobID([]byte(post)).String() + " 100644\n--- a/a.txt\n+++ b/a.txt\n@@ -7,7 +7,7 @@\n line 7\n line 8\n line 9\n-line 10\n+LINE 10\n line 11\n line 12\n line 13\n"
}

// TestApply_ThreeWayMergesFirst: as git apply --3way since git 2.32, the
// merge decides even where the hunks would apply directly. Here the lines
// around the patched one were edited, and a copy of the old block further
// down lets the direct application land there (at an offset, in the wrong
// place); the merge sees the edit next to the patched line: a conflict.
func TestApply_ThreeWayMergesFirst(t *testing.T) {
	st := NewMemStore(nil)
	st.WriteBlob([]byte(base20))
	p := mustParse(t, threeWayPatch(base20))
	block := strings.Join(strings.SplitAfter(base20, "\n")[6:13], "") // lines 7-13
	cur := strings.Replace(base20, "line 11\n", "eleven\n", 1) + "\n" + block
	root := build(t, st, map[string]tf{"a.txt": {data: cur}})
	direct, err := Apply(st, root, p, Options{})
	if err != nil || direct.Files[0].Method != "offset" {
		t.Fatalf("direct application: %v %+v", err, direct)
	}
	_, err = Apply(st, root, p, Options{ThreeWay: true})
	var ce *ConflictError
	if !errors.As(err, &ce) || ce.Conflicts[0].Reason != reasonMergeConflict || ce.Conflicts[0].Hunk != 1 {
		t.Fatalf("three-way: err = %v, want a merge conflict in hunk 1", err)
	}
	// apart from the patched lines, the merge is clean (and not "offset")
	cur = "new a\nnew b\n" + strings.Replace(base20, "line 17\n", "seventeen\n", 1)
	root = build(t, st, map[string]tf{"a.txt": {data: cur}})
	res, err := Apply(st, root, p, Options{ThreeWay: true})
	if err != nil || res.Files[0].Method != "three-way" {
		t.Fatalf("three-way: %v", err)
	}
	if got, want := files(t, st, res.Tree)["a.txt"].data, strings.Replace(cur, "line 10\n", "LINE 10\n", 1); got != want {
		t.Fatalf("merged %q", got)
	}
}

func TestApply_ThreeWayGitRules(t *testing.T) {
	st := NewMemStore(nil)
	st.WriteBlob([]byte(base20))
	t.Run("already applied", func(t *testing.T) {
		cur := strings.Replace(base20, "line 10\n", "LINE 10\n", 1)
		root := build(t, st, map[string]tf{"a.txt": {data: cur}})
		res, err := Apply(st, root, mustParse(t, threeWayPatch(base20)), Options{ThreeWay: true})
		if err != nil || files(t, st, res.Tree)["a.txt"].data != cur {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("a deletion is never merged", func(t *testing.T) {
		root := build(t, st, map[string]tf{"a.txt": {data: "changed\n"}})
		del := "diff --git a/a.txt b/a.txt\ndeleted file mode 100644\nindex " + BlobID([]byte("x\n")).String() + "..0000000000000000000000000000000000000000\n--- a/a.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n"
		st.WriteBlob([]byte("x\n"))
		_, err := Apply(st, root, mustParse(t, del), Options{ThreeWay: true})
		var ce *ConflictError
		if !errors.As(err, &ce) || ce.Conflicts[0].Reason == reasonMergeConflict {
			t.Fatalf("err = %v, want a plain failure", err)
		}
	})
	t.Run("a created file merges into the one there (add/add)", func(t *testing.T) {
		root := build(t, st, map[string]tf{"n.txt": {data: "one\ntwo\nthree\n"}})
		add := "diff --git a/n.txt b/n.txt\nnew file mode 100644\nindex 0000000..1111111\n--- /dev/null\n+++ b/n.txt\n@@ -0,0 +1,3 @@\n+one\n+TWO\n+three\n"
		res, err := Apply(st, root, mustParse(t, add), Options{ThreeWay: true, WriteConflicts: true})
		var ce *ConflictError
		if !errors.As(err, &ce) || len(ce.Conflicts) != 1 || ce.Conflicts[0].Path != "n.txt" {
			t.Fatalf("err = %v", err)
		}
		if got := files(t, st, res.Tree)["n.txt"].data; got != "one\n<<<<<<< ours\ntwo\n=======\nTWO\n>>>>>>> theirs\nthree\n" {
			t.Fatalf("merged:\n%s", got)
		}
		if _, err := Apply(st, root, mustParse(t, add), Options{}); err == nil {
			t.Fatal("without --three-way a created file that exists must not apply")
		}
	})
	t.Run("binary already applied", func(t *testing.T) {
		pre, post := []byte("\x00old"), []byte("\x00new")
		st.WriteBlob(pre)
		root := build(t, st, map[string]tf{"b.bin": {data: string(post)}})
		ps := []*Patch{{Files: []*File{{OldPath: "b.bin", NewPath: "b.bin", Similarity: -1,
			OldOID: BlobID(pre).String(), NewOID: BlobID(post).String(), Binary: &Binary{Kind: BinaryLiteral, Data: post}}}}}
		if _, err := Apply(st, root, ps[0], Options{}); err == nil {
			t.Fatal("strict: the file is not the preimage")
		}
		if _, err := Apply(st, root, ps[0], Options{ThreeWay: true}); err != nil {
			t.Fatalf("three-way, already applied: %v", err)
		}
	})
}

// TestApply_IndexModeIsTheOldMode: the mode on an index line is the mode
// the patch expected; a file whose mode differs keeps its own, as git
// apply keeps it ("has type 100755, expected 100644").
func TestApply_IndexModeIsTheOldMode(t *testing.T) {
	st := NewMemStore(nil)
	root := build(t, st, map[string]tf{"run.sh": {data: "a\n", mode: ModeExec}})
	p := mustParse(t, "diff --git a/run.sh b/run.sh\nindex 7898192..6178079 100644\n--- a/run.sh\n+++ b/run.sh\n@@ -1 +1 @@\n-a\n+b\n")
	res, err := Apply(st, root, p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := files(t, st, res.Tree)["run.sh"]; got.mode != ModeExec || got.data != "b\n" {
		t.Fatalf("got %+v, want the executable kept", got)
	}
	if out := string(Format(p)); !strings.Contains(out, "index 7898192..6178079 100644\n") {
		t.Fatalf("the canonical form lost the index mode:\n%s", out)
	}
}
