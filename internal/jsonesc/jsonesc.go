// Package jsonesc decodes the escapes of a JSON string (RFC 8259 section
// 7) for dome's own JSON readers: the RFC 8785 canonicalizer
// (pkg/canonical), the spec filter's reader (pkg/specfilter) and the schema
// validator's decoder (pkg/schemaval), which must read them alike.
package jsonesc

// Simple returns the byte the two-character escape \e stands for; ok is
// false for every other e (\u, and what JSON does not allow).
func Simple(e byte) (c byte, ok bool) {
	switch e {
	case '"', '\\', '/':
		return e, true
	case 'b':
		return '\b', true
	case 'f':
		return '\f', true
	case 'n':
		return '\n', true
	case 'r':
		return '\r', true
	case 't':
		return '\t', true
	}
	return 0, false
}

// Hex4 reads the four hexadecimal digits (either case) of a \u escape at
// data[i:]; ok is false when there are fewer than four or one is not a
// hexadecimal digit.
func Hex4[T string | []byte](data T, i int) (r rune, ok bool) {
	if i < 0 || i+4 > len(data) {
		return 0, false
	}
	for k := i; k < i+4; k++ {
		c := data[k]
		switch {
		case '0' <= c && c <= '9':
			r = r<<4 | rune(c-'0')
		case 'a' <= c && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case 'A' <= c && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}
