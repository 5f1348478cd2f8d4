package action

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// envelopeOf builds the publish request {"schema", "signature"} (plus extra
// members) of a signed document.
func envelopeOf(t *testing.T, signed []byte, extra map[string]any) []byte {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(signed, &m); err != nil {
		t.Fatal(err)
	}
	env := map[string]any{"signature": m["signature"]}
	delete(m, "signature")
	delete(m, "hash")
	env["schema"] = m
	for k, v := range extra {
		env[k] = v
	}
	b, err := json.Marshal(env)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The envelope {"schema", "signature"} is the same signed action as the
// document: the same canonical bytes (hash computed when left out), the same
// verification.
func TestParseSubmitted_EnvelopeIsTheDocument(t *testing.T) {
	key, keys := testKey(t, "k1", 1)
	signed, err := Sign(key, []byte(moveDoc))
	if err != nil {
		t.Fatal(err)
	}
	want, err := ParseDocument(signed)
	if err != nil {
		t.Fatal(err)
	}
	var top map[string]json.RawMessage
	json.Unmarshal(signed, &top)
	for _, tc := range []struct {
		name  string
		extra map[string]any
	}{
		{"seed shape", nil},
		{"with hash", map[string]any{"hash": want.Hash}},
		{"a fetched version", map[string]any{"hash": want.Hash, "name": "files.move", "version": "1.1.0", "verified": true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := envelopeOf(t, signed, tc.extra)
			got, err := ParseSubmitted(body)
			if err != nil {
				t.Fatalf("ParseSubmitted(%s): %v", body, err)
			}
			if !bytes.Equal(got.Canonical, want.Canonical) || got.Hash != want.Hash || got.StatedHash != want.Hash {
				t.Fatalf("envelope gives\n%s\nwant\n%s", got.Canonical, want.Canonical)
			}
			if v := VerifyDocument(got, keys); !v.Verified {
				t.Fatalf("does not verify: %s", v.Reason)
			}
			// Sign accepts the envelope too and writes the document.
			again, err := Sign(key, body)
			if err != nil || !bytes.Equal(again, signed) {
				t.Fatalf("Sign(envelope) = %s, %v; want %s", again, err, signed)
			}
		})
	}
	// The document itself still reads as before.
	if got, err := ParseSubmitted(signed); err != nil || !bytes.Equal(got.Canonical, want.Canonical) {
		t.Fatalf("ParseSubmitted(document) = %v", err)
	}
}

func TestParseSubmitted_Refusals(t *testing.T) {
	key, keys := testKey(t, "k1", 1)
	signed, err := Sign(key, []byte(moveDoc))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		extra map[string]any
		want  string
	}{
		{"other name", map[string]any{"name": "files.copy"}, `the envelope's "name" is "files.copy", its schema's is "files.move"`},
		{"other version", map[string]any{"version": "1.0.0"}, `the envelope's "version"`},
		{"wrong hash", map[string]any{"hash": "sha256:" + strings.Repeat("0", 64)}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := ParseSubmitted(envelopeOf(t, signed, tc.extra))
			if tc.want == "" { // parses, but does not verify
				if err != nil {
					t.Fatal(err)
				}
				if v := VerifyDocument(d, keys); v.Verified || !strings.Contains(v.Reason, "changed since it was signed") {
					t.Fatalf("verification = %+v", v)
				}
				return
			}
			if err == nil || !IsInvalid(err) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want ErrInvalid saying %s", err, tc.want)
			}
		})
	}
	// A schema carrying its own, different signature is ambiguous.
	var m map[string]any
	json.Unmarshal(signed, &m)
	sig := m["signature"]
	inner := map[string]any{}
	for k, v := range m {
		inner[k] = v
	}
	inner["signature"] = map[string]any{"alg": "ed25519", "kid": "k2", "sig": "base64:AA=="}
	body, _ := json.Marshal(map[string]any{"schema": inner, "signature": sig})
	if _, err := ParseSubmitted(body); err == nil || !strings.Contains(err.Error(), `different "signature" members`) {
		t.Fatalf("two signatures: %v", err)
	}
	// Not an envelope: a document whose payload holds a "schema" member.
	doc := `{"name": "json.validate", "version": "1.0.0", "schema": {"type": "object"}}`
	d, err := ParseSubmitted([]byte(doc))
	if err != nil || d.Name != "json.validate" || !strings.Contains(string(d.Payload), `"schema":{"type":"object"}`) {
		t.Fatalf("a document with a schema member: %+v, %v", d, err)
	}
	// An envelope-looking object with another member is a document too.
	body, _ = json.Marshal(map[string]any{"schema": inner, "signature": sig, "extra": 1})
	if _, err := ParseSubmitted(body); err == nil || !strings.Contains(err.Error(), `no "name" member`) {
		t.Fatalf("envelope with an extra member: %v", err)
	}
}
