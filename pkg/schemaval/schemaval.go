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

	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// Schema is a compiled JSON Schema.
type Schema struct {
	name   string
	schema *jsonschema.Schema
}

// Compile compiles a schema document; name is used in messages and as its URL.
func Compile(name string, schemaJSON []byte) (*Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schemaJSON))
	if err != nil {
		return nil, fmt.Errorf("schema %s: %w", name, err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	url := "dome:///" + name
	if err := c.AddResource(url, doc); err != nil {
		return nil, fmt.Errorf("schema %s: %w", name, err)
	}
	s, err := c.Compile(url)
	if err != nil {
		return nil, fmt.Errorf("schema %s: %w", name, err)
	}
	return &Schema{name: name, schema: s}, nil
}

// MustCompile is Compile for schemas embedded in the binary, which tests
// keep valid; it panics on an invalid schema.
func MustCompile(name string, schemaJSON []byte) *Schema {
	s, err := Compile(name, schemaJSON)
	if err != nil {
		panic(err)
	}
	return s
}

// Name returns the schema's name.
func (s *Schema) Name() string { return s.name }

// Validate checks data (the bytes of the file named source) against the
// schema. Malformed JSON, duplicate keys and schema violations are
// *errkind.InputError naming source and the JSON pointer of the field.
func (s *Schema) Validate(source string, data []byte) error {
	if err := CheckJSON(source, data); err != nil {
		return err
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return &errkind.InputError{Source: source, Problem: "not valid JSON: " + err.Error(), Err: err}
	}
	if err := s.schema.Validate(doc); err != nil {
		var ve *jsonschema.ValidationError
		if errors.As(err, &ve) {
			return describe(source, s.name, ve)
		}
		return &errkind.InputError{Source: source, Problem: err.Error(), Err: err}
	}
	return nil
}

var printer = message.NewPrinter(language.English)

// describe reports the most specific violations, in document order.
func describe(source, schemaName string, ve *jsonschema.ValidationError) error {
	var leaves []*jsonschema.ValidationError
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			leaves = append(leaves, e)
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	sort.SliceStable(leaves, func(i, j int) bool {
		return pointer(leaves[i].InstanceLocation) < pointer(leaves[j].InstanceLocation)
	})
	first := leaves[0]
	problem := first.ErrorKind.LocalizedString(printer)
	field := pointerOrRoot(first.InstanceLocation)
	// Point at the unknown field itself rather than at its parent object.
	if ap, ok := first.ErrorKind.(*kind.AdditionalProperties); ok && len(ap.Properties) > 0 {
		field = pointer(append(append([]string{}, first.InstanceLocation...), ap.Properties[0]))
		problem = "unknown field " + strconv.Quote(ap.Properties[0])
		if len(ap.Properties) > 1 {
			problem = "unknown fields " + strings.Join(quoteAll(ap.Properties), ", ")
		}
	}
	if len(leaves) > 1 {
		var more []string
		for _, l := range leaves[1:min(len(leaves), 4)] {
			more = append(more, fmt.Sprintf("%s: %s", pointerOrRoot(l.InstanceLocation), l.ErrorKind.LocalizedString(printer)))
		}
		problem += fmt.Sprintf(" (and %d more: %s)", len(leaves)-1, strings.Join(more, "; "))
	}
	return &errkind.InputError{
		Source:  source,
		Field:   field,
		Problem: problem,
		Hint:    "fix the field to match the schema " + schemaName,
		Err:     ve,
	}
}

func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = strconv.Quote(s)
	}
	return out
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
// object keys; errors name the JSON pointer of the duplicate.
func CheckJSON(source string, data []byte) error {
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
