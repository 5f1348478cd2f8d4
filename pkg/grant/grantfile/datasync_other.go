//go:build !linux && !darwin

package grantfile

import "os"

// datasync makes the log's appended bytes durable.
func datasync(f *os.File) error { return f.Sync() }
