package registry_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dome-registry/dome/internal/gittest"
	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/dome-registry/dome/pkg/gitstore"
	"github.com/dome-registry/dome/pkg/registry"
	"github.com/dome-registry/dome/pkg/schemaval"
)

func TestParseRef(t *testing.T) {
	tests := []struct {
		in      string
		id, rev string
		wantErr string
	}{
		{"petstore@main", "petstore", "main", ""},
		{"petstore@v1.2.0", "petstore", "v1.2.0", ""},
		{"a.b_c-d@refs/tags/x/y", "a.b_c-d", "refs/tags/x/y", ""},
		{"p@HEAD", "p", "HEAD", ""},
		{"p@0123456789abcdef0123456789abcdef01234567", "p", "0123456789abcdef0123456789abcdef01234567", ""},
		{"", "", "", "empty reference"},
		{"petstore", "", "", "missing @<ref>"},
		{"petstore@", "", "", "missing ref after"},
		{"@main", "", "", "missing id before"},
		{"a@b@c", "", "", "more than one"},
		{"Pet@main", "", "", "must match"},
		{"-x@main", "", "", "must match"},
		{"a..b@main", "", "", "must match"},
		{"p@a b", "", "", "invalid ref"},
		{"p@a..b", "", "", "invalid ref"},
		{"p@main~1", "p", "main~1", ""},
		{"p@v1.2.0^2", "p", "v1.2.0^2", ""},
		{"p@x~y", "", "", "invalid ref"},
		{"p@~1", "", "", "invalid ref"},
		{"p@a~1b", "", "", "invalid ref"},
		{"p@x:y", "", "", "invalid ref"},
		{"p@refs/heads/x.lock", "", "", "invalid ref"},
		{"p@/abs", "", "", "invalid ref"},
		{"p@a\x00b", "", "", "invalid ref"},
	}
	for _, tt := range tests {
		r, err := registry.ParseRef("tool", tt.in)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !errkind.IsInput(err) {
				t.Errorf("ParseRef(%q) = %v, want input error containing %q", tt.in, err, tt.wantErr)
			}
			continue
		}
		if err != nil || r.ID != tt.id || r.Rev != tt.rev {
			t.Errorf("ParseRef(%q) = %+v, %v", tt.in, r, err)
		}
	}
}

func TestIsReleaseVersion(t *testing.T) {
	for v, want := range map[string]bool{
		"v1.2.3": true, "v0.0.1": true, "v10.20.30": true, "v1.0.0-rc.1": true,
		"1.2.3": false, "v1.2": false, "v1": false, "v1.2.3+build": false, "v01.2.3": false, "main": false,
	} {
		if got := registry.IsReleaseVersion(v); got != want {
			t.Errorf("IsReleaseVersion(%q) = %v", v, got)
		}
	}
}

func TestCleanRelPath(t *testing.T) {
	for p, ok := range map[string]bool{
		"spec/openapi.yaml": true, "a/./b": true, "tool.json": true,
		"": false, ".": false, "/etc/passwd": false, "../x": false, "a/../../x": false,
		".git/config": false, "a/.GIT/x": false, "a\\b": false, "a\x01b": false,
	} {
		_, err := registry.CleanRelPath(p)
		if (err == nil) != ok {
			t.Errorf("CleanRelPath(%q) err = %v, want ok=%v", p, err, ok)
		}
	}
}

func FuzzParseRef(f *testing.F) {
	for _, s := range []string{"petstore@main", "a@b@c", "@", "p@v1.2.3", "p@refs/tags/a/b", "x@..", "p@\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := registry.ParseRef("tool", s)
		if err != nil {
			if !errkind.IsInput(err) {
				t.Fatalf("non-input error %v", err)
			}
			return
		}
		if !registry.ValidID(r.ID) || r.String() != s {
			t.Fatalf("accepted %q as %+v", s, r)
		}
		if strings.Contains(r.Rev, "..") || strings.ContainsAny(r.Rev, " \x00:") {
			t.Fatalf("accepted unsafe rev %q", r.Rev)
		}
	})
}

