package stack_test

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/dome-registry/dome/internal/gittest"
	"github.com/dome-registry/dome/pkg/gitstore"
	"github.com/dome-registry/dome/pkg/patch"
	"github.com/dome-registry/dome/pkg/stack"
)

// TestWorktreeSkip: a worker's worktree is read as `git add -A` would see
// it: ignored untracked files (.gitignore at any depth, .git/info/exclude)
// are left out, tracked files are kept even when a rule matches them, and
// ops/runs and --exclude globs are always left out.
func TestWorktreeSkip(t *testing.T) {
	g := gittest.New(t)
	g.Write(map[string]string{
		".gitignore":     "bin/\n*.log\n",
		"keep.log":       "tracked although *.log is ignored\n",
		"src/main.go":    "package main\n",
		"sub/.gitignore": "tmp\n",
		"sub/a.txt":      "a\n",
		"vendor/x/y.go":  "package x\n",
	})
	g.Git("add", "-f", "keep.log")
	g.Git("add", "-A")
	base := g.Commit("base")
	g.Write(map[string]string{
		"bin/dome":          "a build output\n",
		"build.log":         "untracked, ignored\n",
		"keep.log":          "tracked and edited\n",
		"sub/tmp":           "ignored by sub/.gitignore\n",
		"sub/b.txt":         "new\n",
		"secret.txt":        "ignored by info/exclude\n",
		"ops/runs/r1/x":     "the coordinator's own files\n",
		"vendor/x/y.go":     "package x // edited\n",
		"new/notes/doc.txt": "new\n",
	})
	if err := os.WriteFile(filepath.Join(g.Dir, ".git", "info", "exclude"), []byte("secret.txt\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	repo, err := gitstore.Open(g.Dir)
	if err != nil {
		t.Fatal(err)
	}
	paths := func(excludes []string, noIgnore bool) []string {
		t.Helper()
		skip, err := stack.WorktreeSkip(repo, base, g.Dir, excludes, noIgnore)
		if err != nil {
			t.Fatal(err)
		}
		files, err := patch.ReadDir(g.Dir, skip)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, f := range files {
			out = append(out, f.Path)
		}
		return out
	}
	want := []string{".gitignore", "keep.log", "new/notes/doc.txt", "src/main.go", "sub/.gitignore", "sub/a.txt", "sub/b.txt", "vendor/x/y.go"}
	if got := paths(nil, false); !reflect.DeepEqual(got, want) {
		t.Errorf("with .gitignore:\n got %v\nwant %v", got, want)
	}
	want = []string{".gitignore", "keep.log", "new/notes/doc.txt", "src/main.go", "sub/.gitignore", "sub/a.txt", "sub/b.txt"}
	if got := paths([]string{"vendor/**"}, false); !reflect.DeepEqual(got, want) {
		t.Errorf("with --exclude vendor/**:\n got %v\nwant %v", got, want)
	}
	want = []string{".gitignore", "bin/dome", "build.log", "keep.log", "new/notes/doc.txt", "secret.txt", "src/main.go", "sub/.gitignore", "sub/a.txt", "sub/b.txt", "sub/tmp", "vendor/x/y.go"}
	if got := paths(nil, true); !reflect.DeepEqual(got, want) {
		t.Errorf("--no-gitignore:\n got %v\nwant %v", got, want)
	}
	if _, err := stack.WorktreeSkip(repo, base, g.Dir, []string{"[bad"}, false); err == nil {
		t.Error("a bad --exclude glob was accepted")
	}
}
