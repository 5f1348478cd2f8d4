package action

import (
	"bytes"
	"crypto/ed25519"
	"errors"
	"strings"
	"testing"

	"github.com/dome-registry/dome/pkg/canonical"
	"github.com/dome-registry/dome/pkg/signing"
)

// testKey is a fixed Ed25519 key for tests (seed bytes 1..32).
func testKey(t testing.TB, kid string, seed byte) (signing.PrivateKey, *signing.TrustedKeys) {
	t.Helper()
	s := make([]byte, ed25519.SeedSize)
	for i := range s {
		s[i] = seed + byte(i)
	}
	k := signing.PrivateKey{KID: kid, Key: ed25519.NewKeyFromSeed(s)}
	ts, err := signing.NewTrustedKeys(k.Public())
	if err != nil {
		t.Fatal(err)
	}
	return k, ts
}

const moveDoc = `{"name": "files.move", "version": "1.1.0", "description": "Move a file from A to B",
  "input": {"type": "object", "required": ["from", "to"], "properties": {"from": {"type": "string"}, "to": {"type": "string"}}}}`

// Acceptance A: the same schema with keys in another order has identical
// canonical bytes and hash.
func TestPrepare_KeyOrderIrrelevant(t *testing.T) {
	reordered := `{"input": {"properties": {"to": {"type": "string"}, "from": {"type": "string"}}, "required": ["from", "to"], "type": "object"},
	  "description": "Move a file from A to B", "version": "1.1.0", "name": "files.move"}`
	a, err := Prepare([]byte(moveDoc))
	if err != nil {
		t.Fatal(err)
	}
	b, err := Prepare([]byte(reordered))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Document, b.Document) || a.Hash != b.Hash {
		t.Fatalf("reordered keys changed the canonical form:\n%s\n%s", a.Document, b.Document)
	}
	if a.Name != "files.move" || a.Version != "1.1.0" || !strings.HasPrefix(a.Hash, "sha256:") {
		t.Fatalf("Prepare = %+v", a)
	}
	if a.Hash != canonical.Digest(a.Document) { // unsigned: payload == document
		t.Fatalf("hash %s is not the digest of the canonical payload", a.Hash)
	}
}

func TestParseDocument_Refusals(t *testing.T) {
	for _, tc := range []struct{ name, doc, want string }{
		{"duplicate key", `{"name": "a", "version": "1.0.0", "name": "b"}`, "duplicate"},
		{"duplicate key escaped", `{"name": "a", "version": "1.0.0", "n\u0061me": "b"}`, "duplicate"},
		{"not an object", `["a"]`, "JSON object"},
		{"no name", `{"version": "1.0.0"}`, `no "name"`},
		{"no version", `{"name": "a"}`, `no "version"`},
		{"name not string", `{"name": 1, "version": "1.0.0"}`, "must be a string"},
		{"bad name", `{"name": "A", "version": "1.0.0"}`, "action name"},
		{"bad version", `{"name": "a", "version": "1.0"}`, "incomplete"},
		{"v prefix", `{"name": "a", "version": "v1.0.0"}`, "leading"},
		{"description not string", `{"name": "a", "version": "1.0.0", "description": {}}`, "must be a string"},
		{"trailing data", `{"name": "a", "version": "1.0.0"} x`, ""},
		{"bad signature member", `{"name": "a", "version": "1.0.0", "signature": "x"}`, "signature"},
		{"too big", `{"name": "a", "version": "1.0.0", "x": "` + strings.Repeat("a", MaxDocumentSize) + `"}`, "limit"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseDocument([]byte(tc.doc))
			if err == nil || !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("ParseDocument: %v, want an ErrInvalid containing %q", err, tc.want)
			}
		})
	}
}

func TestParseDocument_DropsVerified(t *testing.T) {
	d, err := ParseDocument([]byte(`{"name": "a", "version": "1.0.0", "verified": true}`))
	if err != nil {
		t.Fatal(err)
	}
	if string(d.Canonical) != `{"name":"a","version":"1.0.0"}` {
		t.Fatalf("canonical = %s", d.Canonical)
	}
}

// Acceptance B: a document signed by a trusted kid verifies.
func TestSignVerify(t *testing.T) {
	key, trusted := testKey(t, "dev-root-1", 1)
	signed, err := Sign(key, []byte(moveDoc))
	if err != nil {
		t.Fatal(err)
	}
	v := Verify(signed, trusted)
	if !v.Verified || v.KID != "dev-root-1" || v.Alg != "ed25519" || v.Err != nil || v.Reason != "" || v.Code() != "" {
		t.Fatalf("Verify = %+v", v)
	}
	rec, err := Prepare(signed)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(rec.Document, signed) {
		t.Fatalf("Sign output is not canonical:\n%s\n%s", signed, rec.Document)
	}
	if v.Hash != rec.Hash {
		t.Fatalf("hash %s != %s", v.Hash, rec.Hash)
	}
	if got := VerifyRecord(rec, trusted); !got.Verified {
		t.Fatalf("VerifyRecord = %+v", got)
	}
	// The signature covers the DSSE PAE of the payload type and the digest.
	d, _ := ParseDocument(signed)
	msg, err := signing.SigningInput(PayloadType, d.Hash)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(msg), "DSSEv1 32 application/vnd.dome.action+json 71 sha256:") {
		t.Fatalf("signing input = %q", msg)
	}
	// Re-signing a signed document gives the same bytes (Ed25519 is deterministic).
	again, err := Sign(key, signed)
	if err != nil || !bytes.Equal(again, signed) {
		t.Fatalf("re-sign: %v\n%s\n%s", err, again, signed)
	}
}

