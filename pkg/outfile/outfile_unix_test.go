//go:build unix

package outfile

import "golang.org/x/sys/unix"

func mkfifo(p string) error { return unix.Mkfifo(p, 0o600) }

// mknodNull makes a node of the null device (1, 3) at p.
func mknodNull(p string) error { return unix.Mknod(p, unix.S_IFCHR|0o666, int(unix.Mkdev(1, 3))) }
