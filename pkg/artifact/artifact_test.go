package artifact

import (
	"bytes"
	"crypto/ed25519"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dome-registry/dome/pkg/canonical"
	"github.com/dome-registry/dome/pkg/signing"
)

var update = flag.Bool("update", false, "rewrite golden files")

func testKey(t testing.TB) signing.PrivateKey {
	t.Helper()
	seed := make([]byte, ed25519.SeedSize)
	for i := range seed {
		seed[i] = byte(i + 1)
	}
	return signing.PrivateKey{KID: "dev-root-1", Key: ed25519.NewKeyFromSeed(seed)}
}

func testTrusted(t testing.TB, keys ...signing.PrivateKey) *signing.TrustedKeys {
	t.Helper()
	var pubs []signing.PublicKey
	for _, k := range keys {
		pubs = append(pubs, k.Public())
	}
	ts, err := signing.NewTrustedKeys(pubs...)
	if err != nil {
		t.Fatal(err)
	}
	return ts
}

func testHeader() Header {
	return Header{
		ArtifactKind: "dome.stack_plan/v1",
		Version:      "1",
		ObjectID:     "plan-0001",
		RunID:        "run-42",
		WaveID:       "wave-1",
		BaseRef:      "3f2c1a9b8e7d6c5b4a39281706f5e4d3c2b1a098",
		CreatedAt:    FormatTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)),
		Producer:     "dome/test",
		InputsHash:   canonical.Digest([]byte("inputs")),
	}
}

const payload = `{ "steps": [ {"proposal_id": "p2", "order": 1}, {"proposal_id": "p1", "order": 2} ] }`

func TestSealOpen_Golden(t *testing.T) {
	key := testKey(t)
	doc, h, err := Seal(testHeader(), []byte(payload), &key)
	if err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "stack_plan.sealed.json")
	if *update {
		if err := os.WriteFile(golden, doc, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(doc, want) {
		t.Fatalf("sealed document differs from %s (run with -update if intended):\n%s", golden, doc)
	}
	if h.KID != "dev-root-1" || !strings.HasPrefix(h.Signature, "base64:") || h.Canonicalization != "jcs-rfc8785" {
		t.Fatalf("header = %+v", h)
	}
	cp, _ := canonical.Transform([]byte(payload))
	if h.PayloadDigest != canonical.Digest(cp) {
		t.Fatal("payload_digest is not the digest of the canonical payload")
	}
	s, err := Open(doc, OpenOptions{Kind: "dome.stack_plan/v1", Trusted: testTrusted(t, key), RequireSignature: true})
	if err != nil {
		t.Fatal(err)
	}
	if s.Header != h || !bytes.Equal(s.Payload, cp) {
		t.Fatalf("Open = %+v %s", s.Header, s.Payload)
	}
	// The signature covers exactly the canonical header without "signature".
	signed, _ := SigningPayload(h)
	if err := testTrusted(t, key).Verify(h.ArtifactKind, signed, signing.Signature{Alg: "ed25519", KID: h.KID, Sig: h.Signature}); err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(signed, []byte(`"signature"`)) || !bytes.Contains(signed, []byte(`"kid":"dev-root-1"`)) {
		t.Fatalf("signing payload %s", signed)
	}
}

func TestOpen_PrettyPrintedDocument(t *testing.T) {
	key := testKey(t)
	doc, _, err := Seal(testHeader(), []byte(payload), &key)
	if err != nil {
		t.Fatal(err)
	}
	pretty := bytes.ReplaceAll(doc, []byte(`,"`), []byte(",\n  \""))
	if _, err := Open(pretty, OpenOptions{Trusted: testTrusted(t, key)}); err != nil {
		t.Fatalf("Open of a reformatted document: %v", err)
	}
}

func TestOpen_Refuses(t *testing.T) {
	key := testKey(t)
	other := signing.PrivateKey{KID: "other", Key: ed25519.NewKeyFromSeed(bytes.Repeat([]byte{9}, 32))}
	ts := testTrusted(t, key, other)
	signed, _, err := Seal(testHeader(), []byte(payload), &key)
	if err != nil {
		t.Fatal(err)
	}
	unsigned, _, err := Seal(testHeader(), []byte(payload), nil)
	if err != nil {
		t.Fatal(err)
	}
	s := string(signed)
	tests := []struct {
		name string
		doc  string
		opts OpenOptions
		is   error
	}{
		{"tampered payload", strings.Replace(s, `"p1"`, `"p3"`, 1), OpenOptions{Trusted: ts}, ErrDigestMismatch},
		{"tampered run_id", strings.Replace(s, `"run-42"`, `"run-43"`, 1), OpenOptions{Trusted: ts}, signing.ErrBadSignature},
		{"tampered created_at", strings.Replace(s, `2026-01-02T03:04:05Z`, `2026-01-02T03:04:06Z`, 1), OpenOptions{Trusted: ts}, signing.ErrBadSignature},
		{"kid swapped", strings.Replace(s, `"kid":"dev-root-1"`, `"kid":"other"`, 1), OpenOptions{Trusted: ts}, signing.ErrBadSignature},
		{"unknown kid", strings.Replace(s, `"kid":"dev-root-1"`, `"kid":"ghost"`, 1), OpenOptions{Trusted: ts}, signing.ErrUnknownKeyID},
		{"kind", s, OpenOptions{Kind: "dome.grant/v1", Trusted: ts}, ErrKindMismatch},
		{"kind relabelled", strings.Replace(s, `dome.stack_plan/v1`, `dome.grant/v1`, 1), OpenOptions{Kind: "dome.grant/v1", Trusted: ts}, signing.ErrBadSignature},
		{"unsigned required", string(unsigned), OpenOptions{Trusted: ts, RequireSignature: true}, ErrUnsigned},
		{"required without keys", s, OpenOptions{RequireSignature: true}, ErrUnsigned},
		{"duplicate member", strings.Replace(s, `{"header":{`, `{"header":{"version":"2",`, 1), OpenOptions{Trusted: ts}, ErrMalformed},
		{"case variant field", strings.Replace(s, `{"header":{`, `{"header":{"Version":"2",`, 1), OpenOptions{Trusted: ts}, ErrMalformed},
		{"unknown field", strings.Replace(s, `{"header":{`, `{"header":{"zzz":1,`, 1), OpenOptions{Trusted: ts}, ErrMalformed},
		{"extra top-level", strings.Replace(s, `{"header":`, `{"extra":1,"header":`, 1), OpenOptions{Trusted: ts}, ErrMalformed},
		{"no payload", `{"header":{}}`, OpenOptions{}, ErrMalformed},
		{"not json", `{`, OpenOptions{}, ErrMalformed},
		{"other canonicalization", strings.Replace(string(unsigned), `"jcs-rfc8785"`, `"json-sorted"`, 1), OpenOptions{}, ErrMalformed},
		{"kid without signature", strings.Replace(string(unsigned), `"inputs_hash"`, `"kid":"dev-root-1","inputs_hash"`, 1), OpenOptions{}, ErrMalformed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Open([]byte(tt.doc), tt.opts)
			if !errors.Is(err, tt.is) {
				t.Fatalf("Open error = %v, want %v", err, tt.is)
			}
		})
	}
	if _, err := Open(unsigned, OpenOptions{Trusted: ts}); err != nil {
		t.Fatalf("unsigned artifact without RequireSignature: %v", err)
	}
}