func TestVerify_UnknownKID(t *testing.T) {
	key, _ := testKey(t, "dev-root-1", 1)
	_, other := testKey(t, "prod-root-1", 100)
	signed, err := Sign(key, []byte(moveDoc))
	if err != nil {
		t.Fatal(err)
	}
	v := Verify(signed, other)
	if v.Verified || !errors.Is(v.Err, ErrUnknownKeyID) || v.Code() != "UNKNOWN_KEY_ID" || v.KID != "dev-root-1" {
		t.Fatalf("Verify = %+v", v)
	}
	if v := Verify(signed, nil); v.Verified || v.Code() != "UNKNOWN_KEY_ID" {
		t.Fatalf("Verify with no keys = %+v", v)
	}
}

func TestVerify_SameKIDOtherKey_IsBadSignature(t *testing.T) {
	key, _ := testKey(t, "dev-root-1", 1)
	_, impostor := testKey(t, "dev-root-1", 50)
	signed, _ := Sign(key, []byte(moveDoc))
	if v := Verify(signed, impostor); v.Verified || v.Code() != "BAD_SIGNATURE" {
		t.Fatalf("Verify = %+v", v)
	}
}

// Acceptance C: changing any byte of a stored document makes it fail
// verification (or parsing), never verify.
func TestVerify_AnyByteChanged(t *testing.T) {
	key, trusted := testKey(t, "dev-root-1", 1)
	signed, err := Sign(key, []byte(moveDoc))
	if err != nil {
		t.Fatal(err)
	}
	rec, _ := Prepare(signed)
	for i := range signed {
		for _, delta := range []byte{1, 0x20} {
			tampered := bytes.Clone(signed)
			tampered[i] ^= delta
			if bytes.Equal(tampered, signed) {
				continue
			}
			v := Verify(tampered, trusted)
			if v.Verified {
				// A flip can only be harmless if it leaves the canonical
				// document unchanged, which canonical input never allows.
				t.Fatalf("byte %d ^ %#x: tampered document verified:\n%s", i, delta, tampered)
			}
			if v.Reason == "" || v.Code() == "" {
				t.Fatalf("byte %d: no reason or code: %+v", i, v)
			}
			r := rec
			r.Document = tampered
			if VerifyRecord(r, trusted).Verified {
				t.Fatalf("byte %d: VerifyRecord verified a tampered record", i)
			}
		}
	}
}

func TestVerify_Reasons(t *testing.T) {
	key, trusted := testKey(t, "dev-root-1", 1)
	signed, _ := Sign(key, []byte(moveDoc))
	changed := bytes.Replace(signed, []byte("Move a file"), []byte("Nuke a file"), 1)
	if v := Verify(changed, trusted); v.Verified || !strings.Contains(v.Reason, "changed since it was signed") || v.Code() != "BAD_SIGNATURE" {
		t.Fatalf("changed payload: %+v", v)
	}
	if v := Verify([]byte(moveDoc), trusted); v.Verified || !strings.Contains(v.Reason, `no "signature"`) {
		t.Fatalf("unsigned: %+v", v)
	}
	if v := Verify([]byte("{"), trusted); v.Verified || v.Code() != "BAD_SIGNATURE" || !strings.Contains(v.Reason, "does not parse") {
		t.Fatalf("garbage: %+v", v)
	}
	rec, _ := Prepare(signed)
	wrong := rec
	wrong.Version = "9.9.9"
	if v := VerifyRecord(wrong, trusted); v.Verified || !strings.Contains(v.Reason, "not files.move@9.9.9") {
		t.Fatalf("wrong version: %+v", v)
	}
	wrong = rec
	wrong.Hash = canonical.Digest([]byte("x"))
	if v := VerifyRecord(wrong, trusted); v.Verified || !strings.Contains(v.Reason, "recorded") {
		t.Fatalf("wrong hash: %+v", v)
	}
}

func TestKeysFingerprint(t *testing.T) {
	_, a := testKey(t, "a", 1)
	_, a2 := testKey(t, "a", 1)
	_, b := testKey(t, "a", 2)
	if KeysFingerprint(a) != KeysFingerprint(a2) || KeysFingerprint(a) == KeysFingerprint(b) || KeysFingerprint(nil) != "" {
		t.Fatal("fingerprints do not identify key sets")
	}
}
