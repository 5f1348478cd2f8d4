package specfilter

import (
	"os"
	"path/filepath"
	"testing"
)

func TestAppendLeanCanonical(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{
			"descriptions of specification objects shortened, keys sorted",
			`{"paths":{"/a":{"get":{"description":"long words","responses":{"200":{"description":"ok"}}}}},"info":{"title":"t","description":"about"},"openapi":"3.0.3"}`,
			`{"info":{"description":"d","title":"t"},"openapi":"3.0.3","paths":{"/a":{"get":{"description":"d","responses":{"200":{"description":"d"}}}}}}`,
		},
		{
			"an empty description stays empty",
			`{"openapi":"3.0.3","paths":{"/a":{"get":{"responses":{"200":{"description":""}}}}}}`,
			`{"openapi":"3.0.3","paths":{"/a":{"get":{"responses":{"200":{"description":""}}}}}}`,
		},
		{
			"a property named description is a schema; its description is shortened",
			`{"openapi":"3.0.3","paths":{},"components":{"schemas":{"S":{"properties":{"description":{"type":"string","description":"the text"}},"description":"an S"}}}}`,
			`{"components":{"schemas":{"S":{"description":"d","properties":{"description":{"description":"d","type":"string"}}}}},"openapi":"3.0.3","paths":{}}`,
		},
		{
			"examples, defaults, enums and extensions are data",
			`{"openapi":"3.0.3","paths":{},"components":{"schemas":{"S":{"example":{"description":"kept"},"default":{"description":"kept"},"enum":[{"description":"kept"}],"x-doc":{"description":"kept"}}}}}`,
			`{"components":{"schemas":{"S":{"default":{"description":"kept"},"enum":[{"description":"kept"}],"example":{"description":"kept"},"x-doc":{"description":"kept"}}}},"openapi":"3.0.3","paths":{}}`,
		},
		{
			"a description that is not a string is left for the load to refuse",
			`{"openapi":"3.0.3","paths":{},"info":{"description":5}}`,
			`{"info":{"description":5},"openapi":"3.0.3","paths":{}}`,
		},
		{
			"security requirements name schemes",
			`{"openapi":"3.0.3","paths":{},"security":[{"description":[]}]}`,
			`{"openapi":"3.0.3","paths":{},"security":[{"description":[]}]}`,
		},
		{
			"named examples and media types are maps of entries",
			`{"openapi":"3.0.3","paths":{},"components":{"examples":{"description":{"description":"an example","value":{"description":"kept"}}}}}`,
			`{"components":{"examples":{"description":{"description":"d","value":{"description":"kept"}}}},"openapi":"3.0.3","paths":{}}`,
		},
		{
			"numbers and strings in canonical form",
			`{"openapi":"3.0.3","info":{"version":"\u00e9","x-n":1.0E2},"paths":{}}`,
			`{"info":{"version":"é","x-n":100},"openapi":"3.0.3","paths":{}}`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc, err := LoadBytes("spec.json", []byte(tc.in), LoadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			got, err := doc.Root.appendLeanCanonical(nil, kDocument)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}

// leanVerdictCases are documents whose verdict could hang on a
// description: each must get the same verdict from its lean bytes.
var leanVerdictCases = []string{
	invalidSpec,
	// A response needs a description: absent, empty, and not a string.
	"openapi: 3.0.3\ninfo: {title: t, version: '1'}\npaths:\n  /a: {get: {responses: {'200': {content: {}}}}}\n",
	"openapi: 3.0.3\ninfo: {title: t, version: '1'}\npaths:\n  /a: {get: {responses: {'200': {description: ''}}}}\n",
	"openapi: 3.0.3\ninfo: {title: t, version: '1'}\npaths:\n  /a: {get: {responses: {'200': {description: [long]}}}}\n",
	// An example whose member named description breaks its schema.
	`{"openapi":"3.0.3","info":{"title":"t","version":"1"},"paths":{"/a":{"get":{"responses":{"200":{"description":"ok","content":{"application/json":{"schema":{"type":"object","properties":{"description":{"type":"string","maxLength":3}}},"example":{"description":"too long"}}}}}}}}}`,
	// A required property named description that an example lacks.
	`{"openapi":"3.0.3","info":{"title":"t","version":"1"},"paths":{"/a":{"get":{"responses":{"200":{"description":"ok","content":{"application/json":{"schema":{"type":"object","required":["description"],"properties":{"description":{"type":"string","description":"the text"}}},"example":{"other":1}}}}}}}}}`,
	// A default that must match its schema.
	"openapi: 3.0.3\ninfo: {title: t, version: '1'}\ncomponents:\n  schemas:\n    S: {type: string, description: words, maxLength: 2, default: {description: x}}\npaths: {}\n",
	// A description where the object has none (discriminator).
	"openapi: 3.0.3\ninfo: {title: t, version: '1'}\ncomponents:\n  schemas:\n    S: {oneOf: [{$ref: '#/components/schemas/A'}], discriminator: {propertyName: k, description: what}}\n    A: {type: object, properties: {k: {type: string}}}\npaths: {}\n",
}

func TestLeanValidation_SameVerdict(t *testing.T) {
	docs := map[string]*Document{"testdata/shop": loadShop(t)}
	add := func(name string, data []byte) {
		doc, err := LoadBytes("spec.yaml", data, LoadOptions{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		docs[name] = doc
	}
	for i, s := range leanVerdictCases {
		add("case "+itoa(i), []byte(s))
	}
	golden, _ := filepath.Glob("testdata/golden/*.openapi.json")
	for _, p := range append(golden, "testdata/github/api.github.com.cut.json") {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		add(p, b)
	}
	valid := 0
	for name, doc := range docs {
		full, err := doc.Root.AppendCanonical(nil)
		if err != nil {
			t.Fatal(err)
		}
		lean, err := doc.Root.appendLeanCanonical(nil, kDocument)
		if err != nil {
			t.Fatal(err)
		}
		fdoc, _, _, _ := kinCheck(full)
		ldoc, _, _, _ := kinCheck(lean)
		if (fdoc == nil) != (ldoc == nil) {
			t.Errorf("%s: valid %v as it is, %v lean", name, fdoc != nil, ldoc != nil)
		}
		if fdoc != nil {
			valid++
		}
	}
	if valid < 3 || valid == len(docs) {
		t.Errorf("%d of %d documents valid: the corpus must hold both", valid, len(docs))
	}
}

func TestDeferredValidation_KeepsNoLoadedDocument(t *testing.T) {
	doc := loadShop(t)
	res, err := Apply(doc, profile(t, ""), Options{DeferValidation: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := res.Validate(func() (*Document, error) { t.Fatal("reloaded a valid spec"); return nil, nil }); err != nil {
		t.Fatal(err)
	}
	if res.TakeLoaded() != nil {
		t.Error("deferred validation read the lean bytes: it must not hand them to a generator")
	}
}

// FuzzLeanVerdict checks that shortening descriptions never changes
// kin-openapi's verdict.
func FuzzLeanVerdict(f *testing.F) {
	for _, s := range leanVerdictCases {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		doc, err := LoadBytes("spec.yaml", data, LoadOptions{Limits: Limits{MaxDepth: 64, MaxAliasNodes: 10000}})
		if err != nil {
			return
		}
		full, err := doc.Root.AppendCanonical(nil)
		if err != nil {
			return
		}
		lean, err := doc.Root.appendLeanCanonical(nil, kDocument)
		if err != nil {
			t.Fatalf("lean fails where canonical does not: %v", err)
		}
		fdoc, _, _, fcrash := kinCheck(full)
		ldoc, _, _, lcrash := kinCheck(lean)
		if (fdoc == nil) != (ldoc == nil) && fcrash == nil && lcrash == nil {
			t.Fatalf("valid %v as it is, %v lean\n%s", fdoc != nil, ldoc != nil, lean)
		}
	})
}
