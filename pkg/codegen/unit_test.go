package codegen

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dome-registry/dome/pkg/errkind"
)

func TestConvert(t *testing.T) {
	for _, c := range []struct{ style, in, want string }{
		{"camel", "listPets", "listPets"},
		{"camel", "list_pets", "listPets"},
		{"pascal", "get-HTTPStatus_v2", "GetHttpStatusV2"},
		{"snake", "showPetById", "show_pet_by_id"},
		{"snake", "getHTTPStatus", "get_http_status"},
		{"screaming_snake", "petId", "PET_ID"},
		{"go", "showPetById", "ShowPetById"},
		{"camel", "x.y z", "xYZ"},
	} {
		if got := Convert(c.style, c.in); got != c.want {
			t.Errorf("Convert(%s, %q) = %q, want %q", c.style, c.in, got, c.want)
		}
	}
}

func TestNamer_EscapesReservedWordsAndLeadingDigits(t *testing.T) {
	n := Namer{Naming: Naming{Operation: "snake", Type: "pascal", Parameter: "snake"}, Reserved: map[string]bool{"from": true, "from_": true}}
	if got := n.Parameter("from"); got != "from__" {
		t.Errorf("got %q", got)
	}
	if got := n.Type("2fa"); got != "_2fa" {
		t.Errorf("got %q", got)
	}
}

