package actionpg_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/dome-registry/dome/internal/pgtest"
	"github.com/dome-registry/dome/pkg/action"
	"github.com/dome-registry/dome/pkg/action/actionpg"
	"github.com/dome-registry/dome/pkg/action/storetest"
)

func openB(b *testing.B) (*actionpg.Store, error) {
	b.Helper()
	s, err := actionpg.Open(context.Background(), pgtest.NewDatabase(b))
	if err == nil {
		b.Cleanup(func() { s.Close() })
	}
	return s, err
}

// BenchmarkGet: one (name, version) lookup, parallel over the pool.
func BenchmarkGet(b *testing.B) {
	ctx := context.Background()
	s, err := openB(b)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := s.Publish(ctx, storetest.Signed(b, "files.move", "1.0.0", "bench")); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := s.Get(ctx, "files.move", "1.0.0"); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkPublish: new versions, one transaction each.
func BenchmarkPublish(b *testing.B) {
	ctx := context.Background()
	s, err := openB(b)
	if err != nil {
		b.Fatal(err)
	}
	recs := make([]action.Record, b.N)
	for i := range recs {
		recs[i] = storetest.Signed(b, "files.move", fmt.Sprintf("1.0.%d", i), "bench")
	}
	var n atomic.Int64
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := s.Publish(ctx, recs[n.Add(1)-1]); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkList: 100 actions of 5 versions each.
func BenchmarkList(b *testing.B) {
	ctx := context.Background()
	s, err := openB(b)
	if err != nil {
		b.Fatal(err)
	}
	for a := range 100 {
		for v := range 5 {
			if _, err := s.Publish(ctx, storetest.Signed(b, fmt.Sprintf("bench.a%03d", a), fmt.Sprintf("1.%d.0", v), "bench")); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ResetTimer()
	for b.Loop() {
		if _, err := s.List(ctx); err != nil {
			b.Fatal(err)
		}
	}
}
