package actionpg_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/dome-registry/dome/internal/pgtest"
	"github.com/dome-registry/dome/pkg/action/storetest"
)

// watcher records what Store.Watch reports.
type watcher struct {
	mu       sync.Mutex
	ready    []bool
	payloads []string
}

func (w *watcher) onReady(r bool) { w.mu.Lock(); w.ready = append(w.ready, r); w.mu.Unlock() }
func (w *watcher) onChange(p string) {
	w.mu.Lock()
	w.payloads = append(w.payloads, p)
	w.mu.Unlock()
}

func (w *watcher) waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		w.mu.Lock()
		ok := cond()
		w.mu.Unlock()
		if ok {
			return
		}
	}
	t.Fatalf("waited 10 s for %s: ready %v, payloads %v", what, w.ready, w.payloads)
}

func TestWatch_ReportsEveryCommittedChange_AndReconnects(t *testing.T) {
	url := pgtest.NewDatabase(t)
	s := open(t, url)
	ctx, cancel := context.WithCancel(context.Background())
	w := &watcher{}
	done := make(chan error, 1)
	go func() { done <- s.Watch(ctx, w.onReady, w.onChange) }()
	w.waitFor(t, "ready", func() bool { return len(w.ready) == 1 && w.ready[0] })

	if _, err := s.Publish(ctx, storetest.Signed(t, "files.move", "1.0.0", "x")); err != nil {
		t.Fatal(err)
	}
	w.waitFor(t, "the publish", func() bool { return len(w.payloads) == 1 && w.payloads[0] == "files.move@1.0.0" })
	conn := connect(t, url)
	// A change by hand, in another session: the tamper a cache must see.
	if _, err := conn.Exec(ctx, "UPDATE action_versions SET document = document || ' '::bytea WHERE name = 'files.move'"); err != nil {
		t.Fatal(err)
	}
	w.waitFor(t, "the update", func() bool { return len(w.payloads) == 2 && w.payloads[1] == "files.move@1.0.0" })
	if _, err := conn.Exec(ctx, "TRUNCATE action_versions, actions"); err != nil {
		t.Fatal(err)
	}
	w.waitFor(t, "the truncate", func() bool { return len(w.payloads) == 3 && w.payloads[2] == "*" })

	// The listening session ends (a restart, a network cut): ready(false),
	// then a new session and ready(true).
	if _, err := conn.Exec(ctx, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query LIKE 'LISTEN%' AND pid <> pg_backend_pid()"); err != nil {
		t.Fatal(err)
	}
	w.waitFor(t, "the reconnect", func() bool { return len(w.ready) == 3 && !w.ready[1] && w.ready[2] })
	if _, err := s.Publish(ctx, storetest.Signed(t, "files.move", "2.0.0", "x")); err != nil {
		t.Fatal(err)
	}
	w.waitFor(t, "a publish after the reconnect", func() bool { return len(w.payloads) == 4 && w.payloads[3] == "files.move@2.0.0" })
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Watch: %v", err)
	}
	if w.ready[len(w.ready)-1] {
		t.Errorf("Watch returned without ready(false): %v", w.ready)
	}
}
