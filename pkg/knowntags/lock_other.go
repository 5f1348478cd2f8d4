//go:build !unix

package knowntags

import (
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// lockDir falls back to an exclusive create of a lock file, retried for 10
// s; a crashed writer leaves it behind, to be removed by hand.
func lockDir(dir string) (func(), error) {
	p := filepath.Join(dir, ".dome-known-tags.lock")
	for deadline := time.Now().Add(10 * time.Second); ; {
		f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
		if err == nil {
			return func() { f.Close(); os.Remove(p) }, nil
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("lock %s: %w (remove it if no dome process is running)", p, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
