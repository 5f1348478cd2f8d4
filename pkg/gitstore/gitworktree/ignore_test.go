package gitworktree_test

import (
	"os/exec"
	"testing"

	"github.com/dome-registry/dome/internal/gittest"
	"github.com/dome-registry/dome/pkg/gitstore/gitworktree"
)

// TestIgnoreMatcher_AgreesWithGit: for untracked paths, the matcher says
// what git check-ignore says, .gitignore files at every level and
// .git/info/exclude included.
func TestIgnoreMatcher_AgreesWithGit(t *testing.T) {
	g := gittest.New(t)
	g.Write(map[string]string{
		".gitignore":             "*.log\n/build/\n!keep.log\ntmp*\nignored-dir/\n",
		"sub/.gitignore":         "*.txt\n!important.txt\n",
		".git/info/exclude":      "secret\n",
		"ignored-dir/.gitignore": "!*\n", // never read: its folder is ignored
	})
	match, err := gitworktree.IgnoreMatcher(g.Dir)
	if err != nil {
		t.Fatal(err)
	}
	verdicts := map[bool]int{}
	for _, c := range []struct {
		path  string
		isDir bool
	}{
		{"a.log", false}, {"keep.log", false}, {"sub/x.log", false}, {"build", true}, {"sub/build", true},
		{"tmpfile", false}, {"sub/tmp", true}, {"sub/notes.txt", false}, {"sub/important.txt", false},
		{"notes.txt", false}, {"secret", false}, {"sub/secret", false}, {"ignored-dir", true},
		{"ignored-dir/x.go", false}, {"src/main.go", false},
	} {
		p := c.path
		if c.isDir {
			p += "/"
		}
		cmd := exec.Command("git", "check-ignore", "-q", "--no-index", p)
		cmd.Dir = g.Dir
		want := cmd.Run() == nil
		if got := match(c.path, c.isDir); got != want {
			t.Errorf("%s: ignored = %v, git check-ignore says %v", p, got, want)
		}
		verdicts[want]++
	}
	if verdicts[true] == 0 || verdicts[false] == 0 {
		t.Fatalf("the cases do not cover both verdicts: %v", verdicts)
	}
}
