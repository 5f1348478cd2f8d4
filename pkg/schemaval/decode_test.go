package schemaval

import (
	"bytes"
	"encoding/json"
	"io"
	"reflect"
	"testing"
)

// stdDecode is what decode replaces: encoding/json with UseNumber, and
// nothing but whitespace after the value.
func stdDecode(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, io.ErrUnexpectedEOF // trailing data; the reason does not matter here
	}
	return v, nil
}

// FuzzDecode: whatever decode accepts, encoding/json decodes to the same
// value; and decode accepts whatever CheckJSON does
// (FuzzCanonicalImpliesTokens checks that for RFC 8785's parser).
func FuzzDecode(f *testing.F) {
	for _, b := range jsonSeeds(f) {
		f.Add(b)
	}
	for _, s := range []string{
		`"\u0041\u00e9\u20ac\ud83d\ude00\/\b\f\n\r\t\"\\"`, `"é😀 and \n"`, `"\uD83D\uDE00"`, `"\ud83d"`,
		`"\ud83d\u0041"`, `"\ude00\ud83d"`, `"\ud83dx"`, `"\u12"`, `"\u12g4"`, `"\x"`, "\"\xed\xa0\x80\"",
		`{"a":1,"a":{"b":[true,false,null,-0.5e+3,0,-0,1E-2]}}`, `[]`, `{}`, `[[],{}]`, ` [ 1 , 2 ] `,
		`truex`, `[true`, `{"a"`, `{"a":}`, `{"a":1 "b":2}`, `{,}`, `[,]`, `-`, `1.`, `1e`, `1e+`, `.5`, `+1`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := decode(data)
		if err != nil {
			if CheckJSON("f.json", data) == nil {
				t.Fatalf("CheckJSON accepts %q, decode refuses it: %v", data, err)
			}
			return
		}
		want, werr := stdDecode(data)
		if werr != nil {
			t.Fatalf("decode accepts %q, encoding/json refuses it: %v", data, werr)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%q: decode %#v, encoding/json %#v", data, got, want)
		}
	})
}
