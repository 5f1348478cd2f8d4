package archtest

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"sort"
	"strings"
	"testing"
)

// heavyForReading are packages whose initialization a command that only
// reads a registry must not pay: every dome process initializes every
// package its binary links, and `dome --version` or a cold
// `dome registry cat` is meant to start within twice a Go hello world.
// A prefix ending in "/" matches below it; otherwise the package itself
// and the packages below it.
var heavyForReading = []struct{ prefix, what string }{
	{"github.com/go-git/", "go-git (its root package links the transports, SSH and gcfg; plumbing/object links OpenPGP); pkg/gitstore reads git's formats itself and its sub-packages use go-git"},
	{"github.com/ProtonMail/go-crypto/", "OpenPGP (pkg/gitstore/gitsign)"},
	{"github.com/cloudflare/circl/", "OpenPGP's elliptic curves"},
	{"golang.org/x/crypto/ssh", "SSH (go-git's transport, pkg/gitstore/gitremote)"},
	{"net/http", "HTTP (go-git's transport, pkg/gitstore/gitremote)"},
	{"encoding/gob", "encoding/gob (gcfg, go-git's config parser, imports it)"},
	{"github.com/sergi/go-diff", "go-git's diff"},
	{"github.com/emirpasic/gods", "go-git's revision walking"},
}

func isHeavy(dep string) (string, bool) {
	for _, h := range heavyForReading {
		if strings.HasSuffix(h.prefix, "/") && strings.HasPrefix(dep, h.prefix) ||
			dep == h.prefix || strings.HasPrefix(dep, h.prefix+"/") {
			return h.what, true
		}
	}
	return "", false
}

// depGraph is the import graph below some packages (go list -deps).
type depGraph map[string][]string

func loadDeps(t *testing.T, pkgs ...string) depGraph {
	t.Helper()
	args := append([]string{"list", "-deps", "-json=ImportPath,Imports"}, pkgs...)
	out, err := exec.Command("go", args...).Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	g := depGraph{}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for dec.More() {
		var p pkgInfo
		if err := dec.Decode(&p); err != nil {
			t.Fatalf("decode go list output: %v", err)
		}
		g[p.ImportPath] = p.Imports
	}
	return g
}

// chain returns the shortest import chain from root to dep, or nil.
func (g depGraph) chain(root, dep string) []string {
	prev := map[string]string{root: ""}
	queue := []string{root}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		if p == dep {
			var path []string
			for ; p != ""; p = prev[p] {
				path = append([]string{p}, path...)
			}
			return path
		}
		for _, imp := range g[p] {
			if _, seen := prev[imp]; !seen {
				prev[imp] = p
				queue = append(queue, imp)
			}
		}
	}
	return nil
}

// heavyDeps returns, for each heavy package below root, the import chain
// that brings it in.
func (g depGraph) heavyDeps(root string) map[string][]string {
	out := map[string][]string{}
	for dep := range g {
		if _, heavy := isHeavy(dep); heavy {
			if c := g.chain(root, dep); c != nil {
				out[dep] = c
			}
		}
	}
	return out
}

// entries groups heavy packages by where they come in: the first heavy
// package on each one's chain, with that chain. A single import of go-git
// brings dozens of packages; the report names the import, once.
func entries(heavy map[string][]string) (map[string][]string, map[string]int) {
	chains, counts := map[string][]string{}, map[string]int{}
	for _, chain := range heavy {
		for i, p := range chain {
			if _, h := isHeavy(p); h {
				chains[p] = chain[:i+1]
				counts[p]++
				break
			}
		}
	}
	return chains, counts
}

// TestRegistryReadPathLinksNoHeavyPackages: pkg/gitstore and pkg/registry
// (what `dome registry cat` and the other reading commands link) link
// neither go-git nor OpenPGP nor network code. The sub-packages of
// pkg/gitstore are checked to link them, so the test cannot pass by
// listing the wrong packages.
func TestRegistryReadPathLinksNoHeavyPackages(t *testing.T) {
	roots := []string{module + "/pkg/gitstore", module + "/pkg/registry"}
	g := loadDeps(t, roots...)
	for _, root := range roots {
		chains, counts := entries(g.heavyDeps(root))
		var entry []string
		for p := range chains {
			entry = append(entry, p)
		}
		sort.Strings(entry)
		for _, p := range entry {
			what, _ := isHeavy(p)
			more := ""
			if counts[p] > 1 {
				more = fmt.Sprintf(" (and %d heavy packages below it)", counts[p]-1)
			}
			t.Errorf("%s links %s%s: %s\n\timport chain: %s",
				strings.TrimPrefix(root, module+"/"), p, more, what, strings.Join(chains[p], " -> "))
		}
	}
	for pkg, want := range map[string][]string{
		"pkg/gitstore/gitremote":   {"github.com/go-git/go-git/v5", "net/http", "golang.org/x/crypto/ssh", "encoding/gob"},
		"pkg/gitstore/gitsign":     {"github.com/ProtonMail/go-crypto/openpgp"},
		"pkg/gitstore/gitworktree": {"github.com/go-git/go-git/v5", "github.com/go-git/go-git/v5/plumbing/format/config"},
	} {
		sub := loadDeps(t, module+"/"+pkg)
		found := sub.heavyDeps(module + "/" + pkg)
		for _, dep := range want {
			if _, ok := found[dep]; !ok {
				t.Errorf("%s does not link %s: the check would not see it either", pkg, dep)
			}
		}
	}
}

func TestDepGraph_Chain(t *testing.T) {
	g := depGraph{"a": {"b", "c"}, "b": {"d"}, "c": {"d", "e"}, "d": {"net/http"}, "e": nil, "net/http": nil}
	if got := strings.Join(g.chain("a", "net/http"), " -> "); got != "a -> b -> d -> net/http" {
		t.Errorf("chain = %q", got)
	}
	if got := g.chain("e", "net/http"); got != nil {
		t.Errorf("chain from a leaf = %v", got)
	}
	for dep, heavy := range map[string]bool{
		"net/http": true, "net/http/httptrace": true, "net/httpx": false, "encoding/gob": true,
		"github.com/go-git/go-git/v5": true, "github.com/go-git/go-billy/v5": true, "github.com/go-gitx/y": false,
		"golang.org/x/crypto/ssh/agent": true, "golang.org/x/crypto/sha3": false,
	} {
		if _, got := isHeavy(dep); got != heavy {
			t.Errorf("isHeavy(%s) = %v", dep, got)
		}
	}
}
