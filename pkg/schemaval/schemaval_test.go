package schemaval_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/dome-registry/dome/pkg/schemaval"
)

const schema = `{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "type": "object", "additionalProperties": false, "required": ["name"],
  "properties": {
    "name": {"type": "string", "minLength": 1},
    "tags": {"type": "array", "items": {"type": "string"}},
    "nested": {"type": "object", "additionalProperties": false, "properties": {"n": {"type": "integer"}}}
  }
}`

func TestValidate(t *testing.T) {
	s, err := schemaval.Compile("test.schema.json", []byte(schema))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		doc, field, problem string
	}{
		{`{"name": "x"}`, "", ""},
		{`{"name": ""}`, "/name", "minLength"},
		{`{}`, "(document root)", "missing property 'name'"},
		{`{"name": "x", "tags": ["a", 1]}`, "/tags/1", "got integer, want string"},
		{`{"name": "x", "nested": {"n": 1, "m": 2}}`, "/nested/m", `unknown field "m"`},
		{`{"name": "x", "name": "y"}`, "/name", `duplicate key "name"`},
		{`{"name": "x", "nested": {"a/b": 1, "a/b": 2}}`, "/nested/a~1b", "duplicate key"},
		{`{"name": "x"} {}`, "", "trailing data"},
		{`{"name": `, "/name", "unexpected end"},
		{`[` + strings.Repeat("[", 2000) + strings.Repeat("]", 2001), "", "nesting deeper than"},
	}
	for _, tt := range tests {
		err := s.Validate("f.json", []byte(tt.doc))
		if tt.problem == "" {
			if err != nil {
				t.Errorf("%s: %v", tt.doc, err)
			}
			continue
		}
		var ie *errkind.InputError
		if err == nil || !errkindAs(err, &ie) {
			t.Errorf("%.40s: got %v, want an input error", tt.doc, err)
			continue
		}
		if ie.Source != "f.json" || ie.Field != tt.field || !strings.Contains(ie.Problem, tt.problem) {
			t.Errorf("%.40s: got source=%q field=%q problem=%q; want field %q, problem containing %q", tt.doc, ie.Source, ie.Field, ie.Problem, tt.field, tt.problem)
		}
	}
}

func errkindAs(err error, target **errkind.InputError) bool {
	ie, ok := err.(*errkind.InputError)
	if ok {
		*target = ie
	}
	return ok
}

// FuzzCheckJSON: CheckJSON never panics, and accepts only what encoding/json
// accepts as one value.
func FuzzCheckJSON(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":1,"a":2}`, `[1,2,{"b":[]}]`, `"x"`, `{"a":`, `[[[[`, `1 2`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		err := schemaval.CheckJSON("f", b)
		if err == nil && !json.Valid(b) {
			t.Fatalf("accepted invalid JSON %q", b)
		}
	})
}

// TestCheckJSON_StrictStrings: what encoding/json would silently replace by
// U+FFFD is refused with its line, so a file means one thing to every parser.
func TestCheckJSON_StrictStrings(t *testing.T) {
	for _, tt := range []struct{ doc, want string }{
		{"{\n\"a\": \"\\ud800\"}", "line 2, column 7: lone surrogate"},
		{"{\"a\": \"\\udc00\\ud800\"}", "lone surrogate"},
		{"{\"a\":\n\"\xff\"}", "line 2, column 2: invalid UTF-8"},
		{"{\"\xc0\xaf\": 1}", "invalid UTF-8"},
		{`{"a": 1e400}`, "overflow"},
	} {
		err := schemaval.CheckJSON("f.json", []byte(tt.doc))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("CheckJSON(%q) = %v, want %q", tt.doc, err, tt.want)
		}
	}
	if err := schemaval.CheckJSON("f.json", []byte(`{"a": "\ud83d\ude00 é"}`)); err != nil {
		t.Errorf("a surrogate pair: %v", err)
	}
}
