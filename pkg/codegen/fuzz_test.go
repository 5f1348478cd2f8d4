package codegen

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/dome-registry/dome/pkg/errkind"
)

func FuzzParseManifest(f *testing.F) {
	if b, err := os.ReadFile(filepath.Join("testdata", "golden", "client", "go", "petstore", "default", ManifestFile)); err == nil {
		f.Add(b)
	}
	f.Add([]byte(`{"artifact_kind":"dome.generation_manifest/v1"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := ParseManifest("m.json", data)
		if err != nil {
			if !errkind.IsInput(err) {
				t.Fatalf("not an input error: %v", err)
			}
			return
		}
		for _, o := range m.Outputs {
			if checkOutputPath(o.Path) != nil {
				t.Fatalf("accepted output path %q", o.Path)
			}
		}
		if _, err := m.Encode(); err != nil {
			t.Fatal(err)
		}
	})
}

func FuzzBuildModel(f *testing.F) {
	for _, n := range []string{"petstore.default", "ticketing.default", "inventory.default"} {
		if b, err := os.ReadFile(filepath.Join("..", "specfilter", "testdata", "golden", n+".openapi.json")); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte(`{"openapi":"3.1.0","paths":{"/a/{b}":{"parameters":[{"$ref":"#/components/parameters/x"}],"get":{"operationId":"a","responses":{"200":{"$ref":"#/components/responses/r"}}}}},"components":{"schemas":{"S":{"allOf":[{"$ref":"#/components/schemas/S"}]}}}}`))
	n := Namer{Naming: Naming{Operation: "camel", Type: "pascal", Parameter: "snake"}, Reserved: map[string]bool{"class": true}}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := BuildModel("spec", data, n)
		if err != nil {
			if !errkind.IsInput(err) {
				t.Fatalf("not an input error: %v", err)
			}
			return
		}
		seen := map[string]bool{}
		for _, op := range m.Operations {
			if seen[op.Name] {
				t.Fatalf("two operations named %s", op.Name)
			}
			seen[op.Name] = true
		}
	})
}

func FuzzParseOperationsIndex(f *testing.F) {
	if b, err := os.ReadFile(filepath.Join("testdata", "golden", "client", "ts", "petstore", "default", OperationsIndexFile)); err == nil {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		x, err := ParseOperationsIndex("o.json", data)
		if err == nil {
			if _, err := x.Encode(); err != nil {
				t.Fatal(err)
			}
		}
	})
}
