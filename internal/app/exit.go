package app

import (
	"errors"
	"fmt"

	"github.com/dome-registry/dome/internal/readcmd"
	"github.com/urfave/cli/v2"
)

// exitCode maps an error to dome's exit code: nil -> 0, bad usage or an
// *errkind.InputError -> 2, a failed check or anything else -> 1.
func exitCode(err error) int {
	var ec cli.ExitCoder
	if errors.As(err, &ec) && ec.ExitCode() == ExitUsage {
		return ExitUsage
	}
	// Nothing else leaves dome: 0, 1 and 2 are its only exit codes.
	return readcmd.ExitCode(err)
}

// report prints err on stderr as "dome: <what failed>: <why>" with a hint line
// and the details of a failed check, and returns the exit code. dome's
// front prints the errors of the commands it runs itself the same way
// (readcmd.PrintError).
func report(env *Env, err error) int {
	if err == nil {
		return ExitOK
	}
	var silent silentError
	if errors.As(err, &silent) {
		return silent.code
	}
	readcmd.PrintError(env.Stderr, err, isUsage(err))
	return exitCode(err)
}

// silentError carries an exit code for a command that already reported its
// outcome on stdout/stderr (for example a check that printed its findings).
type silentError struct{ code int }

func (s silentError) Error() string { return fmt.Sprintf("exit %d", s.code) }
