package stack

import (
	"fmt"
	"sort"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/dome-registry/dome/pkg/gitstore"
	"github.com/dome-registry/dome/pkg/gitstore/gitworktree"
)

// WorktreeSkip returns the filter `propose --from-worktree` reads a worktree
// with: it skips the runs folder (ops/runs), paths matching an exclude glob
// (doublestar), and, unless noGitignore, untracked paths the worktree's
// .gitignore files and .git/info/exclude ignore, as `git add -A` would. A
// path the base commit tracks is never skipped for being ignored (git does
// not ignore tracked files; skipping one would propose its deletion), nor
// is a folder that holds tracked files.
func WorktreeSkip(repo *gitstore.Repo, base, dir string, excludes []string, noGitignore bool) (func(path string, isDir bool) bool, error) {
	for _, g := range excludes {
		if !doublestar.ValidatePattern(g) {
			return nil, &errkind.InputError{Source: "--exclude", Field: g, Problem: "not a valid glob", Hint: "use doublestar syntax, e.g. 'build/**'"}
		}
	}
	var ignored func(string, bool) bool
	var tracked []string // sorted paths of the base tree
	if !noGitignore {
		m, err := gitworktree.IgnoreMatcher(dir)
		if err != nil {
			return nil, err
		}
		ignored = m
		commit, err := repo.ResolveCommit(base)
		if err != nil {
			return nil, fmt.Errorf("base %s: %w", base, err)
		}
		tree, err := repo.CommitTree(commit)
		if err != nil {
			return nil, err
		}
		files, err := repo.Walk(tree)
		if err != nil {
			return nil, err
		}
		for _, f := range files {
			tracked = append(tracked, f.Path)
		}
		sort.Strings(tracked)
	}
	isTracked := func(p string, isDir bool) bool {
		if !isDir {
			i := sort.SearchStrings(tracked, p)
			return i < len(tracked) && tracked[i] == p
		}
		i := sort.SearchStrings(tracked, p+"/")
		return i < len(tracked) && strings.HasPrefix(tracked[i], p+"/")
	}
	return func(p string, isDir bool) bool {
		if p == RunsDir || strings.HasPrefix(p, RunsDir+"/") {
			return true
		}
		for _, g := range excludes {
			if ok, _ := doublestar.Match(g, p); ok {
				return true
			}
		}
		return ignored != nil && ignored(p, isDir) && !isTracked(p, isDir)
	}, nil
}
