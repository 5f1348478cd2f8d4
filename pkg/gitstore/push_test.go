package gitstore_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/dome-registry/dome/internal/gittest"
	"github.com/dome-registry/dome/pkg/gitstore"
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
	if err := r.PushRef(context.Background(), "file://"+bare.Dir, "refs/tags/registry/x/v1.0.0"); err != nil {
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
	if err := r.PushRef(context.Background(), "file://"+bare.Dir, "refs/tags/registry/x/v1.0.0"); err != nil {
		t.Fatalf("re-push: %v", err)
	}
	h2, _ := r.WriteTag(gitstore.TagSpec{Name: "registry/x/v1.0.0", Target: mustHash(t, ids["c2"]), Tagger: gitstore.Signature{Name: "T", Email: "t@x", When: when}, Message: "moved\n"})
	if err := r.UpdateRef("refs/tags/registry/x/v1.0.0", h2, h); err != nil {
		t.Fatal(err)
	}
	if err := r.PushRef(context.Background(), "file://"+bare.Dir, "refs/tags/registry/x/v1.0.0"); err == nil {
		t.Fatal("push over a different remote value succeeded")
	}
}
