// Package gittest builds real git repositories in temporary directories for
// tests, with the git binary (tests only: dome itself never runs git) and a
// fixed author, committer and clock so that object ids are reproducible.
package gittest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Repo is a repository under construction.
type Repo struct {
	T   testing.TB
	Dir string
}

// Env is the environment every git command of a test runs with.
func Env() []string {
	return append(os.Environ(),
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_AUTHOR_NAME=Dome Test", "GIT_AUTHOR_EMAIL=test@dome.invalid",
		"GIT_COMMITTER_NAME=Dome Test", "GIT_COMMITTER_EMAIL=test@dome.invalid",
		"GIT_AUTHOR_DATE=2026-01-02T03:04:05Z", "GIT_COMMITTER_DATE=2026-01-02T03:04:05Z",
		"TZ=UTC", "LANG=C", "LC_ALL=C",
	)
}

// Need skips the test when the git binary is missing.
func Need(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git binary not found; skipping a test that builds a repository with it")
	}
}

// New initializes a repository with branch main in a new temp dir.
func New(t testing.TB) *Repo {
	t.Helper()
	Need(t)
	r := &Repo{T: t, Dir: t.TempDir()}
	r.Git("init", "-q", "-b", "main")
	return r
}

// NewBare initializes a bare repository in a new temp dir.
func NewBare(t testing.TB) *Repo {
	t.Helper()
	Need(t)
	r := &Repo{T: t, Dir: t.TempDir()}
	r.Git("init", "-q", "--bare", "-b", "main")
	return r
}

// Git runs git in the repository and returns its trimmed stdout.
func (r *Repo) Git(args ...string) string {
	r.T.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = r.Dir
	cmd.Env = Env()
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		r.T.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return strings.TrimSpace(string(out))
}

// GitStdin runs git with stdin and returns its trimmed stdout (git mktag,
// git hash-object --stdin, ...).
func (r *Repo) GitStdin(stdin string, args ...string) string {
	r.T.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = r.Dir
	cmd.Env = Env()
	cmd.Stdin = strings.NewReader(stdin)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		r.T.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return strings.TrimSpace(string(out))
}

// Write writes files (path -> content) relative to the worktree.
func (r *Repo) Write(files map[string]string) {
	r.T.Helper()
	for p, c := range files {
		full := filepath.Join(r.Dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			r.T.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			r.T.Fatal(err)
		}
	}
}

// Remove deletes paths relative to the worktree.
func (r *Repo) Remove(paths ...string) {
	r.T.Helper()
	for _, p := range paths {
		if err := os.RemoveAll(filepath.Join(r.Dir, filepath.FromSlash(p))); err != nil {
			r.T.Fatal(err)
		}
	}
}

// Commit stages everything and commits; it returns the new commit id.
func (r *Repo) Commit(msg string) string {
	r.T.Helper()
	r.Git("add", "-A")
	r.Git("commit", "-q", "--allow-empty", "-m", msg)
	return r.Git("rev-parse", "HEAD")
}
