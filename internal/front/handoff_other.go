//go:build !unix

package front

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"

	"github.com/dome-registry/dome/internal/readcmd"
)

// handOff runs the program at path as a child with this process's
// standard streams and returns its exit code (Windows has no exec).
func handOff(path string, args, env []string) int {
	cmd := exec.Command(path, args[1:]...)
	cmd.Args[0] = args[0]
	cmd.Env = env
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	// An interrupt reaches the child through the console; the front only
	// waits for it to finish.
	signal.Ignore(os.Interrupt)
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return readcmd.ExitOK
	case errors.As(err, &ee) && ee.ExitCode() >= 0:
		return ee.ExitCode()
	}
	readcmd.PrintError(os.Stderr, fmt.Errorf("cannot run %s: %w", path, err), false)
	return readcmd.ExitCheck
}
