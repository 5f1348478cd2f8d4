package specfilter

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/dome-registry/dome/pkg/errkind"
)

// loadGitHub loads the cut of GitHub's OpenAPI description in
// testdata/github (see its README): OpenAPI 3.0 with webhooks under the
// top-level x-webhooks and $refs inside example values.
func loadGitHub(t *testing.T) *Document {
	t.Helper()
	fr, err := OpenDir("testdata/github")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fr.Close() })
	doc, err := Load(fr, "api.github.com.cut.json", LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

// dangling lists the $refs of a JSON document, wherever they sit, that
// are not internal pointers resolving in it: an independent check of the
// output (encoding/json, not dome's Value).
func dangling(t *testing.T, doc []byte) (all int, bad []string) {
	t.Helper()
	var root any
	if err := json.Unmarshal(doc, &root); err != nil {
		t.Fatal(err)
	}
	resolve := func(ref string) bool {
		frag, ok := strings.CutPrefix(ref, "#")
		if !ok {
			return false
		}
		cur := root
		if frag == "" {
			return true
		}
		for _, tok := range strings.Split(frag, "/")[1:] {
			tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
			m, ok := cur.(map[string]any)
			if !ok {
				return false
			}
			if cur, ok = m[tok]; !ok {
				return false
			}
		}
		return true
	}
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			if ref, ok := x["$ref"].(string); ok {
				all++
				if !resolve(ref) {
					bad = append(bad, ref)
				}
			}
			for _, c := range x {
				walk(c)
			}
		case []any:
			for _, c := range x {
				walk(c)
			}
		}
	}
	walk(root)
	return all, bad
}

func TestApply_GitHubNoDanglingRefs(t *testing.T) {
	doc := loadGitHub(t)
	for _, tt := range []struct {
		name, profile string
		hooks         []string // x-webhooks kept
		comps         []string // components that must be kept
		ext           bool     // x-webhooks present
	}{
		{"issues only: the unselected webhooks go", `,"allow":{"operations":["issues/get"]}`, nil, []string{"examples/issue-with-pinned-comment", "schemas/issue"}, false},
		{"one webhook selected", `,"allow":{"operations":["meta/get"]},"webhooks":{"operations":["POST ping"]}`, []string{"ping"}, []string{"schemas/webhook-ping"}, true},
		{"every webhook", `,"webhooks":{"operations":["* *"]}`, []string{"ping", "star-created"}, []string{"schemas/webhook-star-created", "examples/ping"}, true},
		{"x-webhooks stripped", `,"webhooks":{"operations":["* *"]},"strip_extensions":["x-webhooks"]`, nil, []string{"schemas/issue"}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			res, err := Apply(doc, profile(t, tt.profile), Options{NoValidate: true})
			if err != nil {
				t.Fatal(err)
			}
			n, bad := dangling(t, res.JSON)
			if len(bad) > 0 || n == 0 {
				t.Fatalf("%d refs, dangling: %v", n, bad)
			}
			out := decode(t, res.JSON)
			hooks, ok := out["x-webhooks"].(map[string]any)
			if ok != tt.ext || !slices.Equal(keys(hooks), tt.hooks) {
				t.Errorf("x-webhooks = %v, want %v", keys(hooks), tt.hooks)
			}
			names := componentNames(out)
			for _, c := range tt.comps {
				if !slices.Contains(names, c) {
					t.Errorf("component %s dropped; kept %v", c, names)
				}
			}
			if !tt.ext && slices.ContainsFunc(names, func(s string) bool { return strings.Contains(s, "webhook") }) {
				t.Errorf("webhook components kept without their webhooks: %v", names)
			}
		})
	}
}

