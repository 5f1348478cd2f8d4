package signing

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dome-registry/dome/pkg/canonical"
)

// fixedKey is a deterministic test key (seed 0x01 0x02 ... 0x20).
func fixedKey(t testing.TB, kid string) PrivateKey {
	t.Helper()
	seed := make([]byte, ed25519.SeedSize)
	for i := range seed {
		seed[i] = byte(i + 1)
	}
	return PrivateKey{KID: kid, Key: ed25519.NewKeyFromSeed(seed)}
}

func trusted(t testing.TB, keys ...PrivateKey) *TrustedKeys {
	t.Helper()
	var pubs []PublicKey
	for _, k := range keys {
		pubs = append(pubs, k.Public())
	}
	ts, err := NewTrustedKeys(pubs...)
	if err != nil {
		t.Fatal(err)
	}
	return ts
}

func TestPAE_DSSEVector(t *testing.T) {
	// From the DSSE protocol document.
	got := PAE("http://example.com/HelloWorld", []byte("hello world"))
	if want := "DSSEv1 29 http://example.com/HelloWorld 11 hello world"; string(got) != want {
		t.Fatalf("PAE = %q, want %q", got, want)
	}
}

// TestSign_ExactBytes pins what is signed: a golden signature and a check
// with crypto/ed25519 alone over the documented bytes.
func TestSign_ExactBytes(t *testing.T) {
	key := fixedKey(t, "dev-root-1")
	payload := []byte(`{"name":"files.move","version":"1.0.0"}`)
	sig, err := Sign(key, "dome.action/v1", payload)
	if err != nil {
		t.Fatal(err)
	}
	digest := canonical.Digest(payload)
	msg := "DSSEv1 14 dome.action/v1 71 " + digest
	in, err := SigningInput("dome.action/v1", digest)
	if err != nil || string(in) != msg {
		t.Fatalf("SigningInput = %q, %v; want %q", in, err, msg)
	}
	raw, _ := base64.StdEncoding.DecodeString(strings.TrimPrefix(sig.Sig, "base64:"))
	if !ed25519.Verify(key.Public().Key, []byte(msg), raw) {
		t.Fatal("the signature does not cover the documented bytes")
	}
	// Computed independently: openssl pkeyutl -sign -rawin over msg with the
	// same seed (PKCS#8 DER 302e020100300506032b657004220420 || seed).
	const golden = "base64:Ik6J5oPPGx+BhqIgtM8dAaRPjd74AeyFhvJq1kmzmZMQdvqJxLeq36euUlbDF6BpeO4dEbyIrfXqhHqhZc+PDw=="
	if sig.Sig != golden || sig.Alg != "ed25519" || sig.KID != "dev-root-1" {
		t.Fatalf("signature = %+v, want sig %s", sig, golden)
	}
}

