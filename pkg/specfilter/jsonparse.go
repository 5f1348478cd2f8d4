package specfilter

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/dome-registry/dome/internal/jsonesc"
)

// Limits bound what a loader accepts, so that a hostile document fails fast
// with bounded memory.
type Limits struct {
	MaxBytes int64 // largest file, default 64 MiB
	MaxDepth int   // deepest nesting of arrays/objects, default 512
	// MaxAliasNodes bounds the values that YAML aliases may add by expansion
	// (billion laughs); default max(100000, 2 x the nodes written out).
	MaxAliasNodes int
}

// Default limits.
const (
	DefaultMaxBytes = 64 << 20
	DefaultMaxDepth = 512
)

func (l Limits) withDefaults() Limits {
	if l.MaxBytes <= 0 {
		l.MaxBytes = DefaultMaxBytes
	}
	if l.MaxDepth <= 0 {
		l.MaxDepth = DefaultMaxDepth
	}
	return l
}

// parseError is a problem at a place in a source file.
type parseError struct {
	Line    int
	Pointer string // JSON pointer of the value, when known
	Problem string
	Hint    string // what to do, when the parser knows better than parseHint
	err     error  // the reader's error, when reading failed
}

func (e *parseError) Unwrap() error { return e.err }

func (e *parseError) Error() string {
	var b strings.Builder
	if e.Line > 0 {
		fmt.Fprintf(&b, "line %d: ", e.Line)
	}
	if e.Pointer != "" {
		fmt.Fprintf(&b, "%s: ", e.Pointer)
	}
	b.WriteString(e.Problem)
	return b.String()
}

// ParseJSON parses data as strict JSON (RFC 8259) into a Value: duplicate
// keys (also when spelled with escapes), invalid UTF-8, lone surrogates,
// trailing data and nesting beyond the limit are errors that name the line
// and the JSON pointer.
func ParseJSON(data []byte, lim Limits) (*Value, error) {
	lim = lim.withDefaults()
	if int64(len(data)) > lim.MaxBytes {
		return nil, &parseError{Problem: fmt.Sprintf("file is %d bytes, more than the limit of %d", len(data), lim.MaxBytes)}
	}
	p := &jsonParser{data: data, line: 1, maxDepth: lim.MaxDepth}
	if len(data) >= 3 && data[0] == 0xEF && data[1] == 0xBB && data[2] == 0xBF {
		p.pos = 3 // a UTF-8 byte order mark
	}
	p.skipSpace()
	v, err := p.value()
	if err != nil {
		return nil, err
	}
	p.skipSpace()
	if p.pos < len(p.data) {
		return nil, p.errorf("unexpected data after the JSON value")
	}
	return v, nil
}

type jsonFrame struct {
	key   string
	index int
	arr   bool
}

type jsonParser struct {
	data     []byte
	pos      int
	line     int
	maxDepth int
	stack    []jsonFrame
	scratch  []Member // the children of the open collections (docArena)
	arena    docArena
}

func (p *jsonParser) pointer() string {
	var b strings.Builder
	for _, f := range p.stack {
		b.WriteByte('/')
		if f.arr {
			b.WriteString(strconv.Itoa(f.index))
		} else {
			b.WriteString(escapeToken(f.key))
		}
	}
	return b.String()
}

func (p *jsonParser) errorf(format string, a ...any) error {
	return &parseError{Line: p.line, Pointer: p.pointer(), Problem: fmt.Sprintf(format, a...)}
}

func (p *jsonParser) skipSpace() {
	for p.pos < len(p.data) {
		switch p.data[p.pos] {
		case '\n':
			p.line++
		case ' ', '\t', '\r':
		default:
			return
		}
		p.pos++
	}
}

func (p *jsonParser) value() (*Value, error) {
	if p.pos >= len(p.data) {
		return nil, p.errorf("unexpected end of input")
	}
	line := int32(p.line)
	switch c := p.data[p.pos]; {
	case c == '{':
		return p.object()
	case c == '[':
		return p.array()
	case c == '"':
		s, err := p.str()
		if err != nil {
			return nil, err
		}
		v := p.arena.value()
		v.Kind, v.Text, v.Line = KindString, s, line
		return v, nil
	case c == 't':
		return p.literal("true", KindBool, true, line)
	case c == 'f':
		return p.literal("false", KindBool, false, line)
	case c == 'n':
		return p.literal("null", KindNull, false, line)
	case c == '-' || (c >= '0' && c <= '9'):
		return p.number()
	default:
		r, _ := utf8.DecodeRune(p.data[p.pos:])
		return nil, p.errorf("unexpected character %q (%U)", r, r)
	}
}

