//go:build unix

package knowntags

import (
	"fmt"
	"os"
	"syscall"
)

// lockDir takes an exclusive flock(2) on the folder of the memory file (no
// lock file appears beside a file kept under version control). It waits for
// another dome process to finish its write; the kernel drops the lock when
// the process ends, also when it is killed.
func lockDir(dir string) (func(), error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", dir, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", dir, err)
	}
	return func() {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}
