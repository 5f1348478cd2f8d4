package gitremote_test

import (
	"context"
	"errors"
	"os"
	"sync"
	"testing"

	"github.com/dome-registry/dome/internal/gittest"
	"github.com/dome-registry/dome/pkg/gitstore"
	"github.com/dome-registry/dome/pkg/gitstore/gitremote"
)

func mustHash(t *testing.T, s string) gitstore.Hash {
	t.Helper()
	h, ok := gitstore.ParseHash(s)
	if !ok {
		t.Fatalf("not a hash: %q", s)
	}
	return h
}

// fixture: main at c2, its parent c1 tagged "ann" (annotated).
func fixture(t *testing.T) (*gittest.Repo, map[string]string) {
	g := gittest.New(t)
	ids := map[string]string{}
	g.Write(map[string]string{"a.txt": "one\n", "dir/b.txt": "two\n"})
	ids["c1"] = g.Commit("first")
	g.Git("tag", "-a", "-m", "annotated", "ann")
	g.Write(map[string]string{"a.txt": "one changed\n"})
	ids["c2"] = g.Commit("second")
	return g, ids
}

func TestOpen_FileURL(t *testing.T) {
	g, ids := fixture(t)
	cache := t.TempDir()
	url := "file://" + g.Dir
	ctx := context.Background()
	// Concurrent first opens share one clone.
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			r, err := gitremote.Open(ctx, url, gitremote.Options{CacheDir: cache})
			if err == nil {
				_, err = r.ResolveCommit(ids["c2"])
			}
			errs[i] = err
		}(i)
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	// A new commit upstream is seen after Fetch.
	g.Write(map[string]string{"c.txt": "three\n"})
	c3 := g.Commit("third")
	r, err := gitremote.Open(ctx, url, gitremote.Options{CacheDir: cache})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.ResolveCommit(c3); err == nil {
		t.Fatal("cache has the new commit before a fetch")
	}
	if err := r.Fetch(ctx); err != nil {
		t.Fatal(err)
	}
	if got, err := r.ResolveCommit("main"); err != nil || got.String() != c3 {
		t.Fatalf("main after fetch = %v, %v; want %s", got, err, c3)
	}
	if got, err := r.ResolveCommit("ann"); err != nil || got.String() != ids["c1"] {
		t.Fatalf("annotated tag via mirror = %v, %v", got, err)
	}
	// Without the remote, cached objects still resolve.
	if err := os.RemoveAll(g.Dir); err != nil {
		t.Fatal(err)
	}
	r, err = gitremote.Open(ctx, url, gitremote.Options{CacheDir: cache})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.ResolveCommit(c3); err != nil {
		t.Fatalf("cached SHA without the remote: %v", err)
	}
	if err := r.Fetch(ctx); !errors.Is(err, gitremote.ErrUnreachable) {
		t.Fatalf("fetch of a removed remote: %v", err)
	}
}

func TestOpen_Unreachable(t *testing.T) {
	gittest.Need(t)
	_, err := gitremote.Open(context.Background(), "file://"+t.TempDir()+"/nope", gitremote.Options{CacheDir: t.TempDir()})
	if !errors.Is(err, gitremote.ErrUnreachable) {
		t.Fatalf("got %v, want ErrUnreachable", err)
	}
}
