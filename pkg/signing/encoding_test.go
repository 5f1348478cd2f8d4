package signing

import (
	"crypto/ed25519"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/pem"
	"strings"
	"testing"
)

// smallOrder are the encodings of the eight points of small order (orders 1,
// 2, 4 and 8) and non-canonical encodings of some of them, as listed by
// libsodium's blocklist and "Taming the many EdDSAs" (Chalkias et al., 2020).
var smallOrder = []struct{ name, hex string }{
	{"identity (order 1)", "0100000000000000000000000000000000000000000000000000000000000000"},
	{"order 2", "ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f"},
	{"order 4", "0000000000000000000000000000000000000000000000000000000000000000"},
	{"order 4, sign bit", "0000000000000000000000000000000000000000000000000000000000000080"},
	{"order 8 a", "26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05"},
	{"order 8 b", "26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc85"},
	{"order 8 c", "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a"},
	{"order 8 d", "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac03fa"},
	{"identity, non-canonical (y = p+1)", "eeffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f"},
	{"order 4, non-canonical (y = p)", "edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f"},
}

// TestSmallOrderKey_ForgesWithoutTheCheck shows why the check exists: under
// the identity as a public key, crypto/ed25519 accepts R = identity, S = 0 as
// a signature of any message.
func TestSmallOrderKey_ForgesWithoutTheCheck(t *testing.T) {
	identity, _ := hex.DecodeString(smallOrder[0].hex)
	forged := make([]byte, 64)
	copy(forged, identity)
	if !ed25519.Verify(ed25519.PublicKey(identity), []byte("any message at all"), forged) {
		t.Skip("this crypto/ed25519 refuses the forgery itself")
	}
	if _, err := NewTrustedKeys(PublicKey{KID: "weak", Alg: AlgEd25519, Key: identity}); err == nil {
		t.Fatal("a trusted key set holds the identity point, under which every document verifies")
	}
}

func TestCheckPublicKey_RefusesWeakKeys(t *testing.T) {
	for _, tt := range smallOrder {
		raw, err := hex.DecodeString(tt.hex)
		if err != nil {
			t.Fatal(err)
		}
		if err := CheckPublicKey(raw); err == nil {
			t.Errorf("%s: accepted", tt.name)
		}
		b64 := sigPrefix + base64.StdEncoding.EncodeToString(raw)
		if _, err := ParsePublicKey("k", b64); err == nil {
			t.Errorf("%s: ParsePublicKey accepted it", tt.name)
		}
		set := `[{"kid":"k","alg":"ed25519","public_key":"` + b64 + `"}]`
		if _, err := ParseTrustedKeys([]byte(set)); err == nil {
			t.Errorf("%s: ParseTrustedKeys accepted it", tt.name)
		}
		// The PEM form goes through the same check.
		der, err := x509.MarshalPKIXPublicKey(ed25519.PublicKey(raw))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ParsePublicKey("k", string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}))); err == nil {
			t.Errorf("%s: ParsePublicKey accepted its PEM", tt.name)
		}
	}
	identity, _ := hex.DecodeString(smallOrder[0].hex)
	if err := CheckPublicKey(identity); err == nil || !strings.Contains(err.Error(), "small-order") {
		t.Errorf("identity: error %v, want the small-order reason", err)
	}
	// A point off the curve.
	off, _ := hex.DecodeString("0200000000000000000000000000000000000000000000000000000000000000")
	if err := CheckPublicKey(off); err == nil || !strings.Contains(err.Error(), "not a point") {
		t.Errorf("off the curve: error %v", err)
	}
	// Real keys pass.
	for i := 0; i < 64; i++ {
		seed := make([]byte, ed25519.SeedSize)
		seed[0], seed[1] = byte(i), 7
		pub := ed25519.NewKeyFromSeed(seed).Public().(ed25519.PublicKey)
		if err := CheckPublicKey(pub); err != nil {
			t.Fatalf("key %d refused: %v", i, err)
		}
	}
}

// TestStrictBase64_OneRuleForKeysAndSignatures: what is refused in a
// signature is refused in a public key, and the other way round.
func TestStrictBase64_OneRuleForKeysAndSignatures(t *testing.T) {
	key := fixedKey(t, "k")
	pub := key.Public().Encoded()
	sig, err := Sign(key, "dome.test/v1", []byte(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	ts := trusted(t, key)
	if _, err := ParsePublicKey("k", pub); err != nil {
		t.Fatal(err)
	}
	if err := ts.Verify("dome.test/v1", []byte(`{}`), sig); err != nil {
		t.Fatal(err)
	}
	mangle := []struct {
		name string
		f    func(b64 string) string
	}{
		{"newline inside", func(s string) string { return s[:10] + "\n" + s[10:] }},
		{"CRLF inside", func(s string) string { return s[:10] + "\r\n" + s[10:] }},
		{"space inside", func(s string) string { return s[:10] + " " + s[10:] }},
		{"trailing newline", func(s string) string { return s + "\n" }},
		{"leading space", func(s string) string { return " " + s }},
		{"no padding", func(s string) string { return strings.TrimRight(s, "=") }},
		{"extra padding", func(s string) string { return s + "=" }},
		{"url alphabet", func(s string) string {
			return strings.NewReplacer("+", "-", "/", "_").Replace(s[:len(s)-3]) + "-_" + s[len(s)-1:]
		}},
		{"padding inside", func(s string) string { return s[:4] + "=" + s[5:] }},
		{"non-zero trailing bits", func(s string) string {
			p := strings.IndexByte(s, '=')
			last := s[p-1]
			i := strings.IndexByte("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/", last)
			return s[:p-1] + string("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"[i^1]) + s[p:]
		}},
	}
	for _, m := range mangle {
		badPub := sigPrefix + m.f(strings.TrimPrefix(pub, sigPrefix))
		if _, err := ParsePublicKey("k", badPub); err == nil {
			t.Errorf("public_key, %s: accepted %q", m.name, badPub)
		}
		bad := sig
		bad.Sig = sigPrefix + m.f(strings.TrimPrefix(sig.Sig, sigPrefix))
		if err := ts.Verify("dome.test/v1", []byte(`{}`), bad); err == nil {
			t.Errorf("sig, %s: accepted %q", m.name, bad.Sig)
		}
	}
	// The JSON escape of a newline is a newline too: refused in a key set.
	withNL := strings.TrimPrefix(pub, sigPrefix)
	set := `[{"kid":"k","alg":"ed25519","public_key":"base64:` + withNL[:20] + `\n` + withNL[20:] + `"}]`
	if _, err := ParseTrustedKeys([]byte(set)); err == nil || !strings.Contains(err.Error(), "whitespace") {
		t.Errorf("key set with a newline in public_key: error %v", err)
	}
}

func FuzzDecodeStrictBase64(f *testing.F) {
	f.Add("AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=", 32)
	f.Add("AAEC\nAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=", 32)
	f.Add("AA==", 1)
	f.Fuzz(func(t *testing.T, s string, n int) {
		if n < 0 || n > 128 {
			return
		}
		buf := make([]byte, base64.StdEncoding.DecodedLen(len(s))+3)
		out, err := decodeStrictBase64(buf, s, n)
		if err != nil {
			return
		}
		// Accepted text is exactly the one encoding of what it decodes to.
		if got := base64.StdEncoding.EncodeToString(out); got != s {
			t.Fatalf("accepted %q, which re-encodes as %q", s, got)
		}
	})
}
