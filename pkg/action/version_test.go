package action

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestCheckName(t *testing.T) {
	for _, tc := range []struct {
		name string
		ok   bool
	}{
		{"files.move", true},
		{"a", true},
		{"0", true},
		{"http-get_v2.beta", true},
		{"a.b.c-d_e", true},
		{"", false},
		{"Files.move", false},
		{".hidden", false},
		{"trailing.", false},
		{"a..b", false},
		{"a._b", false},
		{"a/b", false},
		{"..", false},
		{"a b", false},
		{"é", false},
		{string(make([]byte, 129)), false},
	} {
		err := CheckName(tc.name)
		if (err == nil) != tc.ok {
			t.Errorf("CheckName(%q) = %v, want ok=%v", tc.name, err, tc.ok)
		}
		if err != nil && !errors.Is(err, ErrInvalid) {
			t.Errorf("CheckName(%q): %v does not wrap ErrInvalid", tc.name, err)
		}
	}
}

// A character outside ASCII is named as itself with its code point, never as
// the Latin-1 reading of its first byte ('Ð').
func TestCheckName_NonASCII_NamesTheCharacter(t *testing.T) {
	for _, tc := range []struct{ name, want string }{
		{"files.move\u0430", `character 'а' (U+0430) at offset 10`},
		{"fil\xffes", `character U+FFFD (not UTF-8) at offset 3`},
		{"a b", `character ' ' at offset 1`},
	} {
		err := CheckName(tc.name)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("CheckName(%q) = %v, want it to say %s", tc.name, err, tc.want)
		}
	}
}

func TestCheckVersion(t *testing.T) {
	for _, tc := range []struct {
		v  string
		ok bool
	}{
		{"1.0.0", true},
		{"0.0.1", true},
		{"1.2.3-rc.1", true},
		{"1.2.3-alpha.beta.1", true},
		{"10.20.30", true},
		{"", false},
		{"v1.0.0", false},
		{"1.0", false},
		{"1", false},
		{"01.0.0", false},
		{"1.0.0-01", false},
		{"1.0.0+build.1", false},
		{"1.0.0-", false},
		{"1.0.0.0", false},
		{"latest", false},
	} {
		err := CheckVersion(tc.v)
		if (err == nil) != tc.ok {
			t.Errorf("CheckVersion(%q) = %v, want ok=%v", tc.v, err, tc.ok)
		}
	}
}

func TestSortVersions_SemVerPrecedence(t *testing.T) {
	got := []string{"1.10.0", "1.2.0", "1.0.0", "1.0.0-rc.1", "1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-beta.11", "1.0.0-beta.2", "1.0.0-beta", "1.0.0-rc.10", "2.0.0", "bogus"}
	SortVersions(got)
	want := []string{"bogus", "1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-beta", "1.0.0-beta.2", "1.0.0-beta.11", "1.0.0-rc.1", "1.0.0-rc.10", "1.0.0", "1.2.0", "1.10.0", "2.0.0"}
	if !slices.Equal(got, want) {
		t.Errorf("SortVersions:\n got %v\nwant %v", got, want)
	}
}

func TestLatestVersion(t *testing.T) {
	for _, tc := range []struct {
		in   []string
		want string
	}{
		{nil, ""},
		{[]string{"1.0.0", "1.1.0"}, "1.1.0"},
		{[]string{"1.1.0", "1.0.0"}, "1.1.0"},
		{[]string{"1.9.0", "1.10.0"}, "1.10.0"},
		{[]string{"1.0.0", "1.1.0-rc.1"}, "1.0.0"},
		{[]string{"1.1.0", "2.0.0-rc.1"}, "1.1.0"},
		{[]string{"2.0.0-rc.1", "2.0.0-beta.3"}, "2.0.0-rc.1"},
		{[]string{"2.0.0-rc.1", "2.0.0"}, "2.0.0"},
		{[]string{"x", "0.1.0"}, "0.1.0"},
	} {
		if got := LatestVersion(tc.in, nil); got != tc.want {
			t.Errorf("LatestVersion(%v) = %q, want %q", tc.in, got, tc.want)
		}
	}
	// deprecated versions count only when every version is deprecated
	for _, tc := range []struct {
		in         []string
		deprecated []string
		want       string
	}{
		{[]string{"1.0.0", "1.1.0"}, []string{"1.1.0"}, "1.0.0"},
		{[]string{"1.0.0", "1.1.0", "2.0.0-rc.1"}, []string{"1.0.0", "1.1.0"}, "2.0.0-rc.1"},
		{[]string{"1.0.0", "1.1.0"}, []string{"1.0.0", "1.1.0"}, "1.1.0"},
		{[]string{"1.0.0", "1.1.0"}, []string{"9.9.9"}, "1.1.0"},
	} {
		dep := map[string]string{}
		for _, v := range tc.deprecated {
			dep[v] = "reason"
		}
		if got := LatestVersion(tc.in, dep); got != tc.want {
			t.Errorf("LatestVersion(%v, deprecated %v) = %q, want %q", tc.in, tc.deprecated, got, tc.want)
		}
	}
}

func TestParseRef(t *testing.T) {
	n, v, err := ParseRef("files.move@1.1.0")
	if err != nil || n != "files.move" || v != "1.1.0" {
		t.Fatalf("ParseRef = %q %q %v", n, v, err)
	}
	n, v, err = ParseRef("files.move")
	if err != nil || n != "files.move" || v != "" {
		t.Fatalf("ParseRef = %q %q %v", n, v, err)
	}
	for _, bad := range []string{"Files@1.0.0", "files@", "files@1.0", "@1.0.0"} {
		if _, _, err := ParseRef(bad); err == nil {
			t.Errorf("ParseRef(%q): want an error", bad)
		}
	}
}
