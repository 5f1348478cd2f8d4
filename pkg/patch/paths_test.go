package patch

import (
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/dome-registry/dome/internal/gittest"
	"github.com/dome-registry/dome/pkg/gitpath"
	"github.com/dome-registry/dome/pkg/gitstore"
)

// hostilePatches are diffs naming paths git refuses, and near misses it
// accepts. strip is git apply's -p.
var hostilePatches = []struct {
	name  string
	strip int
	text  string
}{
	{"absolute after strip", 1, "diff --git a//etc/evil b//etc/evil\nnew file mode 100644\n--- /dev/null\n+++ b//etc/evil\n@@ -0,0 +1 @@\n+x\n"},
	{"absolute after strip, header only", 1, "diff --git a//etc/evil b//etc/evil\nnew file mode 100644\nindex 0000000..e69de29\n"},
	{"absolute, strip 2", 2, "diff --git x/a//etc/evil x/b//etc/evil\nnew file mode 100644\n--- /dev/null\n+++ x/b//etc/evil\n@@ -0,0 +1 @@\n+x\n"},
	{"doubled slash inside", 1, "diff --git a/docs//guide.md b/docs//guide.md\nnew file mode 100644\n--- /dev/null\n+++ b/docs//guide.md\n@@ -0,0 +1 @@\n+x\n"},
	{"strip 2 through a doubled slash", 2, "diff --git a//docs/x b//docs/x\nnew file mode 100644\n--- /dev/null\n+++ b//docs/x\n@@ -0,0 +1 @@\n+x\n"},
	{"plain diff absolute", 1, "--- a//etc/evil\n+++ b//etc/evil\n@@ -0,0 +1 @@\n+x\n"},
	{"dotdot", 1, "diff --git a/../x b/../x\nnew file mode 100644\n--- /dev/null\n+++ b/../x\n@@ -0,0 +1 @@\n+x\n"},
	{".git. ", 1, "diff --git a/.git./config b/.git./config\nnew file mode 100644\n--- /dev/null\n+++ b/.git./config\n@@ -0,0 +1 @@\n+x\n"},
	{".git space", 1, "diff --git a/.git /config b/.git /config\nnew file mode 100644\n--- /dev/null\n+++ b/.git /config\t\n@@ -0,0 +1 @@\n+x\n"},
	{"8.3 name", 1, "diff --git a/sub/git~1/config b/sub/git~1/config\nnew file mode 100644\n--- /dev/null\n+++ b/sub/git~1/config\n@@ -0,0 +1 @@\n+x\n"},
	{"not an 8.3 name", 1, "diff --git a/git~2/config b/git~2/config\nnew file mode 100644\n--- /dev/null\n+++ b/git~2/config\n@@ -0,0 +1 @@\n+x\n"},
	{"NTFS stream", 1, "diff --git a/.git::$INDEX_ALLOCATION/config b/.git::$INDEX_ALLOCATION/config\nnew file mode 100644\n--- /dev/null\n+++ b/.git::$INDEX_ALLOCATION/config\n@@ -0,0 +1 @@\n+x\n"},
	{"backslash", 1, "diff --git \"a/sub\\\\.git\\\\config\" \"b/sub\\\\.git\\\\config\"\nnew file mode 100644\n--- /dev/null\n+++ \"b/sub\\\\.git\\\\config\"\n@@ -0,0 +1 @@\n+x\n"},
	{"HFS ignorable", 1, "diff --git \"a/.g\\342\\200\\214it/config\" \"b/.g\\342\\200\\214it/config\"\nnew file mode 100644\n--- /dev/null\n+++ \"b/.g\\342\\200\\214it/config\"\n@@ -0,0 +1 @@\n+x\n"},
	{"HFS lookalike", 1, "diff --git \"a/.g\\303\\257t/config\" \"b/.g\\303\\257t/config\"\nnew file mode 100644\n--- /dev/null\n+++ \"b/.g\\303\\257t/config\"\n@@ -0,0 +1 @@\n+x\n"},
	{".gitmodules symlink", 1, "diff --git a/.gitmodules b/.gitmodules\nnew file mode 120000\n--- /dev/null\n+++ b/.gitmodules\n@@ -0,0 +1 @@\n+a.txt\n\\ No newline at end of file\n"},
	{".gitmodules NTFS symlink", 1, "diff --git a/GITMOD~1 b/GITMOD~1\nnew file mode 120000\n--- /dev/null\n+++ b/GITMOD~1\n@@ -0,0 +1 @@\n+a.txt\n\\ No newline at end of file\n"},
	{".gitmodules file", 1, "diff --git a/.gitmodules b/.gitmodules\nnew file mode 100644\n--- /dev/null\n+++ b/.gitmodules\n@@ -0,0 +1 @@\n+x\n"},
	{".gitignore symlink", 1, "diff --git a/sub/.gitignore b/sub/.gitignore\nnew file mode 120000\n--- /dev/null\n+++ b/sub/.gitignore\n@@ -0,0 +1 @@\n+../a.txt\n\\ No newline at end of file\n"},
	{"file to .gitmodules symlink", 1, "diff --git a/.gitmodules b/.gitmodules\nold mode 100644\nnew mode 120000\n"},
	{"rename into .git.", 1, "diff --git a/a.txt b/.git./a.txt\nsimilarity index 100%\nrename from a.txt\nrename to .git./a.txt\n"},
	{"copy into git~1", 1, "diff --git a/a.txt b/git~1/a.txt\nsimilarity index 100%\ncopy from a.txt\ncopy to git~1/a.txt\n"},
	{"rename from absolute", 1, "diff --git a/a.txt b/b.txt\nsimilarity index 100%\nrename from /a.txt\nrename to b.txt\n"},
	{"delete .GIT", 1, "diff --git a/.GIT/config b/.GIT/config\ndeleted file mode 100644\n--- a/.GIT/config\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n"},
	{"ordinary", 1, "diff --git a/a.txt b/a.txt\n--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-a\n+b\n"},
}

