package schemaval_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/dome-registry/dome/pkg/schemaval"
)

func TestDecodeLocated_Positions(t *testing.T) {
	doc := "{\n  \"a\": 1,\n  \"b\": [true,\n    {\"c\": \"é\", \"d\": null}],\n  \"e/f\": {}\n}\n"
	v, pos, err := schemaval.DecodeLocated([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]schemaval.Position{
		"":       {1, 1},
		"/a":     {2, 8},
		"/b":     {3, 8},
		"/b/0":   {3, 9},
		"/b/1":   {4, 5},
		"/b/1/c": {4, 11},
		"/b/1/d": {4, 21},
		"/e~1f":  {5, 10},
	}
	values := map[string]schemaval.Position{}
	for k, p := range pos {
		if !strings.HasSuffix(k, schemaval.KeySuffix) {
			values[k] = p
		}
	}
	if pos["/b/1/d"+schemaval.KeySuffix] != (schemaval.Position{Line: 4, Column: 16}) {
		t.Errorf("key position of /b/1/d: %v", pos["/b/1/d"+schemaval.KeySuffix])
	}
	if !reflect.DeepEqual(values, want) {
		t.Errorf("positions:\n got %v\nwant %v", pos, want)
	}
	m := v.(map[string]any)
	if m["a"] != json.Number("1") {
		t.Errorf("numbers must decode as json.Number, got %T", m["a"])
	}
	if got := schemaval.Locate(pos, "/b/1/missing/deeper"); got != (schemaval.Position{Line: 4, Column: 5}) {
		t.Errorf("Locate falls back to the nearest ancestor: got %v", got)
	}
}

func TestDecodeLocated_Errors(t *testing.T) {
	tests := []struct {
		doc     string
		line    int
		problem string
	}{
		{"{\n \"a\": 1,\n \"a\": 2}", 3, `duplicate key "a" (first at line 2)`},
		{"{\n \"a\": 1,\n}", 3, "not valid JSON"},
		{"{\"a\": 1}\n{}", 2, "trailing data"},
		{"{\"a\": [1,\n", 2, "unexpected end of JSON input"},
		{"\xef\xbb\xbf{}", 1, "byte order mark"},
		{strings.Repeat("[", 1002) + strings.Repeat("]", 1002), 1, "nesting deeper than 1000"},
		{"", 1, "unexpected end"},
	}
	for _, tt := range tests {
		_, _, err := schemaval.DecodeLocated([]byte(tt.doc))
		var se *schemaval.SyntaxError
		if !errors.As(err, &se) {
			t.Errorf("%q: got %v, want a *SyntaxError", tt.doc, err)
			continue
		}
		if se.Line != tt.line || !strings.Contains(se.Problem, tt.problem) {
			t.Errorf("%q: got line %d %q, want line %d and %q", tt.doc, se.Line, se.Problem, tt.line, tt.problem)
		}
	}
}

func TestViolations_All(t *testing.T) {
	s, err := schemaval.Compile("test.schema.json", []byte(schema))
	if err != nil {
		t.Fatal(err)
	}
	doc, _, err := schemaval.DecodeLocated([]byte(`{"tags": [1, "x", 2], "nested": {"m": 1}}`))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, v := range s.Violations(doc) {
		got = append(got, v.Pointer()+": "+v.Message)
	}
	want := []string{
		": missing property 'name'",
		`/nested/m: unknown field "m"`,
		"/tags/0: got integer, want string",
		"/tags/2: got integer, want string",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %q\nwant %q", got, want)
	}
}

func FuzzDecodeLocated(f *testing.F) {
	f.Add([]byte(`{"a": [1, {"b": null}], "c": "d"}`))
	f.Add([]byte("{\"a\":1,\"a\":2}"))
	f.Add([]byte("[1,\n2,"))
	f.Fuzz(func(t *testing.T, data []byte) {
		v, pos, err := schemaval.DecodeLocated(data)
		if err != nil {
			var se *schemaval.SyntaxError
			if !errors.As(err, &se) || se.Line < 1 || se.Column < 1 {
				t.Fatalf("error without a position: %v", err)
			}
			return
		}
		if _, ok := pos[""]; !ok {
			t.Fatalf("no position for the root")
		}
		// Whatever DecodeLocated accepts, encoding/json accepts too.
		var w any
		if err := json.Unmarshal(data, &w); err != nil {
			t.Fatalf("accepted %q that encoding/json refuses: %v", data, err)
		}
		_ = v
	})
}
