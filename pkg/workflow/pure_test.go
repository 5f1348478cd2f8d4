package workflow

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestPure_NoIO keeps the engine pure: its non-test files import nothing
// that reads files, clocks, randomness, the network or the environment.
func TestPure_NoIO(t *testing.T) {
	allowed := map[string]bool{"container/heap": true, "crypto/sha256": true, "encoding/hex": true, "encoding/json": true,
		"errors": true, "fmt": true, "math/bits": true, "slices": true, "sort": true, "strconv": true, "strings": true}
	files, _ := filepath.Glob("*.go")
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		ast, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range ast.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if !allowed[p] {
				t.Errorf("%s imports %s: pkg/workflow does no I/O and reads no clock or randomness", f, p)
			}
		}
	}
}
