package patch

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dome-registry/dome/pkg/errkind"
)

func lines(n int, f func(i int) string) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		b.WriteString(f(i) + "\n")
	}
	return b.String()
}

var base20 = lines(20, func(i int) string { return fmt.Sprintf("line %d", i) })

func TestApply_Cases(t *testing.T) {
	tests := []struct {
		name   string
		base   map[string]tf
		patch  string
		opts   Options
		want   map[string]tf
		method string
	}{
		{
			name: "exact modify",
			base: map[string]tf{"a.txt": {data: "one\ntwo\nthree\n"}},
			patch: `diff --git a/a.txt b/a.txt
--- a/a.txt
+++ b/a.txt
@@ -1,3 +1,3 @@
 one
-two
+TWO
 three
`,
			want:   map[string]tf{"a.txt": {data: "one\nTWO\nthree\n"}},
			method: "exact",
		},
		{
			name: "offset: the file gained lines above the hunk",
			base: map[string]tf{"a.txt": {data: "new 1\nnew 2\n" + base20}},
			patch: `diff --git a/a.txt b/a.txt
--- a/a.txt
+++ b/a.txt
@@ -9,7 +9,7 @@
 line 9
 line 10
 line 11
-line 12
+LINE 12
 line 13
 line 14
 line 15
`,
			want:   map[string]tf{"a.txt": {data: "new 1\nnew 2\n" + strings.Replace(base20, "line 12\n", "LINE 12\n", 1)}},
			method: "offset",
		},
		{
			name: "fuzz: one context line at each end changed",
			base: map[string]tf{"a.txt": {data: strings.NewReplacer("line 9\n", "nine\n", "line 15\n", "fifteen\n").Replace(base20)}},
			patch: `diff --git a/a.txt b/a.txt
--- a/a.txt
+++ b/a.txt
@@ -9,7 +9,7 @@
 line 9
 line 10
 line 11
-line 12
+LINE 12
 line 13
 line 14
 line 15
`,
			opts:   Options{Fuzz: 1},
			want:   map[string]tf{"a.txt": {data: strings.NewReplacer("line 9\n", "nine\n", "line 15\n", "fifteen\n", "line 12\n", "LINE 12\n").Replace(base20)}},
			method: "fuzz",
		},
		{
			name: "new, deleted, renamed, mode change, empty file, symlink",
			base: map[string]tf{"old.txt": {data: "x\n"}, "gone.txt": {data: "bye\n"}, "run.sh": {data: "echo\n"}, "dir/r.txt": {data: "r1\nr2\nr3\n"}},
			patch: `diff --git a/empty b/empty
new file mode 100644
index 0000000..e69de29
diff --git a/gone.txt b/gone.txt
deleted file mode 100644
index 1234567..0000000
--- a/gone.txt
+++ /dev/null
@@ -1 +0,0 @@
-bye
diff --git a/dir/r.txt b/moved/r.txt
similarity index 80%
rename from dir/r.txt
rename to moved/r.txt
--- a/dir/r.txt
+++ b/moved/r.txt
@@ -1,3 +1,3 @@
 r1
-r2
+R2
 r3
diff --git a/run.sh b/run.sh
old mode 100644
new mode 100755
diff --git a/link b/link
new file mode 120000
--- /dev/null
+++ b/link
@@ -0,0 +1 @@
+moved/r.txt
\ No newline at end of file
diff --git "a/sp ace\303\251.txt" "b/sp ace\303\251.txt"
new file mode 100644
--- /dev/null
+++ "b/sp ace\303\251.txt"
@@ -0,0 +1,2 @@
+crlf\r
+no eol
\ No newline at end of file
`,
			want: map[string]tf{"old.txt": {data: "x\n"}, "empty": {}, "moved/r.txt": {data: "r1\nR2\nr3\n"}, "run.sh": {data: "echo\n", mode: ModeExec},
				"link": {data: "moved/r.txt", mode: ModeSymlink}, "sp ace\u00e9.txt": {data: "crlf\r\nno eol"}},
			method: "exact",
		},
		{
			name: "file becomes a directory when the patch deletes it",
			base: map[string]tf{"x": {data: "file\n"}},
			patch: `diff --git a/x b/x
deleted file mode 100644
--- a/x
+++ /dev/null
@@ -1 +0,0 @@
-file
diff --git a/x/y b/x/y
new file mode 100644
--- /dev/null
+++ b/x/y
@@ -0,0 +1 @@
+inside
`,
			want:   map[string]tf{"x/y": {data: "inside\n"}},
			method: "exact",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.patch = strings.ReplaceAll(tt.patch, `\r`+"\n", "\r\n")
			st := NewMemStore(nil)
			base := build(t, st, tt.base)
			res, err := Apply(st, base, mustParse(t, tt.patch), tt.opts)
			if err != nil {
				t.Fatalf("apply: %v", err)
			}
			got := files(t, st, res.Tree)
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("tree:\n got %v\nwant %v", got, tt.want)
			}
			if m := res.Files[0].Method; tt.method != "" && m != tt.method && !(tt.method == "offset" && m == "offset") {
				t.Errorf("method %q, want %q", m, tt.method)
			}
		})
	}
}

