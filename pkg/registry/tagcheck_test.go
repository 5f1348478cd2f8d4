package registry_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dome-registry/dome/internal/gittest"
	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/dome-registry/dome/pkg/gitstore"
	"github.com/dome-registry/dome/pkg/knowntags"
	"github.com/dome-registry/dome/pkg/registry"
)

// tagRepo is a repository with a tool "x" released twice, v1.0.0 on c1 and
// v1.1.0 on c2, each tag carrying its own release record, and a third commit.
type tagRepo struct {
	g          *gittest.Repo
	c1, c2, c3 string
}

func newTagRepo(t testing.TB) *tagRepo {
	t.Helper()
	g := gittest.New(t)
	files := func(v string) map[string]string {
		return map[string]string{
			"registry/tools/x/tool.json":                     `{"schema_version": "dome.tool/v1", "id": "x", "title": "X", "owners": ["o"], "spec": "spec/openapi.yaml"}`,
			"registry/tools/x/spec/openapi.yaml":             "openapi: 3.0.3\ninfo: {title: X, version: " + v + "}\npaths: {}\n",
			"registry/tools/x/profiles/default.profile.json": `{"schema_version": "dome.profile/v1", "id": "default"}`,
		}
	}
	r := &tagRepo{g: g}
	g.Write(files("1.0.0"))
	r.c1 = g.Commit("one")
	r.tag("v1.0.0", r.c1, r.record("x", "v1.0.0", r.c1))
	g.Write(files("1.1.0"))
	r.c2 = g.Commit("two")
	r.tag("v1.1.0", r.c2, r.record("x", "v1.1.0", r.c2))
	g.Write(files("1.2.0"))
	r.c3 = g.Commit("three")
	return r
}

func (r *tagRepo) record(tool, version, commit string) string {
	return fmt.Sprintf(`{"breaking_changes":[],"canonicalization":"jcs-rfc8785","commit":%q,"manifests":{},"profiles":{},"schema_version":"dome.release_record/v1","tool_id":%q,"tool_tree":"4b825dc642cb6eb9a060e54bf8d69288fbee4904","version":%q}`, commit, tool, version)
}

// tag points registry/x/<version> at commit with a new tag object carrying
// message (git mktag, git update-ref: how a tag is moved by hand).
func (r *tagRepo) tag(version, commit, message string) string {
	obj := r.g.GitStdin(fmt.Sprintf("object %s\ntype commit\ntag registry/x/%s\ntagger T <t@x> 1767323045 +0000\n\n%s\n", commit, version, message), "mktag")
	r.g.Git("update-ref", "refs/tags/registry/x/"+version, obj)
	return obj
}

func (r *tagRepo) registry(t *testing.T, memory string) *registry.Registry {
	t.Helper()
	repo, err := gitstore.Open(r.g.Dir)
	if err != nil {
		t.Fatal(err)
	}
	reg := registry.New(repo)
	if memory != "" {
		reg.SetTagMemory(knowntags.Open(memory))
	}
	return reg
}

func pinErr(t *testing.T, reg *registry.Registry, rev string, pinned bool) error {
	t.Helper()
	_, err := reg.PinRev(context.Background(), "x", rev, registry.PinOptions{Pinned: pinned})
	return err
}

