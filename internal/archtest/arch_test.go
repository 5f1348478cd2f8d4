// Package archtest keeps dome's layering true (CONVENTIONS.md section 3):
// only pkg/gitstore's sub-packages import go-git, the packages that read a
// registry link no go-git, OpenPGP or network code, bin/dome (the front)
// links only that read path, pkg/ never imports the command layer, and
// foundations import no capability.
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
	"pkg/errkind": true, "pkg/gitstore": true, "pkg/gitstore/gitremote": true, "pkg/gitstore/gitsign": true, "pkg/gitstore/gitworktree": true, "pkg/gitpath": true, "pkg/canonical": true,
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
			if strings.HasPrefix(imp, "github.com/go-git/") && !strings.HasPrefix(rel, "pkg/gitstore/") {
				t.Errorf("%s imports %s: only pkg/gitstore's sub-packages (gitremote, gitsign, gitworktree) may import go-git", rel, imp)
			}
			if !strings.HasPrefix(imp, module+"/") {
				continue
			}
			irel := strings.TrimPrefix(imp, module+"/")
			if strings.HasPrefix(rel, "pkg/") && commandLayer(irel) {
				t.Errorf("%s imports %s: pkg/ must not import the command layer (cmd/, internal/app, internal/front, internal/readcmd)", rel, irel)
			}
			if irel == "pkg/webui" && !commandLayer(rel) && !strings.HasPrefix(rel, "bench/") {
				t.Errorf("%s imports pkg/webui: the web view sits on top of the packages it shows; only the command layer (and benchmarks) use it", rel)
			}
			if foundations[rel] && strings.HasPrefix(irel, "pkg/") && !foundations[irel] {
				t.Errorf("%s (a foundation) imports %s (a capability)", rel, irel)
			}
		}
	}
}

// commandLayer reports whether the package rel is part of the command
// layer: the programs under cmd/ and the packages that are their command
// lines (internal/app, the whole command set; internal/front and
// internal/readcmd, dome's front).
func commandLayer(rel string) bool {
	return strings.HasPrefix(rel, "cmd/") || rel == "internal/app" || rel == "internal/front" || rel == "internal/readcmd"
}

// TestDomeBinaryLinksNoDocGenerator: the man page writer (go-md2man, and
// urfave/cli's docs.go that uses it) and cmd/dome/internal/docgen stay out of
// bin/dome-full, which is built with the urfave_cli_no_docs tag.
func TestDomeBinaryLinksNoDocGenerator(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-tags", "urfave_cli_no_docs", module+"/cmd/dome-full").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		if strings.Contains(dep, "go-md2man") || strings.Contains(dep, "blackfriday") || strings.HasSuffix(dep, "/docgen") {
			t.Errorf("bin/dome-full links %s: documentation generators belong in cmd/dome/internal/docgen, a separate program", dep)
		}
	}
}

// TestDomeBinaryLinksNoHeavyIntegrations: the OpenAI SDK and the
// OpenTelemetry SDK (with gRPC and protobuf) live in the dome-openai and
// dome-otel helper programs, which dome runs when they are used; linked
// into dome, their package initialisation would slow every command's start
// (bench/startup). The helpers are checked to link them, so the test
// cannot pass by listing the wrong packages.
func TestDomeBinaryLinksNoHeavyIntegrations(t *testing.T) {
	heavy := []string{"github.com/openai/openai-go", "go.opentelemetry.io/", "google.golang.org/grpc", "google.golang.org/protobuf"}
	deps := func(pkg string) []string {
		out, err := exec.Command("go", "list", "-deps", "-tags", "urfave_cli_no_docs", module+"/"+pkg).Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", pkg, err)
		}
		return strings.Fields(string(out))
	}
	links := func(deps []string, prefix string) bool {
		for _, d := range deps {
			if strings.HasPrefix(d, prefix) {
				return true
			}
		}
		return false
	}
	for _, dep := range deps("cmd/dome-full") {
		for _, h := range heavy {
			if strings.HasPrefix(dep, h) {
				t.Errorf("bin/dome-full links %s: it belongs in a helper program (cmd/dome-openai, cmd/dome-otel) that dome runs through pkg/helperexec", dep)
			}
		}
	}
	if !links(deps("cmd/dome-openai"), heavy[0]) {
		t.Errorf("cmd/dome-openai does not link %s", heavy[0])
	}
	if otel := deps("cmd/dome-otel"); !links(otel, heavy[1]) || !links(otel, heavy[3]) {
		t.Errorf("cmd/dome-otel does not link the OpenTelemetry SDK")
	}
}

// TestFrontLinksOnlyWhatItRuns: bin/dome, the front (internal/front), is
// the start every dome command pays, so it links only what dome --version,
// a local dome registry cat and a local dome patch apply need: Go
// initializes every linked package before main, and each of these costs
// start-up time or page faults (bench/startup); x/text's charset tables
// alone take about 0.13 ms (pkg/patch/charsets). The full command set is
// checked to link them, so the test cannot pass by naming packages nothing
// links.
func TestFrontLinksOnlyWhatItRuns(t *testing.T) {
	heavy := []string{
		"github.com/go-git/go-git/v5", // every go-git package: transports, OpenPGP, gcfg (encoding/gob)
		"github.com/ProtonMail/", "github.com/cloudflare/circl", "golang.org/x/crypto/ssh", "encoding/gob",
		"github.com/getkin/kin-openapi", module + "/internal/oapicodegen", "github.com/nats-io/",
		"golang.org/x/text/", "github.com/urfave/cli", "net/http", "html/template", "text/template", "go/",
		"github.com/dlclark/regexp2", "github.com/jackc/", "github.com/sergi/go-diff",
		module + "/internal/app", module + "/pkg/specfilter", module + "/pkg/codegen", module + "/pkg/patch/charsets",
		module + "/pkg/stack",
	}
	list := func(pkg string) []string {
		out, err := exec.Command("go", "list", "-deps", "-tags", "urfave_cli_no_docs", module+"/"+pkg).Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", pkg, err)
		}
		return strings.Fields(string(out))
	}
	isHeavy := func(dep string) string {
		for _, h := range heavy {
			if dep == h || strings.HasPrefix(dep, h+"/") || (strings.HasSuffix(h, "/") && strings.HasPrefix(dep, h)) {
				return h
			}
		}
		return ""
	}
	for _, dep := range list("cmd/dome") {
		if h := isHeavy(dep); h != "" {
			t.Errorf("bin/dome (the front) links %s (%s): its commands run in bin/dome-full; keep what the front runs (internal/readcmd, internal/patchcmd, pkg/registry, pkg/gitstore, pkg/patch) free of it", dep, h)
		}
	}
	seen := map[string]bool{}
	for _, dep := range list("cmd/dome-full") {
		if h := isHeavy(dep); h != "" {
			seen[h] = true
		}
	}
	for _, h := range heavy {
		if !seen[h] {
			t.Errorf("bin/dome-full links nothing under %s: the list of what the front must not link is out of date", h)
		}
	}
}
