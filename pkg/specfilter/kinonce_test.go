package specfilter

import (
	"context"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
)

const kinOnceSpec = `{"openapi":"3.0.3","info":{"title":"t","version":"1"},
"paths":{"/a":{"get":{"operationId":"a",
  "parameters":[{"name":"q","in":"query","schema":{"$ref":"#/components/schemas/%s"}}],
  "responses":{"200":{"description":"ok","content":{
    "application/json":{"schema":{"$ref":"#/components/schemas/%s"}},
    "application/x-ex":{"schema":{"$ref":"#/components/schemas/Name"},"example":%s}}}}}}},
"components":{"schemas":{
  "Name":{"type":"string","maxLength":3},
  "Bad":{"type":"%bad"},
  "Obj":{"type":"object","properties":{"n":{"$ref":"#/components/schemas/Name"}}}}}}`

func kinLoad(t *testing.T, use, example string) *openapi3.T {
	t.Helper()
	bad := "string"
	if use == "Bad" {
		bad = "strin"
	}
	spec := strings.Replace(strings.Replace(kinOnceSpec, "%s", use, 1), "%s", use, 1)
	spec = strings.Replace(strings.Replace(spec, "%s", example, 1), "%bad", bad, 1)
	l := openapi3.NewLoader()
	doc, err := l.LoadFromData([]byte(spec))
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

func TestValidateKin_EachSchemaOnce(t *testing.T) {
	// Valid: no problems, and every use has its schema back afterwards (a
	// generator gets this document).
	doc := kinLoad(t, "Obj", `"abc"`)
	if errs, crash := validateKin(context.Background(), doc); len(errs) > 0 || crash != nil {
		t.Fatalf("valid document: %v %v", errs, crash)
	}
	op := doc.Paths.Value("/a").Get
	if op.Parameters[0].Value.Schema.Value != doc.Components.Schemas["Obj"].Value ||
		op.Responses.Value("200").Value.Content["application/json"].Schema.Value != doc.Components.Schemas["Obj"].Value {
		t.Fatal("a use of a component schema was not restored")
	}
	// An invalid component: reported at the component, once.
	doc = kinLoad(t, "Bad", `"abc"`)
	errs, _ := validateKin(context.Background(), doc)
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "strin") {
		t.Fatalf("errors = %v, want the one at components/schemas/Bad", errs)
	}
	if at, _, _ := locate(errs[0]); strings.Join(at, "/") != "components/schemas/Bad" {
		t.Errorf("reported at %v", at)
	}
	// An example is still checked against the schema it references.
	doc = kinLoad(t, "Obj", `"abcdef"`)
	errs, _ = validateKin(context.Background(), doc)
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "maximum string length") {
		t.Fatalf("errors = %v, want the example's", errs)
	}
}
