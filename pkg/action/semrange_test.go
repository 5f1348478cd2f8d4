package action

import (
	"strings"
	"testing"
)

var published = []string{"0.1.0", "0.1.5", "0.2.0", "1.0.0", "1.1.0", "1.1.7", "1.2.0-rc.1", "1.9.9", "2.0.0-rc.1", "2.0.0", "2.3.1", "3.0.0-beta.1"}

func TestRange_Resolve(t *testing.T) {
	for _, tc := range []struct{ rng, want string }{
		{"latest", "2.3.1"},
		{"", "2.3.1"},
		{"*", "2.3.1"},
		{"1.1.0", "1.1.0"},
		{"=1.1.0", "1.1.0"},
		{"2.0.0-rc.1", "2.0.0-rc.1"},
		{"^1.0.0", "1.9.9"},
		{"^1.1.0", "1.9.9"},
		{"^0.1.0", "0.1.5"},
		{"^0.1", "0.1.5"},
		{"^0", "0.2.0"},
		{"^2.0.0-rc.1", "2.3.1"},
		{"~1.1.0", "1.1.7"},
		{"~1.1", "1.1.7"},
		{"~1", "1.9.9"},
		{"1.x", "1.9.9"},
		{"1.1.x", "1.1.7"},
		{"1.1.*", "1.1.7"},
		{"1", "1.9.9"},
		{"1.1", "1.1.7"},
		{">=1.0.0 <2.0.0", "1.9.9"},
		{">=1.0.0,<2.0.0", "1.9.9"},
		{">=1.0.0, <2", "1.9.9"},
		{">=1.2.0-rc.1 <1.3", "1.2.0-rc.1"},
		{"<=1.1", "1.1.7"},
		{">1.1", "2.3.1"},
		{">2.3.1", ""},
		{">=3.0.0-beta.1", "3.0.0-beta.1"},
		{"^3.0.0", ""},
		{"9.9.9", ""},
		{"^0.1 || ^2.0.0", "2.3.1"},
		{"~1.1 || 0.2.0", "1.1.7"},
		{"^0.1||^0.2", "0.2.0"},
		{"1.2.0-rc.1 || ^0.1", "1.2.0-rc.1"},
		{"<0.2 || >=3.0.0-beta.1", "3.0.0-beta.1"},
		{">=1.0.0 <1.1.0 || >=2.0.0 <2.1.0", "2.0.0"},
		{">2.3.1 || 9.9.9", ""},
	} {
		r, err := ParseRange(tc.rng)
		if err != nil {
			t.Errorf("ParseRange(%q): %v", tc.rng, err)
			continue
		}
		got, ok := r.Resolve(published, nil)
		if got != tc.want || ok != (tc.want != "") {
			t.Errorf("%q resolves to %q, want %q", tc.rng, got, tc.want)
		}
	}
}

// A deprecated version is picked only when nothing else is in range.
func TestRange_ResolveSkipsDeprecated(t *testing.T) {
	deprecated := map[string]string{"1.9.9": "broken, use 1.9.8", "2.3.1": "use 2.3.0", "0.1.5": "x", "0.1.0": "y"}
	for _, tc := range []struct{ rng, want string }{
		{"latest", "2.3.0"},
		{"^1.0.0", "1.9.8"},
		{"1.9.9", "1.9.9"},  // an exact pin still resolves
		{"^0.1.0", "0.1.5"}, // every version in range is deprecated: the highest
		{">2.3.0", "2.3.1"},
	} {
		r, err := ParseRange(tc.rng)
		if err != nil {
			t.Fatal(err)
		}
		if got, _ := r.Resolve(append(published, "1.9.8", "2.3.0"), deprecated); got != tc.want {
			t.Errorf("%q resolves to %q, want %q", tc.rng, got, tc.want)
		}
	}
}

func TestParseRange_Refusals(t *testing.T) {
	for _, bad := range []string{"^1 ||", "|| ^1", "^1 || || ^2", "latest || ^1", "^1 | ^2", "^1 || ^x", "^", ">=", "1.2.3.4", "01.2.3", "1.x.3", "1.2-rc.1", "1.0.0+b", "abc", ">= 1.0.0", "^v1.0.0", strings.Repeat("1", 300)} {
		if _, err := ParseRange(bad); err == nil || !IsInvalid(err) {
			t.Errorf("ParseRange(%q) = %v, want ErrInvalid", bad, err)
		}
	}
}

func FuzzParseRange(f *testing.F) {
	for _, s := range []string{"^1.2.3", "~1", ">=1.0.0 <2", "1.x", "2.0.0-rc.1", "latest"} {
		f.Add(s, "1.2.3")
	}
	f.Fuzz(func(t *testing.T, rng, v string) {
		r, err := ParseRange(rng)
		if err != nil {
			return
		}
		if r.Match(v) && CheckVersion(v) != nil {
			t.Fatalf("%q matched the invalid version %q", rng, v)
		}
		if again, err := ParseRange(r.String()); err != nil || again.Match(v) != r.Match(v) {
			t.Fatalf("String() %q does not parse back the same: %v", r.String(), err)
		}
	})
}
