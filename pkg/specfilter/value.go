package specfilter

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/dome-registry/dome/pkg/canonical"
)

// Kind is the JSON type of a Value.
type Kind uint8

// The JSON types.
const (
	KindNull Kind = iota
	KindBool
	KindNumber
	KindString
	KindArray
	KindObject
)

func (k Kind) String() string {
	switch k {
	case KindNull:
		return "null"
	case KindBool:
		return "boolean"
	case KindNumber:
		return "number"
	case KindString:
		return "string"
	case KindArray:
		return "array"
	}
	return "object"
}

// Value is a generic JSON tree that keeps every field as written: object
// members stay in document order, numbers keep their literal text. It is what
// dome filters; kin-openapi's typed model is used only to validate.
//
// An array's items are Members too, with empty keys: one slice for both
// kinds keeps a Value at 48 bytes, and a parsed spec is mostly Values (the
// Stripe spec has 97,000 of them).
type Value struct {
	Kind Kind
	Bool bool
	Line int32  // 1-based line in the source file, 0 when unknown
	Text string // a string's value, or a number's JSON literal
	// Members are an object's members in document order (KindObject), or an
	// array's items, whose keys are empty (KindArray).
	Members []Member
}

// Member is one key/value pair of an object.
type Member struct {
	Key   string
	Value *Value
}

// Get returns the member value for key, or nil.
func (v *Value) Get(key string) *Value {
	if v == nil || v.Kind != KindObject {
		return nil
	}
	for i := range v.Members {
		if v.Members[i].Key == key {
			return v.Members[i].Value
		}
	}
	return nil
}

// Str returns the value for key when it is a string.
func (v *Value) Str(key string) (string, bool) {
	m := v.Get(key)
	if m == nil || m.Kind != KindString {
		return "", false
	}
	return m.Text, true
}

// Set replaces the value for key, or appends it; it does nothing to a
// value that is not an object (an array's Members are its items).
func (v *Value) Set(key string, val *Value) {
	if v.Kind != KindObject {
		return
	}
	for i := range v.Members {
		if v.Members[i].Key == key {
			v.Members[i].Value = val
			return
		}
	}
	v.Members = append(v.Members, Member{Key: key, Value: val})
}

// Delete removes key and reports whether it was there (never from an
// array).
func (v *Value) Delete(key string) bool {
	if v.Kind != KindObject {
		return false
	}
	for i := range v.Members {
		if v.Members[i].Key == key {
			v.Members = append(v.Members[:i], v.Members[i+1:]...)
			return true
		}
	}
	return false
}

// IsObject reports whether v is a JSON object.
func (v *Value) IsObject() bool { return v != nil && v.Kind == KindObject }

// newString returns a string value.
func newString(s string) *Value { return &Value{Kind: KindString, Text: s} }

// newObject returns an empty object.
func newObject() *Value { return &Value{Kind: KindObject} }

// Copy returns a deep copy of v.
func (v *Value) Copy() *Value {
	if v == nil {
		return nil
	}
	c := *v
	if v.Members != nil {
		c.Members = make([]Member, len(v.Members))
		for i, m := range v.Members {
			c.Members[i] = Member{Key: m.Key, Value: m.Value.Copy()}
		}
	}
	return &c
}

// AppendJSON appends v as compact JSON (members in document order) to b.
// The result is not canonical: pkg/canonical makes it so.
func (v *Value) AppendJSON(b []byte) []byte {
	switch v.Kind {
	case KindNull:
		return append(b, "null"...)
	case KindBool:
		if v.Bool {
			return append(b, "true"...)
		}
		return append(b, "false"...)
	case KindNumber:
		return append(b, v.Text...)
	case KindString:
		return appendQuoted(b, v.Text)
	case KindArray:
		b = append(b, '[')
		for i, it := range v.Members {
			if i > 0 {
				b = append(b, ',')
			}
			b = it.Value.AppendJSON(b)
		}
		return append(b, ']')
	}
	b = append(b, '{')
	for i, m := range v.Members {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendQuoted(b, m.Key)
		b = append(b, ':')
		b = m.Value.AppendJSON(b)
	}
	return append(b, '}')
}

const hexDigits = "0123456789abcdef"

// appendQuoted appends s as a JSON string. Invalid UTF-8 becomes U+FFFD
// (the loaders never produce it).
func appendQuoted(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
			i++
			continue
		}
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 {
				b = append(b, s[start:i]...)
				b = append(b, "\ufffd"...)
				i++
				start = i
				continue
			}
			i += size
			continue
		}
		b = append(b, s[start:i]...)
		switch c {
		case '"', '\\':
			b = append(b, '\\', c)
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		default:
			b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		}
		i++
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// Pointer is a JSON pointer (RFC 6901) kept as its unescaped tokens.
type Pointer []string

