// Package archtest keeps dome's layering true (CONVENTIONS.md section 3):
// only pkg/gitstore imports go-git, pkg/ never imports cmd/, foundations import
// no capability, and nothing below cmd/ prints to the process streams.
package archtest

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/dome-registry/dome"

// foundations may import only other foundations (and third-party code).
var foundations = map[string]bool{
	"pkg/errkind": true, "pkg/gitstore": true, "pkg/gitpath": true, "pkg/canonical": true,
	"pkg/signing": true, "pkg/artifact": true, "pkg/ledger": true,
	"pkg/readlimit": true, "pkg/outfile": true, "pkg/knowntags": true,
}

type pkgInfo struct {
	ImportPath string
	Imports    []string
	GoFiles    []string
}

func listPackages(t *testing.T) []pkgInfo {
	t.Helper()
	out, err := exec.Command("go", "list", "-json", module+"/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var pkgs []pkgInfo
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for dec.More() {
		var p pkgInfo
		if err := dec.Decode(&p); err != nil {
			t.Fatalf("decode go list output: %v", err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs
}

func TestLayering(t *testing.T) {
	for _, p := range listPackages(t) {
		rel := strings.TrimPrefix(strings.TrimPrefix(p.ImportPath, module), "/")
		for _, imp := range p.Imports {
			if strings.HasPrefix(imp, "github.com/go-git/") && rel != "pkg/gitstore" {
				t.Errorf("%s imports %s: only pkg/gitstore may import go-git", rel, imp)
			}
			if !strings.HasPrefix(imp, module+"/") {
				continue
			}
			irel := strings.TrimPrefix(imp, module+"/")
			if strings.HasPrefix(rel, "pkg/") && strings.HasPrefix(irel, "cmd/") {
				t.Errorf("%s imports %s: pkg/ must not import cmd/", rel, irel)
			}
			if irel == "pkg/webui" && !strings.HasPrefix(rel, "cmd/") && !strings.HasPrefix(rel, "bench/") {
				t.Errorf("%s imports pkg/webui: the web view sits on top of the packages it shows; only cmd/ (and benchmarks) use it", rel)
			}
			if foundations[rel] && strings.HasPrefix(irel, "pkg/") && !foundations[irel] {
				t.Errorf("%s (a foundation) imports %s (a capability)", rel, irel)
			}
		}
	}
}

// TestDomeBinaryLinksNoDocGenerator: the man page writer (go-md2man, and
// urfave/cli's docs.go that uses it) and cmd/dome/internal/docgen stay out of
// bin/dome, which is built with the urfave_cli_no_docs tag.
func TestDomeBinaryLinksNoDocGenerator(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-tags", "urfave_cli_no_docs", module+"/cmd/dome").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		if strings.Contains(dep, "go-md2man") || strings.Contains(dep, "blackfriday") || strings.HasSuffix(dep, "/docgen") {
			t.Errorf("bin/dome links %s: documentation generators belong in cmd/dome/internal/docgen, a separate program", dep)
		}
	}
}
