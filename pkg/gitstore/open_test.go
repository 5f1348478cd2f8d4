package gitstore_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/dome-registry/dome/internal/gittest"
	"github.com/dome-registry/dome/pkg/gitstore"
)

// TestInit_GitAcceptsTheRepository: what Init makes is a bare repository
// git reads, writes through gitstore included: git fsck finds nothing wrong
// and git log shows the commit.
func TestInit_GitAcceptsTheRepository(t *testing.T) {
	gittest.Need(t)
	dir := filepath.Join(t.TempDir(), "store.git")
	r, err := gitstore.Init(dir)
	if err != nil {
		t.Fatal(err)
	}
	g := &gittest.Repo{T: t, Dir: dir}
	if got := g.Git("rev-parse", "--is-bare-repository"); got != "true" {
		t.Fatalf("git rev-parse --is-bare-repository = %q", got)
	}
	if got := g.Git("symbolic-ref", "HEAD"); got != "refs/heads/master" {
		t.Fatalf("HEAD = %q", got)
	}
	for _, sub := range []string{"objects/info", "objects/pack", "refs/heads", "refs/tags"} {
		if fi, err := os.Stat(filepath.Join(dir, sub)); err != nil || !fi.IsDir() {
			t.Errorf("%s: %v", sub, err)
		}
	}
	if _, _, err := r.Head(); !errors.Is(err, gitstore.ErrEmptyRepo) {
		t.Fatalf("Head of an empty repository: %v", err)
	}
	blob, err := r.WriteBlob([]byte("hello\n"))
	if err != nil {
		t.Fatal(err)
	}
	if again, err := r.WriteBlob([]byte("hello\n")); err != nil || again != blob {
		t.Fatalf("second write = %s, %v", again, err)
	}
	tree, err := r.WriteTree([]gitstore.TreeEntry{{Name: "hello.txt", Mode: gitstore.ModeFile, Hash: blob}})
	if err != nil {
		t.Fatal(err)
	}
	sig := gitstore.Signature{Name: "Dome Test", Email: "test@dome.invalid", When: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	c, err := r.WriteCommit(gitstore.CommitSpec{Tree: tree, Author: sig, Committer: sig, Message: "first\n"})
	if err != nil {
		t.Fatal(err)
	}
	tag, err := r.WriteTag(gitstore.TagSpec{Name: "v1", Target: c, Tagger: sig, Message: "v1\n"})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.SyncObjects(blob, tree, c, tag); err != nil {
		t.Fatal(err)
	}
	if err := r.UpdateRef("refs/heads/master", c, gitstore.ZeroHash); err != nil {
		t.Fatal(err)
	}
	if err := r.UpdateRef("refs/tags/v1", tag, gitstore.ZeroHash); err != nil {
		t.Fatal(err)
	}
	g.Git("fsck", "--strict", "--no-dangling")
	if got := g.Git("log", "--format=%H %s"); got != c.String()+" first" {
		t.Fatalf("git log = %q", got)
	}
	if got := g.Git("cat-file", "-p", "v1:hello.txt"); got != "hello" {
		t.Fatalf("git cat-file = %q", got)
	}
	// Loose objects are read-only, as git leaves them.
	s := blob.String()
	if fi, err := os.Stat(filepath.Join(dir, "objects", s[:2], s[2:])); err != nil || fi.Mode().Perm() != 0o444 {
		t.Fatalf("loose object mode: %v, %v", fi.Mode(), err)
	}
	if _, err := gitstore.Init(dir); err == nil {
		t.Fatal("Init over a repository succeeded")
	}
}

// TestAlternates: objects of the repositories named in
// objects/info/alternates (relative or absolute, nested) are read; loops
// and missing folders are harmless; writes stay in the repository.
func TestAlternates(t *testing.T) {
	base, ids := fixture(t)
	base.Git("gc", "-q") // the first commits packed
	base.Write(map[string]string{"loose.txt": "loose object\n"})
	loose := base.Commit("loose")
	// A clone borrowing base's objects (git clone --shared writes an
	// absolute path); a second level borrowing from the first.
	shared := filepath.Join(t.TempDir(), "shared")
	base.Git("clone", "-q", "--shared", base.Dir, shared)
	nested := filepath.Join(t.TempDir(), "nested")
	base.Git("clone", "-q", "--shared", shared, nested)
	r, err := gitstore.Open(nested)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{ids["c1"], ids["c2"], loose} {
		c, err := r.Commit(mustHash(t, id))
		if err != nil {
			t.Fatalf("commit %s through alternates: %v", id, err)
		}
		if _, err := r.Walk(c.Tree); err != nil {
			t.Fatalf("tree of %s: %v", id, err)
		}
	}
	if hs, err := r.HashesWithPrefix(loose[:8]); err != nil || len(hs) != 1 {
		t.Fatalf("HashesWithPrefix through alternates = %v, %v", hs, err)
	}
	// Relative and quoted paths, comments, empty lines, missing folders
	// and a loop.
	info := filepath.Join(nested, ".git", "objects", "info")
	rel, err := filepath.Rel(filepath.Join(nested, ".git", "objects"), filepath.Join(shared, ".git", "objects"))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(info, "alternates"), []byte("# borrowed\n\n/does/not/exist\n\""+rel+"\"\n"), 0o644)
	os.WriteFile(filepath.Join(shared, ".git", "objects", "info", "alternates"),
		[]byte(filepath.Join(base.Dir, ".git", "objects")+"\n"+filepath.Join(nested, ".git", "objects")+"\n"), 0o644)
	r, err = gitstore.Open(nested)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Commit(mustHash(t, ids["c1"])); err != nil {
		t.Fatalf("through a relative alternate: %v", err)
	}
	// A blob written into the borrowing repository is its own.
	h, err := r.WriteBlob([]byte("new in nested\n"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(nested, ".git", "objects", h.String()[:2], h.String()[2:])); err != nil {
		t.Fatalf("the new object is not in the repository: %v", err)
	}
	// An object the alternates have is not written again.
	if _, err := r.WriteBlob([]byte("loose object\n")); err != nil {
		t.Fatal(err)
	}
	blob := base.Git("rev-parse", "HEAD:loose.txt")
	if _, err := os.Stat(filepath.Join(nested, ".git", "objects", blob[:2], blob[2:])); !os.IsNotExist(err) {
		t.Fatalf("an object of an alternate was copied: %v", err)
	}
}

// maxAlternatesLevels is how many alternates files git follows in a row:
// the repository's and five more.
const maxAlternatesLevels = 6

// TestAlternates_Depth: git follows alternates five levels below the
// first; dome too, and no further.
func TestAlternates_Depth(t *testing.T) {
	g, ids := fixture(t)
	prev := filepath.Join(g.Dir, ".git", "objects")
	var dirs []string
	for i := 0; i < 8; i++ {
		dir := filepath.Join(t.TempDir(), "objects")
		os.MkdirAll(filepath.Join(dir, "info"), 0o755)
		os.WriteFile(filepath.Join(dir, "info", "alternates"), []byte(prev+"\n"), 0o644)
		dirs = append(dirs, dir)
		prev = dir
	}
	// dirs[i] reaches the real objects through i+1 alternates files.
	seen := map[bool]int{}
	for i, dir := range dirs {
		repo := filepath.Join(t.TempDir(), "r.git")
		os.MkdirAll(filepath.Join(repo, "refs"), 0o755)
		os.WriteFile(filepath.Join(repo, "HEAD"), []byte("ref: refs/heads/main\n"), 0o644)
		os.Symlink(dir, filepath.Join(repo, "objects"))
		r, err := gitstore.Open(repo)
		if err != nil {
			t.Fatal(err)
		}
		_, err = r.Commit(mustHash(t, ids["c1"]))
		cat := exec.Command("git", "cat-file", "-e", ids["c1"])
		cat.Dir, cat.Env = repo, gittest.Env()
		gitSees := cat.Run() == nil
		if i == 0 && !gitSees {
			t.Fatal("git does not read one level of alternates: the test is broken")
		}
		if (err == nil) != gitSees {
			t.Errorf("%d alternates deep: dome %v, git sees the object: %v", i+2, err, gitSees)
		}
		seen[gitSees]++
	}
	if seen[true] != maxAlternatesLevels || seen[false] == 0 {
		t.Errorf("git read the objects at %d of %d depths, want %d", seen[true], len(dirs), maxAlternatesLevels)
	}
}

func TestOpen_RepositoryFormat(t *testing.T) {
	for _, c := range []struct {
		config string
		ok     bool
	}{
		{"[core]\n\trepositoryformatversion = 0\n", true},
		{"[core]\n\trepositoryformatversion = 1\n[extensions]\n\tnoop = true\n", true},
		{"[core]\n\trepositoryformatversion = 2\n", false},
		{"[core]\n\trepositoryformatversion = 1\n[extensions]\n\tobjectformat = sha256\n", false},
		{"[core]\n\trepositoryformatversion = 1\n[extensions]\n\trefstorage = reftable\n", false},
		{"[core]\n\trepositoryformatversion = 0\n[extensions]\n\tnoop-v1 = true\n", false},
		{"[core\n", false},
	} {
		g := gittest.NewBare(t)
		os.WriteFile(filepath.Join(g.Dir, "config"), []byte(c.config), 0o644)
		if _, err := gitstore.Open(g.Dir); (err == nil) != c.ok {
			t.Errorf("%q: Open = %v", c.config, err)
		}
	}
}

// fetchCounter is a Fetcher that adds a pack to the mirror, as a fetch does.
type fetchCounter struct {
	n   int
	run func() error
}

func (f *fetchCounter) Fetch(context.Context) error { f.n++; return f.run() }

func TestOpenMirror_FetchOnceAndReadTheNewPack(t *testing.T) {
	src, ids := fixture(t)
	mirrorDir := filepath.Join(t.TempDir(), "m.git")
	src.Git("clone", "-q", "--mirror", src.Dir, mirrorDir)
	src.Write(map[string]string{"c.txt": "three\n"})
	c3 := src.Commit("third")
	f := &fetchCounter{run: func() error {
		(&gittest.Repo{T: t, Dir: mirrorDir}).Git("fetch", "-q", "origin", "+refs/*:refs/*")
		return nil
	}}
	if _, err := gitstore.OpenMirror(t.TempDir(), gitstore.Mirror{URL: "file:///x", Fetcher: f}); !errors.Is(err, gitstore.ErrNotRepository) {
		t.Fatalf("OpenMirror of an empty folder: %v", err)
	}
	r, err := gitstore.OpenMirror(mirrorDir, gitstore.Mirror{URL: "file:///src", Fetcher: f})
	if err != nil {
		t.Fatal(err)
	}
	if r.RemoteURL() != "file:///src" || r.Fetched() {
		t.Fatalf("RemoteURL %q, Fetched %v", r.RemoteURL(), r.Fetched())
	}
	if _, err := r.Commit(mustHash(t, ids["c2"])); err != nil {
		t.Fatal(err)
	}
	if _, err := r.ResolveCommit(c3); err == nil {
		t.Fatal("the mirror has the new commit before a fetch")
	}
	for i := 0; i < 2; i++ {
		if err := r.Fetch(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if f.n != 1 || !r.Fetched() {
		t.Fatalf("fetched %d times, Fetched %v; want once", f.n, r.Fetched())
	}
	if got, err := r.ResolveCommit("main"); err != nil || got.String() != c3 {
		t.Fatalf("main after the fetch = %s, %v; want %s", got, err, c3)
	}
	failing := &fetchCounter{run: func() error { return errors.New("no network") }}
	r, _ = gitstore.OpenMirror(mirrorDir, gitstore.Mirror{URL: "file:///src", Fetcher: failing})
	if err := r.Fetch(context.Background()); err == nil || r.Fetched() {
		t.Fatalf("a failed fetch: %v, Fetched %v", err, r.Fetched())
	}
	local, _ := gitstore.Open(src.Dir)
	if err := local.Fetch(context.Background()); err != nil || local.Fetched() || local.RemoteURL() != "" {
		t.Fatalf("Fetch of a local repository: %v", err)
	}
}

// mappings counts the memory maps of this process (Linux), or -1.
func mappings() int {
	b, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		return -1
	}
	return bytes.Count(b, []byte("\n"))
}

// TestClose_UnmapsPacksAndStaysUsable: a process that opens, reads and
// closes a repository again and again keeps no maps of its packs, reads
// after Close work, and Close does not pull packs from under reads in
// flight (go test -race).
func TestClose_UnmapsPacksAndStaysUsable(t *testing.T) {
	g, ids := fixture(t)
	g.Git("gc", "-q")
	c2 := mustHash(t, ids["c2"])
	cycle := func() {
		r, err := gitstore.Open(g.Dir)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := r.Commit(c2); err != nil {
			t.Fatal(err)
		}
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
	}
	cycle()
	before := mappings()
	if before < 0 {
		t.Skip("no /proc/self/maps")
	}
	for i := 0; i < 200; i++ {
		cycle()
	}
	if after := mappings(); after > before+20 {
		t.Fatalf("%d memory maps after 200 open-read-close cycles, %d before", after, before)
	}
	r, err := gitstore.Open(g.Dir)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				if c, err := r.Commit(c2); err != nil || c.Hash != c2 {
					t.Errorf("read during Close: %v", err)
					return
				}
				if _, err := r.ResolveCommit("main"); err != nil {
					t.Errorf("resolve during Close: %v", err)
					return
				}
			}
		}()
	}
	for i := 0; i < 50; i++ {
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
	}
	wg.Wait()
}