// TestPathsMatchGitApply is the differential test of the patch engine's
// path checks: each patch goes to `git apply --cached --check` (with
// core.protectNTFS and core.protectHFS on) and to Parse+Apply; both must
// refuse or both accept (then with the same paths, from git apply
// --numstat), except where dome's own rules (gitpath.Error.Beyond) refuse.
func TestPathsMatchGitApply(t *testing.T) {
	gittest.Need(t)
	dir := gitRepo(t, map[string]tf{"a.txt": {data: "a\n"}, ".gitmodules": {data: "x\n"}})
	repo, err := gitstore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer repo.Close()
	base, _ := repo.ResolveCommit("HEAD")
	tree, _ := repo.CommitTree(base)
	for _, c := range hostilePatches {
		t.Run(c.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "p.diff")
			if err := os.WriteFile(file, []byte(c.text), 0o644); err != nil {
				t.Fatal(err)
			}
			p := "-p" + string(rune('0'+c.strip))
			gitOut, gitErr := runErr(dir, nil, "-c", "core.protectNTFS=true", "-c", "core.protectHFS=true", "apply", "--cached", "--check", p, file)
			var domeErr error
			var domePaths []string
			ps, err := Parse([]byte(c.text), ParseOptions{Strip: c.strip})
			if err == nil {
				var res *Result
				res, err = Apply(NewMemStore(NewRepoStore(repo)), OID(tree), ps[0], Options{})
				for _, f := range res.Files {
					domePaths = append(domePaths, f.Path)
				}
			}
			domeErr = err
			var ge *gitpath.Error
			beyond := errors.As(domeErr, &ge) && ge.Beyond
			switch {
			case gitErr == nil && domeErr != nil && !beyond:
				t.Fatalf("git accepts, dome refuses: %v", domeErr)
			case gitErr == nil && domeErr != nil:
				// dome's own rule
			case gitErr != nil && domeErr == nil:
				t.Fatalf("git refuses (%s), dome accepts %v", strings.TrimSpace(gitOut), domePaths)
			case gitErr == nil:
				num := run(t, dir, nil, "apply", "--numstat", "-z", p, file)
				var gitPaths []string
				for _, l := range strings.Split(strings.TrimRight(num, "\x00"), "\x00") {
					if f := strings.SplitN(l, "\t", 3); len(f) == 3 {
						gitPaths = append(gitPaths, f[2])
					}
				}
				sort.Strings(gitPaths)
				sort.Strings(domePaths)
				if strings.Join(gitPaths, "\x00") != strings.Join(domePaths, "\x00") {
					t.Fatalf("paths: git %q, dome %q", gitPaths, domePaths)
				}
			}
		})
	}
}

// TestApplyChecksTreeModes: a diff that says no mode cannot make a path
// git refuses for the mode the tree gives it (.gitmodules as a symlink).
func TestApplyChecksTreeModes(t *testing.T) {
	st := NewMemStore(nil)
	// a tree holding a .gitmodules symlink can only come from elsewhere
	// (git refuses to make one); build it below the checks
	blob, _ := st.WriteBlob([]byte("a.txt"))
	raw := []byte("120000 .gitmodules\x00")
	raw = append(raw, blob[:]...)
	root := objectID("tree", raw)
	st.mu.Lock()
	st.trees[root] = []TreeEntry{{Name: ".gitmodules", Mode: ModeSymlink, ID: blob}}
	st.mu.Unlock()
	p := mustParse(t, "diff --git a/.gitmodules b/.gitmodules\n--- a/.gitmodules\n+++ b/.gitmodules\n@@ -1 +1 @@\n-a.txt\n\\ No newline at end of file\n+b.txt\n\\ No newline at end of file\n")
	_, err := Apply(st, root, p, Options{})
	var ge *gitpath.Error
	if !errors.As(err, &ge) || !strings.Contains(err.Error(), ".gitmodules may not be a symlink") {
		t.Fatalf("err = %v, want the .gitmodules symlink refused", err)
	}
	if _, err := st.WriteTree([]TreeEntry{{Name: "GIT~1", Mode: ModeDir, ID: root}}); err == nil {
		t.Fatal("MemStore wrote a tree entry git refuses")
	}
}