func TestVerify(t *testing.T) {
	key := fixedKey(t, "dev-root-1")
	other, err := GenerateKey("other", bytes.NewReader(bytes.Repeat([]byte{7}, 64)))
	if err != nil {
		t.Fatal(err)
	}
	ts := trusted(t, key, other)
	payload := []byte(`{"a":[1,2],"b":"x"}`)
	sig, err := Sign(key, "dome.action/v1", payload)
	if err != nil {
		t.Fatal(err)
	}
	if err := ts.Verify("dome.action/v1", payload, sig); err != nil {
		t.Fatalf("Verify: %v", err)
	}
	if err := ts.VerifyDigest("dome.action/v1", canonical.Digest(payload), sig); err != nil {
		t.Fatalf("VerifyDigest: %v", err)
	}
	dsig, err := SignDigest(key, "dome.action/v1", canonical.Digest(payload))
	if err != nil || dsig != sig {
		t.Fatalf("SignDigest = %+v, %v; want %+v", dsig, err, sig)
	}
	otherSig, _ := Sign(other, "dome.action/v1", payload)
	tests := []struct {
		name    string
		kind    string
		payload []byte
		sig     Signature
		is      error
		code    string
	}{
		{"other kind", "dome.grant/v1", payload, sig, ErrBadSignature, CodeBadSignature},
		{"tampered payload", "dome.action/v1", []byte(`{"a":[1,2],"b":"y"}`), sig, ErrBadSignature, CodeBadSignature},
		{"unknown kid", "dome.action/v1", payload, Signature{Alg: "ed25519", KID: "nobody", Sig: sig.Sig}, ErrUnknownKeyID, CodeUnknownKeyID},
		{"kid swapped", "dome.action/v1", payload, Signature{Alg: "ed25519", KID: "other", Sig: sig.Sig}, ErrBadSignature, CodeBadSignature},
		{"signature of other key", "dome.action/v1", payload, Signature{Alg: "ed25519", KID: "dev-root-1", Sig: otherSig.Sig}, ErrBadSignature, CodeBadSignature},
		{"alg mismatch", "dome.action/v1", payload, Signature{Alg: "es256", KID: "dev-root-1", Sig: sig.Sig}, ErrAlgMismatch, CodeBadSignature},
		{"no prefix", "dome.action/v1", payload, Signature{Alg: "ed25519", KID: "dev-root-1", Sig: strings.TrimPrefix(sig.Sig, "base64:")}, ErrBadSignature, CodeBadSignature},
		{"not base64", "dome.action/v1", payload, Signature{Alg: "ed25519", KID: "dev-root-1", Sig: "base64:!!"}, ErrBadSignature, CodeBadSignature},
		{"short", "dome.action/v1", payload, Signature{Alg: "ed25519", KID: "dev-root-1", Sig: "base64:AAAA"}, ErrBadSignature, CodeBadSignature},
		{"padding replaced (66 bytes)", "dome.action/v1", payload, Signature{Alg: "ed25519", KID: "dev-root-1", Sig: sig.Sig[:len(sig.Sig)-2] + "AA"}, ErrBadSignature, CodeBadSignature},
		{"non-zero padding bits", "dome.action/v1", payload, Signature{Alg: "ed25519", KID: "dev-root-1", Sig: sig.Sig[:len(sig.Sig)-3] + flipLast(sig.Sig[len(sig.Sig)-3]) + "=="}, ErrBadSignature, CodeBadSignature},
		{"empty kind", "", payload, sig, ErrBadSignature, CodeBadSignature},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := ts.Verify(tt.kind, tt.payload, tt.sig)
			if !errors.Is(err, tt.is) || Code(err) != tt.code {
				t.Fatalf("Verify = %v (code %q), want %v (%s)", err, Code(err), tt.is, tt.code)
			}
		})
	}
	if err := ts.VerifyDigest("dome.action/v1", "sha256:abc", sig); !errors.Is(err, ErrBadSignature) {
		t.Fatalf("VerifyDigest with a malformed digest: %v", err)
	}
	if Code(nil) != "" || Code(errors.New("x")) != "" {
		t.Fatal("Code of a non-verification error")
	}
}

func TestSign_Refuses(t *testing.T) {
	key := fixedKey(t, "k1")
	if _, err := Sign(key, "dome.action/v1", []byte(`{"b":1, "a":2}`)); err == nil || !strings.Contains(err.Error(), "not in RFC 8785 canonical form") {
		t.Fatalf("non-canonical payload: %v", err)
	}
	if _, err := Sign(key, "dome.action/v1", []byte(`{"a":1,"a":2}`)); err == nil {
		t.Fatal("duplicate keys signed")
	}
	if _, err := Sign(key, "bad kind", []byte(`{}`)); err == nil {
		t.Fatal("payload type with a space signed")
	}
	if _, err := Sign(PrivateKey{KID: "k1"}, "dome.action/v1", []byte(`{}`)); err == nil {
		t.Fatal("signed with no key")
	}
	if _, err := SignDigest(key, "dome.action/v1", "sha256:XYZ"); err == nil {
		t.Fatal("signed a malformed digest")
	}
	if _, err := SignDigest(PrivateKey{KID: "bad kid", Key: key.Key}, "dome.action/v1", canonical.Digest(nil)); err == nil {
		t.Fatal("signed with a bad kid")
	}
}