func TestApply_TopLevelExtensions(t *testing.T) {
	doc, err := LoadBytes("x.yaml", []byte(`openapi: 3.0.3
info: {title: t, version: "1"}
x-tagGroups: [{name: g, tags: [a]}]
x-ev: {$ref: '#/components/schemas/Ev'}
x-logo: {url: 'https://example.com/l.png'}
paths:
  /a:
    get:
      operationId: a
      responses: {"200": {description: ok}}
components:
  schemas:
    Ev: {type: string}
    Unused: {type: integer}
`), LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		profile string
		top     []string
		comps   []string
	}{
		{``, []string{"x-ev", "x-logo", "x-tagGroups"}, []string{"schemas/Ev"}},
		{`,"top_level_extensions":"keep"`, []string{"x-ev", "x-logo", "x-tagGroups"}, []string{"schemas/Ev"}},
		{`,"top_level_extensions":"drop"`, nil, nil},
		{`,"top_level_extensions":["x-logo","x-tagGroups"]`, []string{"x-logo", "x-tagGroups"}, nil},
		{`,"top_level_extensions":["x-ev"],"strip_extensions":["x-ev"]`, nil, nil},
	} {
		res, err := Apply(doc, profile(t, tt.profile), Options{})
		if err != nil {
			t.Fatalf("%s: %v", tt.profile, err)
		}
		out := decode(t, res.JSON)
		var top []string
		for _, k := range keys(out) {
			if strings.HasPrefix(k, "x-") {
				top = append(top, k)
			}
		}
		if !slices.Equal(top, tt.top) || !slices.Equal(componentNames(out), tt.comps) {
			t.Errorf("%s: extensions %v components %v, want %v %v", tt.profile, top, componentNames(out), tt.top, tt.comps)
		}
		if _, bad := dangling(t, res.JSON); len(bad) > 0 {
			t.Errorf("%s: dangling %v", tt.profile, bad)
		}
	}
	// A name the spec does not have is a warning, not a silent no-op.
	res, err := Apply(doc, profile(t, `,"top_level_extensions":["x-tagGroup"]`), Options{})
	if err != nil || !slices.ContainsFunc(res.Explain.Warnings, func(w string) bool { return strings.Contains(w, "x-tagGroup, which") }) {
		t.Errorf("want a warning naming x-tagGroup: %v %v", err, res.Explain.Warnings)
	}
	// The profile schema refuses anything else.
	for _, bad := range []string{`"all"`, `["logo"]`, `3`} {
		if _, err := ParseProfile("p.profile.json", []byte(`{"schema_version":"dome.profile/v1","id":"p","top_level_extensions":`+bad+`}`)); err == nil {
			t.Errorf("top_level_extensions %s accepted", bad)
		}
	}
}

// TestApply_RefsOutsideTheGrammar: a $ref in an extension, an example value
// or a components extension is followed (its target kept) or, when it is
// not internal, refused with its place: it never survives unchecked.
func TestApply_RefsOutsideTheGrammar(t *testing.T) {
	spec := func(ext string) *Document {
		doc, err := LoadBytes("x.yaml", []byte(`openapi: 3.0.3
info: {title: t, version: "1"}
paths:
  /a:
    get:
      operationId: a
      x-ev: `+ext+`
      responses:
        "200":
          description: ok
          content:
            application/json:
              schema: {type: object}
              examples:
                one: {value: {$ref: '#/components/examples/E'}}
components:
  x-shared: {$ref: '#/components/schemas/Shared'}
  examples:
    E: {value: {a: 1}}
  schemas:
    Ev: {type: string}
    Shared: {type: string}
    Unused: {type: integer}
`), LoadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return doc
	}
	res, err := Apply(spec(`{$ref: '#/components/schemas/Ev'}`), profile(t, ``), Options{NoValidate: true})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := componentNames(decode(t, res.JSON)), []string{"examples/E", "schemas/Ev", "schemas/Shared", "x-shared/$ref"}; !slices.Equal(got, want) {
		t.Errorf("components %v, want %v", got, want)
	}
	for _, ext := range []string{`{$ref: 'http://example.com/ev.json'}`, `[{nested: {$ref: 'other.yaml#/Ev'}}]`, `{$ref: '#/paths/~1gone'}`} {
		_, err := Apply(spec(ext), profile(t, ``), Options{NoValidate: true})
		var ie *errkind.InputError
		if err == nil || !errorsAs(err, &ie) || !strings.Contains(ie.Field, "/paths/~1a/get/x-ev") {
			t.Errorf("x-ev: %s: got %v, want an input error at /paths/~1a/get/x-ev", ext, err)
		}
	}
	// Stripping the extension is the way out.
	if _, err := Apply(spec(`{$ref: 'http://example.com/ev.json'}`), profile(t, `,"strip_extensions":["x-ev"]`), Options{NoValidate: true}); err != nil {
		t.Errorf("with strip_extensions: %v", err)
	}
}

// TestDanglingRef: the always-on self-check finds a dangling or external
// $ref wherever it sits, and passes a closed document.
func TestDanglingRef(t *testing.T) {
	for _, tt := range []struct{ doc, ref, at string }{
		{`{"components":{"schemas":{"A":{"type":"string"}}},"x":{"$ref":"#/components/schemas/A"}}`, "", ""},
		{`{"components":{"schemas":{"A":{"type":"string"}}},"x":[{"y":{"$ref":"#/components/schemas/B"}}]}`, "#/components/schemas/B", "/x/0/y/$ref"},
		{`{"x-ev":{"$ref":"http://example.com/a.json"}}`, "http://example.com/a.json", "/x-ev/$ref"},
		{`{"paths":{},"e":{"value":{"$ref":"#/paths/~1gone"}}}`, "#/paths/~1gone", "/e/value/$ref"},
	} {
		v, err := ParseJSON([]byte(tt.doc), Limits{})
		if err != nil {
			t.Fatal(err)
		}
		ref, at, _ := danglingRef(v)
		if ref != tt.ref || (ref != "" && at.String() != tt.at) {
			t.Errorf("%s: danglingRef = %q at %s, want %q at %s", tt.doc, ref, at, tt.ref, tt.at)
		}
	}
}
