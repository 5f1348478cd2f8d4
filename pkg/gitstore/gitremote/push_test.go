package gitremote_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dome-registry/dome/internal/gittest"
	"github.com/dome-registry/dome/pkg/gitstore"
	"github.com/dome-registry/dome/pkg/gitstore/gitremote"
)

func TestPushRef_OnlyThatRef(t *testing.T) {
	g, ids := fixture(t)
	r, _ := gitstore.Open(g.Dir)
	bare := gittest.NewBare(t)
	when := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	h, _ := r.WriteTag(gitstore.TagSpec{Name: "registry/x/v1.0.0", Target: mustHash(t, ids["c1"]), Tagger: gitstore.Signature{Name: "T", Email: "t@x", When: when}, Message: "r\n"})
	if err := r.UpdateRef("refs/tags/registry/x/v1.0.0", h, gitstore.ZeroHash); err != nil {
		t.Fatal(err)
	}
	if err := gitremote.PushRef(context.Background(), r, "file://"+bare.Dir, "refs/tags/registry/x/v1.0.0"); err != nil {
		t.Fatal(err)
	}
	refs := bare.Git("ls-remote", bare.Dir)
	if !strings.Contains(refs, h.String()+"\trefs/tags/registry/x/v1.0.0") {
		t.Fatalf("tag not pushed:\n%s", refs)
	}
	if strings.Contains(refs, "refs/heads/") || strings.Contains(refs, "refs/tags/ann") {
		t.Fatalf("more than the tag was pushed:\n%s", refs)
	}
	// A second push of the same ref is a no-op; a different value is refused (never forced).
	if err := gitremote.PushRef(context.Background(), r, "file://"+bare.Dir, "refs/tags/registry/x/v1.0.0"); err != nil {
		t.Fatalf("re-push: %v", err)
	}
	h2, _ := r.WriteTag(gitstore.TagSpec{Name: "registry/x/v1.0.0", Target: mustHash(t, ids["c2"]), Tagger: gitstore.Signature{Name: "T", Email: "t@x", When: when}, Message: "moved\n"})
	if err := r.UpdateRef("refs/tags/registry/x/v1.0.0", h2, h); err != nil {
		t.Fatal(err)
	}
	if err := gitremote.PushRef(context.Background(), r, "file://"+bare.Dir, "refs/tags/registry/x/v1.0.0"); err == nil {
		t.Fatal("push over a different remote value succeeded")
	}
}

// TestPushRef_NamedRemoteFromALinkedWorktree: a remote named in the
// repository's config, pushed from a linked worktree (refs and config in
// the common directory); objects written as a pack (PackWriter) go too.
func TestPushRef_NamedRemoteFromALinkedWorktree(t *testing.T) {
	g, ids := fixture(t)
	bare := gittest.NewBare(t)
	g.Git("remote", "add", "dest", "file://"+bare.Dir)
	wt := filepath.Join(t.TempDir(), "wt")
	g.Git("worktree", "add", "-q", "-b", "side", wt, ids["c1"])
	r, err := gitstore.Open(wt)
	if err != nil {
		t.Fatal(err)
	}
	w := r.NewPackWriter()
	blob, _ := w.WriteBlob([]byte("packed\n"))
	tree, _ := w.WriteTree([]gitstore.TreeEntry{{Name: "p.txt", Mode: gitstore.ModeFile, Hash: blob}})
	sig := gitstore.Signature{Name: "T", Email: "t@x", When: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	c, _ := w.WriteCommit(gitstore.CommitSpec{Tree: tree, Parents: []gitstore.Hash{mustHash(t, ids["c1"])}, Author: sig, Committer: sig, Message: "packed\n"})
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := r.UpdateRef("refs/heads/pushed", c, gitstore.ZeroHash); err != nil {
		t.Fatal(err)
	}
	if err := gitremote.PushRef(context.Background(), r, "dest", "refs/heads/pushed"); err != nil {
		t.Fatal(err)
	}
	if got := bare.Git("rev-parse", "refs/heads/pushed"); got != c.String() {
		t.Fatalf("the remote has %q", got)
	}
	bare.Git("fsck", "--no-dangling")
	if err := gitremote.PushRef(context.Background(), r, "nowhere", "refs/heads/pushed"); err == nil || !strings.Contains(err.Error(), `remote "nowhere"`) {
		t.Fatalf("push to an unknown remote: %v", err)
	}
}