func TestKeys_PEMRoundTrip(t *testing.T) {
	key := fixedKey(t, "dev-root-1")
	privPEM, err := key.MarshalPEM()
	if err != nil {
		t.Fatal(err)
	}
	back, err := ParsePrivateKey("dev-root-1", privPEM)
	if err != nil || !back.Key.Equal(key.Key) {
		t.Fatalf("ParsePrivateKey: %v", err)
	}
	pubPEM, err := key.Public().MarshalPEM()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{string(pubPEM), key.Public().Encoded()} {
		pub, err := ParsePublicKey("dev-root-1", s)
		if err != nil || !pub.Key.Equal(key.Public().Key) || pub.Alg != AlgEd25519 {
			t.Fatalf("ParsePublicKey(%q): %v", s, err)
		}
	}
	if e := key.Public().Entry(); e.KID != "dev-root-1" || e.Alg != "ed25519" || !strings.HasPrefix(e.PublicKey, "base64:") {
		t.Fatalf("Entry = %+v", e)
	}
}

// TestKeys_OpenSSL checks interoperability with the openssl binary: dome reads
// the keys it generates and writes the public key it derives.
func TestKeys_OpenSSL(t *testing.T) {
	if _, err := exec.LookPath("openssl"); err != nil {
		t.Skip("openssl not installed")
	}
	dir := t.TempDir()
	keyFile := filepath.Join(dir, "k.pem")
	if out, err := exec.Command("openssl", "genpkey", "-algorithm", "ed25519", "-out", keyFile).CombinedOutput(); err != nil {
		t.Fatalf("openssl genpkey: %v %s", err, out)
	}
	data, err := os.ReadFile(keyFile)
	if err != nil {
		t.Fatal(err)
	}
	key, err := ParsePrivateKey("ossl", data)
	if err != nil {
		t.Fatalf("ParsePrivateKey(openssl key): %v", err)
	}
	pubOSSL, err := exec.Command("openssl", "pkey", "-in", keyFile, "-pubout").Output()
	if err != nil {
		t.Fatal(err)
	}
	ours, _ := key.Public().MarshalPEM()
	if !bytes.Equal(ours, pubOSSL) {
		t.Fatalf("public key PEM differs from openssl's:\n%s\n%s", ours, pubOSSL)
	}
	// openssl reads the private key dome writes.
	mine := fixedKey(t, "mine")
	pemBytes, _ := mine.MarshalPEM()
	mineFile := filepath.Join(dir, "mine.pem")
	if err := os.WriteFile(mineFile, pemBytes, 0o600); err != nil {
		t.Fatal(err)
	}
	pubMine, err := exec.Command("openssl", "pkey", "-in", mineFile, "-pubout").Output()
	if err != nil {
		t.Fatalf("openssl pkey on dome's key: %v", err)
	}
	want, _ := mine.Public().MarshalPEM()
	if !bytes.Equal(pubMine, want) {
		t.Fatal("openssl derives another public key from dome's private key")
	}
}

