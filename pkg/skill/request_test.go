package skill

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/dome-registry/dome/pkg/schemaval"
	"github.com/dome-registry/dome/pkg/specfilter"
)

func TestRequestSchema(t *testing.T) {
	spec := `openapi: 3.1.0
info: {title: t, version: 1.0.0}
paths:
  /read_file:
    post:
      operationId: read_file
      requestBody:
        content:
          application/json:
            schema: {$ref: '#/components/schemas/ReadFileRequest'}
      responses: {'200': {description: ok}}
  /nothing:
    post:
      operationId: nothing
      responses: {'200': {description: ok}}
components:
  schemas:
    RepoPath: {type: string, minLength: 1, example: README.md, x-note: hi}
    ReadFileRequest:
      type: object
      additionalProperties: false
      required: [path]
      properties:
        path: {$ref: '#/components/schemas/RepoPath'}
        example: {type: boolean}
        max_bytes: {type: integer, minimum: 1, maximum: 10, default: 5}
`
	v, err := specfilter.ParseYAML([]byte(spec), specfilter.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	doc := &specfilter.Document{Root: v}
	b, err := RequestSchema(doc, "read_file")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "x-note") || strings.Contains(string(b), `"example":"README.md"`) || !strings.Contains(string(b), `"example":{"type":"boolean"}`) {
		t.Fatalf("%s", b)
	}
	s, err := schemaval.Compile("read_file", b)
	if err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	for in, ok := range map[string]bool{`{"path":"a"}`: true, `{"path":""}`: false, `{}`: false, `{"path":"a","max_bytes":11}`: false, `{"path":"a","example":true}`: true, `{"path":"a","x":1}`: false} {
		if err := s.Validate("in", []byte(in)); (err == nil) != ok {
			t.Errorf("%s: %v", in, err)
		}
	}
	b, err = RequestSchema(doc, "nothing")
	if err != nil {
		t.Fatal(err)
	}
	s = schemaval.MustCompile("nothing", b)
	if s.Validate("in", []byte(`{}`)) != nil || s.Validate("in", []byte(`{"a":1}`)) == nil {
		t.Fatalf("%s", b)
	}
	if _, err := RequestSchema(doc, "missing"); err == nil {
		t.Fatal("an unknown operation")
	}
	var x map[string]any
	json.Unmarshal(b, &x)
}
