package schemaval

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/dome-registry/dome/pkg/errkind"
)

// Diagnostic is one problem in an input file, at a line and column, in a
// field written as a path (requires.mcp[0].category). Commands print them
// as "file:line:column: field: problem" with the hint on the next line.
type Diagnostic struct {
	File    string `json:"file"`
	Line    int    `json:"line,omitempty"`
	Column  int    `json:"column,omitempty"`
	Field   string `json:"field,omitempty"`
	Problem string `json:"problem"`
	Hint    string `json:"hint,omitempty"`
}

// Location is "file:line:column" (or less when unknown).
func (d Diagnostic) Location() string {
	switch {
	case d.Line > 0 && d.Column > 0:
		return fmt.Sprintf("%s:%d:%d", d.File, d.Line, d.Column)
	case d.Line > 0:
		return fmt.Sprintf("%s:%d", d.File, d.Line)
	}
	return d.File
}

func (d Diagnostic) String() string {
	s := d.Location() + ": "
	if d.Field != "" {
		s += d.Field + ": "
	}
	return s + d.Problem
}

// InvalidError is an input file with one or more problems; it unwraps to an
// *errkind.InputError, so dome exits 2.
type InvalidError struct {
	File  string
	Diags []Diagnostic
}

func (e *InvalidError) Error() string {
	if len(e.Diags) == 1 {
		return e.Diags[0].String()
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %d problems", e.File, len(e.Diags))
	for _, d := range e.Diags {
		b.WriteString("\n  ")
		b.WriteString(d.String())
		if d.Hint != "" {
			b.WriteString("\n    hint: ")
			b.WriteString(d.Hint)
		}
	}
	return b.String()
}

// Unwrap returns the InputError that carries the exit code and, for a
// single problem, the hint.
func (e *InvalidError) Unwrap() error {
	ie := &errkind.InputError{Source: e.File, Problem: fmt.Sprintf("%d problems", len(e.Diags))}
	if len(e.Diags) == 1 {
		d := e.Diags[0]
		ie.Field, ie.Problem, ie.Hint = d.Field, d.Problem, d.Hint
		if d.Line > 0 {
			ie.Field = strings.TrimPrefix(fmt.Sprintf("%s (line %d)", d.Field, d.Line), " ")
		}
	}
	return ie
}

// Invalid returns an *InvalidError with diags sorted by position, or nil
// when there are none.
func Invalid(file string, diags []Diagnostic) error {
	if len(diags) == 0 {
		return nil
	}
	diags = append([]Diagnostic(nil), diags...) // sort a copy, not the caller's slice
	sort.SliceStable(diags, func(i, j int) bool {
		if diags[i].Line != diags[j].Line {
			return diags[i].Line < diags[j].Line
		}
		return diags[i].Column < diags[j].Column
	})
	return &InvalidError{File: file, Diags: diags}
}

// FieldPath turns JSON pointer tokens into a dotted path with [i] for
// array indexes: ["requires","mcp","0","category"] -> requires.mcp[0].category.
func FieldPath(tokens []string) string {
	var b strings.Builder
	for _, t := range tokens {
		if _, err := strconv.Atoi(t); err == nil {
			b.WriteString("[" + t + "]")
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		if isPlainKey(t) {
			b.WriteString(t)
		} else {
			b.WriteString(strconv.Quote(t))
		}
	}
	return b.String()
}

func isPlainKey(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !(r == '_' || r == '-' || r == '$' || '0' <= r && r <= '9' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z') {
			return false
		}
	}
	return true
}

// SplitPointer splits a JSON pointer into unescaped tokens.
func SplitPointer(p string) []string {
	if p == "" {
		return nil
	}
	parts := strings.Split(strings.TrimPrefix(p, "/"), "/")
	for i, t := range parts {
		parts[i] = strings.ReplaceAll(strings.ReplaceAll(t, "~1", "/"), "~0", "~")
	}
	return parts
}

// KeySuffix marks, in a position map, the position of a member's key rather
// than its value: "unknown field" is reported at the key when it is known.
const KeySuffix = "\x00key"

// Diagnose validates doc (decoded with positions pos) and returns one
// diagnostic per violation, placed at the value (or its nearest ancestor),
// with hint(field, problem) as advice.
func (s *Schema) Diagnose(file string, doc any, pos map[string]Position, hint func(field, problem string) string) []Diagnostic {
	var out []Diagnostic
	for _, v := range s.Violations(doc) {
		p := Locate(pos, v.Pointer())
		if kp, ok := pos[v.Pointer()+KeySuffix]; ok && strings.HasPrefix(v.Message, "unknown field") {
			p = kp
		}
		field := FieldPath(v.Path)
		d := Diagnostic{File: file, Line: p.Line, Column: p.Column, Field: field, Problem: v.Message}
		if hint != nil {
			d.Hint = hint(field, v.Message)
		}
		out = append(out, d)
	}
	return out
}

// SyntaxDiagnostic turns a DecodeLocated error into a diagnostic of file.
func SyntaxDiagnostic(file string, err error, hint string) Diagnostic {
	var se *SyntaxError
	if errors.As(err, &se) {
		return Diagnostic{File: file, Line: se.Line, Column: se.Column, Field: FieldPath(SplitPointer(se.Pointer)), Problem: se.Problem, Hint: hint}
	}
	return Diagnostic{File: file, Problem: err.Error(), Hint: hint}
}
