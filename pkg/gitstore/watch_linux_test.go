//go:build linux

package gitstore_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dome-registry/dome/pkg/gitstore"
)

// TestWatchRef: every way the ref can change is reported (dome's CAS update
// from another handle, git's update-ref, pack-refs, deletion), a change to
// another ref is not, and cancelling ends the watch with ready(false).
func TestWatchRef(t *testing.T) {
	g, ids := fixture(t)
	r, err := gitstore.Open(g.Dir)
	if err != nil {
		t.Fatal(err)
	}
	other, _ := gitstore.Open(g.Dir)
	c1, c2 := mustHash(t, ids["c1"]), mustHash(t, ids["c2"])
	if err := other.UpdateRef("refs/heads/watched", c1, gitstore.ZeroHash); err != nil {
		t.Fatal(err)
	}
	var changes atomic.Int64
	readyc := make(chan bool, 4)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- r.WatchRef(ctx, "refs/heads/watched", func(ok bool) { readyc <- ok }, func() { changes.Add(1) })
	}()
	if ok := <-readyc; !ok {
		t.Fatal("ready(false) first")
	}
	waitFor := func(what string, want int64) {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for changes.Load() < want {
			if time.Now().After(deadline) {
				t.Fatalf("%s: %d changes reported, want %d", what, changes.Load(), want)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	steps := []struct {
		what string
		do   func()
	}{
		{"dome CAS update from another handle", func() {
			if err := other.UpdateRef("refs/heads/watched", c2, c1); err != nil {
				t.Fatal(err)
			}
		}},
		{"git update-ref", func() { g.Git("update-ref", "refs/heads/watched", ids["c1"]) }},
		{"git pack-refs", func() { g.Git("pack-refs", "--all") }},
		{"git update-ref -d", func() { g.Git("update-ref", "-d", "refs/heads/watched") }},
	}
	for _, s := range steps {
		before := changes.Load()
		s.do()
		waitFor(s.what, before+1)
	}
	// another branch's loose ref is not this ref
	before := changes.Load()
	g.Git("update-ref", "refs/heads/unrelated", ids["c1"])
	time.Sleep(100 * time.Millisecond)
	if got := changes.Load(); got != before {
		t.Errorf("a change to refs/heads/unrelated was reported (%d -> %d)", before, got)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("WatchRef after cancel: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("WatchRef did not return after cancel")
	}
	if ok := <-readyc; ok {
		t.Error("no ready(false) after the watch ended")
	}
}

func TestWatchRef_Refusals(t *testing.T) {
	g, _ := fixture(t)
	r, _ := gitstore.Open(g.Dir)
	ready := func(bool) { t.Error("ready called") }
	if err := r.WatchRef(context.Background(), "refs/heads/../x", ready, func() {}); err == nil {
		t.Error("a bad ref name was watched")
	}
	if err := r.WatchRef(context.Background(), "refs/heads/no/such/dir", ready, func() {}); err == nil {
		t.Error("a ref in a missing folder was watched")
	}
}
