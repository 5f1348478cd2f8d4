package action

import (
	"bytes"
	"testing"
)

// FuzzPrepare: Prepare never panics, and what it accepts is canonical and
// stable: preparing its own output gives the same record.
func FuzzPrepare(f *testing.F) {
	f.Add([]byte(moveDoc))
	f.Add([]byte(`{"name":"a","version":"1.0.0-rc.1","verified":false,"hash":"sha256:00","signature":{"alg":"ed25519","kid":"k","sig":"base64:"}}`))
	f.Add([]byte(`{"name":"a","version":"1.0.0","name":"b"}`))
	f.Add([]byte(`{"name":"a.b-c_d","version":"0.0.0","x":[1.5e300,-0,"\u00e9"]}`))
	f.Fuzz(func(t *testing.T, doc []byte) {
		rec, err := Prepare(doc)
		if err != nil {
			if !IsInvalid(err) {
				t.Fatalf("error does not wrap ErrInvalid: %v", err)
			}
			return
		}
		if CheckName(rec.Name) != nil || CheckVersion(rec.Version) != nil {
			t.Fatalf("accepted an invalid name or version: %q %q", rec.Name, rec.Version)
		}
		again, err := Prepare(rec.Document)
		if err != nil {
			t.Fatalf("canonical output does not prepare: %v\n%s", err, rec.Document)
		}
		if !bytes.Equal(again.Document, rec.Document) || again.Hash != rec.Hash || again.Name != rec.Name || again.Version != rec.Version {
			t.Fatalf("not stable:\n%+v\n%+v", rec, again)
		}
	})
}

// FuzzParseSubmitted: either shape never panics; what it accepts is a
// document that reads back as itself (the envelope is only a way in).
func FuzzParseSubmitted(f *testing.F) {
	f.Add([]byte(moveDoc))
	f.Add([]byte(`{"schema":{"name":"a","version":"1.0.0"},"signature":{"alg":"ed25519","kid":"k","sig":"base64:"}}`))
	f.Add([]byte(`{"schema":{"name":"a","version":"1.0.0","hash":"sha256:00"},"hash":"sha256:01","name":"a","version":"1.0.0","verified":true}`))
	f.Add([]byte(`{"schema":{"name":"a"},"name":"b"}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		d, err := ParseSubmitted(body)
		if err != nil {
			if !IsInvalid(err) {
				t.Fatalf("error does not wrap ErrInvalid: %v", err)
			}
			return
		}
		again, err := ParseDocument(d.Canonical)
		if err != nil {
			t.Fatalf("the document of an accepted body does not parse: %v\n%s", err, d.Canonical)
		}
		if !bytes.Equal(again.Canonical, d.Canonical) || again.Hash != d.Hash {
			t.Fatalf("not stable:\n%s\n%s", d.Canonical, again.Canonical)
		}
	})
}
