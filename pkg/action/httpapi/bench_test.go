package httpapi_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/dome-registry/dome/pkg/action"
	"github.com/dome-registry/dome/pkg/action/httpapi"
	"github.com/dome-registry/dome/pkg/action/storetest"
)

// BenchmarkGetVersion measures the handler alone (no network) answering
// GET /actions/{name}/versions/{version} over 100 stored versions.
func BenchmarkGetVersion(b *testing.B) {
	for _, kit := range []struct {
		name string
		open func(t testing.TB) action.Store
	}{{"mem", memKit().open}, {"git", gitKit().open}} {
		b.Run(kit.name, func(b *testing.B) {
			s := kit.open(b)
			_, keys := storetest.Key(b)
			h, err := httpapi.New(httpapi.Options{Store: s, Keys: keys, APIKey: apiKey})
			if err != nil {
				b.Fatal(err)
			}
			var paths []string
			for i := 0; i < 100; i++ {
				name, version := fmt.Sprintf("bench.a%02d", i/5), fmt.Sprintf("1.%d.0", i%5)
				rec, _ := action.Prepare(signed(b, name, version, "x", nil))
				if _, err := s.Publish(b.Context(), rec); err != nil {
					b.Fatal(err)
				}
				paths = append(paths, "/actions/"+name+"/versions/"+version)
			}
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				i := 0
				for pb.Next() {
					req := httptest.NewRequest("GET", paths[i%len(paths)], nil)
					w := httptest.NewRecorder()
					h.ServeHTTP(w, req)
					if w.Code != http.StatusOK {
						b.Errorf("%d", w.Code)
					}
					i++
				}
			})
		})
	}
}
