package schemaval_test

import (
	"strings"
	"testing"

	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/dome-registry/dome/pkg/schemaval"
)

func TestDiagnose_LinesFieldsAndHints(t *testing.T) {
	s, err := schemaval.Compile("test.schema.json", []byte(schema))
	if err != nil {
		t.Fatal(err)
	}
	data := "{\n  \"tags\": [\"a\",\n    7],\n  \"nested\": {\"m\": 1}\n}"
	doc, pos, err := schemaval.DecodeLocated([]byte(data))
	if err != nil {
		t.Fatal(err)
	}
	diags := s.Diagnose("f.json", doc, pos, func(field, problem string) string { return "fix " + field })
	var got []string
	for _, d := range diags {
		got = append(got, d.String()+" | "+d.Hint)
	}
	want := []string{
		"f.json:1:1: missing property 'name' | fix ",
		`f.json:4:14: nested.m: unknown field "m" | fix nested.m`,
		"f.json:3:5: tags[1]: got integer, want string | fix tags[1]",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	err = schemaval.Invalid("f.json", diags)
	if !errkind.IsInput(err) {
		t.Fatalf("Invalid must be an input error: %T", err)
	}
	if msg := err.Error(); !strings.HasPrefix(msg, "f.json: 3 problems\n  f.json:1:1: missing property 'name'\n    hint: fix \n  f.json:3:5: tags[1]") {
		t.Errorf("message sorted by line:\n%s", msg)
	}
	one := schemaval.Invalid("f.json", diags[2:])
	if one.Error() != "f.json:3:5: tags[1]: got integer, want string" || errkind.HintOf(one) != "fix tags[1]" {
		t.Errorf("one problem: %q, hint %q", one.Error(), errkind.HintOf(one))
	}
	if schemaval.Invalid("f.json", nil) != nil {
		t.Errorf("no diagnostics, no error")
	}
}

func TestFieldPath(t *testing.T) {
	for _, tt := range []struct {
		tokens []string
		want   string
	}{
		{nil, ""},
		{[]string{"requires", "mcp", "0", "category"}, "requires.mcp[0].category"},
		{[]string{"a b", "x.y"}, `"a b"."x.y"`},
		{[]string{"0"}, "[0]"},
	} {
		if got := schemaval.FieldPath(tt.tokens); got != tt.want {
			t.Errorf("FieldPath(%q) = %q, want %q", tt.tokens, got, tt.want)
		}
	}
	if got := schemaval.SplitPointer("/a~1b/c~0d/0"); strings.Join(got, "|") != "a/b|c~d|0" {
		t.Errorf("SplitPointer: %q", got)
	}
}