func TestApply_Conflict_ReportsHunk(t *testing.T) {
	st := NewMemStore(nil)
	base := build(t, st, map[string]tf{"a.txt": {data: base20}})
	p := mustParse(t, `diff --git a/a.txt b/a.txt
--- a/a.txt
+++ b/a.txt
@@ -2,3 +2,3 @@
 line 2
-line 3
+LINE 3
 line 4
@@ -10,3 +10,3 @@
 line 10
-line eleven
+LINE 11
 line 12
`)
	n := st.count()
	res, err := Apply(st, base, p, Options{})
	var ce *ConflictError
	if !errors.As(err, &ce) {
		t.Fatalf("err = %v, want a ConflictError", err)
	}
	if len(ce.Conflicts) != 1 || ce.Conflicts[0].Hunk != 2 || ce.Conflicts[0].Path != "a.txt" {
		t.Errorf("conflicts = %+v, want a.txt hunk 2", ce.Conflicts)
	}
	if !res.Tree.IsZero() || st.count() != n {
		t.Errorf("a conflict wrote objects")
	}
}

// Refusals: each names the offending path and writes nothing.
func TestApply_Safety_Refusals(t *testing.T) {
	base := map[string]tf{"a.txt": {data: "a\n"}, "d/in.txt": {data: "in\n"}, "d/l": {data: "../a.txt", mode: ModeSymlink}}
	newFile := func(path string) string {
		return fmt.Sprintf("diff --git a/%[1]s b/%[1]s\nnew file mode 100644\n--- /dev/null\n+++ b/%[1]s\n@@ -0,0 +1 @@\n+x\n", path)
	}
	tests := []struct {
		name, patch, path string
		parse             bool // refused by Parse (else by Apply)
	}{
		{"dotdot", newFile("../escape.txt"), "../escape.txt", true},
		{"dotdot inside", newFile("d/../../escape.txt"), "d/../../escape.txt", true},
		{"absolute", "diff --git a/a.txt b/a.txt\nsimilarity index 100%\nrename from a.txt\nrename to /etc/passwd\n", "/etc/passwd", true},
		{".git component", newFile(".git/hooks/post-checkout"), ".git/hooks/post-checkout", true},
		{".GIT any case", newFile("sub/.GiT/config"), "sub/.GiT/config", true},
		{"control byte", "diff --git \"a/bell\\a\" \"b/bell\\a\"\nnew file mode 100644\n--- /dev/null\n+++ \"b/bell\\a\"\n@@ -0,0 +1 @@\n+x\n", "bell\a", true},
		{"NUL byte", "diff --git \"a/nul\\000\" \"b/nul\\000\"\nnew file mode 100644\n--- /dev/null\n+++ \"b/nul\\000\"\n@@ -0,0 +1 @@\n+x\n", "nul\x00", true},
		{"symlink outside", "diff --git a/l b/l\nnew file mode 120000\n--- /dev/null\n+++ b/l\n@@ -0,0 +1 @@\n+../../etc/passwd\n\\ No newline at end of file\n", "l", false},
		{"symlink absolute", "diff --git a/d/m b/d/m\nnew file mode 120000\n--- /dev/null\n+++ b/d/m\n@@ -0,0 +1 @@\n+/etc/passwd\n\\ No newline at end of file\n", "d/m", false},
		{"symlink into .git", "diff --git a/l b/l\nnew file mode 120000\n--- /dev/null\n+++ b/l\n@@ -0,0 +1 @@\n+d/../.git/config\n\\ No newline at end of file\n", "l", false},
		{"symlink into git~1", "diff --git a/l b/l\nnew file mode 120000\n--- /dev/null\n+++ b/l\n@@ -0,0 +1 @@\n+GIT~1/config\n\\ No newline at end of file\n", "l", false},
		{"symlink into .git.", "diff --git a/l b/l\nnew file mode 120000\n--- /dev/null\n+++ b/l\n@@ -0,0 +1 @@\n+.git./hooks\n\\ No newline at end of file\n", "l", false},
		{"symlink renamed out of the tree", "diff --git a/d/l b/l\nsimilarity index 100%\nrename from d/l\nrename to l\n", "l", false},
		{"file replaced by a directory", newFile("a.txt/x"), "a.txt/x", false},
		{"directory replaced by a file", newFile("d"), "d", false},
		{"hunk longer than its header", "diff --git a/a.txt b/a.txt\n--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-a\n+b\n+c\n", "", true},
		{"hunk shorter than its header", "diff --git a/a.txt b/a.txt\n--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n-a\n+b\ndiff --git a/b b/b\n", "", true},
		{"binary without data", "diff --git a/a.txt b/a.txt\nindex 1234567..89abcde 100644\nBinary files a/a.txt and b/a.txt differ\n", "a.txt", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := NewMemStore(nil)
			root := build(t, st, base)
			n := st.count()
			ps, err := Parse([]byte(tt.patch), ParseOptions{Strip: 1})
			if err == nil {
				if tt.parse {
					t.Fatalf("parse accepted it")
				}
				_, err = Apply(st, root, ps[0], Options{})
			} else if !tt.parse {
				t.Fatalf("parse refused it: %v", err)
			}
			if !errkind.IsInput(err) {
				t.Fatalf("err = %v (%T), want an input error", err, err)
			}
			if tt.path != "" && !strings.Contains(err.Error(), tt.path) && !strings.Contains(err.Error(), fmt.Sprintf("%q", tt.path)) {
				t.Errorf("error %q does not name %q", err, tt.path)
			}
			if st.count() != n {
				t.Errorf("refusal wrote %d objects", st.count()-n)
			}
		})
	}
}

