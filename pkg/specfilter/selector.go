package specfilter

import (
	"errors"
	"fmt"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// SelectorKind is the form of a selector.
type SelectorKind uint8

// The selector forms.
const (
	ByOperationID SelectorKind = iota + 1 // listPets
	ByTag                                 // tag:pets
	ByRoute                               // GET /pets/**, * /v1/charges/{charge}
)

// Selector picks operations. Parse one with ParseSelector.
type Selector struct {
	Raw    string
	Kind   SelectorKind
	Value  string // the operationId or the tag
	Method string // upper case, or "*"
	Glob   string // the path glob as doublestar reads it (template braces escaped)
}

// maxSelectorLen bounds a selector (the profile schema says the same).
const maxSelectorLen = 500

// ParseSelector parses "tag:<name>", "<METHOD|*> <path-glob>" or an
// operationId. In a path glob, a brace group without a comma is an OpenAPI
// path parameter and matches itself literally ("/pets/{petId}"); a group
// with commas is doublestar alternation ("/{pets,users}/**"). "/a/**" also
// matches "/a" itself.
func ParseSelector(s string) (Selector, error) {
	if s == "" {
		return Selector{}, errors.New("empty selector")
	}
	if len(s) > maxSelectorLen {
		return Selector{}, fmt.Errorf("selector longer than %d bytes", maxSelectorLen)
	}
	if s != strings.TrimSpace(s) {
		return Selector{}, fmt.Errorf("selector %q has leading or trailing spaces", s)
	}
	if tag, ok := strings.CutPrefix(s, "tag:"); ok {
		if tag == "" {
			return Selector{}, fmt.Errorf("selector %q names no tag", s)
		}
		return Selector{Raw: s, Kind: ByTag, Value: tag}, nil
	}
	method, glob, ok := strings.Cut(s, " ")
	if !ok {
		for _, r := range s {
			if r < 0x20 || r == 0x7f {
				return Selector{}, fmt.Errorf("selector %q has a control character", s)
			}
		}
		return Selector{Raw: s, Kind: ByOperationID, Value: s}, nil
	}
	m := strings.ToUpper(method)
	if m != "*" && !isMethod(strings.ToLower(m)) {
		return Selector{}, fmt.Errorf("selector %q: %q is not an HTTP method (GET, PUT, POST, DELETE, OPTIONS, HEAD, PATCH, TRACE) or *", s, method)
	}
	if glob == "" || strings.ContainsAny(glob, " \t") {
		return Selector{}, fmt.Errorf("selector %q: want exactly one space, between the method and the path glob", s)
	}
	g, err := templateGlob(glob)
	if err != nil {
		return Selector{}, fmt.Errorf("selector %q: %v", s, err)
	}
	if !doublestar.ValidatePattern(g) {
		return Selector{}, fmt.Errorf("selector %q: %q is not a valid glob", s, glob)
	}
	return Selector{Raw: s, Kind: ByRoute, Method: m, Glob: g}, nil
}

// templateGlob escapes the braces of path parameters ({id}) so that
// doublestar matches them literally, and keeps alternation groups ({a,b}).
func templateGlob(glob string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(glob); i++ {
		c := glob[i]
		switch c {
		case '\\':
			b.WriteByte(c)
			if i+1 < len(glob) {
				i++
				b.WriteByte(glob[i])
			}
		case '{':
			end, comma := matchBrace(glob, i)
			if end < 0 {
				return "", errors.New("unbalanced '{'")
			}
			if comma {
				inner, err := templateGlob(glob[i+1 : end])
				if err != nil {
					return "", err
				}
				b.WriteByte('{')
				b.WriteString(inner)
				b.WriteByte('}')
			} else {
				b.WriteString(`\{`)
				b.WriteString(doublestarEscape(glob[i+1 : end]))
				b.WriteString(`\}`)
			}
			i = end
		case '}':
			return "", errors.New("unbalanced '}'")
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), nil
}

// matchBrace finds the '}' closing the '{' at i and whether the group has a
// comma at its own level.
func matchBrace(s string, i int) (int, bool) {
	depth, comma := 0, false
	for j := i; j < len(s); j++ {
		switch s[j] {
		case '\\':
			j++
		case '{':
			depth++
		case '}':
			depth--
			if depth == 0 {
				return j, comma
			}
		case ',':
			if depth == 1 {
				comma = true
			}
		}
	}
	return -1, false
}

func doublestarEscape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '*', '?', '[', ']', '{', '}', '\\':
			b.WriteByte('\\')
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// opRef is what selectors look at: one operation of the document.
type opRef struct {
	Method string // upper case
	Path   string // path template, or webhook name
	ID     string
	Tags   []string
}

// Match reports whether the selector picks the operation.
func (s Selector) match(o opRef) bool {
	switch s.Kind {
	case ByOperationID:
		return o.ID == s.Value
	case ByTag:
		for _, t := range o.Tags {
			if t == s.Value {
				return true
			}
		}
		return false
	case ByRoute:
		if s.Method != "*" && s.Method != o.Method {
			return false
		}
		ok, err := doublestar.Match(s.Glob, o.Path)
		return err == nil && ok
	}
	return false
}

func (s Selector) String() string { return s.Raw }
