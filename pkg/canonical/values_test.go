package canonical

import (
	"strings"
	"testing"
)

// The helpers for tree writers agree with Transform on the same values.
func TestTreeHelpersAgreeWithTransform(t *testing.T) {
	strs := []string{"", "a", "é", "\u2028", "\x00\x01\x1f\x7f", "\b\f\n\r\t\"\\/", "\U0001F600", "\uFB33", "a\xffb", "<>&"}
	for _, s := range strs {
		in := AppendString(nil, s)
		want, err := Transform(in)
		if err != nil {
			t.Fatalf("%q: %v", s, err)
		}
		if string(in) != string(want) {
			t.Errorf("AppendString(%q) = %s, Transform gives %s", s, in, want)
		}
	}
	for _, lit := range []string{"0", "-0", "1", "-1", "123456789012345", "1234567890123456", "12345678901234567890", "1.50", "1e21", "1E-7", "-0.0", "0.000001", "9007199254740993", "1e308", "2.5e-324"} {
		got, err := AppendNumberLiteral(nil, lit)
		if err != nil {
			t.Fatalf("%s: %v", lit, err)
		}
		want, err := Transform([]byte(lit))
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Errorf("AppendNumberLiteral(%s) = %s, Transform gives %s", lit, got, want)
		}
	}
	for _, bad := range []string{"", "-", "01", "1.", "1e", "1e400", "NaN", "1 "} {
		if _, err := AppendNumberLiteral(nil, bad); err == nil {
			t.Errorf("AppendNumberLiteral(%q) accepted", bad)
		}
	}
	keys := []string{"b", "a", "\uFB33", "\U0001F600", "é", "aa", "", "\u00e9z"}
	for _, a := range keys {
		for _, b := range keys {
			doc := `{` + string(AppendString(nil, a)) + `:1,` + string(AppendString(nil, b)) + `:2}`
			if a == b {
				continue
			}
			out, err := Transform([]byte(doc))
			if err != nil {
				t.Fatal(err)
			}
			aFirst := strings.Index(string(out), string(AppendString(nil, a))+":") < strings.Index(string(out), string(AppendString(nil, b))+":")
			if (CompareKeys(a, b) < 0) != aFirst {
				t.Errorf("CompareKeys(%q, %q) = %d, Transform orders %s", a, b, CompareKeys(a, b), out)
			}
		}
	}
}
