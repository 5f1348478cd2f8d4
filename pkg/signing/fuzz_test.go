package signing

import (
	"encoding/json"
	"testing"

	"github.com/dome-registry/dome/pkg/canonical"
)

// FuzzVerify_SingleByteChange signs a payload, changes one byte of the
// payload, the kid, the signature string or the payload type, and requires
// that verification fails.
func FuzzVerify_SingleByteChange(f *testing.F) {
	f.Add([]byte(`{"name":"files.move","version":"1.0.0"}`), uint8(0), uint16(3), byte(1))
	f.Add([]byte(`{}`), uint8(1), uint16(0), byte(0x20))
	f.Add([]byte(`[1,2,3]`), uint8(2), uint16(80), byte(0x80))
	f.Add([]byte(`"x"`), uint8(3), uint16(5), byte(0xff))
	key := fixedKey(f, "dev-root-1")
	other := fixedKey(f, "dev-root-2")
	other.Key = otherKey(f)
	ts := trusted(f, key, other)
	const kind = "dome.action/v1"
	f.Fuzz(func(t *testing.T, payload []byte, target uint8, pos uint16, delta byte) {
		if delta == 0 {
			return
		}
		sig, err := SignDigest(key, kind, canonical.Digest(payload))
		if err != nil {
			t.Fatal(err)
		}
		if err := ts.Verify(kind, payload, sig); err != nil {
			t.Fatalf("untouched signature fails: %v", err)
		}
		p, s, k := append([]byte(nil), payload...), sig, kind
		flip := func(b []byte) []byte {
			if len(b) == 0 {
				return append(b, delta)
			}
			b[int(pos)%len(b)] ^= delta
			return b
		}
		switch target % 4 {
		case 0:
			p = flip(p)
		case 1:
			s.KID = string(flip([]byte(s.KID)))
		case 2:
			s.Sig = string(flip([]byte(s.Sig)))
		case 3:
			k = string(flip([]byte(k)))
		}
		if err := ts.Verify(k, p, s); err == nil {
			t.Fatalf("verified after changing %d at %d by %#x: kind %q kid %q sig %q payload %q", target%4, pos, delta, k, s.KID, s.Sig, p)
		}
	})
}

func otherKey(t testing.TB) []byte {
	k, err := GenerateKey("x", constReader(3))
	if err != nil {
		t.Fatal(err)
	}
	return k.Key
}

type constReader byte

func (c constReader) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(c)
	}
	return len(p), nil
}

// FuzzParseTrustedKeys never panics, and what it accepts survives a round
// trip through Entries.
func FuzzParseTrustedKeys(f *testing.F) {
	k := fixedKey(f, "dev-root-1").Public()
	pemText, _ := k.MarshalPEM()
	e, _ := json.Marshal([]TrustedKeyEntry{k.Entry()})
	f.Add(e)
	p, _ := json.Marshal([]TrustedKeyEntry{{KID: "p", Alg: "ed25519", PublicKey: string(pemText)}})
	f.Add(p)
	f.Add([]byte(`[{"kid":"a","alg":"ed25519","public_key":"base64:AAAA"}]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		ts, err := ParseTrustedKeys(data)
		if err != nil {
			return
		}
		again, err := json.Marshal(ts.Entries())
		if err != nil {
			t.Fatal(err)
		}
		ts2, err := ParseTrustedKeys(again)
		if err != nil {
			t.Fatalf("round trip: %v", err)
		}
		if len(ts2.KIDs()) != len(ts.KIDs()) {
			t.Fatal("round trip lost keys")
		}
	})
}

// FuzzSplitEmbedded never panics; what it accepts has a canonical payload
// without the excluded members, and signing then verifying it succeeds.
func FuzzSplitEmbedded(f *testing.F) {
	key := fixedKey(f, "dev-root-1")
	ts := trusted(f, key)
	signed, _, _ := SignEmbedded(key, "dome.action/v1", []byte(`{"name":"files.move","version":"1.0.0"}`))
	f.Add(signed)
	f.Add([]byte(`{"hash":"x","verified":true,"a":[1]}`))
	f.Add([]byte(`{"signature":{"alg":"ed25519","kid":"k","sig":"base64:"}}`))
	f.Fuzz(func(t *testing.T, doc []byte) {
		e, err := SplitEmbedded(doc)
		if err != nil {
			return
		}
		c, err := canonical.Transform(e.Payload)
		if err != nil || string(c) != string(e.Payload) {
			t.Fatalf("payload not canonical: %q", e.Payload)
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(e.Payload, &m); err != nil {
			t.Fatal(err)
		}
		for _, x := range ExcludedMembers() {
			if _, ok := m[x]; ok {
				t.Fatalf("payload keeps %q", x)
			}
		}
		out, _, err := SignEmbedded(key, "dome.action/v1", doc)
		if err != nil {
			t.Fatalf("SignEmbedded: %v", err)
		}
		if _, err := ts.VerifyEmbedded("dome.action/v1", out); err != nil {
			t.Fatalf("VerifyEmbedded after SignEmbedded: %v", err)
		}
	})
}

// FuzzParseSignatureFile never panics and round-trips what it accepts.
func FuzzParseSignatureFile(f *testing.F) {
	sf, _ := NewSignatureFile(fixedKey(f, "k"), "dome.action/v1", []byte(`{}`))
	b, _ := json.Marshal(sf)
	f.Add(b)
	f.Add([]byte(`{"payload_type":"x","canonicalization":"jcs-rfc8785","hash":"","signature":{"alg":"","kid":"","sig":""}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		sf, err := ParseSignatureFile(data)
		if err != nil {
			return
		}
		again, _ := json.Marshal(sf)
		if sf2, err := ParseSignatureFile(again); err != nil || sf2 != sf {
			t.Fatalf("round trip: %+v %v", sf2, err)
		}
	})
}

// FuzzParsePrivateKey never panics; an accepted key signs what its public
// half verifies.
func FuzzParsePrivateKey(f *testing.F) {
	pemBytes, _ := fixedKey(f, "k").MarshalPEM()
	f.Add(pemBytes)
	f.Add([]byte("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		k, err := ParsePrivateKey("k", data)
		if err != nil {
			return
		}
		ts, err := NewTrustedKeys(k.Public())
		if err != nil {
			t.Fatal(err)
		}
		sig, err := Sign(k, "dome.test/v1", []byte(`{}`))
		if err != nil {
			t.Fatal(err)
		}
		if err := ts.Verify("dome.test/v1", []byte(`{}`), sig); err != nil {
			t.Fatal(err)
		}
	})
}
