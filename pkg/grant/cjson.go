package grant

import (
	"bytes"
	"errors"
	"strings"
	"unicode/utf8"
)

// scanner reads JSON that must already be in RFC 8785 canonical form, as a
// grant is on the wire: no whitespace, object members in strictly
// increasing order of their (ASCII) names, so no duplicates; strings with no
// escapes but \" and \\ (a grant holds no control characters), valid
// UTF-8; non-negative integers without sign, fraction or exponent. Reading
// canonical bytes directly costs one pass and no reflection, and a grant
// that any other reader could see differently is refused.
type scanner struct {
	b []byte
	i int
}

var errEnd = errors.New("unexpected end of the grant")

// syntaxErr is a structural problem at a byte offset.
type syntaxErr struct {
	off int
	msg string
}

func (e *syntaxErr) Error() string { return e.msg + " at byte " + itoa(e.off) }

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var buf [20]byte
	i := len(buf)
	for n > 0 {
		i--
		buf[i] = byte('0' + n%10)
		n /= 10
	}
	return string(buf[i:])
}

func (s *scanner) fail(msg string) error { return &syntaxErr{off: s.i, msg: msg} }

// lit consumes the exact bytes lit.
func (s *scanner) lit(lit string) bool {
	if len(s.b)-s.i >= len(lit) && string(s.b[s.i:s.i+len(lit)]) == lit {
		s.i += len(lit)
		return true
	}
	return false
}

func (s *scanner) byteIs(c byte) bool { return s.i < len(s.b) && s.b[s.i] == c }

// object reads an object, calling member for each member with its name
// (valid until the next call) after consuming the name and its colon; member
// must consume the value. Names must be ASCII without escapes, in strictly
// increasing byte order (the UTF-16 order RFC 8785 sorts by, for ASCII).
func (s *scanner) object(member func(name []byte, keyStart int) error) error {
	if !s.lit("{") {
		return s.fail("want an object")
	}
	if s.lit("}") {
		return nil
	}
	var prev []byte
	for {
		keyStart := s.i
		if !s.lit(`"`) {
			return s.fail("want a member name")
		}
		start := s.i
		for s.i < len(s.b) && s.b[s.i] != '"' {
			c := s.b[s.i]
			if c <= ' ' || c >= 0x7f || c == '\\' {
				return s.fail("unexpected member name")
			}
			s.i++
		}
		if s.i >= len(s.b) {
			return errEnd
		}
		name := s.b[start:s.i]
		s.i++
		if prev != nil && bytes.Compare(prev, name) >= 0 {
			return &syntaxErr{off: start, msg: "member " + string(name) + " is out of canonical order or repeated"}
		}
		prev = name
		if !s.lit(":") {
			return s.fail("want ':'")
		}
		if err := member(name, keyStart); err != nil {
			return err
		}
		if s.lit(",") {
			continue
		}
		if s.lit("}") {
			return nil
		}
		return s.fail("want ',' or '}'")
	}
}

// str reads a string.
func (s *scanner) str() (string, error) {
	if !s.lit(`"`) {
		return "", s.fail("want a string")
	}
	start := s.i
	esc := false
	for {
		if s.i >= len(s.b) {
			return "", errEnd
		}
		c := s.b[s.i]
		if c == '"' {
			break
		}
		if c == '\\' {
			if s.i+1 >= len(s.b) || (s.b[s.i+1] != '"' && s.b[s.i+1] != '\\') {
				return "", s.fail(`a grant string has no escape but \" and \\`)
			}
			esc = true
			s.i += 2
			continue
		}
		if c < 0x20 {
			return "", s.fail("control character in a string")
		}
		s.i++
	}
	raw := s.b[start:s.i]
	s.i++
	if !utf8.Valid(raw) {
		return "", &syntaxErr{off: start, msg: "a string is not valid UTF-8"}
	}
	if !esc {
		return string(raw), nil
	}
	var b strings.Builder
	b.Grow(len(raw))
	for i := 0; i < len(raw); i++ {
		if raw[i] == '\\' {
			i++
		}
		b.WriteByte(raw[i])
	}
	return b.String(), nil
}

// uint reads a non-negative integer up to 2^53-1 in canonical form.
func (s *scanner) uint() (int64, error) {
	start := s.i
	if s.i >= len(s.b) {
		return 0, errEnd
	}
	if s.b[s.i] == '0' {
		s.i++
		if s.i < len(s.b) && (s.b[s.i] >= '0' && s.b[s.i] <= '9' || s.b[s.i] == '.' || s.b[s.i] == 'e' || s.b[s.i] == 'E') {
			return 0, s.fail("not a canonical integer")
		}
		return 0, nil
	}
	var n int64
	for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
		n = n*10 + int64(s.b[s.i]-'0')
		s.i++
		if s.i-start > 16 || n > 1<<53-1 {
			return 0, &syntaxErr{off: start, msg: "integer out of range"}
		}
	}
	if s.i == start {
		return 0, s.fail("want a non-negative integer")
	}
	if s.i < len(s.b) && (s.b[s.i] == '.' || s.b[s.i] == 'e' || s.b[s.i] == 'E') {
		return 0, s.fail("want an integer")
	}
	return n, nil
}

// boolean reads true or false.
func (s *scanner) boolean() (bool, error) {
	switch {
	case s.lit("true"):
		return true, nil
	case s.lit("false"):
		return false, nil
	}
	return false, s.fail("want true or false")
}

// array reads an array, calling elem for each element.
func (s *scanner) array(elem func() error) error {
	if !s.lit("[") {
		return s.fail("want an array")
	}
	if s.lit("]") {
		return nil
	}
	for {
		if err := elem(); err != nil {
			return err
		}
		if s.lit(",") {
			continue
		}
		if s.lit("]") {
			return nil
		}
		return s.fail("want ',' or ']'")
	}
}

// strings reads an array of strings (never nil).
func (s *scanner) strs() ([]string, error) {
	out := make([]string, 0, 4)
	err := s.array(func() error {
		v, err := s.str()
		out = append(out, v)
		return err
	})
	return out, err
}
