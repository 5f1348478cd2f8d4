package schemaval

import (
	"encoding/json"
	"fmt"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/dome-registry/dome/internal/jsonesc"
)

// decode parses one JSON text into the values encoding/json's Decoder gives
// with UseNumber: objects as map[string]any, arrays as []any, numbers as
// json.Number, strings, booleans and nil. encoding/json reads a text twice
// (once to find the end of the value, once to decode it), each time through
// a state machine called for every byte; decoding the tool schema that way
// cost a cold `dome registry cat` a tenth of its instructions, this single
// pass less than half of that (most of what is left is allocation).
//
// Every text it reads has passed CheckJSON, or is a schema embedded in the
// binary (TestEmbeddedSchemas checks those), so it need not be lenient where
// encoding/json is: it refuses invalid UTF-8 and lone surrogates, which
// encoding/json would turn into U+FFFD, and nesting deeper than maxDepth.
// Whatever it accepts, encoding/json decodes to the same value (FuzzDecode).
func decode(data []byte) (any, error) {
	// One copy of the text, of which every string and number without an
	// escape is a substring: a decoded value keeps at most the text alive,
	// and a schema's hundred strings cost one allocation instead of a
	// hundred.
	d := decoder{data: string(data)}
	v, err := d.value(0)
	if err != nil {
		return nil, err
	}
	if d.space(); d.pos < len(d.data) {
		return nil, d.errorf("trailing data after the JSON value")
	}
	return v, nil
}

type decoder struct {
	data string
	pos  int
}

func (d *decoder) errorf(format string, a ...any) error {
	return fmt.Errorf("%s at byte %d", fmt.Sprintf(format, a...), d.pos)
}

// space skips whitespace.
func (d *decoder) space() {
	for d.pos < len(d.data) {
		switch d.data[d.pos] {
		case ' ', '\t', '\n', '\r':
			d.pos++
		default:
			return
		}
	}
}

// next skips whitespace and reports whether the next byte is c, consuming
// it if so.
func (d *decoder) next(c byte) bool {
	d.space()
	if d.pos < len(d.data) && d.data[d.pos] == c {
		d.pos++
		return true
	}
	return false
}

func (d *decoder) value(depth int) (any, error) {
	if depth > maxDepth {
		return nil, d.errorf("nesting deeper than %d levels", maxDepth)
	}
	d.space()
	if d.pos == len(d.data) {
		return nil, d.errorf("unexpected end of JSON input")
	}
	switch c := d.data[d.pos]; {
	case c == '{':
		d.pos++
		m := map[string]any{}
		if d.next('}') {
			return m, nil
		}
		for {
			if d.space(); d.pos == len(d.data) || d.data[d.pos] != '"' {
				return nil, d.errorf("want a member name")
			}
			k, err := d.str()
			if err != nil {
				return nil, err
			}
			if !d.next(':') {
				return nil, d.errorf("want ':' after a member name")
			}
			if m[k], err = d.value(depth + 1); err != nil {
				return nil, err
			}
			if d.next(',') {
				continue
			}
			if d.next('}') {
				return m, nil
			}
			return nil, d.errorf("want ',' or '}' after an object member")
		}
	case c == '[':
		d.pos++
		a := []any{}
		if d.next(']') {
			return a, nil
		}
		for {
			v, err := d.value(depth + 1)
			if err != nil {
				return nil, err
			}
			a = append(a, v)
			if d.next(',') {
				continue
			}
			if d.next(']') {
				return a, nil
			}
			return nil, d.errorf("want ',' or ']' after an array element")
		}
	case c == '"':
		return d.str()
	case c == '-' || '0' <= c && c <= '9':
		return d.number()
	case c == 't':
		return true, d.literal("true")
	case c == 'f':
		return false, d.literal("false")
	case c == 'n':
		return nil, d.literal("null")
	}
	return nil, d.errorf("invalid character %q looking for a value", d.data[d.pos])
}

func (d *decoder) literal(word string) error {
	if len(d.data)-d.pos < len(word) || d.data[d.pos:d.pos+len(word)] != word {
		return d.errorf("want %s", word)
	}
	d.pos += len(word)
	return nil
}

