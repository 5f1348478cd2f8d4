package canonical

import (
	"encoding/binary"
	"unicode/utf8"

	"github.com/dome-registry/dome/internal/jsonesc"
)

const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
)

// special reports whether any of the 8 bytes in x needs a closer look inside
// a string: a control character, '"', '\\', or a byte of a multi-byte UTF-8
// sequence. (The classic "has a byte less than n / equal to zero" tricks;
// false positives cannot occur when no byte qualifies.)
func special(x uint64) bool {
	q := x ^ (lsb * '"')
	b := x ^ (lsb * '\\')
	return ((x-lsb*0x20)&^x|(q-lsb)&^q|(b-lsb)&^b|x)&msb != 0
}

// str reads the string at data[t.pos] (a '"') and appends its canonical form
// to out. It reports whether that form contains a backslash.
func (t *transformer) str() (bool, error) {
	start := t.pos // index of the opening quote; moves with refills
	out := append(t.out, '"')
	esc := false
	i := t.pos + 1
	for {
		data := t.data
		run := i
	scan:
		for {
			for i+8 <= len(data) && !special(binary.LittleEndian.Uint64(data[i:])) {
				i += 8
			}
			if i >= len(data) {
				break
			}
			c := data[i]
			switch {
			case c < utf8.RuneSelf:
				if c == '"' || c == '\\' || c < 0x20 {
					break scan
				}
				i++
			case i+utf8.UTFMax > len(data) && !t.eof && !utf8.FullRune(data[i:]):
				break scan // a sequence cut by the end of the window
			default:
				r, size := utf8.DecodeRune(data[i:])
				if r == utf8.RuneError && size == 1 {
					t.out = out
					return false, t.fail(i, "invalid UTF-8 in a string")
				}
				i += size
			}
		}
		out = append(out, data[run:i]...)
		if i >= len(data) || data[i] >= utf8.RuneSelf {
			shift, ok := t.refill(i)
			start -= shift
			i -= shift
			if !ok {
				t.out = out
				if i < len(t.data) {
					return false, t.fail(i, "invalid UTF-8 in a string")
				}
				return false, t.fail(start, "unexpected end of input in the string that starts here")
			}
			continue
		}
		switch c := data[i]; {
		case c == '"':
			t.pos = i + 1
			t.out = append(out, '"')
			return esc, nil
		case c < 0x20:
			t.out = out
			return false, t.fail(i, "control character U+%04X in a string must be escaped", c)
		}
		// A backslash escape: up to 12 bytes (a surrogate pair).
		if i+12 > len(data) && !t.eof {
			shift, ok := t.refill(i)
			start -= shift
			i -= shift
			if ok {
				continue
			}
			data = t.data
		}
		if i+1 >= len(data) {
			t.out = out
			return false, t.fail(start, "unexpected end of input in the string that starts here")
		}
		switch data[i+1] {
		case '"':
			out = append(out, '\\', '"')
			esc = true
		case '\\':
			out = append(out, '\\', '\\')
			esc = true
		case '/':
			out = append(out, '/')
		case 'b':
			out = append(out, '\\', 'b')
			esc = true
		case 'f':
			out = append(out, '\\', 'f')
			esc = true
		case 'n':
			out = append(out, '\\', 'n')
			esc = true
		case 'r':
			out = append(out, '\\', 'r')
			esc = true
		case 't':
			out = append(out, '\\', 't')
			esc = true
		case 'u':
			r, n, err := t.unicodeEscape(data, i)
			if err != nil {
				t.out = out
				return false, err
			}
			var e bool
			out, e = appendRune(out, r)
			esc = esc || e
			i += n
			continue
		default:
			t.out = out
			return false, t.fail(i, "invalid escape %s in a string", quoteEscape(data[i+1]))
		}
		i += 2
	}
}

func quoteEscape(c byte) string {
	if c >= 0x20 && c < 0x7f {
		return "'\\" + string(rune(c)) + "'"
	}
	return "'\\' followed by " + quoteByte(c)
}

