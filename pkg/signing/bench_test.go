package signing

import (
	"bytes"
	"crypto/ed25519"
	"testing"

	"github.com/dome-registry/dome/pkg/canonical"
)

// schema1KB is a canonical action schema of about 1 KB.
func schema1KB(b *testing.B) []byte {
	b.Helper()
	var buf bytes.Buffer
	buf.WriteString(`{"description":"Move a file from A to B","name":"files.move","parameters":{`)
	for i := 0; buf.Len() < 1000; i++ {
		buf.WriteString(`"p`)
		buf.WriteByte(byte('a' + i%26))
		buf.WriteByte(byte('a' + i/26))
		buf.WriteString(`":{"description":"a parameter","type":"string"},`)
	}
	buf.Truncate(buf.Len() - 1)
	buf.WriteString(`},"version":"1.1.0"}`)
	out, err := canonical.Transform(buf.Bytes())
	if err != nil {
		b.Fatal(err)
	}
	return out
}

func BenchmarkVerify_1KB(b *testing.B) {
	key := fixedKey(b, "dev-root-1")
	ts := trusted(b, key)
	schema := schema1KB(b)
	sig, err := Sign(key, "dome.action/v1", schema)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(schema)))
	b.ReportAllocs()
	for b.Loop() {
		if err := ts.Verify("dome.action/v1", schema, sig); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEd25519Verify_1KB is the floor: crypto/ed25519.Verify over the
// schema bytes themselves.
func BenchmarkEd25519Verify_1KB(b *testing.B) {
	key := fixedKey(b, "dev-root-1")
	schema := schema1KB(b)
	sig := ed25519.Sign(key.Key, schema)
	pub := key.Public().Key
	b.SetBytes(int64(len(schema)))
	b.ReportAllocs()
	for b.Loop() {
		if !ed25519.Verify(pub, schema, sig) {
			b.Fatal("bad signature")
		}
	}
}
