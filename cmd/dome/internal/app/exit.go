package app

import (
	"errors"
	"fmt"
	"strings"

	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/urfave/cli/v2"
)

// exitCode maps an error to dome's exit code: nil -> 0, bad usage or an
// *errkind.InputError -> 2, a failed check or anything else -> 1.
func exitCode(err error) int {
	switch {
	case err == nil:
		return ExitOK
	case isUsage(err), errkind.IsInput(err):
		return ExitUsage
	}
	var ec cli.ExitCoder
	if errors.As(err, &ec) {
		return ec.ExitCode()
	}
	return ExitCheck
}

// report prints err on stderr as "dome: <what failed>: <why>" with a hint line
// and the details of a failed check, and returns the exit code.
func report(env *Env, err error) int {
	if err == nil {
		return ExitOK
	}
	var silent silentError
	if errors.As(err, &silent) {
		return silent.code
	}
	msg := err.Error()
	if isUsage(err) {
		// urfave prints "Incorrect Usage" plus help for flag errors; keep one line.
		msg = strings.TrimPrefix(msg, "flag provided but not defined: ")
		if msg != err.Error() {
			msg = "unknown flag " + msg
		}
	}
	fmt.Fprintf(env.Stderr, "dome: %s\n", msg)
	var ce *errkind.CheckError
	if errors.As(err, &ce) {
		for _, d := range ce.Details {
			fmt.Fprintf(env.Stderr, "  %s\n", d)
		}
	}
	if h := errkind.HintOf(err); h != "" {
		fmt.Fprintf(env.Stderr, "hint: %s\n", h)
	} else if isUsage(err) {
		fmt.Fprintf(env.Stderr, "hint: run 'dome --help' or 'dome <command> --help'\n")
	}
	return exitCode(err)
}

// silentError carries an exit code for a command that already reported its
// outcome on stdout/stderr (for example a check that printed its findings).
type silentError struct{ code int }

func (s silentError) Error() string { return fmt.Sprintf("exit %d", s.code) }