func TestSeal_Refuses(t *testing.T) {
	h := testHeader()
	h.ObjectID = ""
	h.Producer = ""
	if _, _, err := Seal(h, []byte(`{}`), nil); err == nil || !strings.Contains(err.Error(), "missing object_id, producer") {
		t.Fatalf("missing fields: %v", err)
	}
	h = testHeader()
	h.CreatedAt = "2026-01-02 03:04:05"
	if _, _, err := Seal(h, []byte(`{}`), nil); err == nil || !strings.Contains(err.Error(), "created_at") {
		t.Fatalf("bad created_at: %v", err)
	}
	h = testHeader()
	h.InputsHash = "md5:x"
	if _, _, err := Seal(h, []byte(`{}`), nil); err == nil {
		t.Fatal("bad inputs_hash accepted")
	}
	if _, _, err := Seal(testHeader(), []byte(`{"a":1,"a":2}`), nil); err == nil {
		t.Fatal("payload with duplicate keys sealed")
	}
	if _, _, err := SealValue(testHeader(), map[string]any{"f": func() {}}, nil); err == nil {
		t.Fatal("unencodable payload sealed")
	}
	doc, _, err := SealValue(testHeader(), map[string]int{"b": 1, "a": 2}, nil)
	if err != nil || !bytes.HasSuffix(doc, []byte(`"payload":{"a":2,"b":1}}`)) {
		t.Fatalf("SealValue = %s, %v", doc, err)
	}
}

func TestParseSourceDateEpoch(t *testing.T) {
	got, err := ParseSourceDateEpoch("1767323045")
	if err != nil || FormatTime(got) != "2026-01-02T03:04:05Z" {
		t.Fatalf("ParseSourceDateEpoch = %v, %v", got, err)
	}
	for _, bad := range []string{"", "-1", "1.5", "soon"} {
		if _, err := ParseSourceDateEpoch(bad); err == nil {
			t.Errorf("ParseSourceDateEpoch(%q) accepted", bad)
		}
	}
}

// FuzzOpen: Open never panics, and what it accepts re-seals to the same bytes.
func FuzzOpen(f *testing.F) {
	key := testKey(f)
	ts := testTrusted(f, key)
	doc, _, _ := Seal(testHeader(), []byte(payload), &key)
	f.Add(doc)
	un, _, _ := Seal(testHeader(), []byte(`[1,2]`), nil)
	f.Add(un)
	f.Add([]byte(`{"header":{},"payload":null}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Open(data, OpenOptions{Trusted: ts})
		if err != nil {
			return
		}
		h := s.Header
		var k *signing.PrivateKey
		if h.Signature != "" {
			k = &key
		}
		again, h2, err := Seal(h, s.Payload, k)
		if err != nil {
			t.Fatalf("re-seal: %v", err)
		}
		if h2 != h {
			t.Fatalf("re-seal changed the header: %+v -> %+v", h, h2)
		}
		c, _ := canonical.Transform(data)
		if !bytes.Equal(again, c) {
			t.Fatalf("re-seal gives other bytes:\n%s\n%s", again, c)
		}
	})
}
