package gitstore_test

import (
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/dome-registry/dome/internal/gittest"
	"github.com/dome-registry/dome/pkg/gitstore"
)

func mustHash(t *testing.T, s string) gitstore.Hash {
	t.Helper()
	h, ok := gitstore.ParseHash(s)
	if !ok {
		t.Fatalf("not a hash: %q", s)
	}
	return h
}

func fixture(t *testing.T) (*gittest.Repo, map[string]string) {
	g := gittest.New(t)
	ids := map[string]string{}
	g.Write(map[string]string{"a.txt": "one\n", "dir/b.txt": "two\n"})
	ids["c1"] = g.Commit("first")
	g.Git("tag", "light")
	g.Git("tag", "-a", "-m", "annotated", "ann")
	g.Write(map[string]string{"a.txt": "one changed\n"})
	ids["c2"] = g.Commit("second")
	g.Git("branch", "feature", ids["c1"])
	tree := g.Git("rev-parse", "HEAD^{tree}")
	g.Git("tag", "treetag", tree)
	ids["tree"] = tree
	return g, ids
}

func TestResolveRevision(t *testing.T) {
	g, ids := fixture(t)
	r, err := gitstore.Open(g.Dir)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		rev       string
		kind      gitstore.RefKind
		commit    string
		annotated bool
	}{
		{ids["c1"], gitstore.KindFullSHA, ids["c1"], false},
		{ids["c2"][:7], gitstore.KindShortSHA, ids["c2"], false},
		{ids["c2"][:12], gitstore.KindShortSHA, ids["c2"], false},
		{"HEAD", gitstore.KindHead, ids["c2"], false},
		{"main", gitstore.KindBranch, ids["c2"], false},
		{"feature", gitstore.KindBranch, ids["c1"], false},
		{"light", gitstore.KindTag, ids["c1"], false},
		{"ann", gitstore.KindTag, ids["c1"], true},
		{"refs/tags/ann", gitstore.KindTag, ids["c1"], true},
		{"refs/heads/main", gitstore.KindBranch, ids["c2"], false},
	}
	for _, tt := range tests {
		t.Run(tt.rev, func(t *testing.T) {
			rev, err := r.ResolveRevision(tt.rev)
			if err != nil {
				t.Fatal(err)
			}
			if rev.Kind != tt.kind || rev.Commit.String() != tt.commit || rev.Annotated != tt.annotated {
				t.Errorf("got kind=%s commit=%s annotated=%v, want %s %s %v", rev.Kind, rev.Commit, rev.Annotated, tt.kind, tt.commit, tt.annotated)
			}
		})
	}
}

func TestResolveRevision_Errors(t *testing.T) {
	g, ids := fixture(t)
	r, err := gitstore.Open(g.Dir)
	if err != nil {
		t.Fatal(err)
	}
	var nc *gitstore.NotCommitError
	if _, err := r.ResolveRevision("treetag"); !errors.As(err, &nc) || nc.Type != gitstore.TypeTree {
		t.Errorf("tag to a tree: got %v, want NotCommitError(tree)", err)
	}
	if _, err := r.ResolveRevision("nosuch"); !errors.Is(err, gitstore.ErrNotFound) {
		t.Errorf("missing: got %v", err)
	}
	if _, err := r.ResolveRevision("a..b"); err == nil {
		t.Error("a..b accepted")
	}
	if _, err := r.ResolveRevision("has space"); err == nil {
		t.Error("space accepted")
	}
	g.Git("branch", "light") // now "light" is a tag and a branch
	var amb *gitstore.AmbiguousRefError
	if _, err := r.ResolveRevision("light"); !errors.As(err, &amb) {
		t.Errorf("tag+branch: got %v, want AmbiguousRefError", err)
	}
	if _, err := r.ResolveRevision(ids["tree"]); !errors.As(err, &nc) {
		t.Errorf("full SHA of a tree: got %v", err)
	}
}

