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
	"pkg/errkind": true, "pkg/gitstore": true, "pkg/canonical": true,
	"pkg/signing": true, "pkg/artifact": true, "pkg/ledger": true,
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
