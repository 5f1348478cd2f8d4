package patch

import (
	"errors"
	"fmt"
	"path"
	"strings"

	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/dome-registry/dome/pkg/gitpath"
)

// CheckPath refuses a path a patch must not name for an entry of mode mode
// (0: a regular file), with git's rules (pkg/gitpath): empty, absolute, with
// an empty, "." or ".." component, ".git" in any case or any spelling NTFS
// or HFS+ resolves to it, a .gitmodules (.gitattributes, .gitignore,
// .mailmap) symlink, or control bytes. The error is a *gitpath.Error.
func CheckPath(p string, mode Mode) error {
	return gitpath.Verify(p, uint32(mode))
}

// pathRefusal is the input error for a path CheckPath refuses: where, why,
// and the *gitpath.Error underneath (callers match it with errors.As).
func pathRefusal(source, where string, err error, hint string) error {
	problem := err.Error()
	var ge *gitpath.Error
	if errors.As(err, &ge) {
		problem = "git refuses this path: " + ge.Reason
	}
	return &errkind.InputError{Source: source, Field: where, Problem: problem, Hint: hint, Err: err}
}

// checkPaths checks the names a parsed file diff touches, each with the mode
// the diff gives it (the tree's mode is checked again when it applies).
func (p *parser) checkPaths(f *File, line int, hint string) error {
	for _, n := range []struct {
		path string
		mode Mode
	}{{f.OldPath, f.OldMode}, {f.NewPath, f.NewMode}} {
		if n.path == "" {
			continue
		}
		if err := CheckPath(n.path, n.mode); err != nil {
			return pathRefusal(p.src, fmt.Sprintf("line %d: path %q", line, n.path), err, hint)
		}
	}
	return nil
}

// CheckSymlink refuses a symlink at linkPath whose target is absolute,
// empty, holds a NUL byte, leaves the tree or enters a .git directory.
func CheckSymlink(linkPath string, target []byte) error {
	t := string(target)
	if t == "" {
		return fmt.Errorf("symlink %s has an empty target", linkPath)
	}
	if strings.IndexByte(t, 0) >= 0 {
		return fmt.Errorf("symlink %s target holds a NUL byte", linkPath)
	}
	if strings.HasPrefix(t, "/") {
		return fmt.Errorf("symlink %s points to the absolute path %q", linkPath, t)
	}
	joined := path.Join(path.Dir(linkPath), t)
	if joined == ".." || strings.HasPrefix(joined, "../") {
		return fmt.Errorf("symlink %s points outside the tree (%q)", linkPath, t)
	}
	for _, c := range strings.Split(joined, "/") {
		if gitpath.IsDotGit(c) {
			return fmt.Errorf("symlink %s points into a .git directory (%q)", linkPath, t)
		}
	}
	return nil
}
