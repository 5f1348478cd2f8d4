package action

import (
	"bytes"
	"fmt"
	"sync"
	"testing"
)

func TestVerifyCache(t *testing.T) {
	key, trusted := testKey(t, "dev-root-1", 1)
	_, other := testKey(t, "other", 7)
	signed, _ := Sign(key, []byte(moveDoc))
	rec, _ := Prepare(signed)
	c := NewVerifyCache(2)

	if v := c.VerifyRecord(rec, trusted); !v.Verified {
		t.Fatalf("first: %+v", v)
	}
	if v := c.VerifyRecord(rec, trusted); !v.Verified {
		t.Fatalf("second: %+v", v)
	}
	if h, m := c.Stats(); h != 1 || m != 1 {
		t.Fatalf("hits %d misses %d, want 1 1", h, m)
	}
	// Tampered bytes never hit the cached verified result.
	tampered := rec
	tampered.Document = bytes.Replace(signed, []byte("Move"), []byte("Mova"), 1)
	if v := c.VerifyRecord(tampered, trusted); v.Verified {
		t.Fatal("tampered bytes verified from the cache")
	}
	// Another key set invalidates everything.
	if v := c.VerifyRecord(rec, other); v.Verified || v.Code() != "UNKNOWN_KEY_ID" {
		t.Fatalf("other key set: %+v", v)
	}
	if c.Len() != 1 {
		t.Fatalf("len %d after a key set change, want 1", c.Len())
	}
	// Bounded.
	for i := range 10 {
		r := rec
		r.Version = fmt.Sprintf("1.0.%d", i)
		c.VerifyRecord(r, trusted)
	}
	if c.Len() > 2 {
		t.Fatalf("len %d > size 2", c.Len())
	}
}

func TestVerifyCache_Concurrent(t *testing.T) {
	key, trusted := testKey(t, "dev-root-1", 1)
	_, other := testKey(t, "other", 7)
	signed, _ := Sign(key, []byte(moveDoc))
	rec, _ := Prepare(signed)
	c := NewVerifyCache(16)
	var wg sync.WaitGroup
	for g := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				keys, want := trusted, true
				if (g+i)%7 == 0 {
					keys, want = other, false
				}
				if v := c.VerifyRecord(rec, keys); v.Verified != want {
					t.Errorf("goroutine %d, call %d: verified %v, want %v", g, i, v.Verified, want)
					return
				}
			}
		}()
	}
	wg.Wait()
}
