package jsonesc

import (
	"encoding/json"
	"fmt"
	"testing"
)

// Every escape reads as encoding/json reads it.
func TestEscapesAsEncodingJSON(t *testing.T) {
	for e := 0; e < 256; e++ {
		var want string
		werr := json.Unmarshal([]byte(`"\`+string(rune(e))+`"`), &want)
		got, ok := Simple(byte(e))
		if e == 'u' {
			continue
		}
		if ok != (werr == nil) || (ok && string(rune(got)) != want) {
			t.Errorf("Simple(%#x) = %q, %v; encoding/json: %q, %v", e, got, ok, want, werr)
		}
	}
	for _, tc := range []struct {
		in   string
		want rune
		ok   bool
	}{{"0041", 'A', true}, {"00e9", 'é', true}, {"00E9", 'é', true}, {"d83D", 0xd83d, true}, {"FFFF", 0xffff, true},
		{"004", 0, false}, {"00g1", 0, false}, {"", 0, false}, {"-001", 0, false}} {
		r, ok := Hex4([]byte(tc.in), 0)
		if r != tc.want || ok != tc.ok {
			t.Errorf("Hex4(%q) = %U, %v; want %U, %v", tc.in, r, ok, tc.want, tc.ok)
		}
		if ok {
			var s string
			if err := json.Unmarshal([]byte(fmt.Sprintf(`"\u%s"`, tc.in)), &s); err != nil {
				t.Errorf("encoding/json refuses \\u%s: %v", tc.in, err)
			}
		}
	}
	if _, ok := Hex4([]byte("x0041"), 1); !ok {
		t.Error("Hex4 at an offset")
	}
}
