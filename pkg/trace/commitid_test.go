package trace

import (
	"strings"
	"testing"
)

func TestIsCommitID(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want bool
	}{
		{strings.Repeat("a", 40), true},
		{strings.Repeat("0123456789abcdef", 4), true},
		{strings.Repeat("f", 39), false},
		{strings.Repeat("f", 41), false},
		{strings.Repeat("A", 40), false}, // upper case is not git's spelling
		{strings.Repeat("a", 39) + "g", false},
		{strings.Repeat("a", 63) + "\n", false},
		{"", false},
	} {
		if got := isCommitID(tc.in); got != tc.want {
			t.Errorf("isCommitID(%q) = %v, want %v", tc.in, got, tc.want)
		}
	}
}
