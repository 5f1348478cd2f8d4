package specfilter

import (
	"os"
	"path/filepath"
	"testing"
)

// Benchmarks over the real Stripe spec (skipped when ../shared/data is absent).

func stripeDoc(b *testing.B) (FileReader, string) {
	if _, err := os.Stat(stripeSpec); err != nil {
		b.Skipf("the Stripe spec is not here (%s)", stripeSpec)
	}
	fr, err := OpenDir(filepath.Dir(stripeSpec))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { fr.Close() })
	return fr, filepath.Base(stripeSpec)
}

func BenchmarkLoad_Stripe(b *testing.B) {
	fr, name := stripeDoc(b)
	for b.Loop() {
		if _, err := Load(fr, name, LoadOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParseYAML_Stripe(b *testing.B) {
	data, err := os.ReadFile(stripeSpec)
	if err != nil {
		b.Skipf("the Stripe spec is not here (%s)", stripeSpec)
	}
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := ParseYAML(data, Limits{}); err != nil {
			b.Fatal(err)
		}
	}
}

func benchApply(b *testing.B, opts Options) {
	fr, name := stripeDoc(b)
	doc, err := Load(fr, name, LoadOptions{})
	if err != nil {
		b.Fatal(err)
	}
	p, err := ParseProfile("b.profile.json", []byte(`{"schema_version":"dome.profile/v1","id":"b","allow":{"operations":["* /v1/charges/**","* /v1/invoices/**","* /v1/payment_intents/**","* /v1/refunds/**"]}}`))
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := Apply(doc, p, opts); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkApply_Stripe10Percent(b *testing.B)           { benchApply(b, Options{}) }
func BenchmarkApply_Stripe10PercentNoValidate(b *testing.B) { benchApply(b, Options{NoValidate: true}) }

// BenchmarkParseYAMLNodes_Stripe is the reader ParseYAML replaced (yaml.v3's
// Node tree, then a Value), for comparison.
func BenchmarkParseYAMLNodes_Stripe(b *testing.B) {
	data, err := os.ReadFile(stripeSpec)
	if err != nil {
		b.Skipf("the Stripe spec is not here (%s)", stripeSpec)
	}
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := nodeParseYAML(data, Limits{}); err != nil {
			b.Fatal(err)
		}
	}
}
