package charsets

import "testing"

func TestDecode(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
		known          bool
	}{
		{"ISO-8859-1", "Fran\xe7ois", "François", true},
		{"iso-8859-15", "\xa4", "€", true},
		{"windows-1252", "\x80", "€", true},
		{"KOI8-R", "\xf0\xd2\xc9\xd7\xc5\xd4", "Привет", true},
		{"UTF-16BE", "\x00A\x00B", "AB", true},
		{"no-such-charset", "x", "", false},
		{"", "x", "", false},
	} {
		got, known, err := Decode(tc.name, tc.in)
		if known != tc.known || (known && (err != nil || got != tc.want)) {
			t.Errorf("Decode(%q, %q) = %q, %v, %v; want %q, %v", tc.name, tc.in, got, known, err, tc.want, tc.known)
		}
	}
}
