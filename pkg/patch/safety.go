package patch

import (
	"fmt"
	"path"
	"strings"
)

// CheckPath refuses a path a patch must not name: empty, absolute, with an
// empty, "." or ".." component, with a ".git" component (any case), or with
// NUL or control bytes.
func CheckPath(p string) error {
	if p == "" {
		return fmt.Errorf("empty path")
	}
	for i := 0; i < len(p); i++ {
		if c := p[i]; c < 0x20 || c == 0x7f {
			return fmt.Errorf("path holds the control byte 0x%02x", c)
		}
	}
	if strings.HasPrefix(p, "/") {
		return fmt.Errorf("absolute path")
	}
	for _, c := range strings.Split(p, "/") {
		switch {
		case c == "":
			return fmt.Errorf("empty path component")
		case c == "." || c == "..":
			return fmt.Errorf("path component %q", c)
		case strings.EqualFold(c, ".git"):
			return fmt.Errorf("path enters a .git directory")
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
		if strings.EqualFold(c, ".git") {
			return fmt.Errorf("symlink %s points into a .git directory (%q)", linkPath, t)
		}
	}
	return nil
}
