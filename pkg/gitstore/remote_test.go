package gitstore_test

import (
	"context"
	"errors"
	"os"
	"sync"
	"testing"

	"github.com/dome-registry/dome/internal/gittest"
	"github.com/dome-registry/dome/pkg/gitstore"
)

func TestIsURL(t *testing.T) {
	for s, want := range map[string]bool{
		"file:///tmp/x": true, "https://example.com/r.git": true, "ssh://git@h/r": true,
		"git://127.0.0.1:9418/r": true, "git@github.com:org/repo.git": true,
		"/tmp/x": false, "./repo": false, "repo": false, "C:/x": false,
	} {
		if got := gitstore.IsURL(s); got != want {
			t.Errorf("IsURL(%q) = %v, want %v", s, got, want)
		}
	}
}

func TestOpenRemote_FileURL(t *testing.T) {
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
			r, err := gitstore.OpenRemote(ctx, url, gitstore.RemoteOptions{CacheDir: cache})
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
	r, err := gitstore.OpenRemote(ctx, url, gitstore.RemoteOptions{CacheDir: cache})
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
	r, err = gitstore.OpenRemote(ctx, url, gitstore.RemoteOptions{CacheDir: cache})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.ResolveCommit(c3); err != nil {
		t.Fatalf("cached SHA without the remote: %v", err)
	}
	if err := r.Fetch(ctx); !errors.Is(err, gitstore.ErrUnreachable) {
		t.Fatalf("fetch of a removed remote: %v", err)
	}
}

func TestOpenRemote_Unreachable(t *testing.T) {
	gittest.Need(t)
	_, err := gitstore.OpenRemote(context.Background(), "file://"+t.TempDir()+"/nope", gitstore.RemoteOptions{CacheDir: t.TempDir()})
	if !errors.Is(err, gitstore.ErrUnreachable) {
		t.Fatalf("got %v, want ErrUnreachable", err)
	}
}