func TestParse_MaxSize_Refused(t *testing.T) {
	big := "diff --git a/a b/a\n" + strings.Repeat("x", 2000)
	_, err := Parse([]byte(big), ParseOptions{Source: "big.patch", Strip: 1, MaxBytes: 1000})
	if !errkind.IsInput(err) || !strings.Contains(err.Error(), "big.patch") || !strings.Contains(err.Error(), "limit") {
		t.Fatalf("err = %v", err)
	}
}

func TestParse_StripAndQuoting(t *testing.T) {
	ps, err := Parse([]byte("diff --git x/y/a.txt x/y/a.txt\n--- x/y/a.txt\n+++ x/y/a.txt\n@@ -1 +1 @@\n-a\n+b\n"), ParseOptions{Strip: 2})
	if err != nil || ps[0].Files[0].NewPath != "a.txt" {
		t.Fatalf("-p2: %v %+v", err, ps)
	}
	ps, err = Parse([]byte("diff --git a/same name b/same name\nold mode 100644\nnew mode 100755\n"), ParseOptions{Strip: 1})
	if err != nil || ps[0].Files[0].NewPath != "same name" || ps[0].Files[0].NewMode != ModeExec {
		t.Fatalf("header name with a space: %v %+v", err, ps[0].Files[0])
	}
	ps, err = Parse([]byte("diff --git \"a/t\\303\\251\\\"q\\\\\" \"b/t\\303\\251\\\"q\\\\\"\nnew file mode 100644\nindex 0000000..e69de29\n"), ParseOptions{Strip: 1})
	if err != nil || ps[0].Files[0].NewPath != "t\u00e9\"q\\" {
		t.Fatalf("quoted: %v %+v", err, ps)
	}
}

