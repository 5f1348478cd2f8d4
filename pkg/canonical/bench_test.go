package canonical

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"testing"
)

// stripeSpec is the 3.5 MB OpenAPI document the targets name. It is
// read from ../shared/data when present.
func stripeSpec(b *testing.B) []byte {
	b.Helper()
	p := filepath.Join("..", "..", "..", "shared", "data", "stripe-spec3-2021-06.json")
	data, err := os.ReadFile(p)
	if err != nil {
		b.Skipf("benchmark input not present: %v", err)
	}
	return data
}

func BenchmarkTransform_Stripe(b *testing.B) {
	in := stripeSpec(b)
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Transform(in); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkTransform_StripeReversed canonicalizes the spec with every
// object's members in reverse order, so that every object is sorted.
func BenchmarkTransform_StripeReversed(b *testing.B) {
	in := reverseMembers(b, stripeSpec(b))
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Transform(in); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkTransformReader_Stripe(b *testing.B) {
	in := stripeSpec(b)
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := TransformReader(bytes.NewReader(in), Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEncodingJSON_Stripe is the floor the issue names: encoding/json
// Unmarshal into any plus Marshal (which sorts map keys, by UTF-8).
func BenchmarkEncodingJSON_Stripe(b *testing.B) {
	in := stripeSpec(b)
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		var v any
		if err := json.Unmarshal(in, &v); err != nil {
			b.Fatal(err)
		}
		if _, err := json.Marshal(v); err != nil {
			b.Fatal(err)
		}
	}
}

func reverseMembers(b *testing.B, in []byte) []byte {
	b.Helper()
	out, err := Transform(in)
	if err != nil {
		b.Fatal(err)
	}
	// Write the canonical form back with every object's members reversed.
	var v any
	d := json.NewDecoder(bytes.NewReader(out))
	d.UseNumber()
	if err := d.Decode(&v); err != nil {
		b.Fatal(err)
	}
	var buf bytes.Buffer
	writeReversed(&buf, v)
	return buf.Bytes()
}

func writeReversed(buf *bytes.Buffer, v any) {
	switch v := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		buf.WriteByte('{')
		for i := len(keys) - 1; i >= 0; i-- {
			k, _ := json.Marshal(keys[i])
			buf.Write(k)
			buf.WriteByte(':')
			writeReversed(buf, v[keys[i]])
			if i > 0 {
				buf.WriteByte(',')
			}
		}
		buf.WriteByte('}')
	case []any:
		buf.WriteByte('[')
		for i, e := range v {
			if i > 0 {
				buf.WriteByte(',')
			}
			writeReversed(buf, e)
		}
		buf.WriteByte(']')
	default:
		e, _ := json.Marshal(v)
		buf.Write(e)
	}
}