func TestParsePrivateKey_Refuses(t *testing.T) {
	key := fixedKey(t, "k")
	good, _ := key.MarshalPEM()
	pub, _ := key.Public().MarshalPEM()
	tests := []struct {
		name, kid string
		data      []byte
		msg       string
	}{
		{"not pem", "k", []byte("hello"), "no PEM block"},
		{"public key", "k", pub, `PEM block is "PUBLIC KEY"`},
		{"encrypted", "k", []byte("-----BEGIN ENCRYPTED PRIVATE KEY-----\nAAAA\n-----END ENCRYPTED PRIVATE KEY-----\n"), "encrypted"},
		{"trailing", "k", append(append([]byte{}, good...), "junk"...), "data after"},
		{"bad kid", "../x", good, "kid"},
		{"garbage der", "k", []byte("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"), "PKCS#8"},
	}
	for _, tt := range tests {
		if _, err := ParsePrivateKey(tt.kid, tt.data); err == nil || !strings.Contains(err.Error(), tt.msg) {
			t.Errorf("%s: error %v, want %q", tt.name, err, tt.msg)
		}
	}
}

func TestParseTrustedKeys(t *testing.T) {
	a, b := fixedKey(t, "a"), fixedKey(t, "b")
	b.Key = ed25519.NewKeyFromSeed(bytes.Repeat([]byte{9}, 32))
	pa, pb := a.Public().Encoded(), b.Public().Encoded()
	pemB, _ := b.Public().MarshalPEM()
	ok := `[{"kid":"b","alg":"ed25519","public_key":` + jsonString(string(pemB)) + `},{"kid":"a","alg":"ed25519","public_key":"` + pa + `"}]`
	ts, err := ParseTrustedKeys([]byte(ok))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(ts.KIDs(), ","); got != "a,b" {
		t.Fatalf("KIDs = %s", got)
	}
	if e := ts.Entries(); len(e) != 2 || e[1].PublicKey != pb {
		t.Fatalf("Entries = %+v", e)
	}
	bad := []struct{ name, in, msg string }{
		{"not json", `[{`, "invalid JSON"},
		{"object", `{"kid":"a"}`, "want a JSON array"},
		{"empty", `[]`, "empty"},
		{"null", `null`, "empty"},
		{"duplicate member", `[{"kid":"a","kid":"b","alg":"ed25519","public_key":"` + pa + `"}]`, "duplicate object member"},
		{"unknown field", `[{"kid":"a","alg":"ed25519","public_key":"` + pa + `","note":1}]`, "unknown field"},
		{"alg", `[{"kid":"a","alg":"rsa","public_key":"` + pa + `"}]`, `alg "rsa" is not supported`},
		{"alg case", `[{"kid":"a","alg":"Ed25519","public_key":"` + pa + `"}]`, "not supported"},
		{"short key", `[{"kid":"a","alg":"ed25519","public_key":"base64:AAAA"}]`, "32-byte"},
		{"no prefix", `[{"kid":"a","alg":"ed25519","public_key":"` + strings.TrimPrefix(pa, "base64:") + `"}]`, "want"},
		{"bad kid", `[{"kid":"","alg":"ed25519","public_key":"` + pa + `"}]`, "kid"},
		{"dup kid", `[{"kid":"a","alg":"ed25519","public_key":"` + pa + `"},{"kid":"a","alg":"ed25519","public_key":"` + pb + `"}]`, `kid "a" is listed twice`},
		{"dup key", `[{"kid":"a","alg":"ed25519","public_key":"` + pa + `"},{"kid":"c","alg":"ed25519","public_key":"` + pa + `"}]`, "same public key"},
	}
	for _, tt := range bad {
		if _, err := ParseTrustedKeys([]byte(tt.in)); err == nil || !strings.Contains(err.Error(), tt.msg) {
			t.Errorf("%s: error %v, want %q", tt.name, err, tt.msg)
		}
	}
	var nilSet *TrustedKeys
	if _, err := nilSet.Key("a"); !errors.Is(err, ErrUnknownKeyID) {
		t.Fatal("nil set knows a key")
	}
}

func jsonString(s string) string {
	b, _ := canonical.Marshal(s)
	return string(b)
}

