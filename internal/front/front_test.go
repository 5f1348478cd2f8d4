package front_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dome-registry/dome/internal/app"
	"github.com/dome-registry/dome/internal/front"
	"github.com/dome-registry/dome/internal/gittest"
	"github.com/dome-registry/dome/internal/readcmd"
)

type outcome struct {
	code           int
	stdout, stderr string
}

// runFront runs the front with the full command set in process, and says
// whether it handed the command line over.
func runFront(t *testing.T, wd string, args []string) (outcome, bool) {
	t.Helper()
	var out, errOut bytes.Buffer
	handed := false
	code := front.Main(context.Background(), front.Env{Args: args, Env: readcmd.Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errOut,
		Getenv: os.Getenv, Now: now, WorkDir: wd}}, func(args []string) int {
		handed = true
		return runApp(wd, args, &out, &errOut)
	})
	return outcome{code, out.String(), errOut.String()}, handed
}

// now is the clock of both programs in the tests: commits are the same.
func now() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) }

func runApp(wd string, args []string, out, errOut *bytes.Buffer) int {
	env := &app.Env{Stdin: strings.NewReader(""), Stdout: out, Stderr: errOut, Getenv: os.Getenv, Now: now, WorkDir: wd}
	return app.Run(context.Background(), env, args)
}

func runFull(wd string, args []string) outcome {
	var out, errOut bytes.Buffer
	code := runApp(wd, args, &out, &errOut)
	return outcome{code, out.String(), errOut.String()}
}

