package gitstore

import (
	"regexp"
	"testing"
)

// scpLikeRE is the language isSCPLike implements, kept here as the reference.
var scpLikeRE = regexp.MustCompile(`^[A-Za-z0-9._-]+@[A-Za-z0-9.-]+:[^/].*$`)

var scpLikeCases = []struct {
	in   string
	want bool
}{
	{"git@github.com:org/repo.git", true},
	{"u@h:p", true},
	{"a.b_c-d@h-1.example:x", true},
	{"u@h::", true},         // the path may start with ':'
	{"u@h:p@q:r/s", true},   // '@' and ':' in the path
	{"u@h:\n", true},        // [^/] matches a newline
	{"u@h:\nx", true},       // ... and '.' what follows it
	{"u@h:\xff", true},      // an invalid byte is U+FFFD, not '/'
	{"u@h:\xffx\xfe", true}, // '.' matches U+FFFD too
	{"u@h:é/x", true},       // a multi-byte first character
	{"u@h:p\r", true},       // only '\n' stops '.'
	{"u@h:\x00", true},      // NUL is a character like any other
	{"u@h:p\n", false},      // '$' is the end of the text, not of a line
	{"u@h:p\nq", false},     // no newline after the first character
	{"u@h:\n\n", false},     // ... even after a newline there
	{"u@h:é\n", false},      // ... or after a multi-byte one
	{"u@h:/x", false},       // an absolute path is ssh://'s, not scp's
	{"u@h:", false},         // a path is required
	{"@h:p", false},         // so is a user
	{"u@:p", false},         // and a host
	{"u_x@h_y:p", false},    // no '_' in a host
	{"u@v@h:p", false},      // no '@' in a user or host
	{"u:x@h:p", false},      // no ':' in a user
	{"u@h/x:p", false},      // no '/' in a host
	{"u@h", false},          // no ':'
	{"ué@h:p", false},       // ASCII only
	{"u\xff@h:p", false},    // an invalid byte is not in a class
	{"u@h\xff:p", false},    // ... there either
	{" u@h:p", false},       // no space
	{"\nu@h:p", false},      // '^' is the start of the text
	{"", false},
	{"/tmp/x", false},
	{"C:/x", false},
	{"ssh://git@h/r", false}, // a URL (IsURL takes it by its scheme)
	{"file:///tmp/x", false},
	{"git@h:p\xe2\x82", true}, // a cut sequence: U+FFFD per byte
}

func TestIsSCPLike(t *testing.T) {
	for _, c := range scpLikeCases {
		if got := isSCPLike(c.in); got != c.want {
			t.Errorf("isSCPLike(%q) = %v, want %v", c.in, got, c.want)
		}
		if re := scpLikeRE.MatchString(c.in); re != c.want {
			t.Errorf("the expression matches %q: %v; the table says %v", c.in, re, c.want)
		}
	}
}

// FuzzIsSCPLike checks isSCPLike against the expression it replaces.
func FuzzIsSCPLike(f *testing.F) {
	for _, c := range scpLikeCases {
		f.Add(c.in)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := isSCPLike(s), scpLikeRE.MatchString(s); got != want {
			t.Fatalf("isSCPLike(%q) = %v, the expression says %v", s, got, want)
		}
	})
}
