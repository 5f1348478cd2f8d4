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

	"github.com/dome-registry/dome/pkg/canonical"
	"github.com/dome-registry/dome/pkg/errkind"
)

// Schema is a compiled JSON Schema.
type Schema struct {
	name string
	root *node
}

// Compile compiles a schema document; name is used in messages.
func Compile(name string, schemaJSON []byte) (*Schema, error) {
	if err := CheckJSON(name, schemaJSON); err != nil {
		return nil, fmt.Errorf("schema %s: %w", name, err)
	}
	doc, err := decode(schemaJSON)
	if err != nil {
		return nil, fmt.Errorf("schema %s: %w", name, err)
	}
	root, err := compileDoc(name, doc, false)
	if err != nil {
		return nil, err
	}
	return &Schema{name: name, root: root}, nil
}

// MustCompile is Compile for schemas embedded in the binary; it panics on an
// invalid schema. It skips CheckJSON's strictness pass (duplicate keys,
// trailing data), a third of a compile on every dome start that reads a
// registry file, and compiles each pattern on its first match:
// TestEmbeddedSchemas runs the full Compile over every schema the packages
// embed.
func MustCompile(name string, schemaJSON []byte) *Schema {
	doc, err := decode(schemaJSON)
	if err != nil {
		panic(fmt.Errorf("schema %s: %w", name, err))
	}
	root, err := compileDoc(name, doc, true)
	if err != nil {
		panic(err)
	}
	return &Schema{name: name, root: root}
}

// Name returns the schema's name.
func (s *Schema) Name() string { return s.name }

// Validate checks data (the bytes of the file named source) against the
// schema. Malformed JSON, duplicate keys and schema violations are
// *errkind.InputError naming source and the JSON pointer of the field.
func (s *Schema) Validate(source string, data []byte) error {
	_, err := s.ValidateDecode(source, data)
	return err
}

// ValidateDecode is Validate that also returns the document it decoded
// (numbers as json.Number), so that the caller need not parse data again.
func (s *Schema) ValidateDecode(source string, data []byte) (any, error) {
	if err := CheckJSON(source, data); err != nil {
		return nil, err
	}
	doc, err := decode(data)
	if err != nil {
		return nil, &errkind.InputError{Source: source, Problem: "not valid JSON: " + err.Error(), Err: err}
	}
	if err := s.ValidateValue(source, doc); err != nil {
		return nil, err
	}
	return doc, nil
}

// ValidateValue checks an already decoded document (numbers as json.Number).
func (s *Schema) ValidateValue(source string, doc any) error {
	v := &validator{}
	v.validate(s.root, doc, nil)
	if len(v.errs) == 0 {
		return nil
	}
	errs := v.errs
	sort.SliceStable(errs, func(i, j int) bool { return pointer(errs[i].loc) < pointer(errs[j].loc) })
	first := errs[0]
	problem := first.msg
	if len(errs) > 1 {
		var more []string
		for _, e := range errs[1:min(len(errs), 4)] {
			more = append(more, pointerOrRoot(e.loc)+": "+e.msg)
		}
		problem += fmt.Sprintf(" (and %d more: %s)", len(errs)-1, strings.Join(more, "; "))
	}
	return &errkind.InputError{
		Source:  source,
		Field:   pointerOrRoot(first.loc),
		Problem: problem,
		Hint:    "fix the field to match the schema " + s.name,
	}
}

func pointer(loc []string) string {
	var b strings.Builder
	for _, t := range loc {
		b.WriteByte('/')
		b.WriteString(strings.ReplaceAll(strings.ReplaceAll(t, "~", "~0"), "/", "~1"))
	}
	return b.String()
}

func pointerOrRoot(loc []string) string {
	if p := pointer(loc); p != "" {
		return p
	}
	return "(document root)"
}