// TestFrontReadsCommandLinesAsTheFullCommandSet runs many command lines
// through the front and through the full command set alone: the same
// bytes and exit code every time, and the front runs the common ones
// itself (else the test would pass by handing everything over).
func TestFrontReadsCommandLinesAsTheFullCommandSet(t *testing.T) {
	r := gittest.New(t)
	r.Write(map[string]string{
		"tools/alpha/tool.json":         `{"schema_version": "dome.tool/v1", "id": "alpha", "title": "Alpha API", "owners": ["a"], "spec": "spec/openapi.yaml"}`,
		"tools/alpha/spec/openapi.yaml": "openapi: 3.0.3\ninfo: {title: Alpha, version: 1.0.0}\npaths: {}\n",
		"tools/broken/tool.json":        `{"schema_version": "dome.tool/v1", "id": "other"}`,
	})
	r.Commit("tools")
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_STATE_HOME", "")
	t.Setenv("DOME_KNOWN_TAGS", "")
	elsewhere := t.TempDir() // not a repository
	sub := filepath.Join(r.Dir, "tools", "alpha")

	type tc struct {
		wd, domeRepo string
		args         []string
		native       bool
	}
	var cases []tc
	add := func(native bool, wd, domeRepo string, args ...string) {
		cases = append(cases, tc{wd, domeRepo, append([]string{"dome"}, args...), native})
	}
	// version
	for _, a := range [][]string{{"--version"}, {"-version"}, {"-v"}, {"--v"}, {"version"}, {"version", "--json"}, {"--json", "version"},
		{"-q", "version"}, {"version", "--repo", "/nowhere"}} {
		add(true, r.Dir, "", a...)
	}
	for _, a := range [][]string{{"--version", "x"}, {"--json", "--version"}, {"version", "x"}, {"version", "--help"}, {"version", "--json=true"}, {"versions"}} {
		add(false, r.Dir, "", a...)
	}
	// registry cat: where the repository comes from
	cat := []string{"registry", "cat", "alpha@HEAD", "spec/openapi.yaml"}
	add(true, r.Dir, "", cat...)
	add(true, sub, "", cat...)
	add(true, elsewhere, "", cat...)
	add(true, elsewhere, r.Dir, cat...)
	add(true, r.Dir, elsewhere, cat...)
	add(true, elsewhere, "", append([]string{"--repo", r.Dir}, cat...)...)
	add(true, elsewhere, "", append([]string{"--repo=" + r.Dir}, cat...)...)
	add(true, elsewhere, "", append([]string{"-repo", r.Dir}, cat...)...)
	add(true, elsewhere, "", append(cat, "--repo", r.Dir)...)
	add(true, r.Dir, elsewhere, append([]string{"--repo", r.Dir}, cat...)...) // the flag over the environment
	add(true, elsewhere, r.Dir, append([]string{"--repo", elsewhere}, cat...)...)
	add(true, filepath.Dir(r.Dir), "", append([]string{"--repo", filepath.Base(r.Dir)}, cat...)...)
	add(true, r.Dir, "", append([]string{"--repo", "no/such/dir"}, cat...)...)
	// registry cat: global flags anywhere after the command
	add(true, r.Dir, "", "registry", "cat", "--json", "alpha@HEAD", "tool.json")
	add(true, r.Dir, "", "registry", "cat", "alpha@HEAD", "-q", "tool.json")
	add(true, r.Dir, "", "--quiet", "registry", "cat", "alpha@HEAD", "tool.json", "--json")
	// registry cat: what the registry refuses
	for _, a := range [][]string{{"alpha@HEAD", "spec/nope.yaml"}, {"alpha@HEAD", "../broken/tool.json"}, {"alpha@HEAD", "/etc/passwd"},
		{"alpha@HEAD", ".git/config"}, {"alpha@HEAD", "spec"}, {"nope@HEAD", "x"}, {"alpha@nosuch", "tool.json"}, {"alpha", "tool.json"},
		{"alpha@", "tool.json"}, {"@HEAD", "tool.json"}, {"", ""}, {"broken@HEAD", "tool.json"}, {"alpha@HEAD~5", "tool.json"},
		{"alpha@0000000000000000000000000000000000000000", "tool.json"}, {"ALPHA@HEAD", "tool.json"}, {"alpha@main", "-"}} {
		add(true, r.Dir, "", append([]string{"registry", "cat"}, a...)...)
	}
	// handed over: usage errors, help, remotes, flags the front does not read
	for _, a := range [][]string{
		{"registry", "cat"}, {"registry", "cat", "alpha@HEAD"}, {"registry", "cat", "a", "b", "c"},
		{"registry", "cat", "--help", "alpha@HEAD", "tool.json"}, {"registry", "cat", "-h"}, {"registry", "--json", "cat", "alpha@HEAD", "tool.json"},
		{"registry", "cat", "--", "alpha@HEAD", "tool.json"}, {"registry", "cat", "--bogus", "alpha@HEAD", "tool.json"},
		{"registry", "cat", "--json=false", "alpha@HEAD", "tool.json"}, {"registry", "cat", "alpha@HEAD", "tool.json", "--repo"},
		{"--repo", r.Dir, "--repo", r.Dir, "registry", "cat", "alpha@HEAD", "tool.json"}, {"--repo=", "registry", "cat", "alpha@HEAD", "tool.json"},
		{"--repo", "--json", "registry", "cat", "alpha@HEAD", "tool.json"}, {"registry", "list"}, {"registry"}, {}, {"--help"}, {"help", "registry", "cat"},
	} {
		add(false, r.Dir, "", a...)
	}
	add(false, r.Dir, "", "--repo", "file://"+r.Dir, "registry", "cat", "alpha@HEAD", "tool.json")
	add(false, r.Dir, "https://example.invalid/x.git", "registry", "cat", "alpha@HEAD", "tool.json")

	for i, c := range cases {
		t.Run(fmt.Sprintf("%d %s", i, strings.Join(c.args[1:], " ")), func(t *testing.T) {
			t.Setenv("DOME_REPO", c.domeRepo)
			if c.domeRepo == "" {
				os.Unsetenv("DOME_REPO")
			}
			got, handed := runFront(t, c.wd, c.args)
			if handed == c.native {
				t.Errorf("handed over: %v, want %v", handed, !c.native)
			}
			if handed {
				return
			}
			want := runFull(c.wd, c.args)
			if got != want {
				t.Errorf("front and full command set differ:\nfront: exit %d\nstdout %q\nstderr %q\nfull: exit %d\nstdout %q\nstderr %q",
					got.code, got.stdout, got.stderr, want.code, want.stdout, want.stderr)
			}
		})
	}
}