func (p *jsonParser) literal(word string, k Kind, b bool, line int32) (*Value, error) {
	if !strings.HasPrefix(string(p.data[p.pos:min(len(p.data), p.pos+len(word))]), word) {
		return nil, p.errorf("invalid literal")
	}
	p.pos += len(word)
	v := p.arena.value()
	v.Kind, v.Bool, v.Line = k, b, line
	return v, nil
}

func (p *jsonParser) number() (*Value, error) {
	start := p.pos
	d := p.data
	i := p.pos
	if i < len(d) && d[i] == '-' {
		i++
	}
	switch {
	case i < len(d) && d[i] == '0':
		i++
	case i < len(d) && d[i] >= '1' && d[i] <= '9':
		for i < len(d) && d[i] >= '0' && d[i] <= '9' {
			i++
		}
	default:
		p.pos = i
		return nil, p.errorf("invalid number")
	}
	if i < len(d) && d[i] == '.' {
		i++
		if i >= len(d) || d[i] < '0' || d[i] > '9' {
			p.pos = i
			return nil, p.errorf("invalid number: digits must follow '.'")
		}
		for i < len(d) && d[i] >= '0' && d[i] <= '9' {
			i++
		}
	}
	if i < len(d) && (d[i] == 'e' || d[i] == 'E') {
		i++
		if i < len(d) && (d[i] == '+' || d[i] == '-') {
			i++
		}
		if i >= len(d) || d[i] < '0' || d[i] > '9' {
			p.pos = i
			return nil, p.errorf("invalid number: digits must follow the exponent")
		}
		for i < len(d) && d[i] >= '0' && d[i] <= '9' {
			i++
		}
	}
	p.pos = i
	text := p.arena.text(d[start:i])
	if err := checkRange(text); err != nil {
		return nil, p.errorf("%v", err)
	}
	v := p.arena.value()
	v.Kind, v.Text, v.Line = KindNumber, text, int32(p.line)
	return v, nil
}

func (p *jsonParser) push(f jsonFrame) error {
	if len(p.stack) >= p.maxDepth {
		return p.errorf("nesting deeper than %d levels", p.maxDepth)
	}
	p.stack = append(p.stack, f)
	return nil
}

func (p *jsonParser) array() (*Value, error) {
	v := p.arena.value()
	v.Kind, v.Line = KindArray, int32(p.line)
	p.pos++ // [
	if err := p.push(jsonFrame{arr: true}); err != nil {
		return nil, err
	}
	p.skipSpace()
	if p.pos < len(p.data) && p.data[p.pos] == ']' {
		p.pos++
		p.stack = p.stack[:len(p.stack)-1]
		v.Members = []Member{}
		return v, nil
	}
	start := len(p.scratch)
	for {
		p.stack[len(p.stack)-1].index = len(p.scratch) - start
		p.skipSpace()
		it, err := p.value()
		if err != nil {
			return nil, err
		}
		p.scratch = append(p.scratch, Member{Value: it})
		p.skipSpace()
		if p.pos >= len(p.data) {
			return nil, p.errorf("unexpected end of input in an array")
		}
		switch p.data[p.pos] {
		case ',':
			p.pos++
		case ']':
			p.pos++
			p.stack = p.stack[:len(p.stack)-1]
			v.Members = p.collect(start)
			return v, nil
		default:
			return nil, p.errorf("expected ',' or ']' in an array")
		}
	}
}

func (p *jsonParser) object() (*Value, error) {
	v := p.arena.value()
	v.Kind, v.Line = KindObject, int32(p.line)
	p.pos++ // {
	if err := p.push(jsonFrame{}); err != nil {
		return nil, err
	}
	p.skipSpace()
	if p.pos < len(p.data) && p.data[p.pos] == '}' {
		p.pos++
		p.stack = p.stack[:len(p.stack)-1]
		v.Members = []Member{}
		return v, nil
	}
	start := len(p.scratch)
	var seen map[string]int32 // built once an object grows past a few keys
	for {
		p.skipSpace()
		if p.pos >= len(p.data) || p.data[p.pos] != '"' {
			return nil, p.errorf("expected a string key in an object")
		}
		keyLine := int32(p.line)
		key, err := p.str()
		if err != nil {
			return nil, err
		}
		p.stack[len(p.stack)-1].key = key
		if first, dup := dupKey(p.scratch[start:], &seen, key, keyLine); dup {
			return nil, p.errorf("duplicate key %q (first at line %d)", key, first)
		}
		p.skipSpace()
		if p.pos >= len(p.data) || p.data[p.pos] != ':' {
			return nil, p.errorf("expected ':' after the key")
		}
		p.pos++
		p.skipSpace()
		val, err := p.value()
		if err != nil {
			return nil, err
		}
		p.scratch = append(p.scratch, Member{Key: key, Value: val})
		p.skipSpace()
		if p.pos >= len(p.data) {
			return nil, p.errorf("unexpected end of input in an object")
		}
		switch p.data[p.pos] {
		case ',':
			p.pos++
		case '}':
			p.pos++
			p.stack = p.stack[:len(p.stack)-1]
			v.Members = p.collect(start)
			return v, nil
		default:
			return nil, p.errorf("expected ',' or '}' in an object")
		}
	}
}