// CheckJSON verifies that data is exactly one JSON value with no duplicate
// object keys; errors name the JSON pointer of the duplicate. It also
// refuses what encoding/json would silently turn into U+FFFD (invalid UTF-8,
// lone UTF-16 surrogates in \u escapes) and everything else RFC 8785's parser
// refuses, naming the line: a file dome reads must mean one thing to every
// parser, and its digest must be computable.
func CheckJSON(source string, data []byte) error {
	// RFC 8785's parser refuses everything the token pass refuses and more
	// (FuzzCanonicalImpliesTokens), at a fraction of its cost; a document it
	// accepts is therefore checked. A refused one gets the token pass first,
	// for the message with a JSON pointer it words.
	_, cerr := canonical.TransformWith(data, canonicalOptions)
	if cerr == nil {
		return nil
	}
	if err := checkTokens(source, data); err != nil {
		return err
	}
	var se *canonical.SyntaxError
	if errors.As(cerr, &se) {
		line, col := canonical.Position(data, se.Offset)
		return &errkind.InputError{Source: source, Field: fmt.Sprintf("line %d, column %d", line, col), Problem: se.Msg, Err: cerr, Hint: "write valid UTF-8 JSON; escape a character above U+FFFF as a surrogate pair (\\ud83d\\ude00)"}
	}
	return &errkind.InputError{Source: source, Problem: cerr.Error(), Err: cerr}
}

// canonicalOptions bound RFC 8785's parser at the token pass's depth: it
// counts open arrays and objects, the token pass the levels of values, so
// that with the same number every value it accepts is at most maxDepth deep.
var canonicalOptions = canonical.Options{MaxDepth: maxDepth}

// checkTokens reads data token by token with encoding/json: one value,
// unique keys, nesting at most maxDepth, no trailing data.
func checkTokens(source string, data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := checkValue(dec, "", 0); err != nil {
		return &errkind.InputError{Source: source, Field: fieldOf(err), Problem: problemOf(err), Hint: "write valid JSON with unique keys"}
	}
	if _, err := dec.Token(); err != io.EOF {
		return &errkind.InputError{Source: source, Problem: fmt.Sprintf("trailing data after the JSON value at byte %d", dec.InputOffset())}
	}
	return nil
}

type locErr struct {
	ptr string
	msg string
}

func (e *locErr) Error() string { return e.ptr + ": " + e.msg }

func fieldOf(err error) string {
	var le *locErr
	if errors.As(err, &le) && le.ptr != "" {
		return le.ptr
	}
	return ""
}

func problemOf(err error) string {
	var le *locErr
	if errors.As(err, &le) {
		return le.msg
	}
	return "not valid JSON: " + err.Error()
}

// maxDepth bounds nesting so that hostile input cannot exhaust the stack.
const maxDepth = 1000

func checkValue(dec *json.Decoder, ptr string, depth int) error {
	if depth > maxDepth {
		return &locErr{"", fmt.Sprintf("nesting deeper than %d levels", maxDepth)}
	}
	tok, err := dec.Token()
	if err != nil {
		if err == io.EOF {
			return &locErr{ptr, "unexpected end of JSON input"}
		}
		return &locErr{ptr, "not valid JSON: " + err.Error()}
	}
	d, ok := tok.(json.Delim)
	if !ok {
		return nil
	}
	switch d {
	case '{':
		seen := map[string]bool{}
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return &locErr{ptr, "not valid JSON: " + err.Error()}
			}
			k, _ := kt.(string)
			child := ptr + "/" + strings.ReplaceAll(strings.ReplaceAll(k, "~", "~0"), "/", "~1")
			if seen[k] {
				return &locErr{child, "duplicate key " + strconv.Quote(k)}
			}
			seen[k] = true
			if err := checkValue(dec, child, depth+1); err != nil {
				return err
			}
		}
	case '[':
		for i := 0; dec.More(); i++ {
			if err := checkValue(dec, ptr+"/"+strconv.Itoa(i), depth+1); err != nil {
				return err
			}
		}
	}
	if _, err := dec.Token(); err != nil { // closing delimiter
		return &locErr{ptr, "not valid JSON: " + err.Error()}
	}
	return nil
}
