// Package standalone keeps the project standing on its own: what a user
// reads (README, docs/, examples, policies, schemas, the example registry,
// help text and error messages in Go string literals) names behaviour, never
// the requirement documents the project was written from or the folder
// beside the clone where they live.
package standalone

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// outside matches a citation of a document that is not part of this
// repository. "seed" alone stays allowed: the determinism seed is a feature.
var outside = regexp.MustCompile(`(?i)seed sections?\b|\bthe seeds?\b|\bseed's\b|\bseeds/|\.\./shared\b|/work/shared|\bshared/data\b|\bDESIGN\.md\b|\bCONVENTIONS\.md\b|\bFIELD-NOTES\b|action-registry-contract|agent-domain-invariants|agent-resolver-spec|orchestration-registry-codegen|rules-resolver-spec|resolver spec\b|RESOLVER_SPEC\.md`)

// sourceMaps name the documents the project was written from on purpose:
// the requirements catalogue maps every requirement to the document and
// section it comes from (its statements still describe behaviour).
var sourceMaps = map[string]bool{"doc/graph/reviewpack_requirements.json": true}

// skipDirs are not read by users, or not ours: build output, caches,
// vendored upstream code, test fixtures. Benchmarks read their large inputs
// from beside the clone by default, which is a path, not a citation.
var skipDirs = map[string]bool{
	".git": true, "node_modules": true, "bin": true, ".work": true, "testdata": true,
	// make test TESTJSON=reports/test.json writes the test output there while
	// this test runs: output, not a page.
	"reports":     true,
	"third_party": true, "oapicodegen": true, "bench": true,
	// An applied migration is never edited (its checksum is recorded in
	// every database it ran on), comments included.
	"migrations": true,
}

func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("no go.mod at %s: %v", root, err)
	}
	return root
}

func TestNoCitationOfOutsideDocuments(t *testing.T) {
	root := repoRoot(t)
	var scanned int
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != root && skipDirs[d.Name()] {
				return filepath.SkipDir
			}
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		switch {
		case sourceMaps[filepath.ToSlash(rel)]:
			return nil
		case strings.HasSuffix(path, "_test.go"):
			return nil
		case strings.HasSuffix(path, ".go"):
			scanned++
			checkGoStrings(t, path, rel)
		case textFile(d.Name()):
			scanned++
			data, err := os.ReadFile(path)
			if err != nil {
				t.Error(err)
				return nil
			}
			for i, line := range strings.Split(string(data), "\n") {
				if m := outside.FindString(line); m != "" {
					t.Errorf("%s:%d cites %q, which is not part of this repository: name the behaviour instead\n\t%s", rel, i+1, m, strings.TrimSpace(line))
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if scanned < 100 {
		t.Fatalf("scanned only %d files under %s", scanned, root)
	}
}

// textFile reports whether name is a file a user reads as text.
func textFile(name string) bool {
	switch filepath.Ext(name) {
	case ".md", ".json", ".yaml", ".yml", ".txt", ".tmpl", ".sh", ".example", ".toml", ".sql", ".ts", ".py":
		return true
	}
	return name == "Makefile" || name == "run"
}

// checkGoStrings checks the string literals of a Go file (help text, error
// messages, embedded text); comments are for maintainers and stay free.
func checkGoStrings(t *testing.T, path, rel string) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Errorf("%s: %v", rel, err)
		return
	}
	ast.Inspect(f, func(n ast.Node) bool {
		lit, ok := n.(*ast.BasicLit)
		if !ok || lit.Kind != token.STRING {
			return true
		}
		s, err := strconv.Unquote(lit.Value)
		if err != nil {
			s = lit.Value
		}
		if m := outside.FindString(s); m != "" {
			t.Errorf("%s: a string cites %q, which is not part of this repository: name the behaviour instead\n\t%s", fset.Position(lit.Pos()), m, strings.TrimSpace(s))
		}
		return true
	})
}
