package specfilter

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/dome-registry/dome/pkg/errkind"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

func loadShop(t *testing.T) *Document {
	t.Helper()
	fr, err := OpenDir("testdata/shop")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fr.Close() })
	doc, err := Load(fr, "spec/openapi.yaml", LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

func profile(t *testing.T, body string) *Profile {
	t.Helper()
	p, err := ParseProfile("p.profile.json", []byte(`{"schema_version":"dome.profile/v1","id":"p"`+body+`}`))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func decode(t *testing.T, b []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func keys(v any) []string {
	m, _ := v.(map[string]any)
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func componentNames(out map[string]any) []string {
	var names []string
	comps, _ := out["components"].(map[string]any)
	for sec, v := range comps {
		for _, n := range keys(v) {
			names = append(names, sec+"/"+n)
		}
	}
	sort.Strings(names)
	return names
}

func TestLoad_BundlesExternalRefs(t *testing.T) {
	doc := loadShop(t)
	got := map[string]string{}
	for _, b := range doc.Bundled {
		got[b.Ref] = b.Component
	}
	want := map[string]string{
		"spec/schemas/Pet.json#":              "#/components/schemas/Pet_ad0950fd", // clashes with the root's Pet
		"spec/schemas/Pet.json#/$defs/Status": "#/components/schemas/Status_cc20bbb1",
		"spec/more/order.json#/$defs/Status":  "#/components/schemas/Status_c630179b", // two files want Status
		"spec/schemas/Pet.json#/$defs/Dog":    "#/components/schemas/Dog",
		"spec/schemas/Cat.json#":              "#/components/schemas/Cat",
		"spec/schemas/params.json#/Limit":     "#/components/parameters/Limit",
		"spec/more/Node.json#":                "#/components/schemas/Node",
		"spec/more/Tree.json#":                "#/components/schemas/Tree",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("bundled = %v\nwant %v", got, want)
	}
	wantFiles := []string{"spec/openapi.yaml", "spec/more/Node.json", "spec/more/Tree.json", "spec/more/order.json", "spec/schemas/Cat.json", "spec/schemas/Pet.json", "spec/schemas/params.json"}
	if !reflect.DeepEqual(doc.Files, wantFiles) {
		t.Errorf("files = %v", doc.Files)
	}
	// The reference back into the entry file became internal.
	owner := doc.component("schemas", "Pet_ad0950fd").Resolve(Pointer{"properties", "owner", "$ref"})
	if owner == nil || owner.Text != "#/components/schemas/Adoption" {
		t.Errorf("owner ref = %+v", owner)
	}
}

func TestApply_KeepsExactlyTheClosure(t *testing.T) {
	doc := loadShop(t)
	res, err := Apply(doc, profile(t, `,"allow":{"operations":["tag:pets","listOrders"]},"deny":{"operations":["DELETE /**"]}`), Options{})
	if err != nil {
		t.Fatal(err)
	}
	out := decode(t, res.JSON)
	want := []string{
		"headers/Next", "parameters/Limit", "responses/Problem",
		"schemas/Adoption", "schemas/Cat", "schemas/Cursor", "schemas/Dog", "schemas/Error", "schemas/Node",
		"schemas/Order", "schemas/Pet_ad0950fd", "schemas/Status_c630179b", "schemas/Status_cc20bbb1", "schemas/Tree",
		"securitySchemes/apiKey", "securitySchemes/oauth",
		"x-internal-components-note/" + "", // placeholder removed below
	}
	want = want[:len(want)-1]
	got := componentNames(out)
	var gotNoExt []string
	for _, g := range got {
		if !strings.HasPrefix(g, "x-") {
			gotNoExt = append(gotNoExt, g)
		}
	}
	if !reflect.DeepEqual(gotNoExt, want) {
		t.Errorf("components =\n%v\nwant\n%v", gotNoExt, want)
	}
	if _, ok := out["components"].(map[string]any)["x-internal-components-note"]; !ok {
		t.Error("an extension of the components object was dropped")
	}
	var tags []string
	for _, tg := range out["tags"].([]any) {
		tags = append(tags, tg.(map[string]any)["name"].(string))
	}
	if !reflect.DeepEqual(tags, []string{"pets", "orders"}) {
		t.Errorf("tags = %v", tags)
	}
	if _, ok := out["webhooks"]; ok {
		t.Error("webhooks kept without a webhooks selector")
	}
	var ops []string
	for _, o := range res.Operations {
		ops = append(ops, o.Method+" "+o.Path)
	}
	if want := []string{"GET /orders", "GET /pets", "POST /pets", "GET /pets/{petId}", "GET /tree"}; !reflect.DeepEqual(ops, want) {
		t.Errorf("operations = %v", ops)
	}
	// The partly kept referenced path item is copied inline without createOrder.
	orders := out["paths"].(map[string]any)["/orders"].(map[string]any)
	if _, ok := orders["post"]; ok || orders["get"] == nil {
		t.Errorf("/orders = %v", keys(orders))
	}
	if !strings.Contains(strings.Join(res.Explain.Warnings, "\n"), "GET /tree has no operationId") {
		t.Errorf("warnings = %v", res.Explain.Warnings)
	}
	if res.Operations[2].Security[0]["oauth"][0] != "write" || res.Operations[1].Security[0]["apiKey"] == nil {
		t.Errorf("effective security = %+v", res.Operations)
	}
}

func TestApply_PreservesFieldsAsWritten(t *testing.T) {
	doc := loadShop(t)
	res, err := Apply(doc, profile(t, `,"allow":{"operations":["getPet","listPets"]}`), Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := string(res.JSON)
	for _, want := range []string{
		`"description":"a pet, described next to its $ref (3.1)"`, // siblings of $ref
		`"examples":[{"id":1,"kind":"dog"}]`,
		`"x-internal-rate":10`, // an operation extension
		`"x-internal-owner":"team-shop"`,
		`"x-internal-table":"pets"`, // an extension inside a bundled schema
		`"x-internal-paths-note":"an extension of the Paths object"`,
		`"x-custom":[1,2]`,
		`"$defs":{`, // 3.1 keywords inside a bundled file stay
	} {
		if !strings.Contains(s, want) {
			t.Errorf("output lacks %s", want)
		}
	}
}

func TestApply_StripsExtensionsOnlyWhereTheyAreExtensions(t *testing.T) {
	doc := loadShop(t)
	res, err := Apply(doc, profile(t, `,"allow":{"operations":["tag:pets"]},"deny":{"operations":["deletePet"]},"strip_extensions":["x-internal"]`), Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := string(res.JSON)
	for _, gone := range []string{`"x-internal-rate":10`, `"x-internal-owner"`, `"x-internal-table"`, `"x-internal-paths-note"`, `"x-internal-format"`} {
		if strings.Contains(s, gone) {
			t.Errorf("%s was not stripped", gone)
		}
	}
	for _, kept := range []string{`"x-internal-rate":"example data, not an extension"`, `"x-custom":[1,2]`} {
		if !strings.Contains(s, kept) {
			t.Errorf("%s was stripped but is not an extension of a stripped prefix", kept)
		}
	}
	if res.Explain.Stripped == 0 {
		t.Error("explain counts no stripped extension")
	}
	// A property named x-internal-debug is data, not an extension.
	res2, err := Apply(doc, profile(t, `,"allow":{"operations":["getPet"]},"strip_extensions":["x-internal"]`), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(res2.JSON), `"x-internal-debug":{"description":"a property, not an extension","type":"string"}`) {
		t.Error("a schema property named x-internal-debug was stripped")
	}
}

func TestApply_ServersOverrideAndWebhooks(t *testing.T) {
	doc := loadShop(t)
	res, err := Apply(doc, profile(t, `,"allow":{"operations":["listPets"]},"servers":[{"url":"https://shop.example.com","description":"prod"}],"net":{"allow_hosts":["shop.example.com"]},"webhooks":{"operations":["POST pet*"]}`), Options{})
	if err != nil {
		t.Fatal(err)
	}
	out := decode(t, res.JSON)
	if got := fmt.Sprint(out["servers"]); got != "[map[description:prod url:https://shop.example.com]]" {
		t.Errorf("servers = %s", got)
	}
	if keys(out["webhooks"])[0] != "petBorn" || len(res.Explain.Warnings) != 0 {
		t.Errorf("webhooks = %v, warnings = %v", keys(out["webhooks"]), res.Explain.Warnings)
	}
	// Without the override, the staging server is outside net.allow_hosts: a warning.
	res, err = Apply(doc, profile(t, `,"allow":{"operations":["listPets"]},"net":{"allow_hosts":["shop.example.com"]}`), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(res.Explain.Warnings, "\n"), "staging.shop.example.com is not in net.allow_hosts") {
		t.Errorf("warnings = %v", res.Explain.Warnings)
	}
}

func TestApply_Errors(t *testing.T) {
	doc := loadShop(t)
	tests := []struct {
		name, profile string
		opts          Options
		source, want  string
	}{
		{"selector matching nothing", `,"allow":{"operations":["listPetz"]}`, Options{}, "p.profile.json", `allow "listPetz" matches no operation`},
		{"deny matching nothing", `,"deny":{"operations":["tag:nope"]}`, Options{}, "p.profile.json", `deny "tag:nope" matches no operation`},
		{"template with another param name", `,"allow":{"operations":["GET /pets/{id}"]}`, Options{}, "p.profile.json", "matches no operation"},
		{"strict without operationId", `,"allow":{"operations":["tag:pets"]}`, Options{Strict: true}, "openapi.yaml", "GET /tree has no operationId"},
		{"link into a dropped operation is only a warning, a $ref is an error", `,"allow":{"operations":["createPet"]}`, Options{}, "", ""},
	}
	for _, tt := range tests {
		_, err := Apply(doc, profile(t, tt.profile), tt.opts)
		if tt.want == "" {
			if err != nil {
				t.Errorf("%s: %v", tt.name, err)
			}
			continue
		}
		var ie *errkind.InputError
		if !errorsAs(err, &ie) || !strings.Contains(ie.Source, tt.source) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error = %v, want an input error from %s containing %q", tt.name, err, tt.source, tt.want)
		}
	}
	// With the flag, an empty selector is a warning.
	res, err := Apply(doc, profile(t, `,"allow":{"operations":["listPets","listPetz"]}`), Options{AllowEmptySelectors: true})
	if err != nil || !strings.Contains(strings.Join(res.Explain.Warnings, "\n"), "listPetz") {
		t.Errorf("AllowEmptySelectors: %v, %v", err, res)
	}
}

func errorsAs(err error, target **errkind.InputError) bool {
	for e := err; e != nil; {
		if ie, ok := e.(*errkind.InputError); ok {
			*target = ie
			return true
		}
		u, ok := e.(interface{ Unwrap() error })
		if !ok {
			return false
		}
		e = u.Unwrap()
	}
	return false
}

func mapFS(files map[string]string) fstest.MapFS {
	m := fstest.MapFS{}
	for k, v := range files {
		m[k] = &fstest.MapFile{Data: []byte(v)}
	}
	return m
}

const miniSpec = `openapi: 3.0.3
info: {title: t, version: "1"}
paths:
  /a:
    get:
      operationId: a
      responses:
        "200":
          description: ok
          content:
            application/json:
              schema: {$ref: "REF"}
components:
  schemas:
    Local: {type: string}
`

func TestLoad_RefusesReferences(t *testing.T) {
	tests := []struct{ ref, want string }{
		{"https://example.com/s.json", "https: references are refused"},
		{"http://example.com/s.json#/X", "http: references are refused"},
		{"file:///etc/passwd", "file: references are refused"},
		{"//example.com/s.json", "network references are refused"},
		{"/etc/passwd", "absolute paths are refused"},
		{"../../outside.json", "leaves the tool folder"},
		{"schemas/../../../x.json", "leaves the tool folder"},
		{"#anchor", "not a JSON pointer"},
		{"#/components/schemas/Missing", "no such object"},
		{"schemas/S.json#/nope", "does not exist"},
		{"schemas/Nope.json", "file not found"},
		{"schemas/Bad.json", "duplicate key"},
	}
	for _, tt := range tests {
		fs := mapFS(map[string]string{
			"spec/openapi.yaml":     strings.Replace(miniSpec, "REF", tt.ref, 1),
			"spec/schemas/S.json":   `{"type":"string"}`,
			"spec/schemas/Bad.json": `{"type":"string","type":"integer"}`,
		})
		_, err := Load(fs, "spec/openapi.yaml", LoadOptions{})
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("$ref %q: error = %v, want %q", tt.ref, err, tt.want)
			continue
		}
		if !errkindIsInput(err) {
			t.Errorf("$ref %q: %T is not an input error", tt.ref, err)
		}
		if !strings.Contains(err.Error(), "/paths/~1a/get/responses/200/content/application~1json/schema/$ref") && !strings.Contains(err.Error(), "Bad.json") {
			t.Errorf("$ref %q: error %q does not name the ref's location", tt.ref, err)
		}
	}
}

func errkindIsInput(err error) bool { return errkind.IsInput(err) }

func TestLoad_NotOpenAPI(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"plain YAML", "name: x\nitems: [1]", `no "openapi" version string`},
		{"swagger", "swagger: '2.0'\ninfo: {}", "Swagger/OpenAPI 2.0 is not supported"},
		{"a list", "- 1\n- 2", "the top level is a array"},
		{"version", "openapi: 4.0.0\npaths: {}", `"4.0.0" is not supported`},
		{"no paths", "openapi: 3.0.3\ninfo: {title: t, version: '1'}", "no paths"},
	}
	for _, tt := range tests {
		_, err := LoadBytes("spec.yaml", []byte(tt.in), LoadOptions{})
		if err == nil || !strings.Contains(err.Error(), tt.want) || !errkind.IsInput(err) {
			t.Errorf("%s: error = %v, want %q", tt.name, err, tt.want)
		}
	}
}

func TestApply_InvalidSpecReportedWithLocation(t *testing.T) {
	spec := "openapi: 3.0.3\ninfo: {title: t, version: '1'}\npaths:\n  /a:\n    get:\n      operationId: a\n      responses:\n        '200':\n          description: ok\n          content:\n            application/json:\n              schema: {type: strin}\n"
	doc, err := LoadBytes("spec/openapi.yaml", []byte(spec), LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = Apply(doc, profile(t, ""), Options{})
	if err == nil || !strings.Contains(err.Error(), "spec/openapi.yaml: line 5 (/paths/~1a/get)") || !strings.Contains(err.Error(), "strin") {
		t.Errorf("error = %v", err)
	}
	if _, err := Apply(doc, profile(t, ""), Options{NoValidate: true}); err != nil {
		t.Errorf("NoValidate: %v", err)
	}
}

// Golden outputs for every profile of the example registry.
func TestApply_ExampleRegistryGolden(t *testing.T) {
	tools, _ := filepath.Glob("../../registry/tools/*/tool.json")
	if len(tools) == 0 {
		t.Skip("no example registry")
	}
	for _, tj := range tools {
		dir := filepath.Dir(tj)
		var tool struct{ Spec string }
		data, _ := os.ReadFile(tj)
		json.Unmarshal(data, &tool)
		profiles, _ := filepath.Glob(filepath.Join(dir, "profiles", "*.profile.json"))
		for _, pf := range profiles {
			name := filepath.Base(dir) + "." + strings.TrimSuffix(filepath.Base(pf), ".profile.json")
			t.Run(name, func(t *testing.T) {
				fr, err := OpenDir(dir)
				if err != nil {
					t.Fatal(err)
				}
				defer fr.Close()
				doc, err := Load(fr, tool.Spec, LoadOptions{})
				if err != nil {
					t.Fatal(err)
				}
				pdata, _ := os.ReadFile(pf)
				p, err := ParseProfile(filepath.Base(pf), pdata)
				if err != nil {
					t.Fatal(err)
				}
				res, err := Apply(doc, p, Options{Strict: true})
				if err != nil {
					t.Fatal(err)
				}
				ex, _ := json.MarshalIndent(res.Explain, "", "  ")
				golden(t, filepath.Join("testdata", "golden", name+".openapi.json"), res.JSON)
				golden(t, filepath.Join("testdata", "golden", name+".explain.json"), append(ex, '\n'))
			})
		}
	}
}

func golden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		os.MkdirAll(filepath.Dir(path), 0o755)
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if string(got) != string(want) {
		t.Errorf("%s differs from the output (run go test -update after checking the change)", path)
	}
}

func TestApply_PrunesLinksToDroppedOperations(t *testing.T) {
	doc := loadShop(t)
	res, err := Apply(doc, profile(t, `,"allow":{"operations":["createPet"]}`), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(res.JSON), `"links"`) || !strings.Contains(strings.Join(res.Explain.Removed, "\n"), "/links/self (its operation is not kept)") {
		t.Errorf("links kept or not reported: %v", res.Explain.Removed)
	}
	res, err = Apply(doc, profile(t, `,"allow":{"operations":["createPet","getPet"]}`), Options{})
	if err != nil || !strings.Contains(string(res.JSON), `"operationRef":"#/paths/~1pets~1{petId}/get"`) {
		t.Errorf("a link to a kept operation was removed: %v", err)
	}
}

func TestApply_ValidateInput(t *testing.T) {
	// The dropped operation is invalid: only --validate-input sees it.
	spec := "openapi: 3.0.3\ninfo: {title: t, version: '1'}\npaths:\n  /a:\n    get:\n      operationId: a\n      responses: {'200': {description: ok}}\n  /b:\n    get:\n      operationId: b\n      responses:\n        '200':\n          description: ok\n          content: {application/json: {schema: {type: strin}}}\n"
	doc, err := LoadBytes("spec/openapi.yaml", []byte(spec), LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p := profile(t, `,"allow":{"operations":["a"]}`)
	if _, err := Apply(doc, p, Options{}); err != nil {
		t.Errorf("the kept part is valid: %v", err)
	}
	_, err = Apply(doc, p, Options{ValidateInput: true})
	if err == nil || !strings.Contains(err.Error(), "line 9 (/paths/~1b/get): the input spec is not a valid OpenAPI document") {
		t.Errorf("ValidateInput: %v", err)
	}
}

func FuzzLoadAndApply(f *testing.F) {
	f.Add([]byte(miniSpec))
	f.Add([]byte("openapi: 3.1.0\ninfo: {title: t, version: '1'}\npaths:\n  /a: {$ref: '#/components/pathItems/A'}\ncomponents:\n  pathItems:\n    A: {get: {operationId: a, responses: {'200': {description: ok}}}}\n"))
	f.Add([]byte(`{"openapi":"3.0.3","info":{"title":"t","version":"1"},"paths":{"/x/{id}":{"get":{"tags":["t"],"responses":{"200":{"description":"ok","links":{"l":{"operationRef":"#/paths/~1x~1{id}/get"}}}}}}}}`))
	f.Add([]byte("openapi: 3.0.3\ninfo: {title: t, version: '1'}\nx-top: {$ref: '#/components/schemas/T'}\npaths:\n  /a: {get: {operationId: a, x-e: [{$ref: '#/components/schemas/E'}], responses: {'200': {description: ok, content: {a/b: {examples: {e: {value: {$ref: '#/components/examples/X'}}}}}}}}}\nx-webhooks:\n  h: {post: {requestBody: {content: {a/b: {schema: {$ref: '#/components/schemas/H'}}}}, responses: {'200': {description: ok}}}}\ncomponents:\n  x-c: {$ref: '#/components/schemas/C'}\n  examples: {X: {value: 1}}\n  schemas: {T: {}, E: {}, H: {}, C: {}, U: {}}\n"))
	var profiles []*Profile
	for _, body := range []string{
		`"deny":{"operations":["DELETE /**"]},"strip_extensions":["x-"]`,
		`"webhooks":{"operations":["* *"]}`,
		`"top_level_extensions":"drop","strip_extensions":["x-e"]`,
	} {
		p, err := ParseProfile("p.profile.json", []byte(`{"schema_version":"dome.profile/v1","id":"p",`+body+`}`))
		if err != nil {
			f.Fatal(err)
		}
		profiles = append(profiles, p)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		doc, err := LoadBytes("spec.yaml", data, LoadOptions{Limits: Limits{MaxDepth: 64, MaxAliasNodes: 10000}})
		if err != nil {
			return
		}
		for _, p := range profiles {
			res, err := Apply(doc, p, Options{AllowEmptySelectors: true})
			if err != nil {
				continue
			}
			out, err := LoadBytes("out.json", res.JSON, LoadOptions{})
			if err != nil {
				t.Fatalf("the output does not load: %v", err)
			}
			if ref, at, _ := danglingRef(out.Root); ref != "" {
				t.Fatalf("dangling $ref %q at %s in the output", ref, at)
			}
		}
	})
}

func TestApply_WarnsAboutInexactIntegers(t *testing.T) {
	spec := "openapi: 3.0.3\ninfo: {title: t, version: '1'}\npaths:\n  /a:\n    get:\n      operationId: a\n      parameters:\n        - {name: n, in: query, schema: {type: integer, format: int64, maximum: 9223372036854775807, minimum: -9007199254740992}}\n      responses: {'200': {description: ok}}\n"
	doc, err := LoadBytes("spec.yaml", []byte(spec), LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	res, err := Apply(doc, profile(t, ""), Options{})
	if err != nil {
		t.Fatal(err)
	}
	w := strings.Join(res.Explain.Warnings, "\n")
	if !strings.Contains(w, "number 9223372036854775807 at /paths/~1a/get/parameters/0/schema/maximum is not exact as an IEEE 754 double: RFC 8785 writes 9223372036854776000") || strings.Contains(w, "9007199254740992") {
		t.Errorf("warnings = %v", res.Explain.Warnings)
	}
	if !strings.Contains(string(res.JSON), `"maximum":9223372036854776000`) {
		t.Errorf("output = %s", res.JSON)
	}
}
