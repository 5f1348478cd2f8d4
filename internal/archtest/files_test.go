package archtest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestCommandsReadAndWriteFilesOneWay keeps every file a command reads whole
// bounded (pkg/readlimit: a limit stated in the error, /dev/zero fails fast)
// and every output file written by pkg/outfile (atomic replace of regular
// files only; devices and FIFOs written in place), by refusing the calls
// that bypass them in the command layer.
func TestCommandsReadAndWriteFilesOneWay(t *testing.T) {
	_, here, _, _ := runtime.Caller(0)
	dir := filepath.Join(filepath.Dir(here), "..", "app")
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, dir, func(fi fs.FileInfo) bool {
		return !strings.HasSuffix(fi.Name(), "_test.go")
	}, 0)
	if err != nil {
		t.Fatal(err)
	}
	forbidden := map[string]string{
		"os.ReadFile":   "read through pkg/readlimit (a stated limit)",
		"io.ReadAll":    "read through pkg/readlimit (a stated limit)",
		"os.WriteFile":  "write through writeOutputFile (pkg/outfile)",
		"os.Create":     "write through writeOutputFile (pkg/outfile)",
		"os.CreateTemp": "write through writeOutputFile (pkg/outfile)",
		"os.Rename":     "write through writeOutputFile (pkg/outfile)",
	}
	found := 0
	for _, p := range pkgs {
		for _, f := range p.Files {
			ast.Inspect(f, func(n ast.Node) bool {
				sel, ok := n.(*ast.SelectorExpr)
				if !ok {
					return true
				}
				x, ok := sel.X.(*ast.Ident)
				if !ok {
					return true
				}
				call := x.Name + "." + sel.Sel.Name
				if why, bad := forbidden[call]; bad {
					t.Errorf("%s: %s: %s", fset.Position(sel.Pos()), call, why)
				}
				found++
				return true
			})
		}
	}
	if found == 0 {
		t.Fatalf("no Go files read in %s", dir)
	}
}
