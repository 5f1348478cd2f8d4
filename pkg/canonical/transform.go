package canonical

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
)

const (
	readWindow = 64 << 10 // initial read window of the streaming forms
	flushSize  = 64 << 10 // TransformStream writes once this much output is final
)

// frame is one open array or object.
type frame struct {
	start    int // offset in out of its '{' or '['
	memBase  int // objects: index in mems of its first member
	obj      bool
	unsorted bool // objects: a member name arrived out of order
}

// member is one member of an open object, located in out.
type member struct {
	start  int   // offset of the opening quote of its name
	keyEnd int   // offset of the closing quote of its name
	end    int   // offset just past its value
	off    int64 // input offset of its name
	esc    bool  // the canonical name contains a backslash
}

// transformer turns one JSON text into its canonical form in a single pass.
// Values are written to out as they are read, in input order; when an object
// whose names arrived out of order closes, its members are moved into order
// (through scratch). Objects that arrive sorted, the common case for
// generated documents and for input that is already canonical, cost no
// moves at all. The cost is one pass plus one copy of each object whose names
// arrived out of order (so O(n*d) bytes moved when d unsorted objects nest
// around most of the input, d <= MaxDepth).
type transformer struct {
	data []byte    // input window
	pos  int       // read position in data
	base int64     // input offset of data[0]
	r    io.Reader // nil: data is the whole input
	eof  bool      // no more input beyond data
	rerr error     // the reader's error, if it failed

	out []byte
	w   io.Writer // TransformStream's destination

	stack    []frame
	nobj     int // open objects in stack
	mems     []member
	scratch  []byte
	maxDepth int
}

func newTransformer(opts Options, outCap int) *transformer {
	return &transformer{
		out:      make([]byte, 0, outCap),
		stack:    make([]frame, 0, 32),
		mems:     make([]member, 0, 64),
		maxDepth: opts.maxDepth(),
	}
}

// fail returns the reader's error if it failed, else a SyntaxError at data[i].
func (t *transformer) fail(i int, format string, a ...any) error {
	if t.rerr != nil {
		return fmt.Errorf("canonical: read input: %w", t.rerr)
	}
	msg := format
	if len(a) > 0 {
		msg = fmt.Sprintf(format, a...)
	}
	return &SyntaxError{Offset: t.base + int64(i), Msg: msg}
}

// refill reads more input, keeping data[keep:] (moved to the front). It
// returns by how much the kept bytes moved (subtract it from indices into
// data) and whether any new byte arrived.
func (t *transformer) refill(keep int) (int, bool) {
	if t.eof {
		return 0, false
	}
	n := copy(t.data[:cap(t.data)], t.data[keep:])
	t.base += int64(keep)
	t.pos -= keep
	buf := t.data[:n]
	if n == cap(buf) {
		nb := make([]byte, n, 2*cap(buf)+readWindow)
		copy(nb, buf)
		buf = nb
	}
	got := 0
	for {
		m, err := t.r.Read(buf[n+got : cap(buf)])
		got += m
		if err != nil {
			if !errors.Is(err, io.EOF) {
				t.rerr = err
			}
			t.eof = true
			break
		}
		if m > 0 {
			break
		}
	}
	t.data = buf[:n+got]
	return keep, got > 0
}

// ensure makes data[t.pos:t.pos+n] available if the input has that many
// bytes left, and reports whether it does.
func (t *transformer) ensure(n int) bool {
	for t.pos+n > len(t.data) {
		if _, ok := t.refill(t.pos); !ok {
			return false
		}
	}
	return true
}

// next skips whitespace and returns the next byte without consuming it.
func (t *transformer) next() (byte, bool) {
	for {
		data := t.data
		i := t.pos
		for i < len(data) {
			c := data[i]
			if c > ' ' {
				t.pos = i
				return c, true
			}
			if c == ' ' && i+8 <= len(data) && binary.LittleEndian.Uint64(data[i:]) == 0x2020202020202020 {
				i += 8
				continue
			}
			if c != ' ' && c != '\n' && c != '\t' && c != '\r' {
				t.pos = i
				return c, true
			}
			i++
		}
		t.pos = i
		if _, ok := t.refill(i); !ok {
			return 0, false
		}
	}
}