func TestReleaseTag_MovedWithItsOldRecord_IsRefusedEverywhere(t *testing.T) {
	gittest.Need(t)
	r := newTagRepo(t)
	memory := filepath.Join(t.TempDir(), "known-tags")
	if err := pinErr(t, r.registry(t, memory), "v1.0.0", true); err != nil {
		t.Fatal(err)
	}
	old := r.g.Git("cat-file", "tag", "registry/x/v1.0.0")
	_, msg, _ := strings.Cut(old, "\n\n")
	r.tag("v1.0.0", r.c3, msg) // a new tag object on c3, v1.0.0's record
	for _, rev := range []string{"v1.0.0", "v1.0.0^0", "v1.0.0~0", "registry/x/v1.0.0", "refs/tags/registry/x/v1.0.0", "registry/x/v1.0.0~0"} {
		for _, mem := range []string{memory, ""} {
			err := pinErr(t, r.registry(t, mem), rev, false)
			if !errkind.IsCheck(err) || !strings.Contains(err.Error(), r.c3) || !strings.Contains(err.Error(), r.c1) {
				t.Errorf("x@%s (memory %q): error %v, want a check error naming %s and %s", rev, mem, err, r.c1, r.c3)
			}
		}
	}
	if _, err := r.registry(t, "").AllReleases(); !errkind.IsCheck(err) {
		t.Errorf("AllReleases: %v", err)
	}
	// A tag forged with a record that matches is caught by the memory only.
	r.tag("v1.0.0", r.c3, r.record("x", "v1.0.0", r.c3))
	if err := pinErr(t, r.registry(t, ""), "v1.0.0", true); err != nil {
		t.Fatalf("without memory a consistent tag reads: %v", err)
	}
	err := pinErr(t, r.registry(t, memory), "v1.0.0", true)
	if !errkind.IsCheck(err) || !strings.Contains(err.Error(), "first saw it on commit "+r.c1+" and it now points at commit "+r.c3) {
		t.Fatalf("with memory: %v", err)
	}
	if _, err := r.registry(t, memory).Releases("x"); !errkind.IsCheck(err) {
		t.Fatalf("Releases with memory: %v", err)
	}
}

func TestReleaseTag_CopiedRecordIsNeverLatest(t *testing.T) {
	gittest.Need(t)
	r := newTagRepo(t)
	old := r.g.Git("cat-file", "tag", "registry/x/v1.1.0")
	_, msg, _ := strings.Cut(old, "\n\n")
	r.tag("v2.0.0", r.c2, msg)
	reg := r.registry(t, "")
	_, err := reg.Releases("x")
	if !errkind.IsCheck(err) || !strings.Contains(err.Error(), "its record is the release of x v1.1.0") {
		t.Fatalf("Releases: %v", err)
	}
	p, _ := reg.PinRev(context.Background(), "x", "main", registry.PinOptions{})
	if _, err := reg.List(p); err == nil {
		t.Fatal("List shows a registry with a copied release tag")
	}
	// verify sees it as it is
	raw, err := reg.ReleaseTags()
	if err != nil || len(raw["x"]) != 3 {
		t.Fatalf("ReleaseTags: %v %v", raw, err)
	}
}

func TestReleaseTag_NotReleasesAreLeftOut(t *testing.T) {
	gittest.Need(t)
	r := newTagRepo(t)
	r.g.Git("tag", "registry/x/v9.0.0", r.c3)                            // lightweight
	r.g.Git("tag", "-a", "-m", "by hand", "registry/x/v8.0.0", r.c3)     // no record
	r.g.Git("tag", "-a", "-m", "not a version", "registry/x/next", r.c3) // not vX.Y.Z
	reg := r.registry(t, filepath.Join(t.TempDir(), "known-tags"))
	rels, err := reg.Releases("x")
	if err != nil {
		t.Fatal(err)
	}
	var vs []string
	for _, rel := range rels {
		vs = append(vs, rel.Version)
	}
	if got := strings.Join(vs, ","); got != "v1.0.0,v1.1.0" {
		t.Fatalf("releases %s", got)
	}
	if l, _ := registry.Latest(rels); l.Version != "v1.1.0" {
		t.Fatalf("latest %s", l.Version)
	}
	err = pinErr(t, reg, "v8.0.0", false)
	var ie *errkind.InputError
	if !errors.As(err, &ie) || !strings.Contains(err.Error(), "not a release made by dome release") {
		t.Fatalf("record-less tag: %v", err)
	}
	if err := pinErr(t, reg, "v9.0.0", false); !errkind.IsInput(err) {
		t.Fatalf("lightweight tag: %v", err)
	}
}

