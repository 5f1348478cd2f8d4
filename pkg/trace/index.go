package trace

import (
	"encoding/json"
	"fmt"
	"go/build"
	"go/scanner"
	"go/token"
	"io"
	"io/fs"
	"path"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/mod/modfile"
)

// Index is what checks a repository has: the Go tests of its module, its
// testscript stories and its JSON Schemas.
type Index struct {
	Module string
	// Tests maps a package folder ("." for the module root) to the names of
	// its top-level Test and Fuzz functions.
	Tests map[string]map[string]bool
	// Scripts holds the path of every story in the catalogue's script folders.
	Scripts map[string]bool
	// Schemas maps a schema's $id to the files that declare it.
	Schemas map[string][]string
	// TestFiles counts the _test.go files read.
	TestFiles int
}

// ScanOptions tune Scan.
type ScanOptions struct {
	// Build decides which files belong to a build (GOOS, GOARCH, tags, file
	// name suffixes); nil counts every _test.go file. Scan reads through
	// fsys whatever OpenFile and JoinPath it holds.
	Build *build.Context
}

// maxSourceBytes bounds one test file or schema read by Scan.
const maxSourceBytes = 8 << 20

// Scan indexes the repository in fsys (its root is the module root, with
// go.mod): the _test.go files of every package of the module (folders named
// testdata, vendor or node_modules, or starting with "." or "_", and nested
// modules are not part of it, as for "go test ./..."), the *.txtar files of
// cat's script folders, and every *.schema.json with a $id.
func Scan(fsys fs.FS, cat *Catalog, opts ScanOptions) (*Index, error) {
	mod, err := fs.ReadFile(fsys, "go.mod")
	if err != nil {
		return nil, fmt.Errorf("read go.mod at the repository root: %w", err)
	}
	module := modfile.ModulePath(mod)
	if module == "" {
		return nil, fmt.Errorf("go.mod: no module line")
	}
	idx := &Index{Module: module, Tests: map[string]map[string]bool{}, Scripts: map[string]bool{}, Schemas: map[string][]string{}}
	var bc *build.Context
	if opts.Build != nil {
		c := *opts.Build
		c.JoinPath = path.Join
		c.OpenFile = func(name string) (io.ReadCloser, error) { return fsys.Open(name) }
		c.IsDir = func(name string) bool { fi, err := fs.Stat(fsys, name); return err == nil && fi.IsDir() }
		c.HasSubdir = nil
		c.ReadDir = func(dir string) ([]fs.FileInfo, error) { return nil, fmt.Errorf("not used") }
		bc = &c
	}
	if err := idx.walk(fsys, ".", bc); err != nil {
		return nil, err
	}
	for _, d := range cat.ScriptDirs {
		entries, err := fs.ReadDir(fsys, d.Dir)
		if err != nil {
			continue // a folder that is not there holds no scripts: every check naming one is reported
		}
		for _, e := range entries {
			if e.Type().IsRegular() && strings.HasSuffix(e.Name(), ".txtar") {
				idx.Scripts[d.Dir+"/"+e.Name()] = true
			}
		}
	}
	return idx, nil
}

func (idx *Index) walk(fsys fs.FS, dir string, bc *build.Context) error {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return fmt.Errorf("read %s: %w", dir, err)
	}
	if dir != "." {
		for _, e := range entries {
			if e.Name() == "go.mod" && e.Type().IsRegular() {
				return nil // a nested module: not part of this one
			}
		}
	}
	for _, e := range entries {
		name := e.Name()
		p := path.Join(dir, name)
		switch {
		case e.IsDir():
			if skipDir(name) {
				continue
			}
			if err := idx.walk(fsys, p, bc); err != nil {
				return err
			}
		case !e.Type().IsRegular():
		case strings.HasSuffix(name, "_test.go") && !strings.HasPrefix(name, ".") && !strings.HasPrefix(name, "_"):
			if bc != nil {
				ok, err := bc.MatchFile(dir, name)
				if err != nil || !ok {
					continue
				}
			}
			src, err := readBounded(fsys, p)
			if err != nil {
				return err
			}
			idx.TestFiles++
			for _, t := range testFuncs(src) {
				if idx.Tests[dir] == nil {
					idx.Tests[dir] = map[string]bool{}
				}
				idx.Tests[dir][t] = true
			}
		case strings.HasSuffix(name, ".schema.json"):
			src, err := readBounded(fsys, p)
			if err != nil {
				return err
			}
			var s struct {
				ID string `json:"$id"`
			}
			if json.Unmarshal(src, &s) == nil && s.ID != "" {
				idx.Schemas[s.ID] = append(idx.Schemas[s.ID], p)
			}
		}
	}
	return nil
}

// skipDir reports folders that "go test ./..." does not enter, and those
// that hold no part of the module.
func skipDir(name string) bool {
	return strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") ||
		name == "testdata" || name == "vendor" || name == "node_modules"
}

func readBounded(fsys fs.FS, name string) ([]byte, error) {
	f, err := fsys.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxSourceBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	if len(data) > maxSourceBytes {
		return nil, fmt.Errorf("%s: over the limit of %d bytes", name, maxSourceBytes)
	}
	return data, nil
}

// testFuncs returns the names of the top-level functions of a Go file that
// "go test" runs: TestXxx and FuzzXxx (not TestMain). It reads tokens, not
// lines, so a function spelled inside a string or a comment is not one; it
// does not parse the bodies, which is where the time of a full parse goes.
func testFuncs(src []byte) []string {
	var s scanner.Scanner
	fset := token.NewFileSet()
	file := fset.AddFile("", fset.Base(), len(src))
	s.Init(file, src, nil, 0)
	var out []string
	depth := 0
	prev := token.ILLEGAL
	for {
		_, tok, lit := s.Scan()
		switch tok {
		case token.EOF:
			sort.Strings(out)
			return out
		case token.LBRACE, token.LPAREN, token.LBRACK:
			depth++
		case token.RBRACE, token.RPAREN, token.RBRACK:
			depth--
		case token.IDENT:
			if prev == token.FUNC && depth == 0 && isTestName(lit) {
				// A method has a receiver: "func (" never reaches here.
				out = append(out, lit)
			}
		}
		prev = tok
	}
}

// isTestName applies "go test"'s rule: Test or Fuzz, then nothing or a
// character that is not a lower-case letter. TestMain is the package's
// main function, not a test.
func isTestName(name string) bool {
	for _, prefix := range []string{"Test", "Fuzz"} {
		if !strings.HasPrefix(name, prefix) {
			continue
		}
		if name == "TestMain" {
			return false
		}
		rest := name[len(prefix):]
		if rest == "" {
			return true
		}
		r, _ := utf8.DecodeRuneInString(rest)
		return !unicode.IsLower(r)
	}
	return false
}

// HasTest reports whether the package folder pkg has the top-level test of
// name (a subtest path "TestX/case" names its top-level test TestX).
func (idx *Index) HasTest(pkg, name string) bool {
	top, _, _ := strings.Cut(name, "/")
	return idx.Tests[pkg][top]
}

// ImportPath returns the import path "go test" reports for the package
// folder dir.
func (idx *Index) ImportPath(dir string) string {
	if dir == "." || dir == "" {
		return idx.Module
	}
	return idx.Module + "/" + dir
}

// Packages returns the package folders that have tests, sorted.
func (idx *Index) Packages() []string {
	out := make([]string, 0, len(idx.Tests))
	for p := range idx.Tests {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}
