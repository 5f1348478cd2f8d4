//go:build unix

package front

import (
	"fmt"
	"os"
	"syscall"

	"github.com/dome-registry/dome/internal/readcmd"
)

// handOff replaces this process with the program at path; it returns only
// when that fails.
func handOff(path string, args, env []string) int {
	err := syscall.Exec(path, args, env)
	for err == syscall.EINTR {
		err = syscall.Exec(path, args, env)
	}
	readcmd.PrintError(os.Stderr, fmt.Errorf("cannot run %s: %w", path, err), false)
	return readcmd.ExitCheck
}
