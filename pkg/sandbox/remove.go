package sandbox

import (
	"os"
	"path/filepath"
)

// RemoveAll removes a tree a sandboxed process wrote, also where it took
// the write permission from its own folders: every folder is made the
// owner's again first. It never follows a symbolic link.
func RemoveAll(dir string) error {
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			os.Chmod(p, 0o700)
		}
		return nil
	})
	return os.RemoveAll(dir)
}
