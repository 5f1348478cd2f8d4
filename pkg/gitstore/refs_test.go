package gitstore_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dome-registry/dome/internal/gittest"
	"github.com/dome-registry/dome/pkg/gitstore"
)

// refsFixture is a repository with refs of every storage: loose, packed
// (with a header and peeled lines), both, symbolic, and tags.
func refsFixture(t *testing.T) (*gittest.Repo, string, string) {
	t.Helper()
	g := gittest.New(t)
	g.Write(map[string]string{"a": "1"})
	c1 := g.Commit("one")
	g.Write(map[string]string{"a": "2"})
	c2 := g.Commit("two")
	g.Git("update-ref", "refs/heads/packed", c1)
	g.Git("update-ref", "refs/heads/both", c1)
	g.Git("tag", "-a", "-m", "annotated", "v1", c1) // packed with a ^peeled line
	g.Git("tag", "light", c1)
	g.Git("pack-refs", "--all")
	g.Git("update-ref", "refs/heads/both", c2)
	g.Git("update-ref", "refs/heads/loose", c2)
	g.Git("tag", "v2", c2)
	g.Git("symbolic-ref", "refs/heads/sym", "refs/heads/loose")
	g.Git("symbolic-ref", "refs/heads/sym2", "refs/heads/sym")
	return g, c1, c2
}

// gitRefs lists refs as git for-each-ref does (symbolic refs resolved;
// dome leaves those out).
func gitRefs(g *gittest.Repo, prefix string) map[string]string {
	out := map[string]string{}
	for _, line := range strings.Split(g.Git("for-each-ref", "--format=%(objectname) %(refname) %(symref)", prefix), "\n") {
		f := strings.Fields(line)
		if len(f) == 2 {
			out[f[1]] = f[0]
		}
	}
	return out
}

