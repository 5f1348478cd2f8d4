package actiongit

import (
	"context"
	"fmt"
	"testing"

	"github.com/dome-registry/dome/pkg/action"
	"github.com/dome-registry/dome/pkg/action/storetest"
)

// BenchmarkGet: a read of one version at an unchanged head (the HTTP
// server's hot path, before verification).
func BenchmarkGet(b *testing.B) {
	s, err := Open(newBareB(b), Options{Now: fixedNow})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	for i := range 50 {
		if _, err := s.Publish(ctx, storetest.Signed(b, fmt.Sprintf("tool-%d", i%10), fmt.Sprintf("1.%d.0", i), "x")); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := s.Get(ctx, "tool-3", "1.13.0"); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkGetVerifyCached: Get plus a cached verification.
func BenchmarkGetVerifyCached(b *testing.B) {
	s, err := Open(newBareB(b), Options{Now: fixedNow})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	if _, err := s.Publish(ctx, storetest.Signed(b, "files.move", "1.0.0", "x")); err != nil {
		b.Fatal(err)
	}
	_, keys := storetest.Key(b)
	cache := action.NewVerifyCache(0)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			rec, err := s.Get(ctx, "files.move", "1.0.0")
			if err != nil {
				b.Fatal(err)
			}
			if !cache.VerifyRecord(rec, keys).Verified {
				b.Fatal("not verified")
			}
		}
	})
}

// BenchmarkPublish: one new version per iteration (blob, trees, commit,
// fsync, ref CAS).
func BenchmarkPublish(b *testing.B) {
	s, err := Open(newBareB(b), Options{Now: fixedNow})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	recs := make([]action.Record, b.N)
	for i := range recs {
		recs[i] = storetest.Signed(b, fmt.Sprintf("tool-%d", i%20), fmt.Sprintf("1.%d.0", i), "x")
	}
	b.ResetTimer()
	for i := range recs {
		if _, err := s.Publish(context.Background(), recs[i]); err != nil {
			b.Fatal(err)
		}
	}
}

func newBareB(b *testing.B) string {
	dir := b.TempDir()
	r, err := gitstoreInit(dir)
	if err != nil {
		b.Fatal(err)
	}
	r.Close()
	return dir
}
