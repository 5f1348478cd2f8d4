package codegen

import (
	"strings"
	"unicode"

	"github.com/dome-registry/dome/internal/oapicodegen/codegen"
)

// Namer turns names from a spec into identifiers of the target language,
// following a bundle's naming rules and reserved words.
type Namer struct {
	Naming   Naming
	Reserved map[string]bool
}

// NewNamer returns the namer of a bundle.
func NewNamer(spec BundleSpec) Namer {
	n := Namer{Naming: spec.Naming, Reserved: map[string]bool{}}
	for _, w := range spec.ReservedWords {
		n.Reserved[w] = true
	}
	if spec.Engine == "oapi-codegen" {
		n.Naming = Naming{Operation: "go", Type: "go", Parameter: "camel"}
	}
	return n
}

// Operation names an operation function.
func (n Namer) Operation(id string) string { return n.ident(Convert(n.Naming.Operation, id)) }

// Type names a component schema.
func (n Namer) Type(name string) string {
	if n.Naming.Type == "go" {
		return codegen.SchemaNameToTypeName(name)
	}
	return n.ident(Convert(n.Naming.Type, name))
}

// Parameter names a parameter variable.
func (n Namer) Parameter(name string) string { return n.ident(Convert(n.Naming.Parameter, name)) }

// Ident escapes a reserved word by appending "_".
func (n Namer) ident(s string) string {
	if s == "" {
		s = "x"
	}
	if s[0] >= '0' && s[0] <= '9' {
		s = "_" + s
	}
	for n.Reserved[s] {
		s += "_"
	}
	return s
}

// Convert applies a naming style: camel, pascal, snake, screaming_snake,
// or go (oapi-codegen's ToCamelCase). Characters that cannot be part of an
// identifier separate words and are dropped.
func Convert(style, s string) string {
	if style == "go" {
		return codegen.ToCamelCase(s)
	}
	words := splitWords(s)
	var b strings.Builder
	for i, w := range words {
		switch style {
		case "snake", "screaming_snake":
			if i > 0 {
				b.WriteByte('_')
			}
			if style == "snake" {
				b.WriteString(strings.ToLower(w))
			} else {
				b.WriteString(strings.ToUpper(w))
			}
		case "camel":
			if i == 0 {
				b.WriteString(strings.ToLower(w))
			} else {
				b.WriteString(title(w))
			}
		default: // pascal
			b.WriteString(title(w))
		}
	}
	return b.String()
}

func title(w string) string {
	if w == "" {
		return w
	}
	r := []rune(strings.ToLower(w))
	r[0] = unicode.ToUpper(r[0])
	return string(r)
}

// splitWords splits on non-alphanumerics and on lower-to-upper and
// acronym boundaries: "getHTTPStatus_v2" -> get, HTTP, Status, v2.
func splitWords(s string) []string {
	var words []string
	var cur []rune
	rs := []rune(s)
	flush := func() {
		if len(cur) > 0 {
			words = append(words, string(cur))
			cur = nil
		}
	}
	for i, r := range rs {
		if !(r < 128 && (unicode.IsLetter(r) || unicode.IsDigit(r))) {
			flush()
			continue
		}
		if len(cur) > 0 && unicode.IsUpper(r) {
			prev := cur[len(cur)-1]
			nextLower := i+1 < len(rs) && unicode.IsLower(rs[i+1])
			if unicode.IsLower(prev) || unicode.IsDigit(prev) || (unicode.IsUpper(prev) && nextLower) {
				flush()
			}
		}
		cur = append(cur, r)
	}
	flush()
	return words
}