// collect moves the children of the collection that began at start in the
// scratch stack into the arena.
func (p *jsonParser) collect(start int) []Member {
	ms := p.arena.copyMembers(p.scratch[start:])
	clear(p.scratch[start:])
	p.scratch = p.scratch[:start]
	return ms
}

// dupKey reports whether key is already among members (before it is
// appended) and the line of the first one. Small objects are scanned; large
// ones get a map.
func dupKey(members []Member, seen *map[string]int32, key string, line int32) (int32, bool) {
	const scan = 12
	if len(members) < scan {
		for _, m := range members {
			if m.Key == key {
				return keyLineOf(m), true
			}
		}
		return 0, false
	}
	if *seen == nil {
		*seen = make(map[string]int32, 2*len(members))
		for _, m := range members {
			(*seen)[m.Key] = keyLineOf(m)
		}
	}
	if first, ok := (*seen)[key]; ok {
		return first, true
	}
	(*seen)[key] = line
	return 0, false
}

func keyLineOf(m Member) int32 { return m.Value.Line }

func (p *jsonParser) str() (string, error) {
	d := p.data
	p.pos++ // opening quote
	start := p.pos
	// Fast path: no escapes.
	for i := p.pos; i < len(d); i++ {
		c := d[i]
		if c == '"' {
			s := d[start:i]
			if !utf8.Valid(s) {
				return "", p.errorf("invalid UTF-8 in a string")
			}
			p.pos = i + 1
			return p.arena.text(s), nil
		}
		if c == '\\' {
			break
		}
		if c < 0x20 {
			p.pos = i
			return "", p.errorf("control character %U in a string", rune(c))
		}
	}
	var b []byte
	i := start
	for {
		if i >= len(d) {
			p.pos = i
			return "", p.errorf("unterminated string")
		}
		c := d[i]
		switch {
		case c == '"':
			if !utf8.Valid(b) {
				return "", p.errorf("invalid UTF-8 in a string")
			}
			p.pos = i + 1
			return string(b), nil
		case c < 0x20:
			p.pos = i
			return "", p.errorf("control character %U in a string", rune(c))
		case c != '\\':
			b = append(b, c)
			i++
			continue
		}
		i++
		if i >= len(d) {
			p.pos = i
			return "", p.errorf("unterminated escape")
		}
		e := d[i]
		i++
		if c, ok := jsonesc.Simple(e); ok {
			b = append(b, c)
			continue
		}
		switch e {
		case 'u':
			r, ok := jsonesc.Hex4(d, i)
			if !ok {
				p.pos = i
				return "", p.errorf("invalid \\u escape")
			}
			i += 4
			if utf16.IsSurrogate(r) {
				r2, ok2 := rune(0), false
				if i+1 < len(d) && d[i] == '\\' && d[i+1] == 'u' {
					r2, ok2 = jsonesc.Hex4(d, i+2)
				}
				dec := utf16.DecodeRune(r, r2)
				if !ok2 || dec == utf8.RuneError {
					p.pos = i
					return "", p.errorf("lone UTF-16 surrogate in a \\u escape")
				}
				i += 6
				r = dec
			}
			b = utf8.AppendRune(b, r)
		default:
			p.pos = i
			return "", p.errorf("invalid escape \\%c", e)
		}
	}
}

// checkRange refuses numbers beyond IEEE 754 double range, which RFC 8785
// (and JSON's interoperable subset) cannot represent.
func checkRange(text string) error {
	if _, err := strconv.ParseFloat(text, 64); err != nil {
		return fmt.Errorf("number %s is out of the IEEE 754 double range that RFC 8785 canonical JSON can represent", text)
	}
	return nil
}