func (t *transformer) run() error {
	if t.ensure(3) && t.data[t.pos] == 0xEF && t.data[t.pos+1] == 0xBB && t.data[t.pos+2] == 0xBF {
		return t.fail(t.pos, "a byte order mark is not allowed (RFC 8259 section 8.1); save the file as UTF-8 without BOM")
	}
value:
	for {
		c, ok := t.next()
		if !ok {
			return t.fail(t.pos, "unexpected end of input, want a value")
		}
		switch {
		case c == '{' || c == '[':
			if len(t.stack) >= t.maxDepth {
				return t.fail(t.pos, "nesting deeper than %d arrays and objects", t.maxDepth)
			}
			t.pos++
			t.out = append(t.out, c)
			if c == '[' {
				t.stack = append(t.stack, frame{start: len(t.out) - 1})
				if d, ok := t.next(); ok && d == ']' {
					t.pos++
					t.out = append(t.out, ']')
					t.stack = t.stack[:len(t.stack)-1]
					break
				}
				continue value
			}
			t.stack = append(t.stack, frame{start: len(t.out) - 1, memBase: len(t.mems), obj: true})
			t.nobj++
			if d, ok := t.next(); ok && d == '}' {
				t.pos++
				t.out = append(t.out, '}')
				t.stack = t.stack[:len(t.stack)-1]
				t.nobj--
				break
			}
			if err := t.key(); err != nil {
				return err
			}
			continue value
		case c == '"':
			if _, err := t.str(); err != nil {
				return err
			}
		case c == '-' || '0' <= c && c <= '9':
			if err := t.number(); err != nil {
				return err
			}
		case c == 't':
			if err := t.literal("true"); err != nil {
				return err
			}
		case c == 'f':
			if err := t.literal("false"); err != nil {
				return err
			}
		case c == 'n':
			if err := t.literal("null"); err != nil {
				return err
			}
		case c == 'N' || c == 'I':
			return t.fail(t.pos, "NaN and Infinity are not JSON numbers")
		default:
			return t.fail(t.pos, "invalid character %s, want a value", quoteByte(c))
		}
		// After a value: close what ends here, then find the next value.
		for {
			if len(t.stack) == 0 {
				return t.end()
			}
			if t.w != nil && t.nobj == 0 && len(t.out) >= flushSize {
				if err := t.flush(); err != nil {
					return err
				}
			}
			top := &t.stack[len(t.stack)-1]
			c, ok := t.next()
			if top.obj {
				t.mems[len(t.mems)-1].end = len(t.out)
				switch {
				case !ok:
					return t.fail(t.pos, "unexpected end of input in an object, want ',' or '}'")
				case c == ',':
					t.pos++
					t.out = append(t.out, ',')
					if err := t.key(); err != nil {
						return err
					}
					continue value
				case c == '}':
					t.pos++
					if err := t.closeObject(); err != nil {
						return err
					}
				default:
					return t.fail(t.pos, "invalid character %s after an object member, want ',' or '}'", quoteByte(c))
				}
				continue
			}
			switch {
			case !ok:
				return t.fail(t.pos, "unexpected end of input in an array, want ',' or ']'")
			case c == ',':
				t.pos++
				t.out = append(t.out, ',')
				continue value
			case c == ']':
				t.pos++
				t.out = append(t.out, ']')
				t.stack = t.stack[:len(t.stack)-1]
			default:
				return t.fail(t.pos, "invalid character %s after an array element, want ',' or ']'", quoteByte(c))
			}
		}
	}
}

// end checks that nothing but whitespace follows the top-level value.
func (t *transformer) end() error {
	if c, ok := t.next(); ok {
		return t.fail(t.pos, "invalid character %s after the top-level value (trailing data)", quoteByte(c))
	}
	if t.rerr != nil {
		return fmt.Errorf("canonical: read input: %w", t.rerr)
	}
	return nil
}

