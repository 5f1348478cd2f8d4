package gitworktree

import (
	"fmt"
	"strings"

	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
)

// IgnoreMatcher reads the ignore rules of the worktree dir as git does for
// untracked files: every .gitignore below dir (a folder that is itself
// ignored is not read) and .git/info/exclude. The returned function reports
// whether a slash-separated path relative to dir is ignored. Callers apply it
// to untracked paths only: git never ignores a tracked file.
func IgnoreMatcher(dir string) (func(path string, isDir bool) bool, error) {
	ps, err := gitignore.ReadPatterns(osfs.New(dir), nil)
	if err != nil {
		return nil, fmt.Errorf("read the ignore rules of %s: %w", dir, err)
	}
	m := gitignore.NewMatcher(ps)
	return func(path string, isDir bool) bool {
		return m.Match(strings.Split(path, "/"), isDir)
	}, nil
}
