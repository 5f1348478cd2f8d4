package patch

import (
	"bytes"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/dome-registry/dome/internal/gittest"
)

func newFiles(m map[string]tf) []NewFile {
	var out []NewFile
	for p, f := range m {
		mode := f.mode
		if mode == 0 {
			mode = ModeFile
		}
		out = append(out, NewFile{Path: p, Mode: mode, Data: []byte(f.data)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

func nlines(n int, f func(i int) string) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		b.WriteString(f(i))
	}
	return b.String()
}

var diffCases = []struct {
	name     string
	base, to map[string]tf
	git      bool // also round-trip through git apply
}{
	{"edit middle", map[string]tf{"a.txt": {data: nlines(30, func(i int) string { return "line " + string(rune('a'+i%26)) + "\n" })}},
		map[string]tf{"a.txt": {data: strings.Replace(nlines(30, func(i int) string { return "line " + string(rune('a'+i%26)) + "\n" }), "line k\n", "line K\nextra\n", 1)}}, true},
	{"two distant edits, two hunks", map[string]tf{"a": {data: nlines(40, func(i int) string { return strings.Repeat("x", i) + "\n" })}},
		map[string]tf{"a": {data: strings.Replace(strings.Replace(nlines(40, func(i int) string { return strings.Repeat("x", i) + "\n" }), strings.Repeat("x", 2)+"\n", "two\n", 1), strings.Repeat("x", 38)+"\n", "", 1)}}, true},
	{"create and delete", map[string]tf{"old.txt": {data: "bye\n"}, "keep": {data: "k\n"}}, map[string]tf{"keep": {data: "k\n"}, "dir/new.txt": {data: "hello\nworld\n"}}, true},
	{"empty file created", map[string]tf{"keep": {data: "k\n"}}, map[string]tf{"keep": {data: "k\n"}, "empty": {data: ""}}, true},
	{"no newline at end", map[string]tf{"n": {data: "a\nb"}}, map[string]tf{"n": {data: "a\nb\nc"}}, true},
	{"newline added at end", map[string]tf{"n": {data: "a\nb"}}, map[string]tf{"n": {data: "a\nb\n"}}, true},
	{"crlf", map[string]tf{"w": {data: "a\r\nb\r\nc\r\n"}}, map[string]tf{"w": {data: "a\r\nB\r\nc\r\n"}}, true},
	{"mode change only", map[string]tf{"run.sh": {data: "#!/bin/sh\n"}}, map[string]tf{"run.sh": {data: "#!/bin/sh\n", mode: ModeExec}}, true},
	{"mode and content", map[string]tf{"run.sh": {data: "#!/bin/sh\n"}}, map[string]tf{"run.sh": {data: "#!/bin/sh\necho\n", mode: ModeExec}}, true},
	{"binary changed", map[string]tf{"img.bin": {data: "\x00\x01\x02abc"}}, map[string]tf{"img.bin": {data: "\x00\x01\x02abd" + strings.Repeat("\xff\x00", 100)}}, true},
	{"binary created and deleted", map[string]tf{"gone.bin": {data: "\x00gone"}}, map[string]tf{"new.bin": {data: strings.Repeat("\x00\x10\x20", 50)}}, true},
	{"text to binary", map[string]tf{"f": {data: "text\n"}}, map[string]tf{"f": {data: "\x00bin"}}, true},
	{"odd paths", map[string]tf{"sp ace.txt": {data: "a\n"}}, map[string]tf{"sp ace.txt": {data: "b\n"}, "tést/ü.txt": {data: "u\n"}, "q\"uote": {data: "q\n"}}, true},
	{"symlink", map[string]tf{"f": {data: "x\n"}}, map[string]tf{"f": {data: "x\n"}, "link": {data: "f", mode: ModeSymlink}}, false},
	{"file becomes symlink", map[string]tf{"l": {data: "x\n"}}, map[string]tf{"l": {data: "target", mode: ModeSymlink}}, false},
	{"everything removed", map[string]tf{"a": {data: "1\n"}, "b/c": {data: "2\n"}}, map[string]tf{}, true},
	{"large insert with big gaps", map[string]tf{"big": {data: nlines(500, func(i int) string { return "row\n" })}},
		map[string]tf{"big": {data: "head\n" + nlines(500, func(i int) string { return "row\n" }) + "tail\n"}}, true},
}

func TestDiffTree_RoundTrip(t *testing.T) {
	for _, tc := range diffCases {
		t.Run(tc.name, func(t *testing.T) {
			st := NewMemStore(nil)
			base := build(t, st, tc.base)
			want := build(t, st, tc.to)
			if want.IsZero() {
				want, _ = st.WriteTree(nil)
			}
			p, err := DiffTree(st, base, newFiles(tc.to), DiffOptions{})
			if err != nil {
				t.Fatal(err)
			}
			text := Format(p)
			canon, cp, err := CanonicalDiff(text, "diff")
			if err != nil {
				t.Fatalf("canonical: %v\n%s", err, text)
			}
			if !bytes.Equal(canon, text) {
				t.Fatalf("Format output is not canonical:\n%s\n---\n%s", text, canon)
			}
			res, err := Apply(st, base, cp, Options{})
			if err != nil {
				t.Fatalf("apply: %v\n%s", err, text)
			}
			got := res.Tree
			if got.IsZero() {
				got, _ = st.WriteTree(nil)
			}
			if got != want {
				t.Fatalf("apply gives %v, want %v\n%s", files(t, st, got), tc.to, text)
			}
			// Unchanged trees give an empty diff.
			if p2, _ := DiffTree(st, want, newFiles(tc.to), DiffOptions{}); len(p2.Files) != 0 {
				t.Fatalf("diff of a tree with itself has %d files", len(p2.Files))
			}
			if tc.git {
				gittest.Need(t)
				dir := gitRepo(t, tc.base)
				if len(tc.base) == 0 {
					t.Skip("empty base")
				}
				if h := strings.TrimSpace(run(t, dir, nil, "rev-parse", "HEAD^{tree}")); h != base.String() {
					t.Fatalf("git base tree %s, ours %s", h, base)
				}
				run(t, dir, text, "apply", "--index", "--whitespace=nowarn", "-")
				if h := strings.TrimSpace(run(t, dir, nil, "write-tree")); h != want.String() {
					t.Fatalf("git apply gives tree %s, want %s\n%s", h, want, text)
				}
			}
		})
	}
}

func TestCanonicalDiff_StripsHeadersAndNormalizes(t *testing.T) {
	gitOut := "From 1234567890123456789012345678901234567890 Mon Sep 17 00:00:00 2001\nFrom: A <a@b>\nSubject: [PATCH] x\n\nbody\n---\n" +
		"diff --git a/f b/f\nindex 1234567..89abcde 100644\n--- a/f\n+++ b/f\n@@ -1 +1 @@   section  \n-a\n+b\n-- \n2.40.0\n"
	canon, _, err := CanonicalDiff([]byte(gitOut), "p")
	if err != nil {
		t.Fatal(err)
	}
	want := "diff --git a/f b/f\nindex 1234567..89abcde 100644\n--- a/f\n+++ b/f\n@@ -1 +1 @@ section\n-a\n+b\n"
	if string(canon) != want {
		t.Fatalf("got\n%s\nwant\n%s", canon, want)
	}
	if _, _, err := CanonicalDiff([]byte(""), "p"); err == nil {
		t.Fatal("empty diff accepted")
	}
}

func TestReadDir(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, ".git", "objects"), 0o755)
	os.WriteFile(filepath.Join(dir, ".git", "HEAD"), []byte("x"), 0o644)
	os.MkdirAll(filepath.Join(dir, "sub", "skip"), 0o755)
	os.WriteFile(filepath.Join(dir, "sub", "a.txt"), []byte("a"), 0o644)
	os.WriteFile(filepath.Join(dir, "sub", "skip", "b"), []byte("b"), 0o644)
	os.WriteFile(filepath.Join(dir, "run"), []byte("r"), 0o755)
	os.Symlink("sub/a.txt", filepath.Join(dir, "ln"))
	fs, err := ReadDir(dir, func(p string, isDir bool) bool { return p == "sub/skip" })
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range fs {
		got = append(got, f.Path+":"+f.Mode.String()+":"+string(f.Data))
	}
	want := "ln:120000:sub/a.txt run:100755:r sub/a.txt:100644:a"
	if strings.Join(got, " ") != want {
		t.Fatalf("got %v, want %s", got, want)
	}
}