func (t *transformer) flush() error {
	if t.w == nil || len(t.out) == 0 {
		return nil
	}
	_, err := t.w.Write(t.out)
	t.out = t.out[:0]
	if err != nil {
		return fmt.Errorf("canonical: write output: %w", err)
	}
	return nil
}

// key reads an object member's name and the ':' after it.
func (t *transformer) key() error {
	c, ok := t.next()
	if !ok {
		return t.fail(t.pos, "unexpected end of input in an object, want a member name")
	}
	if c != '"' {
		if c == '}' {
			return t.fail(t.pos, "trailing comma before '}'")
		}
		return t.fail(t.pos, "invalid character %s in an object, want a member name in double quotes", quoteByte(c))
	}
	m := member{start: len(t.out), off: t.base + int64(t.pos)}
	esc, err := t.str()
	if err != nil {
		return err
	}
	m.keyEnd = len(t.out) - 1
	m.esc = esc
	f := &t.stack[len(t.stack)-1]
	if len(t.mems) > f.memBase && !f.unsorted {
		p := &t.mems[len(t.mems)-1]
		switch compareKeys(t.out[p.start+1:p.keyEnd], t.out[m.start+1:m.keyEnd], p.esc || m.esc) {
		case 0:
			return t.duplicate(*p, m)
		case 1:
			f.unsorted = true
		}
	}
	t.mems = append(t.mems, m)
	c, ok = t.next()
	if !ok {
		return t.fail(t.pos, "unexpected end of input after a member name, want ':'")
	}
	if c != ':' {
		return t.fail(t.pos, "invalid character %s after a member name, want ':'", quoteByte(c))
	}
	t.pos++
	t.out = append(t.out, ':')
	return nil
}

func (t *transformer) duplicate(a, b member) error {
	if a.off > b.off {
		a, b = b, a
	}
	name := t.out[b.start : b.keyEnd+1]
	if len(name) > 80 {
		name = append(append([]byte(nil), name[:77]...), "..."...)
	}
	return &SyntaxError{Offset: b.off, Msg: fmt.Sprintf("duplicate object member name %s (first at byte offset %d)", name, a.off)}
}

// closeObject puts the members of the innermost object in order and closes it.
func (t *transformer) closeObject() error {
	f := t.stack[len(t.stack)-1]
	ms := t.mems[f.memBase:]
	if f.unsorted {
		out := t.out
		slices.SortFunc(ms, func(a, b member) int {
			return compareKeys(out[a.start+1:a.keyEnd], out[b.start+1:b.keyEnd], a.esc || b.esc)
		})
		for i := 1; i < len(ms); i++ {
			if compareKeys(out[ms[i-1].start+1:ms[i-1].keyEnd], out[ms[i].start+1:ms[i].keyEnd], ms[i-1].esc || ms[i].esc) == 0 {
				return t.duplicate(ms[i-1], ms[i])
			}
		}
		body := f.start + 1
		if n := len(out) - body; cap(t.scratch) < n {
			t.scratch = make([]byte, 0, 2*n)
		}
		t.scratch = append(t.scratch[:0], out[body:]...)
		out = out[:body]
		for i, m := range ms {
			if i > 0 {
				out = append(out, ',')
			}
			out = append(out, t.scratch[m.start-body:m.end-body]...)
		}
		t.out = out
	}
	t.out = append(t.out, '}')
	t.mems = t.mems[:f.memBase]
	t.stack = t.stack[:len(t.stack)-1]
	t.nobj--
	return nil
}

func (t *transformer) literal(word string) error {
	t.ensure(len(word))
	data := t.data[t.pos:]
	for i := 0; i < len(word); i++ {
		if i >= len(data) {
			return t.fail(t.pos+i, "unexpected end of input in the literal %q", word)
		}
		if data[i] != word[i] {
			return t.fail(t.pos+i, "invalid character %s in the literal %q", quoteByte(data[i]), word)
		}
	}
	t.pos += len(word)
	t.out = append(t.out, word...)
	return nil
}