func TestRefs_MatchGit(t *testing.T) {
	g, _, _ := refsFixture(t)
	r, err := gitstore.Open(g.Dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, prefix := range []string{"refs/", "refs/heads/", "refs/tags/", "refs/heads/b", "refs/tags/v", "refs/notes/"} {
		refs, err := r.Refs(prefix)
		if err != nil {
			t.Fatal(err)
		}
		want := gitRefs(g, prefix)
		if prefix == "refs/heads/b" || prefix == "refs/tags/v" { // for-each-ref matches whole components
			want = map[string]string{}
			for name, id := range gitRefs(g, "refs/") {
				if strings.HasPrefix(name, prefix) {
					want[name] = id
				}
			}
		}
		if len(refs) != len(want) {
			t.Errorf("Refs(%q) = %v, git has %v", prefix, refs, want)
		}
		for i, ref := range refs {
			if want[ref.Name] != ref.Target.String() {
				t.Errorf("Refs(%q): %s = %s, git says %s", prefix, ref.Name, ref.Target, want[ref.Name])
			}
			if i > 0 && refs[i-1].Name >= ref.Name {
				t.Errorf("Refs(%q) is not sorted: %s before %s", prefix, refs[i-1].Name, ref.Name)
			}
		}
	}
	for _, bad := range []string{"refs/../", "HEAD", "refs/heads/x..y/", "../refs/"} {
		if refs, err := r.Refs(bad); err == nil {
			t.Errorf("Refs(%q) = %v, want an error", bad, refs)
		}
	}
}

func TestRef_FollowsGit(t *testing.T) {
	g, c1, c2 := refsFixture(t)
	r, err := gitstore.Open(g.Dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"HEAD", "refs/heads/packed", "refs/heads/both", "refs/heads/loose", "refs/heads/sym", "refs/heads/sym2", "refs/tags/v1", "refs/tags/light", "refs/tags/v2"} {
		h, err := r.Ref(name)
		if want := g.Git("rev-parse", name); err != nil || h.String() != want {
			t.Errorf("Ref(%s) = %s, %v; git says %s", name, h, err, want)
		}
	}
	// A chain of symbolic refs: git reads at most five refs for one name.
	g.Git("symbolic-ref", "refs/heads/s3", "refs/heads/sym2")
	g.Git("symbolic-ref", "refs/heads/s4", "refs/heads/s3") // s4 -> s3 -> sym2 -> sym -> loose: five reads
	if h, err := r.Ref("refs/heads/s4"); err != nil || h.String() != c2 {
		t.Errorf("Ref(s4) = %s, %v", h, err)
	}
	g.Git("symbolic-ref", "refs/heads/s5", "refs/heads/s4")
	if h, err := r.Ref("refs/heads/s5"); err == nil || errors.Is(err, gitstore.ErrNotFound) {
		t.Errorf("Ref(s5), six deep = %s, %v; want a depth error", h, err)
	}
	// A loop ends too.
	g.Git("symbolic-ref", "refs/heads/loop1", "refs/heads/loop2")
	g.Git("symbolic-ref", "refs/heads/loop2", "refs/heads/loop1")
	if _, err := r.Ref("refs/heads/loop1"); err == nil {
		t.Error("a loop of symbolic refs resolved")
	}
	// Refs that do not exist, names that are not refs, hostile names.
	for _, name := range []string{"refs/heads/none", "refs/heads/sym-to-none", "refs/heads", "refs/heads/packed/x"} {
		if name == "refs/heads/sym-to-none" {
			g.Git("symbolic-ref", name, "refs/heads/none")
		}
		if h, err := r.Ref(name); !errors.Is(err, gitstore.ErrNotFound) {
			t.Errorf("Ref(%s) = %s, %v; want ErrNotFound", name, h, err)
		}
	}
	for _, name := range []string{"config", "refs/../config", "refs/heads/../../HEAD", "/etc/passwd", "refs/heads/x.lock", "ORIG_HEAD", ""} {
		if h, err := r.Ref(name); err == nil {
			t.Errorf("Ref(%q) = %s, want an error", name, h)
		}
	}
	// A symbolic ref may not point outside refs/ either.
	os.WriteFile(filepath.Join(g.Dir, ".git", "refs", "heads", "evil"), []byte("ref: ../../config\n"), 0o644)
	if h, err := r.Ref("refs/heads/evil"); err == nil {
		t.Errorf("Ref(evil) = %s", h)
	}
	// Loose ref files as git writes and accepts them.
	for content, ok := range map[string]bool{
		c1 + "\n": true, c1: true, strings.ToUpper(c1) + "\n": true, c1 + " trailing\n": true,
		"ref:refs/heads/loose": true, "ref: \trefs/heads/loose \n": true,
		c1[:39] + "\n": false, c1 + "x\n": false, "garbage\n": false, "": false,
	} {
		os.WriteFile(filepath.Join(g.Dir, ".git", "refs", "heads", "file"), []byte(content), 0o644)
		h, err := r.Ref("refs/heads/file")
		if (err == nil) != ok {
			t.Errorf("loose ref %q: %s, %v", content, h, err)
		}
	}
}

func TestHead(t *testing.T) {
	g, c1, c2 := refsFixture(t)
	r, err := gitstore.Open(g.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if name, h, err := r.Head(); name != "refs/heads/main" || h.String() != c2 || err != nil {
		t.Errorf("Head = %s %s %v", name, h, err)
	}
	g.Git("checkout", "-q", "--detach", c1)
	if name, h, err := r.Head(); name != "" || h.String() != c1 || err != nil {
		t.Errorf("detached Head = %q %s %v", name, h, err)
	}
	// HEAD counts in the five reads git makes to resolve a ref.
	g.Git("symbolic-ref", "refs/heads/s3", "refs/heads/sym2")
	g.Git("symbolic-ref", "refs/heads/s4", "refs/heads/s3")
	for target, ok := range map[string]bool{"refs/heads/s3": true, "refs/heads/s4": false} {
		g.Git("symbolic-ref", "HEAD", target)
		cmd := exec.Command("git", "rev-parse", "--verify", "-q", "HEAD")
		cmd.Dir, cmd.Env = g.Dir, gittest.Env()
		if gitOK := cmd.Run() == nil; gitOK != ok {
			t.Fatalf("git rev-parse HEAD -> %s: %v, the test expects %v", target, gitOK, ok)
		}
		if _, h, err := r.Head(); (err == nil) != ok {
			t.Errorf("Head -> %s = %s, %v; git resolves it: %v", target, h, err, ok)
		}
	}
	g.Git("symbolic-ref", "HEAD", "refs/heads/main")
	g.Git("checkout", "-q", "--orphan", "unborn")
	if name, _, err := r.Head(); name != "refs/heads/unborn" || !errors.Is(err, gitstore.ErrEmptyRepo) {
		t.Errorf("unborn Head = %q %v", name, err)
	}
}

// TestRefs_LinkedWorktree: HEAD and the per-worktree refs (refs/bisect,
// refs/worktree, refs/rewritten) of a linked worktree are its own; every
// other ref is shared, as git keeps them.
func TestRefs_LinkedWorktree(t *testing.T) {
	g, c1, c2 := refsFixture(t)
	wt := filepath.Join(t.TempDir(), "wt")
	g.Git("worktree", "add", "-q", wt, "packed")
	w := &gittest.Repo{T: t, Dir: wt}
	w.Git("update-ref", "refs/bisect/bad", c1)
	w.Git("update-ref", "refs/worktree/mine", c1)
	g.Git("update-ref", "refs/bisect/bad", c2) // the main worktree's own
	r, err := gitstore.Open(wt)
	if err != nil {
		t.Fatal(err)
	}
	if name, h, err := r.Head(); name != "refs/heads/packed" || h.String() != c1 || err != nil {
		t.Errorf("worktree Head = %s %s %v", name, h, err)
	}
	for _, name := range []string{"refs/bisect/bad", "refs/worktree/mine", "refs/heads/both", "refs/tags/v2"} {
		h, err := r.Ref(name)
		if want := w.Git("rev-parse", name); err != nil || h.String() != want {
			t.Errorf("worktree Ref(%s) = %s, %v; git says %s", name, h, err, want)
		}
	}
	refs, err := r.Refs("refs/")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, ref := range refs {
		got[ref.Name] = ref.Target.String()
	}
	want := gitRefs(w, "refs/")
	want["refs/worktree/mine"] = c1 // for-each-ref leaves refs/worktree/ out; they are refs all the same
	if len(got) != len(want) {
		t.Errorf("worktree Refs = %v, git has %v", got, want)
	}
	for name, id := range want {
		if got[name] != id {
			t.Errorf("worktree Refs: %s = %s, git says %s", name, got[name], id)
		}
	}
	// A ref update from the linked worktree lands where git looks for it.
	h, _ := gitstore.ParseHash(c2)
	if err := r.UpdateRef("refs/bisect/good", h, gitstore.ZeroHash); err != nil {
		t.Fatal(err)
	}
	if got := w.Git("rev-parse", "refs/bisect/good"); got != c2 {
		t.Errorf("git in the worktree reads refs/bisect/good as %s", got)
	}
	if out := g.Git("for-each-ref", "refs/bisect/good"); out != "" {
		t.Errorf("the main worktree sees the linked worktree's bisect ref: %s", out)
	}
}

// TestPackedRefs_Rewritten: a packed-refs file rewritten while the
// repository is open (git pack-refs, a ref deleted) is read again.
func TestPackedRefs_Rewritten(t *testing.T) {
	g, c1, c2 := refsFixture(t)
	r, err := gitstore.Open(g.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Ref("refs/heads/packed"); err != nil {
		t.Fatal(err)
	}
	g.Git("update-ref", "-d", "refs/heads/packed")
	if h, err := r.Ref("refs/heads/packed"); !errors.Is(err, gitstore.ErrNotFound) {
		t.Errorf("deleted packed ref = %s, %v", h, err)
	}
	g.Git("update-ref", "refs/heads/new", c1)
	g.Git("pack-refs", "--all")
	if h, err := r.Ref("refs/heads/new"); err != nil || h.String() != c1 {
		t.Errorf("newly packed ref = %s, %v", h, err)
	}
	if h, err := r.Ref("refs/heads/both"); err != nil || h.String() != c2 {
		t.Errorf("repacked ref = %s, %v", h, err)
	}
	os.WriteFile(filepath.Join(g.Dir, ".git", "packed-refs"), []byte("# pack-refs with: peeled\nnot a line\n"), 0o644)
	if _, err := r.Ref("refs/heads/gone"); err == nil || errors.Is(err, gitstore.ErrNotFound) {
		t.Errorf("a corrupt packed-refs: %v", err)
	}
}
