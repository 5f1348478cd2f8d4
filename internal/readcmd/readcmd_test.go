package readcmd

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestBounded(t *testing.T) {
	long := strings.Repeat("é", MaxMessage) // 2 bytes each
	got := Bounded(long)
	if len(got) > MaxMessage+64 || !strings.HasSuffix(got, "more bytes not shown)") || !utf8.ValidString(got) {
		t.Errorf("Bounded: %d bytes, suffix %q", len(got), got[len(got)-40:])
	}
	if Bounded("short") != "short" {
		t.Error("a short message changed")
	}
}