// TestFrontAppliesPatchesAsTheFullCommandSet runs dome patch apply command
// lines through the front and through the full command set alone, each on
// the same repository state: the same bytes (trees, commits, JSON, errors)
// and exit code, and the front runs the common spellings itself.
func TestFrontAppliesPatchesAsTheFullCommandSet(t *testing.T) {
	r := gittest.New(t)
	r.Write(map[string]string{"a.txt": "one\ntwo\nthree\n", "dir/b.txt": "b\n"})
	base := r.Commit("base")
	r.Git("checkout", "-q", "-b", "topic")
	r.Write(map[string]string{"a.txt": "one\n2\nthree\n"})
	r.Commit("edit a")
	r.Write(map[string]string{"dir/c.txt": "new\n"})
	r.Commit("add c")
	series := t.TempDir()
	r.Git("format-patch", "-q", "-o", series, "main")
	r.Git("checkout", "-q", "main")
	p1, p2 := filepath.Join(series, "0001-edit-a.patch"), filepath.Join(series, "0002-add-c.patch")
	plain := filepath.Join(series, "plain.diff") // no message of its own
	os.WriteFile(plain, []byte("--- a/dir/b.txt\n+++ b/dir/b.txt\n@@ -1 +1 @@\n-b\n+B\n"), 0o644)
	conflict := filepath.Join(series, "conflict.patch")
	os.WriteFile(conflict, []byte("diff --git a/a.txt b/a.txt\n--- a/a.txt\n+++ b/a.txt\n@@ -1,3 +1,3 @@\n one\n-zwei\n+2\n three\n"), 0o644)
	elsewhere := t.TempDir()

	type tc struct {
		wd     string
		args   []string
		native bool
	}
	var cases []tc
	add := func(native bool, wd string, args ...string) {
		cases = append(cases, tc{wd, append([]string{"dome", "patch", "apply"}, args...), native})
	}
	for _, a := range [][]string{
		{p1, p2}, {"--commit", "applied", p1, p2}, {"--commit=refs/heads/applied", p1, p2}, {"--json", "--commit", "applied", p1, p2},
		{p1, "--commit", "applied", p2, "--json"}, {"--base", "HEAD", "--commit", "applied", p1}, {"--base=" + base, p1},
		{"-3", "--commit", "applied", p1, p2}, {"--three-way", "--fuzz", "2", p1}, {"-p", "1", p1}, {"--max-size=100000", p1},
		{"-m", "one message", "--commit", "applied", p1, p2}, {"--message=msg", "--commit", "applied", p1},
		{"--commit", "applied", plain}, {"-m", "plain", "--commit", "applied", plain}, {p1, plain},
		{"--max-size", "10", p1}, {"--commit", "applied", p1, conflict}, {"-3", "--write-conflicts", conflict}, {conflict},
		{"--write-conflicts", p1}, {"-m", "x", p1}, {"--commit", "bad..name", p1}, {"--commit", "applied", "no/such.patch"},
		{"--base", "nosuch", p1}, {"--commit", "applied", "--base", base + "~1", p1}, {p1, p1},
	} {
		add(true, r.Dir, a...)
	}
	add(true, elsewhere, "--repo", r.Dir, "--commit", "applied", p1, p2)
	add(true, elsewhere, p1)
	// handed over: what the front does not read, and what needs dome-full
	for _, a := range [][]string{
		{}, {"-"}, {p1, "-"}, {"--fuzz=-1", p1}, {"--fuzz", "010", p1}, {"--fuzz", "0x1", p1}, {"--three-way=false", p1}, {"-p1", p1},
		{"--commit", "a", "--commit", "b", p1}, {"-m", "a", "--message", "b", "--commit", "x", p1}, {"--help"}, {"--", p1}, {"--bogus", p1},
		{"--commit", p1}, {"--commit", "main", p1}, {"--commit", "refs/heads/main", p1}, {"--base"},
	} {
		add(false, r.Dir, a...)
	}
	cases = append(cases, tc{r.Dir, []string{"dome", "patch", "--json", "apply", p1}, false}, tc{r.Dir, []string{"dome", "--commit", "x", "patch", "apply", p1}, false})

	main := r.Git("rev-parse", "main")
	reset := func() {
		r.Git("update-ref", "refs/heads/main", main)
		r.Git("reset", "-q", "--hard")
		for _, ref := range []string{"refs/heads/applied", "refs/heads/a", "refs/heads/b", "refs/heads/x"} {
			r.Git("update-ref", "-d", ref)
		}
	}
	for i, c := range cases {
		t.Run(fmt.Sprintf("%d %s", i, strings.Join(c.args[1:], " ")), func(t *testing.T) {
			defer reset()
			got, handed := runFront(t, c.wd, c.args)
			if handed == c.native {
				t.Errorf("handed over: %v, want %v (%s)", handed, !c.native, got.stderr)
			}
			if handed {
				return
			}
			reset()
			want := runFull(c.wd, c.args)
			if got != want {
				t.Errorf("front and full command set differ:\nfront: exit %d\nstdout %q\nstderr %q\nfull: exit %d\nstdout %q\nstderr %q",
					got.code, got.stdout, got.stderr, want.code, want.stdout, want.stderr)
			}
		})
	}
}