func TestOpen(t *testing.T) {
	g, ids := fixture(t)
	sub := filepath.Join(g.Dir, "dir")
	for name, path := range map[string]string{"root": g.Dir, "subdir": sub, "dotgit": filepath.Join(g.Dir, ".git")} {
		r, err := gitstore.Open(path)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if c, err := r.ResolveCommit("main"); err != nil || c.String() != ids["c2"] {
			t.Errorf("%s: main = %v, %v", name, c, err)
		}
	}
	// linked worktree: refs live in the common dir
	wt := filepath.Join(t.TempDir(), "wt")
	g.Git("worktree", "add", "-q", wt, "feature")
	r, err := gitstore.Open(wt)
	if err != nil {
		t.Fatal(err)
	}
	if c, err := r.ResolveCommit("HEAD"); err != nil || c.String() != ids["c1"] {
		t.Errorf("linked worktree HEAD = %v, %v; want %s", c, err, ids["c1"])
	}
	if c, err := r.ResolveCommit("main"); err != nil || c.String() != ids["c2"] {
		t.Errorf("linked worktree main = %v, %v", c, err)
	}
	// bare clone
	bare := filepath.Join(t.TempDir(), "bare.git")
	g.Git("clone", "-q", "--bare", g.Dir, bare)
	if r, err := gitstore.Open(bare); err != nil {
		t.Fatal(err)
	} else if c, err := r.ResolveCommit("main"); err != nil || c.String() != ids["c2"] {
		t.Errorf("bare main = %v, %v", c, err)
	}
	if _, err := gitstore.Open(t.TempDir()); !errors.Is(err, gitstore.ErrNotRepository) {
		t.Errorf("plain dir: %v", err)
	}
	empty := gittest.New(t)
	r, err = gitstore.Open(empty.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.ResolveRevision("HEAD"); !errors.Is(err, gitstore.ErrEmptyRepo) {
		t.Errorf("empty repo HEAD: %v", err)
	}
}

func TestReadTreeAndBlobs(t *testing.T) {
	g, ids := fixture(t)
	r, _ := gitstore.Open(g.Dir)
	tree, err := r.CommitTree(mustHash(t, ids["c2"]))
	if err != nil {
		t.Fatal(err)
	}
	files, err := r.Walk(tree)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 2 || files[0].Path != "a.txt" || files[1].Path != "dir/b.txt" {
		t.Fatalf("walk = %+v", files)
	}
	for _, f := range files {
		want := g.Git("rev-parse", ids["c2"]+":"+f.Path)
		if f.Hash.String() != want {
			t.Errorf("%s blob %s, git says %s", f.Path, f.Hash, want)
		}
		e, err := r.EntryAt(tree, f.Path)
		if err != nil || e.Hash != f.Hash {
			t.Errorf("EntryAt(%s) = %v, %v", f.Path, e, err)
		}
	}
	b, err := r.ReadBlob(files[0].Hash)
	if err != nil || string(b) != "one changed\n" {
		t.Errorf("blob = %q, %v", b, err)
	}
	if _, err := r.EntryAt(tree, "dir/nope"); !errors.Is(err, gitstore.ErrNotFound) {
		t.Errorf("missing path: %v", err)
	}
	if _, err := r.EntryAt(tree, "a.txt/x"); !errors.Is(err, gitstore.ErrNotFound) {
		t.Errorf("path through a file: %v", err)
	}
}

func TestWriteObjectsMatchGit(t *testing.T) {
	g, ids := fixture(t)
	r, _ := gitstore.Open(g.Dir)
	base, _ := r.CommitTree(mustHash(t, ids["c2"]))
	blob, err := r.WriteBlob([]byte("new file\n"))
	if err != nil {
		t.Fatal(err)
	}
	exe, _ := r.WriteBlob([]byte("#!/bin/sh\n"))
	tree, err := r.ApplyChanges(base, []gitstore.Change{
		{Path: "dir/sub/new.txt", Mode: gitstore.ModeFile, Hash: blob},
		{Path: "run.sh", Mode: gitstore.ModeExec, Hash: exe},
		{Path: "a.txt", Delete: true},
	})
	if err != nil {
		t.Fatal(err)
	}
	when := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	sig := gitstore.Signature{Name: "Dome Test", Email: "test@dome.invalid", When: when}
	commit, err := r.WriteCommit(gitstore.CommitSpec{Tree: tree, Parents: []gitstore.Hash{mustHash(t, ids["c2"])}, Author: sig, Committer: sig, Message: "dome commit\n"})
	if err != nil {
		t.Fatal(err)
	}
	// Build the same change with git in the worktree and compare ids.
	g.Git("checkout", "-q", "main")
	g.Write(map[string]string{"dir/sub/new.txt": "new file\n", "run.sh": "#!/bin/sh\n"})
	if err := os.Chmod(filepath.Join(g.Dir, "run.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	g.Remove("a.txt")
	g.Git("add", "-A")
	if want := g.Git("write-tree"); tree.String() != want {
		t.Errorf("tree %s, git write-tree %s", tree, want)
	}
	g.Git("fsck", "--strict")
	if got := g.Git("cat-file", "-t", commit.String()); got != "commit" {
		t.Errorf("commit type %q", got)
	}
	// Emptying a directory removes it; deleting a missing path is an error.
	t2, err := r.ApplyChanges(tree, []gitstore.Change{{Path: "dir/sub/new.txt", Delete: true}, {Path: "dir/b.txt", Delete: true}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.EntryAt(t2, "dir"); !errors.Is(err, gitstore.ErrNotFound) {
		t.Errorf("emptied dir still present: %v", err)
	}
	if _, err := r.ApplyChanges(tree, []gitstore.Change{{Path: "nope", Delete: true}}); err == nil {
		t.Error("deleting a missing path succeeded")
	}
	if _, err := r.ApplyChanges(tree, []gitstore.Change{{Path: "dir", Mode: gitstore.ModeFile, Hash: blob}}); err == nil {
		t.Error("a file replaced a directory silently")
	}
	for _, bad := range []string{"../x", ".git/config", "a//b", "x/./y"} {
		if _, err := r.ApplyChanges(tree, []gitstore.Change{{Path: bad, Mode: gitstore.ModeFile, Hash: blob}}); err == nil {
			t.Errorf("path %q accepted", bad)
		}
	}
}

func TestUpdateRef_CompareAndSwap(t *testing.T) {
	g, ids := fixture(t)
	r, _ := gitstore.Open(g.Dir)
	c1, c2 := mustHash(t, ids["c1"]), mustHash(t, ids["c2"])
	if err := r.UpdateRef("refs/heads/new", c1, gitstore.ZeroHash); err != nil {
		t.Fatal(err)
	}
	if err := r.UpdateRef("refs/heads/new", c2, gitstore.ZeroHash); !errors.Is(err, gitstore.ErrRefExists) {
		t.Errorf("create over existing: %v", err)
	}
	if err := r.UpdateRef("refs/heads/new", c2, c2); !errors.Is(err, gitstore.ErrRefChanged) {
		t.Errorf("stale old: %v", err)
	}
	if err := r.UpdateRef("refs/heads/new", c2, c1); err != nil {
		t.Fatal(err)
	}
	if got := g.Git("rev-parse", "refs/heads/new"); got != ids["c2"] {
		t.Errorf("git sees %s", got)
	}
	// A packed ref is compared too.
	g.Git("pack-refs", "--all")
	if err := r.UpdateRef("refs/heads/new", c1, c1); !errors.Is(err, gitstore.ErrRefChanged) {
		t.Errorf("packed stale old: %v", err)
	}
	// Concurrent creators: exactly one wins.
	var wg sync.WaitGroup
	var mu sync.Mutex
	wins := 0
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			h := c1
			if i%2 == 1 {
				h = c2
			}
			if err := r.UpdateRef("refs/tags/race", h, gitstore.ZeroHash); err == nil {
				mu.Lock()
				wins++
				mu.Unlock()
			}
		}(i)
	}
	wg.Wait()
	if wins != 1 {
		t.Errorf("%d concurrent creators won, want exactly 1", wins)
	}
	if err := r.UpdateRef("refs/heads/../../x", c1, gitstore.ZeroHash); err == nil {
		t.Error("escaping ref name accepted")
	}
}

func TestWriteTag(t *testing.T) {
	g, ids := fixture(t)
	r, _ := gitstore.Open(g.Dir)
	when := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	h, err := r.WriteTag(gitstore.TagSpec{Name: "v9", Target: mustHash(t, ids["c2"]), Tagger: gitstore.Signature{Name: "T", Email: "t@x", When: when}, Message: "release\n"})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.UpdateRef("refs/tags/v9", h, gitstore.ZeroHash); err != nil {
		t.Fatal(err)
	}
	if got := g.Git("rev-parse", "v9^{commit}"); got != ids["c2"] {
		t.Errorf("v9 peels to %s", got)
	}
	g.Git("fsck", "--strict")
	rev, err := r.ResolveRevision("v9")
	if err != nil || !rev.Annotated || rev.Object != h {
		t.Errorf("resolve v9 = %+v, %v", rev, err)
	}
}

func TestHashesWithPrefix(t *testing.T) {
	g, ids := fixture(t)
	r, _ := gitstore.Open(g.Dir)
	g.Git("gc", "-q") // objects in a pack
	r, _ = gitstore.Open(g.Dir)
	for _, n := range []int{1, 4, 7, 40} {
		hs, err := r.HashesWithPrefix(ids["c1"][:n])
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, h := range hs {
			if h.String() == ids["c1"] {
				found = true
			}
		}
		if !found {
			t.Errorf("prefix %d: %s not found in %v", n, ids["c1"], hs)
		}
	}
}

func TestResolveRevision_Ancestry(t *testing.T) {
	g, ids := fixture(t)
	g.Write(map[string]string{"m.txt": "m\n"})
	c3 := g.Commit("third")
	r, _ := gitstore.Open(g.Dir)
	for rev, want := range map[string]string{
		"HEAD~1": ids["c2"], "HEAD~2": ids["c1"], "main^": ids["c2"], "main^^": ids["c1"], "HEAD~0": c3,
		"HEAD^0": c3, "HEAD~1^1": ids["c1"], ids["c2"][:9] + "~1": ids["c1"], "ann~0": ids["c1"],
	} {
		got, err := r.ResolveRevision(rev)
		if err != nil || got.Commit.String() != want {
			t.Errorf("%s = %v, %v; want %s", rev, got.Commit, err, want)
			continue
		}
		if rev != "HEAD~0" && got.Kind != gitstore.KindAncestor {
			t.Errorf("%s kind %s", rev, got.Kind)
		}
	}
	for _, bad := range []string{"HEAD~3", "HEAD^2", "~1", "^", "HEAD~x"} {
		if _, err := r.ResolveRevision(bad); err == nil {
			t.Errorf("%s resolved", bad)
		}
	}
}

func TestRef_LoosePackedSymbolicMissing(t *testing.T) {
	r := gittest.New(t)
	r.Write(map[string]string{"a": "1"})
	c1 := r.Commit("one")
	r.Write(map[string]string{"a": "2"})
	c2 := r.Commit("two")
	r.Git("update-ref", "refs/heads/packed", c1)
	r.Git("update-ref", "refs/heads/both", c1)
	r.Git("pack-refs", "--all")
	r.Git("update-ref", "refs/heads/both", c2) // a loose ref wins over its packed line
	r.Git("update-ref", "refs/heads/loose", c2)
	r.Git("symbolic-ref", "refs/heads/sym", "refs/heads/loose")
	repo, err := gitstore.Open(r.Dir)
	if err != nil {
		t.Fatal(err)
	}
	defer repo.Close()
	for name, want := range map[string]string{"refs/heads/packed": c1, "refs/heads/both": c2, "refs/heads/loose": c2, "refs/heads/sym": c2, "refs/heads/main": c2} {
		h, err := repo.Ref(name)
		if err != nil || h.String() != want {
			t.Errorf("Ref(%s) = %s, %v; want %s", name, h, err, want)
		}
	}
	for _, name := range []string{"refs/heads/none", "refs/heads/../../HEAD", "refs/heads"} {
		if h, err := repo.Ref(name); err == nil {
			t.Errorf("Ref(%s) = %s, want an error", name, h)
		}
	}
}