func TestGenerateKey(t *testing.T) {
	if _, err := GenerateKey("bad/kid", bytes.NewReader(make([]byte, 64))); err == nil {
		t.Fatal("bad kid accepted")
	}
	if _, err := GenerateKey("k", bytes.NewReader(nil)); err == nil {
		t.Fatal("no randomness accepted")
	}
	for _, kid := range []string{"dev-root-1", "ci@2026.01", "A", "x:y+z_w"} {
		if err := CheckKID(kid); err != nil {
			t.Errorf("CheckKID(%q): %v", kid, err)
		}
	}
	for _, kid := range []string{"", "-x", ".hidden", "a b", "a/b", strings.Repeat("k", 129), "é"} {
		if err := CheckKID(kid); err == nil {
			t.Errorf("CheckKID(%q) accepted", kid)
		}
	}
}

func TestEmbedded(t *testing.T) {
	key := fixedKey(t, "dev-root-1")
	ts := trusted(t, key)
	doc := []byte(`{"version": "1.0.0", "name": "files.move", "verified": true, "hash": "sha256:old"}`)
	signed, sig, err := SignEmbedded(key, "dome.action/v1", doc)
	if err != nil {
		t.Fatal(err)
	}
	payload := []byte(`{"name":"files.move","version":"1.0.0"}`)
	want := `{"hash":"` + canonical.Digest(payload) + `","name":"files.move","signature":{"alg":"ed25519","kid":"dev-root-1","sig":"` + sig.Sig + `"},"version":"1.0.0"}`
	if string(signed) != want {
		t.Fatalf("SignEmbedded =\n%s\nwant\n%s", signed, want)
	}
	if err := ts.Verify("dome.action/v1", payload, sig); err != nil {
		t.Fatalf("the embedded signature does not cover the payload without hash/signature/verified: %v", err)
	}
	e, err := ts.VerifyEmbedded("dome.action/v1", signed)
	if err != nil || e.Digest != canonical.Digest(payload) || *e.Signature != sig {
		t.Fatalf("VerifyEmbedded = %+v, %v", e, err)
	}
	// "verified" set by a server is not part of the payload.
	withVerified := bytes.Replace(signed, []byte(`{"hash"`), []byte(`{"verified":false,"hash"`), 1)
	if _, err := ts.VerifyEmbedded("dome.action/v1", withVerified); err != nil {
		t.Fatalf("verified member broke verification: %v", err)
	}
	s := string(signed)
	bad := []struct {
		name, doc string
		is        error
	}{
		{"tampered", strings.Replace(s, "1.0.0", "1.0.1", 1), ErrBadSignature},
		{"hash tampered", strings.Replace(s, `"hash":"sha256:`, `"hash":"sha256:0`, 1), ErrBadSignature},
		{"other kid", strings.Replace(s, `"kid":"dev-root-1"`, `"kid":"x"`, 1), ErrUnknownKeyID},
		{"no signature", `{"name":"files.move"}`, ErrBadSignature},
		{"not object", `[1]`, ErrNotObject},
	}
	for _, tt := range bad {
		if _, err := ts.VerifyEmbedded("dome.action/v1", []byte(tt.doc)); !errors.Is(err, tt.is) {
			t.Errorf("%s: error %v, want %v", tt.name, err, tt.is)
		}
	}
	if _, err := ts.VerifyEmbedded("dome.grant/v1", signed); !errors.Is(err, ErrBadSignature) {
		t.Errorf("other kind verified: %v", err)
	}
	for _, doc := range []string{
		strings.Replace(s, `"kid":`, `"KID":`, 1),                  // case variant encoding/json would accept
		strings.Replace(s, `"alg":"ed25519",`, ``, 1),              // missing member
		strings.Replace(s, `"sig":`, `"note":1,"sig":`, 1),         // unknown member
		strings.Replace(s, `"hash":"sha256:`, `"hash":7,"x":"`, 1), // hash not a string
	} {
		if _, err := SplitEmbedded([]byte(doc)); err == nil {
			t.Errorf("SplitEmbedded accepted %s", doc)
		}
	}
	var se *canonical.SyntaxError
	if _, err := SplitEmbedded([]byte(`{"a":1,"a":2}`)); !errors.As(err, &se) {
		t.Errorf("duplicate members: %v", err)
	}
}

