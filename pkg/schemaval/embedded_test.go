package schemaval_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/dome-registry/dome/pkg/schemaval"
)

// TestEmbeddedSchemas runs the full Compile (strict JSON: no duplicate keys,
// no trailing data) over every schema a dome package embeds, since
// MustCompile, which those packages call at run time, skips that pass.
func TestEmbeddedSchemas(t *testing.T) {
	var files []string
	for _, glob := range []string{"../*/schemas/*.json", "../*/schema/*.json", "../*/*/schemas/*.json"} {
		m, err := filepath.Glob(glob)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	if len(files) < 20 {
		t.Fatalf("found only %d embedded schemas: %v", len(files), files)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := schemaval.Compile(filepath.Base(f), b); err != nil {
			t.Errorf("%s: %v", f, err)
		}
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("%s: MustCompile panicked: %v", f, r)
				}
			}()
			schemaval.MustCompile(filepath.Base(f), b)
		}()
	}
}

func TestMustCompilePanicsOnAnInvalidSchema(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("no panic")
		}
	}()
	schemaval.MustCompile("bad.json", []byte(`{"type": 3}`))
}