// unicodeEscape decodes the \uXXXX escape at data[i] (and the low surrogate
// escape after it, for a high surrogate). It returns the code point and the
// number of bytes read.
func (t *transformer) unicodeEscape(data []byte, i int) (rune, int, error) {
	u, ok := jsonesc.Hex4(data, i+2)
	if !ok {
		return 0, 0, t.fail(i, "invalid \\u escape: want 4 hex digits")
	}
	switch {
	case 0xDC00 <= u && u <= 0xDFFF:
		return 0, 0, t.fail(i, "lone surrogate \\u%04x: a low surrogate must follow a high one", u)
	case 0xD800 <= u && u <= 0xDBFF:
		if i+7 < len(data) && data[i+6] == '\\' && data[i+7] == 'u' {
			if l, ok := jsonesc.Hex4(data, i+8); ok && 0xDC00 <= l && l <= 0xDFFF {
				return 0x10000 + (u-0xD800)<<10 + (l - 0xDC00), 12, nil
			}
		}
		return 0, 0, t.fail(i, "lone surrogate \\u%04x: a high surrogate must be followed by a \\u escape of a low one (DC00-DFFF)", u)
	}
	return u, 6, nil
}

// appendRune appends r as RFC 8785 writes it inside a string (section
// 3.2.2.2): the two-character escapes for \b \t \n \f \r " and \\, \u00xx
// (lowercase hex) for the other control characters, every other character
// as its UTF-8 bytes. It reports whether it wrote an escape.
func appendRune(out []byte, r rune) ([]byte, bool) {
	switch r {
	case '"':
		return append(out, '\\', '"'), true
	case '\\':
		return append(out, '\\', '\\'), true
	case '\b':
		return append(out, '\\', 'b'), true
	case '\t':
		return append(out, '\\', 't'), true
	case '\n':
		return append(out, '\\', 'n'), true
	case '\f':
		return append(out, '\\', 'f'), true
	case '\r':
		return append(out, '\\', 'r'), true
	}
	if r < 0x20 {
		const hexdig = "0123456789abcdef"
		return append(out, '\\', 'u', '0', '0', hexdig[r>>4], hexdig[r&0xF]), true
	}
	return utf8.AppendRune(out, r), false
}

// compareKeys compares two member names, given in their canonical string
// form (without quotes), by the UTF-16 code units of the strings they denote,
// as RFC 8785 section 3.2.3 requires. esc says whether either form contains a
// backslash escape.
func compareKeys(a, b []byte, esc bool) int {
	if esc {
		return compareEscaped(a, b)
	}
	n := min(len(a), len(b))
	i := 0
	for i+8 <= n && binary.LittleEndian.Uint64(a[i:]) == binary.LittleEndian.Uint64(b[i:]) {
		i += 8
	}
	for i < n && a[i] == b[i] {
		i++
	}
	if i == n {
		return cmpInt(len(a), len(b))
	}
	if a[i] < utf8.RuneSelf || b[i] < utf8.RuneSelf {
		return cmpInt(int(a[i]), int(b[i]))
	}
	// Both are inside multi-byte characters: compare the characters.
	for i > 0 && !utf8.RuneStart(a[i]) {
		i--
	}
	ra, _ := utf8.DecodeRune(a[i:])
	rb, _ := utf8.DecodeRune(b[i:])
	return cmpInt(int(utf16Key(ra)), int(utf16Key(rb)))
}

// utf16Key orders code points as their UTF-16 encodings do: characters
// above U+FFFF (surrogate pairs, D800-DBFF first) come before U+E000-U+FFFF.
func utf16Key(r rune) rune {
	if r >= 0xE000 && r <= 0xFFFF {
		return r + 0x200000 // after every supplementary character (max U+10FFFF)
	}
	return r
}

func cmpInt(a, b int) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// compareEscaped compares canonical string forms that may contain escapes,
// one character at a time.
func compareEscaped(a, b []byte) int {
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		ra, na := decodeCanonical(a[i:])
		rb, nb := decodeCanonical(b[j:])
		if ra != rb {
			return cmpInt(int(utf16Key(ra)), int(utf16Key(rb)))
		}
		i += na
		j += nb
	}
	return cmpInt(len(a)-i, len(b)-j)
}

// decodeCanonical decodes one character of a canonical string form.
func decodeCanonical(s []byte) (rune, int) {
	if s[0] != '\\' {
		if s[0] < utf8.RuneSelf {
			return rune(s[0]), 1
		}
		return utf8.DecodeRune(s)
	}
	switch s[1] {
	case 'b':
		return '\b', 2
	case 't':
		return '\t', 2
	case 'n':
		return '\n', 2
	case 'f':
		return '\f', 2
	case 'r':
		return '\r', 2
	case 'u':
		r, _ := jsonesc.Hex4(s, 2)
		return r, 6
	}
	return rune(s[1]), 2 // \" and \\
}
