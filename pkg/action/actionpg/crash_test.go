package actionpg_test

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dome-registry/dome/internal/pgtest"
	"github.com/dome-registry/dome/pkg/action"
	"github.com/dome-registry/dome/pkg/action/storetest"
)

// The database server is killed (SIGKILL) in the middle of a publish burst
// and restarted through crash recovery: every acknowledged publish is there
// with its bytes, and every stored version, acknowledged or not, is whole
// (it verifies).
func TestPublish_ServerKilledMidBurst_AcknowledgedPublishesSurvive(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a cluster of its own")
	}
	c := pgtest.NewCluster(t)
	url := c.NewDatabase(t)
	s := open(t, url)
	_, trusted := storetest.Key(t)

	const workers, each, killAfter = 8, 120, 150
	recs := make([][]action.Record, workers)
	for w := range recs {
		for i := range each {
			recs[w] = append(recs[w], storetest.Signed(t, fmt.Sprintf("crash.w%d", w), fmt.Sprintf("1.0.%d", i), "burst"))
		}
	}
	var (
		mu     sync.Mutex
		acked  []action.Record
		n      atomic.Int64
		killed = make(chan struct{})
		once   sync.Once
		wg     sync.WaitGroup
	)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for w := range workers {
		wg.Go(func() {
			for _, rec := range recs[w] {
				if _, err := s.Publish(ctx, rec); err != nil {
					return // the server is gone
				}
				mu.Lock()
				acked = append(acked, rec)
				mu.Unlock()
				if n.Add(1) == killAfter {
					once.Do(func() { go func() { c.Kill(); close(killed) }() })
				}
			}
		})
	}
	wg.Wait()
	select {
	case <-killed:
	case <-ctx.Done():
		t.Fatal("the burst ended before the kill")
	}
	if len(acked) == workers*each {
		t.Fatal("every publish was acknowledged: the kill came too late to test anything")
	}
	if err := c.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	s2 := open(t, url)
	for _, rec := range acked {
		got, err := s2.Get(ctx, rec.Name, rec.Version)
		if err != nil {
			t.Fatalf("acknowledged %s@%s lost: %v", rec.Name, rec.Version, err)
		}
		if !bytes.Equal(got.Document, rec.Document) {
			t.Fatalf("acknowledged %s@%s changed", rec.Name, rec.Version)
		}
	}
	list, err := s2.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	stored := 0
	for _, a := range list {
		for _, v := range a.Versions {
			got, err := s2.Get(ctx, a.Name, v)
			if err != nil {
				t.Fatal(err)
			}
			if vr := action.VerifyRecord(got, trusted); !vr.Verified {
				t.Fatalf("%s@%s after the crash: %s", a.Name, v, vr.Reason)
			}
			stored++
		}
	}
	t.Logf("%d publishes acknowledged before the kill, %d stored after recovery", len(acked), stored)
}
