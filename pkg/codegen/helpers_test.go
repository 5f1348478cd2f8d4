package codegen_test

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dome-registry/dome/internal/gittest"
	"github.com/dome-registry/dome/pkg/codegen"
	"github.com/dome-registry/dome/pkg/gitstore"
	"github.com/dome-registry/dome/pkg/registry"
)

// repoRoot is the dome checkout these tests run in.
func repoRoot(t testing.TB) string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// readTree returns the files below dir (relative, slash-separated).
func readTree(t testing.TB, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		data, err := os.ReadFile(p)
		out[filepath.ToSlash(rel)] = string(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// exampleRepo commits the example registry and the bundles of this checkout
// into a fresh repository with a fixed author and clock, so the commit ids
// (and so the manifests) are the same on every run.
func exampleRepo(t testing.TB) *gittest.Repo {
	t.Helper()
	r := gittest.New(t)
	files := map[string]string{}
	for _, top := range []string{"registry/tools", "generators"} {
		for p, c := range readTree(t, filepath.Join(repoRoot(t), filepath.FromSlash(top))) {
			files[top+"/"+p] = c
		}
	}
	r.Write(files)
	r.Commit("example registry")
	return r
}

func openGen(t testing.TB, dir string) *codegen.Generator {
	t.Helper()
	repo, err := gitstore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	return &codegen.Generator{Reg: registry.New(repo), DomeVersion: "test"}
}

// generateAll generates every client of the registry at HEAD.
func generateAll(t testing.TB, g *codegen.Generator) []*codegen.Client {
	t.Helper()
	p, err := g.Reg.PinRev(context.Background(), "", "HEAD", registry.PinOptions{})
	if err != nil {
		t.Fatal(err)
	}
	jobs, _, err := g.PlanAll(p, nil)
	if err != nil {
		t.Fatal(err)
	}
	clients, err := g.GenerateAll(context.Background(), jobs, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	return clients
}

func keys(cs []*codegen.Client) string {
	var ks []string
	for _, c := range cs {
		ks = append(ks, c.Key())
	}
	return strings.Join(ks, " ")
}