func FuzzCleanRelPath(f *testing.F) {
	for _, s := range []string{"spec/openapi.yaml", "../x", "a/../b", ".git", "/x", "a//b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := registry.CleanRelPath(s)
		if err != nil {
			return
		}
		if strings.HasPrefix(c, "/") || c == ".." || strings.HasPrefix(c, "../") || strings.Contains(c, "/../") {
			t.Fatalf("%q cleaned to escaping %q", s, c)
		}
		for _, comp := range strings.Split(c, "/") {
			if strings.EqualFold(comp, ".git") {
				t.Fatalf("%q cleaned to %q with .git", s, c)
			}
		}
	})
}

// copyTree copies the repository's example files into a test repository.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.Walk(src, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if fi.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestExampleRegistry checks every file of the registry this repository
// ships: tools, profiles and policy files validate and resolve.
func TestExampleRegistry(t *testing.T) {
	g := gittest.New(t)
	copyTree(t, "../../registry", filepath.Join(g.Dir, "registry"))
	copyTree(t, "../../policy", filepath.Join(g.Dir, "policy"))
	g.Commit("example registry")
	repo, err := gitstore.Open(g.Dir)
	if err != nil {
		t.Fatal(err)
	}
	reg := registry.New(repo)
	ctx := context.Background()
	p, err := reg.PinRev(ctx, "", "main", registry.PinOptions{})
	if err != nil {
		t.Fatal(err)
	}
	tools, err := reg.List(p)
	if err != nil {
		t.Fatal(err)
	}
	if len(tools) < 3 {
		t.Fatalf("example registry has %d tools, want at least 3", len(tools))
	}
	for _, tool := range tools {
		// Skill contracts (label "skill") ship one default profile: the
		// grant, not the profile, narrows what a worker may call.
		tr0, err := reg.ResolveTool(ctx, registry.Ref{ID: tool.ID, Rev: "main"}, registry.PinOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if slices.Contains(tr0.Tool.Labels, "skill") {
			if !slices.Contains(tool.Profiles, "default") {
				t.Errorf("skill %s has profiles %v, want default", tool.ID, tool.Profiles)
			}
		} else if len(tool.Profiles) < 3 {
			t.Errorf("%s has profiles %v, want at least default, readonly, highrisk", tool.ID, tool.Profiles)
		}
		tr, err := reg.ResolveTool(ctx, registry.Ref{ID: tool.ID, Rev: "main"}, registry.PinOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := reg.ReadFile(tr, tr.Tool.Spec); err != nil {
			t.Errorf("%s: spec %s: %v", tool.ID, tr.Tool.Spec, err)
		}
		if tr.Tool.DefaultProfile != "" {
			if _, err := reg.ProfileAt(tool.ID, tr.Tool.DefaultProfile, p); err != nil {
				t.Errorf("%s: default profile: %v", tool.ID, err)
			}
		}
		for _, pid := range tool.Profiles {
			if _, err := reg.ProfileAt(tool.ID, pid, p); err != nil {
				t.Errorf("%s: %v", tool.ID, err)
			}
		}
	}
	entries, err := reg.A2AList(p)
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	for _, e := range entries {
		kinds[e.Kind]++
		if e.Digest == "" || len(e.Capabilities) == 0 {
			t.Errorf("%s/%s: %+v", e.Kind, e.ID, e)
		}
	}
	if kinds["runtime"] < 3 || kinds["tool"] < 3 || kinds["profile"] < 3 {
		t.Errorf("a2a entries: %v", kinds)
	}
	for _, f := range []string{registry.ResolverSpecPath, registry.PolicySpecPath} {
		if _, err := reg.ReadPolicyFile(p, f); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
}

func TestSchemasCompile(t *testing.T) {
	for _, name := range []string{registry.SchemaTool, registry.SchemaProfile, registry.SchemaGeneratorsLock, registry.SchemaResolverSpec, registry.SchemaPolicySpec} {
		b, err := registry.SchemaBytes(name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := schemaval.Compile(name, b); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// TestResolveMany_MatchesOneByOne resolves a batch big enough to use several
// workers and checks every answer against a one-by-one resolution.
func TestResolveMany_MatchesOneByOne(t *testing.T) {
	g := gittest.New(t)
	var shas []string
	for c := 0; c < 12; c++ {
		files := map[string]string{}
		for i := 0; i < 6; i++ {
			id := "t" + string(rune('a'+i))
			files["registry/tools/"+id+"/tool.json"] = `{"schema_version": "dome.tool/v1", "id": "` + id + `", "title": "T", "owners": ["o"], "spec": "spec/openapi.yaml"}`
			files["registry/tools/"+id+"/spec/openapi.yaml"] = "openapi: 3.0.3\n# " + id + " revision " + string(rune('A'+c)) + "\n"
		}
		g.Write(files)
		shas = append(shas, g.Commit("c"))
	}
	g.Git("gc", "-q")
	repo, err := gitstore.Open(g.Dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var reqs []registry.Request
	for i := 0; i < 300; i++ {
		q := registry.Request{Tool: "t" + string(rune('a'+i%6)) + "@" + shas[(i*7)%len(shas)]}
		if i%50 == 0 {
			q.Tool = "nosuch@main"
		}
		reqs = append(reqs, q)
	}
	got := registry.New(repo).ResolveMany(ctx, reqs, registry.PinOptions{})
	one := registry.New(repo)
	for i, q := range reqs {
		ref, _ := registry.ParseRef("tool", q.Tool)
		want, err := one.ResolveTool(ctx, ref, registry.PinOptions{})
		if (err != nil) != (got[i].Err != nil) {
			t.Fatalf("request %d (%s): batch err %v, single err %v", i, q.Tool, got[i].Err, err)
		}
		if err != nil {
			continue
		}
		if got[i].Tool.ToolTree != want.ToolTree || len(got[i].Tool.Files) != len(want.Files) || got[i].Tool.Files[1].Blob != want.Files[1].Blob {
			t.Fatalf("request %d (%s): batch %+v, single %+v", i, q.Tool, got[i].Tool, want)
		}
	}
}

// TestCreateReleaseTag_ConcurrentExactlyOneWins: processes racing to release
// one version (each with its own open repository) produce exactly one tag.
func TestCreateReleaseTag_ConcurrentExactlyOneWins(t *testing.T) {
	g := gittest.New(t)
	g.Write(map[string]string{"registry/tools/x/tool.json": "{}"})
	c := g.Commit("c")
	commit, _ := gitstore.ParseHash(c)
	var wg sync.WaitGroup
	results := make([]error, 16)
	for i := range results {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			repo, err := gitstore.Open(g.Dir)
			if err != nil {
				results[i] = err
				return
			}
			msg := []byte(fmt.Sprintf("{\"writer\":%d}\n", i))
			_, results[i] = registry.New(repo).CreateReleaseTag("x", "v1.0.0", commit, msg, gitstore.Signature{Name: "r", Email: "r@x", When: time.Unix(0, 0)}, nil)
		}(i)
	}
	wg.Wait()
	wins := 0
	for _, err := range results {
		if err == nil {
			wins++
		} else if !errkind.IsCheck(err) {
			t.Errorf("loser got %v, want a check error", err)
		}
	}
	if wins != 1 {
		t.Fatalf("%d writers won, want exactly 1", wins)
	}
	if out := g.Git("tag", "-l", "registry/*"); out != "registry/x/v1.0.0" {
		t.Fatalf("tags: %q", out)
	}
}