func TestNextVersionCheck_ARemovedReleaseIsNotReleasedAgain(t *testing.T) {
	gittest.Need(t)
	r := newTagRepo(t)
	memory := filepath.Join(t.TempDir(), "known-tags")
	if _, err := r.registry(t, memory).Releases("x"); err != nil {
		t.Fatal(err)
	}
	r.g.Git("tag", "-d", "registry/x/v1.1.0")
	_, err := r.registry(t, memory).NextVersionCheck("x", "v1.1.0")
	if !errkind.IsCheck(err) || !strings.Contains(err.Error(), "was released before") {
		t.Fatalf("%v", err)
	}
	if _, err := r.registry(t, "").NextVersionCheck("x", "v1.1.0"); err != nil {
		t.Fatalf("without memory: %v", err)
	}
}

// BenchmarkPin_ReleaseTag: what checking a release tag costs a lookup
// (its record, and the memory of 1,000 known tags), against the pin alone.
func BenchmarkPin_ReleaseTag(b *testing.B) {
	gittest.Need(b)
	r := newTagRepo(b)
	memory := filepath.Join(b.TempDir(), "known-tags")
	var es []knowntags.Entry
	for i := 0; i < 1000; i++ {
		es = append(es, knowntags.Entry{Repo: "github.com/org/other", Tag: fmt.Sprintf("registry/t%d/v1.0.0", i), Object: fmt.Sprintf("%040x", i+1), Commit: fmt.Sprintf("%040x", i+2)})
	}
	if err := knowntags.Open(memory).Observe(es); err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct{ name, rev, memory string }{
		{"full_sha", r.c1, ""},
		{"release_tag/record", "v1.0.0", ""},
		{"release_tag/record+memory", "v1.0.0", memory},
	} {
		b.Run(bc.name, func(b *testing.B) {
			repo, err := gitstore.Open(r.g.Dir)
			if err != nil {
				b.Fatal(err)
			}
			for i := 0; i < b.N; i++ {
				reg := registry.New(repo) // a fresh registry: no pin cache, as in a new process
				if bc.memory != "" {
					reg.SetTagMemory(knowntags.Open(bc.memory))
				}
				if _, err := reg.PinRev(context.Background(), "x", bc.rev, registry.PinOptions{Pinned: true}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func TestResolveMany_RemembersItsTagsAndRefusesMoves(t *testing.T) {
	gittest.Need(t)
	r := newTagRepo(t)
	memory := filepath.Join(t.TempDir(), "known-tags")
	reqs := []registry.Request{{Tool: "x@v1.0.0"}, {Tool: "x@v1.1.0", Profile: "default@v1.0.0"}, {Tool: "x@" + r.c3}}
	for i, res := range r.registry(t, memory).ResolveMany(context.Background(), reqs, registry.PinOptions{}) {
		if res.Err != nil {
			t.Fatalf("request %d: %v", i, res.Err)
		}
	}
	for _, v := range []string{"v1.0.0", "v1.1.0"} {
		if _, ok, err := knowntags.Open(memory).Lookup(r.registry(t, "").RepoKey(), "registry/x/"+v); err != nil || !ok {
			t.Errorf("%s not remembered: %v", v, err)
		}
	}
	r.tag("v1.1.0", r.c3, r.record("x", "v1.1.0", r.c3))
	res := r.registry(t, memory).ResolveMany(context.Background(), reqs, registry.PinOptions{})
	if res[0].Err != nil || res[2].Err != nil {
		t.Fatalf("unmoved requests failed: %v, %v", res[0].Err, res[2].Err)
	}
	if err := res[1].Err; !errkind.IsCheck(err) || !strings.Contains(err.Error(), "moved") {
		t.Fatalf("moved tag in a batch: %v", err)
	}
}
