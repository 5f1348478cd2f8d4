//go:build !unix

package ledger

import (
	"fmt"
	"os"
)

// lockFile falls back to an exclusive create on systems without flock(2); a
// crashed writer leaves the lock file, which must then be removed by hand.
func lockFile(path string) (*os.File, error) {
	f, err := os.OpenFile(path+".excl", os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, fmt.Errorf("ledger: %s: %w (remove %s.excl if no dome process is running)", path, ErrLocked, path)
	}
	return f, nil
}

func unlockFile(f *os.File) error {
	name := f.Name()
	err := f.Close()
	os.Remove(name)
	return err
}