func TestDetached(t *testing.T) {
	key := fixedKey(t, "dev-root-1")
	ts := trusted(t, key)
	payload := []byte(`{"a":1}`)
	sf, err := NewSignatureFile(key, "dome.action/v1", payload)
	if err != nil {
		t.Fatal(err)
	}
	enc, _ := canonical.Marshal(sf)
	back, err := ParseSignatureFile(enc)
	if err != nil || back != sf {
		t.Fatalf("ParseSignatureFile = %+v, %v", back, err)
	}
	if err := ts.VerifyDetached("dome.action/v1", payload, sf); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		kind    string
		payload string
		edit    func(*SignatureFile)
		msg     string
	}{
		{"other kind", "dome.grant/v1", `{"a":1}`, func(*SignatureFile) {}, `is for kind "dome.action/v1", not "dome.grant/v1"`},
		{"relabelled kind", "dome.grant/v1", `{"a":1}`, func(s *SignatureFile) { s.PayloadType = "dome.grant/v1" }, "does not match"},
		{"changed payload", "dome.action/v1", `{"a":2}`, func(*SignatureFile) {}, "the payload changed"},
		{"rehashed payload", "dome.action/v1", `{"a":2}`, func(s *SignatureFile) { s.Hash = canonical.Digest([]byte(`{"a":2}`)) }, "does not match"},
		{"canonicalization", "dome.action/v1", `{"a":1}`, func(s *SignatureFile) { s.Canonicalization = "none" }, "canonicalization"},
	}
	for _, tt := range tests {
		s := sf
		tt.edit(&s)
		err := ts.VerifyDetached(tt.kind, []byte(tt.payload), s)
		if !errors.Is(err, ErrBadSignature) || !strings.Contains(err.Error(), tt.msg) {
			t.Errorf("%s: %v, want a bad signature mentioning %q", tt.name, err, tt.msg)
		}
	}
	if _, err := ParseSignatureFile(bytes.Replace(enc, []byte(`"hash"`), []byte(`"Hash"`), 1)); err == nil {
		t.Error("case-variant member accepted")
	}
}

// flipLast changes the unused low bits of the last base64 data character.
func flipLast(c byte) string {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	i := strings.IndexByte(alphabet, c)
	return string(alphabet[i^1])
}

func TestKeys_SmallOrderRefused(t *testing.T) {
	// The identity point (y = 1) and the point of order 2 (y = -1) are
	// small-order: with such a key, R = identity and S = 0 verify anything.
	identity := make([]byte, 32)
	identity[0] = 1
	order2 := []byte{0xec, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f}
	forged := make([]byte, 64)
	forged[0] = 1 // R = identity, S = 0
	if !ed25519.Verify(identity, []byte("anything"), forged) {
		t.Fatal("precondition: crypto/ed25519 accepts the forgery under the identity key")
	}
	for name, raw := range map[string][]byte{"identity": identity, "order 2": order2} {
		if _, err := ParsePublicKey("k", "base64:"+base64.StdEncoding.EncodeToString(raw)); err == nil || !strings.Contains(err.Error(), "small-order") {
			t.Errorf("%s: ParsePublicKey = %v, want a small-order refusal", name, err)
		}
		if _, err := NewTrustedKeys(PublicKey{KID: "k", Alg: AlgEd25519, Key: raw}); err == nil {
			t.Errorf("%s: NewTrustedKeys accepted a small-order key", name)
		}
	}
	k, _ := GenerateKey("real", rand.Reader)
	if err := CheckPublicKey(k.Public().Key); err != nil {
		t.Fatalf("a real key: %v", err)
	}
}