// String renders the pointer ("" for the whole document).
func (p Pointer) String() string {
	var b strings.Builder
	for _, t := range p {
		b.WriteByte('/')
		b.WriteString(escapeToken(t))
	}
	return b.String()
}

// Child returns a new pointer with tok appended (p is not modified).
func (p Pointer) Child(tok ...string) Pointer {
	c := make(Pointer, len(p), len(p)+len(tok))
	copy(c, p)
	return append(c, tok...)
}

func escapeToken(t string) string {
	if !strings.ContainsAny(t, "~/") {
		return t
	}
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(t)
}

// ParsePointer parses a JSON pointer ("" or "/a/b~1c").
func ParsePointer(s string) (Pointer, bool) {
	if s == "" {
		return Pointer{}, true
	}
	if s[0] != '/' {
		return nil, false
	}
	parts := strings.Split(s[1:], "/")
	for i, t := range parts {
		if strings.Contains(t, "~") {
			for j := 0; j < len(t); j++ {
				if t[j] == '~' && (j+1 >= len(t) || (t[j+1] != '0' && t[j+1] != '1')) {
					return nil, false
				}
			}
			parts[i] = strings.NewReplacer("~1", "/", "~0", "~").Replace(t)
		}
	}
	return Pointer(parts), true
}

// Resolve follows the pointer from v; it returns nil when a token is missing.
func (v *Value) Resolve(p Pointer) *Value {
	cur := v
	for _, t := range p {
		switch {
		case cur == nil:
			return nil
		case cur.Kind == KindObject:
			cur = cur.Get(t)
		case cur.Kind == KindArray:
			i, err := strconv.Atoi(t)
			if err != nil || i < 0 || i >= len(cur.Members) || (len(t) > 1 && t[0] == '0') {
				return nil
			}
			cur = cur.Members[i].Value
		default:
			return nil
		}
	}
	return cur
}

// AppendCanonical appends v's RFC 8785 canonical form to b: the bytes
// canonical.Transform(v.AppendJSON(nil)) gives, written from the tree
// without the JSON text in between (which, on a filtered spec, costs its own
// size in memory and a second parse).
func (v *Value) AppendCanonical(b []byte) ([]byte, error) {
	switch v.Kind {
	case KindNull:
		return append(b, "null"...), nil
	case KindBool:
		if v.Bool {
			return append(b, "true"...), nil
		}
		return append(b, "false"...), nil
	case KindNumber:
		out, err := canonical.AppendNumberLiteral(b, v.Text)
		if err != nil {
			return b, fmt.Errorf("number %q: %w", v.Text, err)
		}
		return out, nil
	case KindString:
		return canonical.AppendString(b, v.Text), nil
	case KindArray:
		b = append(b, '[')
		for i, it := range v.Members {
			if i > 0 {
				b = append(b, ',')
			}
			var err error
			if b, err = it.Value.AppendCanonical(b); err != nil {
				return b, err
			}
		}
		return append(b, ']'), nil
	}
	return appendCanonicalObject(b, v.Members, func(b []byte, m Member) ([]byte, error) {
		return m.Value.AppendCanonical(b)
	})
}

// appendCanonicalObject writes an object of members ms in RFC 8785 key
// order (sorting a copy when they are not in it), each value by value; a
// duplicate key is an error.
func appendCanonicalObject(b []byte, ms []Member, value func([]byte, Member) ([]byte, error)) ([]byte, error) {
	sorted := true
	for i := 1; i < len(ms) && sorted; i++ {
		sorted = canonical.CompareKeys(ms[i-1].Key, ms[i].Key) < 0
	}
	if !sorted {
		ms = slices.Clone(ms)
		slices.SortFunc(ms, func(x, y Member) int { return canonical.CompareKeys(x.Key, y.Key) })
		for i := 1; i < len(ms); i++ {
			if ms[i-1].Key == ms[i].Key {
				return b, fmt.Errorf("duplicate key %q", ms[i].Key)
			}
		}
	}
	b = append(b, '{')
	for i, m := range ms {
		if i > 0 {
			b = append(b, ',')
		}
		b = canonical.AppendString(b, m.Key)
		b = append(b, ':')
		var err error
		if b, err = value(b, m); err != nil {
			return b, err
		}
	}
	return append(b, '}'), nil
}
