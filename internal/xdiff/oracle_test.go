package xdiff

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/dome-registry/dome/internal/gittest"
)

// The oracles: the git binary decides. Batches of inputs go through one
// git process where git allows it (git diff --no-index on two directories;
// git apply --3way of one patch touching one file per case), so the tests
// can afford many cases.

type pair struct{ a, b []byte }

type triple struct{ base, ours, theirs []byte }

// runGit runs git in dir and returns stdout; exit status 1 is not an error
// (differences found, conflicts).
func runGit(t testing.TB, dir string, stdin io.Reader, args ...string) []byte {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir, cmd.Env, cmd.Stdin = dir, gittest.Env(), stdin
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var ee *exec.ExitError
	if err != nil && !(errors.As(err, &ee) && ee.ExitCode() == 1) {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, stderr.Bytes())
	}
	return out
}

func writeFiles(t testing.TB, dir string, files map[string][]byte) {
	t.Helper()
	for name, data := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

var hunkRE = regexp.MustCompile(`^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@`)

// parseChanges reads the changes off the hunks of git's unified diff of
// one file: each run of removed and added lines between context lines.
func parseChanges(out string) []Change {
	var cs []Change
	var i, j int
	var cur *Change
	flush := func() {
		if cur != nil {
			cs = append(cs, *cur)
			cur = nil
		}
	}
	in := false
	for _, l := range strings.Split(out, "\n") {
		if m := hunkRE.FindStringSubmatch(l); m != nil {
			flush()
			num := func(s string, def int) int {
				if s == "" {
					return def
				}
				n, _ := strconv.Atoi(s)
				return n
			}
			i, j = num(m[1], 0), num(m[3], 0)
			if num(m[2], 1) > 0 {
				i--
			}
			if num(m[4], 1) > 0 {
				j--
			}
			in = true
			continue
		}
		if !in || l == "" {
			continue
		}
		switch l[0] {
		case ' ':
			flush()
			i, j = i+1, j+1
		case '-', '+':
			if cur == nil {
				cur = &Change{I1: i, I2: j}
			}
			if l[0] == '-' {
				cur.Chg1++
				i++
			} else {
				cur.Chg2++
				j++
			}
		case '\\':
		default:
			in = false
		}
	}
	flush()
	return cs
}

// diffArgs: git's Myers diff without the indent heuristic. One line of
// context, not none: with no context git diff first cuts the files'
// common tail (whole 1024-byte blocks of it), which changes the line
// counts the set-aside rules see; with context it diffs the whole files,
// as git format-patch and git's merges do.
var diffArgs = []string{"diff", "--no-index", "--no-color", "--no-renames", "--no-indent-heuristic", "--diff-algorithm=myers", "-U1"}

// gitDiffs diffs every pair with one `git diff --no-index` of two
// directories and returns the changes of each.
func gitDiffs(t testing.TB, ps []pair) [][]Change {
	t.Helper()
	dir := t.TempDir()
	files := map[string][]byte{}
	for i, p := range ps {
		files[fmt.Sprintf("a/f%05d", i)] = p.a
		files[fmt.Sprintf("b/f%05d", i)] = p.b
	}
	writeFiles(t, dir, files)
	out := "\n" + string(runGit(t, dir, nil, append(diffArgs, "a", "b")...))
	res := make([][]Change, len(ps))
	for _, sec := range strings.Split(out, "\ndiff --git a/a/f")[1:] {
		i, err := strconv.Atoi(sec[:5])
		if err != nil || i >= len(ps) {
			t.Fatalf("unexpected git diff section %.40q", sec)
		}
		res[i] = parseChanges(sec)
	}
	return res
}

// gitMergeFile runs `git merge-file -p` (level ZealousAlnum) and returns
// the result and the number of conflicts (git's exit status, capped).
func gitMergeFile(t testing.TB, dir string, c triple) ([]byte, int) {
	t.Helper()
	writeFiles(t, dir, map[string][]byte{"base": c.base, "ours": c.ours, "theirs": c.theirs})
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

// gitApply3Way merges every triple at level Zealous, the level of git
// apply --3way, which dome's three-way apply follows: a repository gets
// three commits, base with one file per triple and ours and theirs on top
// of it; ours is checked out and `git apply --3way` applies the diff from
// base to theirs, merging each file (git merge would do the same merge,
// but its merge strategy diffs with the histogram algorithm). It returns
// the merged files and their numbers of conflicts.
func gitApply3Way(t testing.TB, cs []triple) ([][]byte, []int) {
	t.Helper()
	dir := t.TempDir()
	runGit(t, dir, nil, "init", "-q", "-b", "base")
	var stream bytes.Buffer
	commit := func(branch string, pick func(triple) []byte) {
		fmt.Fprintf(&stream, "commit refs/heads/%s\ncommitter T <t@t> 0 +0000\ndata 0\n", branch)
		if branch != "base" {
			stream.WriteString("from refs/heads/base\n")
		}
		for i, c := range cs {
			data := pick(c)
			fmt.Fprintf(&stream, "M 100644 inline f%05d\ndata %d\n", i, len(data))
			stream.Write(data)
			stream.WriteByte('\n')
		}
	}
	commit("base", func(c triple) []byte { return c.base })
	commit("ours", func(c triple) []byte { return c.ours })
	commit("theirs", func(c triple) []byte { return c.theirs })
	runGit(t, dir, &stream, "fast-import", "--quiet")
	runGit(t, dir, nil, "checkout", "-q", "ours")
	patch := runGit(t, dir, nil, "diff", "--no-renames", "--full-index", "base", "theirs")
	if len(patch) > 0 {
		cmd := exec.Command("git", "apply", "--3way", "-")
		cmd.Dir, cmd.Env, cmd.Stdin = dir, gittest.Env(), bytes.NewReader(patch)
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		if err != nil && !(errors.As(err, &ee) && ee.ExitCode() == 1 && bytes.Contains(out, []byte("with conflicts"))) {
			t.Fatalf("git apply --3way: %v\n%s", err, out)
		}
	}
	outs, conflicts := make([][]byte, len(cs)), make([]int, len(cs))
	for i := range cs {
		data, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("f%05d", i)))
		if err != nil {
			t.Fatal(err)
		}
		outs[i] = data
		for _, l := range Lines(data) {
			if l == "<<<<<<< ours\n" || l == "<<<<<<< ours\r\n" {
				conflicts[i]++
			}
		}
	}
	return outs, conflicts
}