func quoteByte(c byte) string {
	if c >= 0x20 && c < 0x7f {
		return "'" + string(rune(c)) + "'"
	}
	return fmt.Sprintf("byte 0x%02x", c)
}

// number reads a number and appends its canonical form.
func (t *transformer) number() error {
	for {
		end, isInt, bad, msg, more := scanNumber(t.data, t.pos, t.eof)
		if more {
			if _, ok := t.refill(t.pos); ok {
				continue
			}
			end, isInt, bad, msg, _ = scanNumber(t.data, t.pos, true)
		}
		if msg != "" {
			return t.fail(bad, "%s", msg)
		}
		lit := t.data[t.pos:end]
		neg := lit[0] == '-'
		digits := len(lit)
		if neg {
			digits--
		}
		switch {
		case isInt && digits <= 15:
			if neg && lit[1] == '0' {
				t.out = append(t.out, '0') // -0
			} else {
				t.out = append(t.out, lit...)
			}
		default:
			f, err := strconv.ParseFloat(string(lit), 64)
			if err != nil {
				return t.fail(t.pos, "number %s overflows a double (beyond ±1.7976931348623157e+308)", abbreviate(lit))
			}
			t.out = AppendNumber(t.out, f)
		}
		t.pos = end
		return nil
	}
}

func abbreviate(b []byte) string {
	if len(b) > 40 {
		return string(b[:37]) + "..."
	}
	return string(b)
}

// scanNumber checks the JSON number grammar at data[i:]. It returns the end
// of the number and whether it is an integer, or the offset and text of an
// error, or more=true if the number may continue past the end of data.
func scanNumber(data []byte, i int, eof bool) (end int, isInt bool, bad int, msg string, more bool) {
	isInt = true
	digit := func(j int) bool { return j < len(data) && '0' <= data[j] && data[j] <= '9' }
	atEnd := func(j int) bool { return j >= len(data) }
	if data[i] == '-' {
		i++
	}
	switch {
	case atEnd(i):
		if !eof {
			return 0, false, 0, "", true
		}
		return 0, false, i, "unexpected end of input in a number", false
	case data[i] == '0':
		i++
		if digit(i) {
			return 0, false, i - 1, "a number must not start with a leading zero", false
		}
	case digit(i):
		for i++; digit(i); i++ {
		}
	case data[i] == 'I':
		return 0, false, i - 1, "NaN and Infinity are not JSON numbers", false
	default:
		return 0, false, i, fmt.Sprintf("invalid character %s in a number, want a digit", quoteByte(data[i])), false
	}
	if atEnd(i) && !eof {
		return 0, false, 0, "", true
	}
	if i < len(data) && data[i] == '.' {
		isInt = false
		i++
		if !digit(i) {
			if atEnd(i) {
				if !eof {
					return 0, false, 0, "", true
				}
				return 0, false, i, "unexpected end of input in a number, want a digit after '.'", false
			}
			return 0, false, i, fmt.Sprintf("invalid character %s in a number, want a digit after '.'", quoteByte(data[i])), false
		}
		for i++; digit(i); i++ {
		}
		if atEnd(i) && !eof {
			return 0, false, 0, "", true
		}
	}
	if i < len(data) && (data[i] == 'e' || data[i] == 'E') {
		isInt = false
		i++
		if i < len(data) && (data[i] == '+' || data[i] == '-') {
			i++
		}
		if !digit(i) {
			if atEnd(i) {
				if !eof {
					return 0, false, 0, "", true
				}
				return 0, false, i, "unexpected end of input in a number, want an exponent digit", false
			}
			return 0, false, i, fmt.Sprintf("invalid character %s in a number, want an exponent digit", quoteByte(data[i])), false
		}
		for i++; digit(i); i++ {
		}
		if atEnd(i) && !eof {
			return 0, false, 0, "", true
		}
	}
	return i, isInt, 0, "", false
}