func TestNormalizeText(t *testing.T) {
	in := "\n\nline 1  \r\nline 2\t\n\n\n\n\nline 3\n\n"
	want := "line 1\nline 2\n\n\nline 3\n"
	if got := string(NormalizeText([]byte(in))); got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestUnifiedDiff(t *testing.T) {
	a := "a\nb\nc\nd\ne\nf\ng\nh\n"
	b := "a\nb\nc\nD\ne\nf\ng\nh\n"
	got := UnifiedDiff("x", a, b)
	want := "--- a/x\n+++ b/x\n@@ -1,7 +1,7 @@\n a\n b\n c\n-d\n+D\n e\n f\n g\n"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

const twoOps = `{"openapi":"3.0.3","info":{"title":"t","version":"1"},"paths":{
 "/a":{"get":{"operationId":"get_pet","responses":{"200":{"description":"ok"}}}},
 "/b":{"get":{"operationId":"getPet","responses":{"200":{"description":"ok"}}}}}}`

func TestBuildModel_OperationIDsCollideAfterMangling(t *testing.T) {
	_, err := BuildModel("spec", []byte(twoOps), Namer{Naming: Naming{Operation: "camel", Type: "pascal", Parameter: "camel"}})
	if !errkind.IsInput(err) || !strings.Contains(err.Error(), `"get_pet"`) || !strings.Contains(err.Error(), `"getPet"`) || !strings.Contains(err.Error(), "getPet") {
		t.Fatalf("want an input error naming both operationIds, got %v", err)
	}
}

func TestBuildModel_SchemasCollideAfterMangling(t *testing.T) {
	spec := `{"openapi":"3.0.3","info":{"title":"t","version":"1"},"paths":{},"components":{"schemas":{"pet_status":{"type":"string"},"PetStatus":{"type":"string"}}}}`
	_, err := BuildModel("spec", []byte(spec), Namer{Naming: Naming{Operation: "camel", Type: "pascal", Parameter: "camel"}})
	if !errkind.IsInput(err) || !strings.Contains(err.Error(), "pet_status") || !strings.Contains(err.Error(), "PetStatus") {
		t.Fatalf("got %v", err)
	}
}

func TestBuildModel_MissingOperationID(t *testing.T) {
	spec := `{"openapi":"3.0.3","info":{"title":"t","version":"1"},"paths":{"/a":{"get":{"responses":{"200":{"description":"ok"}}}}}}`
	_, err := BuildModel("spec", []byte(spec), Namer{})
	if !errkind.IsInput(err) || !strings.Contains(err.Error(), "GET /a") {
		t.Fatalf("got %v", err)
	}
}

func TestBuildModel_Types(t *testing.T) {
	spec := `{"openapi":"3.1.0","info":{"title":"t","version":"1"},"paths":{},"components":{"schemas":{
	 "A":{"allOf":[{"$ref":"#/components/schemas/B"},{"type":"object","required":["x"],"properties":{"x":{"type":["string","null"]}}}]},
	 "B":{"type":"object","properties":{"y":{"type":"integer"}}},
	 "U":{"oneOf":[{"$ref":"#/components/schemas/B"},{"type":"null"}]},
	 "E":{"enum":["a","b",null]}}}}`
	m, err := BuildModel("spec", []byte(spec), Namer{Naming: Naming{Type: "pascal"}})
	if err != nil {
		t.Fatal(err)
	}
	a := m.Schemas[0].Type
	if a.Kind != "object" || len(a.Props) != 2 || a.Props[0].Name != "x" || !a.Props[0].Required || !a.Props[0].Type.Nullable || a.Props[1].Name != "y" {
		t.Errorf("allOf not merged: %+v", a)
	}
	e := m.Schemas[2].Type
	if e.Kind != "enum" || !e.Nullable || len(e.Enum) != 2 || e.Enum[0] != `"a"` {
		t.Errorf("enum: %+v", e)
	}
	u := m.Schemas[3].Type
	if u.Kind != "ref" || u.Name != "B" || !u.Nullable {
		t.Errorf("oneOf with null: %+v", u)
	}
}

func TestFormatGo_RemovesUnusedImportsOnly(t *testing.T) {
	src := "package p\n\nimport (\n\t\"fmt\"\n\t\"strings\"\n\t\"go.yaml.in/yaml/v3\"\n\topenapi_types \"github.com/oapi-codegen/runtime/types\"\n)\n\nvar _ = strings.ToUpper\n"
	out, err := formatGo("p.go", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	want := "package p\n\nimport (\n\t\"strings\"\n)\n\nvar _ = strings.ToUpper\n"
	if string(out) != want {
		t.Errorf("got\n%s", out)
	}
}

func TestAssumedName(t *testing.T) {
	for in, want := range map[string]string{"go.yaml.in/yaml/v3": "yaml", "github.com/oapi-codegen/runtime": "runtime", "gopkg.in/yaml.v2": "yaml", "github.com/x/go-foo": "foo"} {
		if got := assumedName(in); got != want {
			t.Errorf("%s: %q, want %q", in, got, want)
		}
	}
}

func TestCauses(t *testing.T) {
	base := Manifest{Inputs: Inputs{SpecBlobs: map[string]string{"s.yaml": "1"}, ProfileDigest: "p1", BundleTree: "b1", GeneratorBundle: "x", SDKFlavor: "f", NormalizationRulesVersion: "n", FilteredSpecDigest: "d1"}, Toolchain: Toolchain{DomeVersion: "1"}}
	for _, c := range []struct {
		name string
		edit func(m *Manifest)
		want string
	}{
		{"spec", func(m *Manifest) { m.Inputs.SpecBlobs = map[string]string{"s.yaml": "2"} }, "spec changed (s.yaml)"},
		{"profile", func(m *Manifest) { m.Inputs.ProfileDigest = "p2" }, "profile"},
		{"bundle", func(m *Manifest) { m.Inputs.BundleTree = "b2" }, "bundle changed"},
		{"lock", func(m *Manifest) { m.Inputs.Options = map[string]any{"package": "x"} }, "generators.lock.json changed"},
		{"toolchain", func(m *Manifest) { m.Toolchain.DomeVersion = "2" }, "toolchain changed: dome 1 -> 2"},
		{"filter", func(m *Manifest) { m.Inputs.FilteredSpecDigest = "d2" }, "spec filter rules"},
	} {
		cur := base
		cur.Inputs.SpecBlobs = base.Inputs.SpecBlobs
		c.edit(&cur)
		got := strings.Join(Causes(&base, &cur), "; ")
		if !strings.Contains(got, c.want) {
			t.Errorf("%s: causes %q, want %q", c.name, got, c.want)
		}
	}
	if got := Causes(&base, &base); len(got) != 0 {
		t.Errorf("same manifest: %v", got)
	}
}

func TestParseManifest_Refuses(t *testing.T) {
	good := `{"artifact_kind":"dome.generation_manifest/v1","canonicalization":"jcs-rfc8785","client_artifact_hash":"sha256:` + strings.Repeat("0", 64) + `","inputs":{"bundle_tree":"` + strings.Repeat("a", 40) + `","filtered_spec_digest":"sha256:` + strings.Repeat("0", 64) + `","generator_bundle":"b","generator_bundle_ref":"` + strings.Repeat("a", 40) + `","language_target":"go","normalization_rules_version":"n","options":{},"profile_blob":"` + strings.Repeat("a", 40) + `","profile_digest":"sha256:` + strings.Repeat("0", 64) + `","profile_id":"p","profile_ref":"` + strings.Repeat("a", 40) + `","sdk_flavor":"f","spec_blobs":{},"spec_ref":"` + strings.Repeat("a", 40) + `","tool_id":"t"},"outputs":[OUT],"toolchain":{"dome_version":"1","engine":"e","engine_version":"1","formatter":"f","formatter_version":"1"}}`
	file := func(p string) string {
		return `{"path":"` + p + `","sha256":"sha256:` + strings.Repeat("0", 64) + `","size":1}`
	}
	if _, err := ParseManifest("m", []byte(strings.Replace(good, "OUT", file("a.go"), 1))); err != nil {
		t.Fatalf("good manifest: %v", err)
	}
	for name, out := range map[string]string{
		"traversal": file("../x.go"),
		"absolute":  file("/etc/x"),
		"unsorted":  file("b.go") + "," + file("a.go"),
		"manifest":  file("manifest.json"),
	} {
		if _, err := ParseManifest("m", []byte(strings.Replace(good, "OUT", out, 1))); !errkind.IsInput(err) {
			t.Errorf("%s: want an input error, got %v", name, err)
		}
	}
	if _, err := ParseManifest("m", []byte(`{"artifact_kind":"x"}`)); !errkind.IsInput(err) {
		t.Errorf("want an input error, got %v", err)
	}
}

func TestCheckOutDir_File(t *testing.T) {
	f := filepath.Join(t.TempDir(), "f")
	os.WriteFile(f, nil, 0o644)
	if err := CheckOutDir(f); !errkind.IsInput(err) || !strings.Contains(err.Error(), "is a file") {
		t.Errorf("got %v", err)
	}
	if err := CheckOutDir(filepath.Join(f, "sub")); !errkind.IsInput(err) {
		t.Errorf("got %v", err)
	}
}

// TestOapiCodegenVersionMatchesBundle keeps the example Go bundle made for
// the oapi-codegen release vendored in internal/oapicodegen.
func TestOapiCodegenVersionMatchesBundle(t *testing.T) {
	bundle, err := os.ReadFile(filepath.Join("..", "..", "generators", "go-oapi-codegen", "bundle.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(bundle), `"engine_version": "`+OapiCodegenVersion()+`"`) {
		t.Fatalf("generators/go-oapi-codegen/bundle.json is not made for %s", OapiCodegenVersion())
	}
}
