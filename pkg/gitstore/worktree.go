package gitstore

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Worktree is a worktree of the repository.
type Worktree struct {
	Dir    string // its top directory
	Linked bool   // made by git worktree add (not the main worktree)
}

// CheckedOut returns the worktrees whose HEAD is the branch ref (a full
// name, refs/heads/...), the main worktree first, then linked ones by
// directory.
func (r *Repo) CheckedOut(ref string) ([]Worktree, error) {
	var out []Worktree
	if main := r.mainWorktree(); main != "" && headIs(filepath.Join(r.commonDir, "HEAD"), ref) {
		out = append(out, Worktree{Dir: main})
	}
	entries, err := os.ReadDir(filepath.Join(r.commonDir, "worktrees"))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("list worktrees: %w", err)
	}
	var linked []Worktree
	for _, e := range entries {
		admin := filepath.Join(r.commonDir, "worktrees", e.Name())
		if !e.IsDir() || !headIs(filepath.Join(admin, "HEAD"), ref) {
			continue
		}
		b, err := os.ReadFile(filepath.Join(admin, "gitdir"))
		if err != nil {
			continue // not a worktree admin directory
		}
		dotGit := strings.TrimSpace(string(b))
		if !filepath.IsAbs(dotGit) {
			dotGit = filepath.Join(admin, dotGit)
		}
		dir := filepath.Dir(dotGit)
		if _, err := os.Stat(dir); err != nil {
			continue // a worktree that was deleted (git worktree prune removes it)
		}
		linked = append(linked, Worktree{Dir: dir, Linked: true})
	}
	sort.Slice(linked, func(i, j int) bool { return linked[i].Dir < linked[j].Dir })
	return append(out, linked...), nil
}

// MainWorktree returns the directory of the repository's main worktree
// (also when r was opened from a linked worktree), "" for a bare repository.
func (r *Repo) MainWorktree() string { return r.mainWorktree() }

func (r *Repo) mainWorktree() string {
	if r.gitDir == r.commonDir {
		return r.workTree
	}
	if filepath.Base(r.commonDir) == ".git" {
		return filepath.Dir(r.commonDir)
	}
	return ""
}

// headIs reports whether the HEAD file at path is the symbolic ref ref.
func headIs(path, ref string) bool {
	b, err := os.ReadFile(path)
	return err == nil && strings.TrimSpace(string(b)) == "ref: "+ref
}
