package patch

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestParse_Traditional(t *testing.T) {
	hunk := "@@ -1 +1 @@\n-a\n+b\n"
	add := "@@ -0,0 +1 @@\n+b\n"
	del := "@@ -1 +0,0 @@\n-a\n"
	cases := []struct {
		name, text   string
		guess        bool
		strip        int
		old, new     string
		isNew, isDel bool
		err          string
	}{
		{name: "diff -u with timestamps", text: "--- a/x.txt\t2024-01-02 03:04:05.000000000 +0100\n+++ b/x.txt\t2024-01-02 03:05:05.000000000 +0100\n" + hunk, strip: 1, old: "x.txt", new: "x.txt"},
		{name: "no timestamps", text: "--- a/d/x\n+++ b/d/x\n" + hunk, strip: 1, old: "d/x", new: "d/x"},
		{name: "timestamp after spaces", text: "--- a/x  2024-01-02 03:04:05 +0000\n+++ b/x  2024-01-02 03:04:05 +0000\n" + hunk, strip: 1, old: "x", new: "x"},
		{name: "name with a space", text: "--- a/my file.txt\t2024-01-02 03:04:05 +0000\n+++ b/my file.txt\t2024-01-02 03:04:05 +0000\n" + hunk, strip: 1, old: "my file.txt", new: "my file.txt"},
		{name: "quoted name", text: "--- \"a/t\\303\\251st\"\n+++ \"b/t\\303\\251st\"\n" + hunk, strip: 1, old: "tést", new: "tést"},
		{name: "created from /dev/null", text: "--- /dev/null\n+++ b/new.txt\n" + add, strip: 1, new: "new.txt", isNew: true},
		{name: "deleted to /dev/null", text: "--- a/gone.txt\n+++ /dev/null\n" + del, strip: 1, old: "gone.txt", isDel: true},
		{name: "diff -N creation (epoch)", text: "--- a/n.txt\t1970-01-01 00:00:00.000000000 +0000\n+++ b/n.txt\t2024-01-02 03:04:05.000000000 +0000\n" + add, strip: 1, new: "n.txt", isNew: true},
		{name: "diff -N deletion (epoch in another zone)", text: "--- a/n.txt\t2024-01-02 03:04:05 +0000\n+++ b/n.txt\t1970-01-01 01:00:00 +0100\n" + del, strip: 1, old: "n.txt", isDel: true},
		{name: "x.orig vs x: the shorter name", text: "--- x.c.orig\n+++ x.c\n" + hunk, strip: 0, old: "x.c", new: "x.c"},
		{name: "x vs x.new: the shorter name", text: "--- d/x.c\n+++ d/x.c.new\n" + hunk, strip: 0, old: "d/x.c", new: "d/x.c"},
		{name: "different names: the new one", text: "--- a/one\n+++ b/two\n" + hunk, strip: 1, old: "two", new: "two"},
		{name: "guess -p0: names without a slash", text: "--- old.txt\t2024-01-02 03:04:05 +0000\n+++ new.txt\t2024-01-02 03:04:05 +0000\n" + hunk, guess: true, strip: 1, old: "new.txt", new: "new.txt"},
		{name: "guess -p0 for a creation", text: "--- /dev/null\n+++ f.txt\n" + add, guess: true, strip: 1, new: "f.txt", isNew: true},
		{name: "no guess with slashes", text: "--- a/f.txt\n+++ b/f.txt\n" + hunk, guess: true, strip: 1, old: "f.txt", new: "f.txt"},
		{name: "explicit -p1 is not guessed", text: "--- old.txt\n+++ new.txt\n" + hunk, strip: 1, err: "cannot strip 1 leading components"},
		{name: "CRLF header lines", text: "--- a/x\r\n+++ b/x\r\n" + hunk, strip: 1, old: "x", new: "x"},
		{name: "path escape refused", text: "--- a/../x\n+++ b/../x\n" + hunk, strip: 1, err: "path"},
		{name: "absolute path refused", text: "--- /etc/passwd\n+++ /etc/passwd\n" + hunk, strip: 0, err: "path"},
		{name: "both /dev/null", text: "--- /dev/null\n+++ /dev/null\n" + hunk, strip: 1, err: "both names are /dev/null"},
		{name: "hunk without header", text: "some text\n" + hunk, strip: 1, err: "without a file header"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ps, err := Parse([]byte(c.text), ParseOptions{Strip: c.strip, GuessStrip: c.guess})
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %v, want %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(ps) != 1 || len(ps[0].Files) != 1 {
				t.Fatalf("%d patches", len(ps))
			}
			f := ps[0].Files[0]
			if f.OldPath != c.old || f.NewPath != c.new || f.IsNew != c.isNew || f.IsDelete != c.isDel || len(f.Hunks) != 1 {
				t.Fatalf("got old=%q new=%q new?%v del?%v hunks=%d", f.OldPath, f.NewPath, f.IsNew, f.IsDelete, len(f.Hunks))
			}
		})
	}
}