// The offset search must pick the same place as git apply when the context
// occurs several times.
func TestApply_OffsetMatchesGit(t *testing.T) {
	block := "a\nb\nc\nd\ne\nf\ng\n"
	cases := []struct{ name, file, patch string }{
		{"repeated block, hunk drifted down", "top\n" + block + "mid\n" + block + block, "@@ -9,7 +9,7 @@\n a\n b\n c\n-d\n+D\n e\n f\n g\n"},
		{"repeated block, hunk drifted up", block + "x\n" + block, "@@ -12,7 +12,7 @@\n a\n b\n c\n-d\n+D\n e\n f\n g\n"},
		{"equal distance both ways: forward first", block + "m1\nm2\nm3\n" + block + "n1\nn2\nn3\n" + block, "@@ -6,7 +6,7 @@\n a\n b\n c\n-d\n+D\n e\n f\n g\n"},
		{"no trailing context must match at end", "x\ny\nz\nx\ny\n", "@@ -1,2 +1,3 @@\n x\n y\n+tail\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := gitRepo(t, map[string]tf{"f": {data: c.file}})
			text := "diff --git a/f b/f\n--- a/f\n+++ b/f\n" + c.patch
			os.WriteFile(filepath.Join(dir, "p.diff"), []byte(text), 0o644)
			gitOut, gitErr := runErr(dir, nil, "apply", "--cached", "p.diff")
			st := NewMemStore(nil)
			root := build(t, st, map[string]tf{"f": {data: c.file}})
			res, err := Apply(st, root, mustParse(t, text), Options{})
			if (gitErr == nil) != (err == nil) {
				t.Fatalf("git apply: %v %s; dome: %v", gitErr, gitOut, err)
			}
			if err != nil {
				return
			}
			want := run(t, dir, nil, "write-tree")
			if res.Tree.String() != strings.TrimSpace(want) {
				t.Errorf("tree %s, git %s", res.Tree, want)
			}
		})
	}
}

func TestApply_Partial(t *testing.T) {
	text := `diff --git a/a.txt b/a.txt
--- a/a.txt
+++ b/a.txt
@@ -2,3 +2,3 @@
 line 2
-line 3
+LINE 3
 line 4
@@ -10,3 +10,3 @@
 line 10
-line eleven
+LINE 11
 line 12
diff --git a/b.txt b/b.txt
--- a/b.txt
+++ b/b.txt
@@ -1 +1 @@
-b
+B
`
	tests := []struct {
		partial Partial
		a, b    string
	}{
		{PartialFile, base20, "B\n"},
		{PartialHunk, strings.Replace(base20, "line 3\n", "LINE 3\n", 1), "B\n"},
	}
	for _, tt := range tests {
		st := NewMemStore(nil)
		root := build(t, st, map[string]tf{"a.txt": {data: base20}, "b.txt": {data: "b\n"}})
		res, err := Apply(st, root, mustParse(t, text), Options{Partial: tt.partial})
		var ce *ConflictError
		if !errors.As(err, &ce) || len(ce.Conflicts) != 1 || ce.Conflicts[0].Hunk != 2 {
			t.Fatalf("partial %d: err = %v", tt.partial, err)
		}
		got := files(t, st, res.Tree)
		if got["a.txt"].data != tt.a || got["b.txt"].data != tt.b {
			t.Errorf("partial %d: %v", tt.partial, got)
		}
	}
}
