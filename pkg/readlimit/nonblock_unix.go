//go:build unix

package readlimit

import "syscall"

// syscallNonblock keeps open(2) from blocking should a regular file be
// swapped for a FIFO between the check and the open.
const syscallNonblock = syscall.O_NONBLOCK
