package grantfile

import (
	"os"

	"golang.org/x/sys/unix"
)

// datasync makes the log's appended bytes durable. On macOS fsync only
// hands them to the drive, whose cache may still lose them; F_FULLFSYNC
// flushes that cache too (file systems without it get fsync).
func datasync(f *os.File) error {
	if _, err := unix.FcntlInt(f.Fd(), unix.F_FULLFSYNC, 0); err == nil {
		return nil
	}
	return f.Sync()
}
