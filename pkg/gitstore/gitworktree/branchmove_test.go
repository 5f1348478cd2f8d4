package gitworktree_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dome-registry/dome/internal/gittest"
	"github.com/dome-registry/dome/pkg/gitstore"
	"github.com/dome-registry/dome/pkg/gitstore/gitworktree"
)

// moveFixture: main at c1 checked out in the main worktree; c2 (a child of
// c1 on another branch) edits a.txt, deletes gone.txt and adds new/b.txt.
func moveFixture(t *testing.T) (g *gittest.Repo, r *gitstore.Repo, c1, c2 gitstore.Hash) {
	t.Helper()
	g = gittest.New(t)
	g.Write(map[string]string{"a.txt": "one\n", "gone.txt": "bye\n"})
	h1 := g.Commit("c1")
	g.Git("checkout", "-q", "-b", "next")
	g.Write(map[string]string{"a.txt": "two\n", "new/b.txt": "b\n"})
	g.Remove("gone.txt")
	h2 := g.Commit("c2")
	g.Git("checkout", "-q", "main")
	r, err := gitstore.Open(g.Dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	c1, _ = gitstore.ParseHash(h1)
	c2, _ = gitstore.ParseHash(h2)
	return g, r, c1, c2
}

// A clean checked-out branch moves with its worktree: files and index follow,
// untracked files stay, git status is clean.
func TestMoveBranch_CarriesACleanWorktree(t *testing.T) {
	g, r, c1, c2 := moveFixture(t)
	os.WriteFile(filepath.Join(g.Dir, "notes.txt"), []byte("mine\n"), 0o644) // untracked, not in the way
	wts, err := r.CheckedOut("refs/heads/main")
	if err != nil || len(wts) != 1 || wts[0].Dir != g.Dir || wts[0].Linked {
		t.Fatalf("CheckedOut = %+v, %v", wts, err)
	}
	m, err := gitworktree.PrepareBranchMove(r, "refs/heads/main", c1, c2)
	if err != nil {
		t.Fatal(err)
	}
	if err := gitworktree.MoveBranch(r, m); err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(g.Git("rev-parse", "refs/heads/main")); got != c2.String() {
		t.Fatalf("main at %s, want %s", got, c2)
	}
	if st := strings.TrimSpace(g.Git("status", "--porcelain")); st != "?? notes.txt" {
		t.Fatalf("git status after the move:\n%s", st)
	}
	if b, _ := os.ReadFile(filepath.Join(g.Dir, "a.txt")); string(b) != "two\n" {
		t.Errorf("a.txt = %q", b)
	}
	if _, err := os.Stat(filepath.Join(g.Dir, "gone.txt")); !os.IsNotExist(err) {
		t.Errorf("gone.txt is still there: %v", err)
	}
}

// A worktree with changes to tracked files, or an untracked file where the
// new commit adds one, makes the move refused before anything changes.
func TestPrepareBranchMove_RefusesABusyWorktree(t *testing.T) {
	for name, setup := range map[string]func(dir string){
		"modified": func(dir string) { os.WriteFile(filepath.Join(dir, "a.txt"), []byte("local\n"), 0o644) },
		"deleted":  func(dir string) { os.Remove(filepath.Join(dir, "gone.txt")) },
		"in the way": func(dir string) {
			os.MkdirAll(filepath.Join(dir, "new"), 0o755)
			os.WriteFile(filepath.Join(dir, "new", "b.txt"), []byte("mine\n"), 0o644)
		},
	} {
		t.Run(name, func(t *testing.T) {
			g, r, c1, c2 := moveFixture(t)
			setup(g.Dir)
			before := g.Git("status", "--porcelain")
			_, err := gitworktree.PrepareBranchMove(r, "refs/heads/main", c1, c2)
			if !errors.Is(err, gitworktree.ErrWorktreeBusy) || !strings.Contains(err.Error(), "refs/heads/main is checked out in "+g.Dir) {
				t.Fatalf("err = %v", err)
			}
			if got := strings.TrimSpace(g.Git("rev-parse", "refs/heads/main")); got != c1.String() || g.Git("status", "--porcelain") != before {
				t.Fatalf("something changed: main %s, status %q", got, g.Git("status", "--porcelain"))
			}
		})
	}
}

// A branch checked out in a linked worktree is found and carried too; a
// branch checked out nowhere is a plain ref update.
func TestMoveBranch_LinkedWorktree(t *testing.T) {
	g, r, c1, c2 := moveFixture(t)
	g.Git("branch", "side", c1.String())
	wt := filepath.Join(t.TempDir(), "side")
	g.Git("worktree", "add", "-q", wt, "side")
	wts, err := r.CheckedOut("refs/heads/side")
	if err != nil || len(wts) != 1 || !wts[0].Linked {
		t.Fatalf("CheckedOut(side) = %+v, %v", wts, err)
	}
	m, err := gitworktree.PrepareBranchMove(r, "refs/heads/side", c1, c2)
	if err != nil {
		t.Fatal(err)
	}
	if err := gitworktree.MoveBranch(r, m); err != nil {
		t.Fatal(err)
	}
	if st := g.Git("-C", wt, "status", "--porcelain"); st != "" {
		t.Fatalf("linked worktree status:\n%s", st)
	}
	if wts, _ := r.CheckedOut("refs/heads/next"); len(wts) != 0 {
		t.Fatalf("next is checked out nowhere: %+v", wts)
	}
}
