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
