package grant_test

import (
	"crypto/ed25519"
	"testing"
	"time"

	"github.com/dome-registry/dome/pkg/grant"
)

// BenchmarkCheck is the stateless verification of one grant (bench/grant
// compares it with crypto/ed25519 and golang-jwt in one run).
func BenchmarkCheck(b *testing.B) {
	f := newFixture(b)
	tok, _ := f.issue(b, grant.Binding{})
	v, _ := grant.NewVerifier(f.trusted, grant.Options{})
	r := req(t0.Add(time.Minute))
	r.Call = &grant.Call{Method: "repo-read/read_file", ReadPaths: []string{"src/main.go"}}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := v.Check(tok, r); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEd25519Floor(b *testing.B) {
	f := newFixture(b)
	tok, _ := f.issue(b, grant.Binding{})
	sig := ed25519.Sign(f.key.Key, tok)
	pub := f.key.Public().Key
	for i := 0; i < b.N; i++ {
		if !ed25519.Verify(pub, tok, sig) {
			b.Fatal("floor")
		}
	}
}
