package canonical

import (
	"errors"
	"strconv"
	"unicode/utf8"
)

// This file serves writers that hold a JSON document as a tree of their
// own and write its canonical form directly, without the detour through
// JSON text that Transform would take (pkg/specfilter's Value).

// AppendString appends s as RFC 8785 writes a string, quotes included (the
// escapes of appendRune; every other character as its UTF-8 bytes). A byte
// that is not valid UTF-8 is written as U+FFFD.
func AppendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	run := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
			i++
			continue
		}
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(s[i:])
			if r != utf8.RuneError || size != 1 {
				i += size
				continue
			}
			dst = append(dst, s[run:i]...)
			dst = utf8.AppendRune(dst, utf8.RuneError)
			i++
			run = i
			continue
		}
		dst = append(dst, s[run:i]...)
		dst, _ = appendRune(dst, rune(c))
		i++
		run = i
	}
	dst = append(dst, s[run:]...)
	return append(dst, '"')
}

// CompareKeys orders two member names as RFC 8785 section 3.2.3 does, by
// the UTF-16 code units of the strings (which differs from the order of
// their UTF-8 bytes only between characters above U+FFFF and those from
// U+E000 to U+FFFF).
func CompareKeys(a, b string) int {
	n := min(len(a), len(b))
	i := 0
	for i < n && a[i] == b[i] {
		i++
	}
	if i == n {
		return cmpInt(len(a), len(b))
	}
	if a[i] < utf8.RuneSelf || b[i] < utf8.RuneSelf {
		return cmpInt(int(a[i]), int(b[i]))
	}
	for i > 0 && !utf8.RuneStart(a[i]) {
		i--
	}
	ra, _ := utf8.DecodeRuneInString(a[i:])
	rb, _ := utf8.DecodeRuneInString(b[i:])
	return cmpInt(int(utf16Key(ra)), int(utf16Key(rb)))
}

var errNumber = errors.New("not a JSON number within the range of a double")

// AppendNumberLiteral appends the canonical form of lit, a JSON number
// literal, as Transform writes it: an integer of up to 15 digits as
// written ("-0" as "0"), anything else through AppendNumber.
func AppendNumberLiteral(dst []byte, lit string) ([]byte, error) {
	if lit == "" {
		return dst, errNumber
	}
	end, isInt, _, msg, _ := scanNumber([]byte(lit), 0, true)
	if msg != "" || end != len(lit) {
		return dst, errNumber
	}
	digits := len(lit)
	neg := lit[0] == '-'
	if neg {
		digits--
	}
	if isInt && digits <= 15 {
		if neg && lit[1] == '0' {
			return append(dst, '0'), nil
		}
		return append(dst, lit...), nil
	}
	f, err := strconv.ParseFloat(lit, 64)
	if err != nil {
		return dst, errNumber
	}
	return AppendNumber(dst, f), nil
}