// number reads -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?.
func (d *decoder) number() (json.Number, error) {
	start := d.pos
	digits := func() int {
		n := 0
		for d.pos < len(d.data) && '0' <= d.data[d.pos] && d.data[d.pos] <= '9' {
			d.pos++
			n++
		}
		return n
	}
	if d.data[d.pos] == '-' {
		d.pos++
	}
	if d.pos < len(d.data) && d.data[d.pos] == '0' {
		d.pos++
	} else if digits() == 0 {
		return "", d.errorf("want a digit")
	}
	if d.pos < len(d.data) && d.data[d.pos] == '.' {
		d.pos++
		if digits() == 0 {
			return "", d.errorf("want a digit after '.'")
		}
	}
	if d.pos < len(d.data) && (d.data[d.pos] == 'e' || d.data[d.pos] == 'E') {
		d.pos++
		if d.pos < len(d.data) && (d.data[d.pos] == '+' || d.data[d.pos] == '-') {
			d.pos++
		}
		if digits() == 0 {
			return "", d.errorf("want an exponent digit")
		}
	}
	return json.Number(d.data[start:d.pos]), nil
}

// str reads the string at d.data[d.pos] (a '"').
func (d *decoder) str() (string, error) {
	d.pos++
	start := d.pos
	// Most strings have no escape: they are substrings of the text.
	for d.pos < len(d.data) && d.data[d.pos] != '\\' {
		c := d.data[d.pos]
		switch {
		case c == '"':
			d.pos++
			return d.data[start : d.pos-1], nil
		case c < 0x20:
			return "", d.errorf("control character in a string")
		case c < utf8.RuneSelf:
			d.pos++
		default:
			r, size := utf8.DecodeRuneInString(d.data[d.pos:])
			if r == utf8.RuneError && size == 1 {
				return "", d.errorf("invalid UTF-8 in a string")
			}
			d.pos += size
		}
	}
	b := []byte(d.data[start:d.pos])
	for d.pos < len(d.data) {
		c := d.data[d.pos]
		switch {
		case c == '"':
			d.pos++
			return string(b), nil
		case c < 0x20:
			return "", d.errorf("control character in a string")
		case c >= utf8.RuneSelf:
			r, size := utf8.DecodeRuneInString(d.data[d.pos:])
			if r == utf8.RuneError && size == 1 {
				return "", d.errorf("invalid UTF-8 in a string")
			}
			b = append(b, d.data[d.pos:d.pos+size]...)
			d.pos += size
		case c != '\\':
			b = append(b, c)
			d.pos++
		default:
			if d.pos+1 == len(d.data) {
				return "", d.errorf("unexpected end of JSON input")
			}
			e := d.data[d.pos+1]
			d.pos += 2
			if c, ok := jsonesc.Simple(e); ok {
				b = append(b, c)
				continue
			}
			switch e {
			case 'u':
				r, ok := d.hex4()
				if !ok {
					return "", d.errorf("want four hexadecimal digits after \\u")
				}
				if utf16.IsSurrogate(r) {
					var r2 rune
					if d.pos+1 < len(d.data) && d.data[d.pos] == '\\' && d.data[d.pos+1] == 'u' {
						d.pos += 2
						if r2, ok = d.hex4(); !ok {
							return "", d.errorf("want four hexadecimal digits after \\u")
						}
					}
					if r = utf16.DecodeRune(r, r2); r == utf8.RuneError {
						return "", d.errorf("lone surrogate in a \\u escape")
					}
				}
				b = utf8.AppendRune(b, r)
			default:
				return "", d.errorf("invalid escape \\%c", e)
			}
		}
	}
	return "", d.errorf("unexpected end of JSON input in a string")
}

// hex4 reads the four hexadecimal digits of a \u escape.
func (d *decoder) hex4() (rune, bool) {
	r, ok := jsonesc.Hex4(d.data, d.pos)
	if ok {
		d.pos += 4
	}
	return r, ok
}
