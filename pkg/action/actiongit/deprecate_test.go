package actiongit

import (
	"strings"
	"testing"
)

func TestParseDeprecations(t *testing.T) {
	good, err := parseDeprecations([]byte(`{"1.0.0":{"reason":"use 2.0.0"},"2.0.0-rc.1":{"reason":"superseded"}}`), "f")
	if err != nil || len(good) != 2 || good["1.0.0"] != "use 2.0.0" {
		t.Fatalf("%v %v", good, err)
	}
	for _, tc := range []struct{ in, want string }{
		{`[]`, "want {"},
		{`{"1.0.0":{"reason":"a"},"1.0.0":{"reason":"b"}}`, "duplicate"},
		{`{"1.0":{"reason":"a"}}`, "1.0"},
		{`{"1.0.0":{"reason":""}}`, "needs a reason"},
		{`{"1.0.0":{"reason":"a","by":"me"}}`, "unknown field"},
		{`{"1.0.0":"a"}`, "want {"},
		{`{"1.0.0":{"reason":"a\u0007"}}`, "control character"},
		{`{`, "f:"},
	} {
		if _, err := parseDeprecations([]byte(tc.in), "f"); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.in, err, tc.want)
		}
	}
	b, err := marshalDeprecations(map[string]string{"2.0.0": "b", "1.0.0": "a"})
	if err != nil || string(b) != `{"1.0.0":{"reason":"a"},"2.0.0":{"reason":"b"}}` {
		t.Fatalf("marshal: %s %v", b, err)
	}
}

// FuzzParseDeprecations: never panics, and what it accepts writes back to a
// canonical file that parses to the same deprecations.
func FuzzParseDeprecations(f *testing.F) {
	f.Add([]byte(`{"1.0.0":{"reason":"use 2.0.0"}}`))
	f.Add([]byte(`{"1.0.0-rc.1":{"reason":"x"},"2.0.0":{"reason":"\u00e9"}}`))
	f.Add([]byte(`{}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := parseDeprecations(data, "f")
		if err != nil {
			return
		}
		b, err := marshalDeprecations(m)
		if err != nil {
			t.Fatal(err)
		}
		m2, err := parseDeprecations(b, "f")
		if err != nil || len(m2) != len(m) {
			t.Fatalf("round trip: %v %v", m2, err)
		}
		for v, r := range m {
			if m2[v] != r {
				t.Fatalf("round trip changed %s: %q -> %q", v, r, m2[v])
			}
		}
	})
}
