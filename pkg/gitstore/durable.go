package gitstore

import (
	"fmt"
	"os"
	"path/filepath"
)

// SyncObjects makes the loose objects with the given ids durable: it fsyncs
// each object file and its fan-out directory (WriteBlob and the other
// writes store loose objects through a temporary file and a rename, without
// fsync, which would cost each object a disk flush). Call it before a
// ref update that publishes the objects, so a crash or power loss never
// leaves a ref pointing at a missing object. Ids that are not loose objects
// (packed, or absent) are skipped.
func (r *Repo) SyncObjects(ids ...Hash) error {
	objects := filepath.Join(r.commonDir, "objects")
	dirs := map[string]bool{}
	for _, h := range ids {
		s := h.String()
		p := filepath.Join(objects, s[:2], s[2:])
		f, err := os.Open(p)
		if err != nil {
			if os.IsNotExist(err) {
				continue
			}
			return fmt.Errorf("sync object %s: %w", s, err)
		}
		err = f.Sync()
		f.Close()
		if err != nil {
			return fmt.Errorf("sync object %s: %w", s, err)
		}
		dirs[filepath.Dir(p)] = true
	}
	for d := range dirs {
		syncDir(d)
	}
	if len(dirs) > 0 {
		syncDir(objects)
	}
	return nil
}
