package schemaval

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Position is where a value starts in a source text: a 1-based line and a
// 1-based column counted in characters.
type Position struct {
	Line   int `json:"line"`
	Column int `json:"column"`
}

// Violation is one place where a document breaks a schema: Path is the
// instance location (one token per step, unescaped), Message what is wrong.
type Violation struct {
	Path    []string
	Message string
}

// Pointer returns the violation's JSON pointer ("" for the document root).
func (v Violation) Pointer() string { return pointer(v.Path) }

// Violations returns every violation of doc (a decoded document with
// numbers as json.Number, as DecodeLocated returns), sorted by location.
func (s *Schema) Violations(doc any) []Violation {
	v := &validator{}
	v.validate(s.root, doc, nil)
	errs := v.errs
	sort.SliceStable(errs, func(i, j int) bool { return pointer(errs[i].loc) < pointer(errs[j].loc) })
	out := make([]Violation, len(errs))
	for i, e := range errs {
		out[i] = Violation{Path: e.loc, Message: e.msg}
	}
	return out
}

// SyntaxError is a JSON text that cannot be decoded: malformed, a duplicate
// key, trailing data or nesting deeper than the limit. Pointer names the
// value being read when the fault was found.
type SyntaxError struct {
	Pointer string
	Position
	Problem string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("line %d, column %d: %s", e.Line, e.Column, e.Problem)
}

// DecodeLocated decodes one JSON value (objects as map[string]any, numbers
// as json.Number) and returns the start position of every value by JSON
// pointer ("" is the root), and of every member's key by its pointer plus
// KeySuffix. It refuses duplicate keys, trailing data, a byte
// order mark and nesting deeper than 1000 levels with a *SyntaxError.
func DecodeLocated(data []byte) (any, map[string]Position, error) {
	l := &locator{data: data, dec: json.NewDecoder(bytes.NewReader(data)), pos: map[string]Position{}, line: 1}
	l.dec.UseNumber()
	if bytes.HasPrefix(data, []byte("\xef\xbb\xbf")) {
		return nil, nil, &SyntaxError{Position: Position{1, 1}, Problem: "a byte order mark is not allowed in JSON; save the file as UTF-8 without BOM"}
	}
	v, err := l.value("", 0)
	if err != nil {
		return nil, nil, err
	}
	if _, err := l.dec.Token(); err != io.EOF {
		off := l.skipSpace(l.dec.InputOffset())
		return nil, nil, &SyntaxError{Position: l.at(off), Problem: "trailing data after the JSON value"}
	}
	return v, l.pos, nil
}

type locator struct {
	data []byte
	dec  *json.Decoder
	pos  map[string]Position
	// A cursor over data: offsets only grow, so positions cost O(n) in total.
	off, line, lineStart int
}

// at returns the position of byte offset off (off never decreases between calls).
func (l *locator) at(off int64) Position {
	o := int(min(off, int64(len(l.data))))
	if o < l.off {
		l.off, l.line, l.lineStart = 0, 1, 0
	}
	for ; l.off < o; l.off++ {
		if l.data[l.off] == '\n' {
			l.line++
			l.lineStart = l.off + 1
		}
	}
	return Position{Line: l.line, Column: utf8.RuneCount(l.data[l.lineStart:o]) + 1}
}

// skipSpace returns the offset of the next byte that is not whitespace or a
// separator the decoder consumes on its own (':' and ',').
func (l *locator) skipSpace(off int64) int64 {
	for off < int64(len(l.data)) {
		switch l.data[off] {
		case ' ', '\t', '\r', '\n', ':', ',':
			off++
			continue
		}
		break
	}
	return off
}

func (l *locator) fail(ptr string, off int64, err error) error {
	// json.SyntaxError.Offset is not reliable with the Token API; the fault
	// is at the first byte after the last good token, which off names.
	msg := err.Error()
	if err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF) {
		msg = "unexpected end of JSON input"
		off = int64(len(l.data))
	}
	return &SyntaxError{Pointer: ptr, Position: l.at(off), Problem: "not valid JSON: " + msg}
}

func (l *locator) value(ptr string, depth int) (any, error) {
	start := l.skipSpace(l.dec.InputOffset())
	if depth > maxDepth {
		return nil, &SyntaxError{Pointer: ptr, Position: l.at(start), Problem: fmt.Sprintf("nesting deeper than %d levels", maxDepth)}
	}
	tok, err := l.dec.Token()
	if err != nil {
		return nil, l.fail(ptr, start, err)
	}
	l.pos[ptr] = l.at(start)
	d, ok := tok.(json.Delim)
	if !ok {
		return tok, nil
	}
	switch d {
	case '{':
		m := map[string]any{}
		for l.dec.More() {
			koff := l.skipSpace(l.dec.InputOffset())
			kt, err := l.dec.Token()
			if err != nil {
				return nil, l.fail(ptr, koff, err)
			}
			k, ok := kt.(string)
			if !ok {
				return nil, &SyntaxError{Pointer: ptr, Position: l.at(koff), Problem: "not valid JSON: object key is not a string"}
			}
			child := ptr + "/" + strings.ReplaceAll(strings.ReplaceAll(k, "~", "~0"), "/", "~1")
			kpos := l.at(koff)
			if _, dup := m[k]; dup {
				return nil, &SyntaxError{Pointer: child, Position: kpos, Problem: fmt.Sprintf("duplicate key %s (first at line %d)", strconv.Quote(k), l.pos[child+KeySuffix].Line)}
			}
			l.pos[child+KeySuffix] = kpos
			x, err := l.value(child, depth+1)
			if err != nil {
				return nil, err
			}
			m[k] = x
		}
		if _, err := l.dec.Token(); err != nil {
			return nil, l.fail(ptr, l.skipSpace(l.dec.InputOffset()), err)
		}
		return m, nil
	case '[':
		a := []any{}
		for i := 0; l.dec.More(); i++ {
			x, err := l.value(ptr+"/"+strconv.Itoa(i), depth+1)
			if err != nil {
				return nil, err
			}
			a = append(a, x)
		}
		if _, err := l.dec.Token(); err != nil {
			return nil, l.fail(ptr, l.skipSpace(l.dec.InputOffset()), err)
		}
		return a, nil
	}
	return nil, &SyntaxError{Pointer: ptr, Position: l.at(start), Problem: fmt.Sprintf("not valid JSON: unexpected %q", d)}
}

// Locate returns the position recorded for ptr, or for its nearest ancestor
// that has one (a missing property is reported where its object starts).
func Locate(pos map[string]Position, ptr string) Position {
	for {
		if p, ok := pos[ptr]; ok {
			return p
		}
		i := strings.LastIndexByte(ptr, '/')
		if i < 0 {
			return Position{}
		}
		ptr = ptr[:i]
	}
}