// TestApply_TraditionalMatchesGitApply builds random pairs of trees, diffs
// them with GNU diff -ruN (plain unified diffs: timestamps, epoch times for
// created and deleted files, no "diff --git" lines) and with diff -u on a
// single renamed-copy pair, and checks that dome applies each to the same
// tree as git apply.
func TestApply_TraditionalMatchesGitApply(t *testing.T) {
	if _, err := exec.LookPath("diff"); err != nil {
		t.Skip("no diff program: " + err.Error())
	}
	rng := rand.New(rand.NewPCG(3, 5))
	for round := 0; round < 12; round++ {
		t.Run(fmt.Sprint(round), func(t *testing.T) {
			tmp := t.TempDir()
			oldFiles := map[string]tf{}
			names := []string{"a.txt", "b.txt", "dir/c.txt", "dir/sub/d.txt", "with space.txt", "e.md", "dir/f.go"}
			for _, n := range names {
				if rng.IntN(4) > 0 {
					oldFiles[n] = tf{data: randomText(rng, 5+rng.IntN(40), rng.IntN(5) == 0)}
				}
			}
			if len(oldFiles) == 0 {
				oldFiles["a.txt"] = tf{data: randomText(rng, 10, false)}
			}
			newFiles := map[string]tf{}
			for n, f := range oldFiles {
				switch rng.IntN(5) {
				case 0: // deleted
				case 1: // unchanged
					newFiles[n] = f
				default:
					newFiles[n] = tf{data: editText(rng, f.data)}
				}
			}
			for _, n := range names {
				if _, ok := oldFiles[n]; !ok && rng.IntN(2) == 0 {
					newFiles[n] = tf{data: randomText(rng, 1+rng.IntN(20), rng.IntN(5) == 0)}
				}
			}
			writeDir(t, filepath.Join(tmp, "old"), oldFiles)
			writeDir(t, filepath.Join(tmp, "new"), newFiles)
			cmd := exec.Command("diff", "-ruN", "old", "new")
			cmd.Dir = tmp
			out, err := cmd.Output()
			if err == nil { // exit 0: no differences
				return
			}
			if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
				t.Fatalf("diff: %v", err)
			}
			checkAgainstGit(t, oldFiles, out, ParseOptions{Strip: DefaultStrip, GuessStrip: true})
		})
	}
	// diff -u outputs concatenated: each file's "---" follows the last hunk of the one before.
	t.Run("concatenated diff -u", func(t *testing.T) {
		tmp := t.TempDir()
		base := map[string]tf{}
		var all []byte
		for _, n := range []string{"a.txt", "b.txt", "c.txt"} {
			old := randomText(rng, 20, false)
			base[n] = tf{data: old}
			os.WriteFile(filepath.Join(tmp, n), []byte(old), 0o644)
			os.WriteFile(filepath.Join(tmp, n+".new"), []byte(editText(rng, old)), 0o644)
			cmd := exec.Command("diff", "-u", n, n+".new")
			cmd.Dir = tmp
			out, _ := cmd.Output()
			all = append(all, out...)
		}
		ps, err := Parse(all, ParseOptions{Strip: DefaultStrip, GuessStrip: true})
		if err != nil || len(ps) != 1 || len(ps[0].Files) != 3 {
			t.Fatalf("parse: %v\n%s", err, all)
		}
		checkAgainstGit(t, base, all, ParseOptions{Strip: DefaultStrip, GuessStrip: true})
	})
	// diff -u old new in one folder: names without a "/", so -p0 is guessed.
	t.Run("single file -p0 guess", func(t *testing.T) {
		tmp := t.TempDir()
		old := randomText(rng, 30, false)
		os.WriteFile(filepath.Join(tmp, "notes.txt"), []byte(old), 0o644)
		os.WriteFile(filepath.Join(tmp, "notes.txt.new"), []byte(editText(rng, old)), 0o644)
		cmd := exec.Command("diff", "-u", "notes.txt", "notes.txt.new")
		cmd.Dir = tmp
		out, _ := cmd.Output()
		checkAgainstGit(t, map[string]tf{"notes.txt": {data: old}}, out, ParseOptions{Strip: DefaultStrip, GuessStrip: true})
	})
}

func checkAgainstGit(t *testing.T, base map[string]tf, diff []byte, opts ParseOptions) {
	t.Helper()
	dir := gitRepo(t, base)
	os.WriteFile(filepath.Join(dir, "..", "p.diff"), diff, 0o644)
	gitOut, gitErr := runErr(dir, nil, "apply", "--cached", filepath.Join(dir, "..", "p.diff"))
	st := NewMemStore(nil)
	root := build(t, st, base)
	ps, err := Parse(diff, opts)
	if err != nil {
		t.Fatalf("parse: %v\n%s", err, diff)
	}
	if len(ps) != 1 {
		t.Fatalf("%d patches", len(ps))
	}
	res, err := Apply(st, root, ps[0], Options{})
	if (gitErr == nil) != (err == nil) {
		t.Fatalf("git apply: %v %s; dome: %v\n%s", gitErr, gitOut, err, diff)
	}
	if err != nil {
		return
	}
	want := strings.TrimSpace(run(t, dir, nil, "write-tree"))
	if res.Tree.String() != want {
		t.Fatalf("tree %s, git apply %s\n%s", res.Tree, want, diff)
	}
}

func randomText(rng *rand.Rand, n int, noEOL bool) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "line %d %d\n", i, rng.IntN(1000))
	}
	s := b.String()
	if noEOL {
		s = strings.TrimSuffix(s, "\n")
	}
	return s
}

func editText(rng *rand.Rand, s string) string {
	ls := strings.SplitAfter(s, "\n")
	for k := 1 + rng.IntN(3); k > 0; k-- {
		i := rng.IntN(len(ls))
		switch rng.IntN(3) {
		case 0:
			ls[i] = fmt.Sprintf("edited %d\n", rng.IntN(1000))
		case 1:
			ls = append(ls[:i], append([]string{fmt.Sprintf("inserted %d\n", rng.IntN(1000))}, ls[i:]...)...)
		default:
			if len(ls) > 1 {
				ls = append(ls[:i], ls[i+1:]...)
			}
		}
	}
	out := strings.Join(ls, "")
	if out == "" {
		out = "x\n"
	}
	return out
}

func writeDir(t *testing.T, dir string, files map[string]tf) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for n, f := range files {
		p := filepath.Join(dir, n)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(f.data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
