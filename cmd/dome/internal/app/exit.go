package app

import (
	"errors"
	"fmt"
	"unicode/utf8"

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
	if errors.As(err, &ec) && ec.ExitCode() == ExitUsage {
		return ExitUsage
	}
	// Nothing else leaves dome: 0, 1 and 2 are its only exit codes.
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
	fmt.Fprintf(env.Stderr, "dome: %s\n", bounded(err.Error()))
	var ce *errkind.CheckError
	if errors.As(err, &ce) {
		for _, d := range ce.Details {
			fmt.Fprintf(env.Stderr, "  %s\n", bounded(d))
		}
	}
	if h := errkind.HintOf(err); h != "" {
		fmt.Fprintf(env.Stderr, "hint: %s\n", bounded(h))
	} else if isUsage(err) {
		fmt.Fprintf(env.Stderr, "hint: run 'dome --help' or 'dome <command> --help'\n")
	}
	return exitCode(err)
}

// maxMessage bounds one line of an error report. Messages that quote
// input (a schema, a value, a library's dump of both) are summarised where
// they are made; this is the backstop for every other one.
const maxMessage = 4096

// bounded cuts s to maxMessage bytes at a rune boundary and says how much
// was left out.
func bounded(s string) string {
	if len(s) <= maxMessage {
		return s
	}
	cut := maxMessage
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + fmt.Sprintf("... (%d more bytes not shown)", len(s)-cut)
}

// silentError carries an exit code for a command that already reported its
// outcome on stdout/stderr (for example a check that printed its findings).
type silentError struct{ code int }

func (s silentError) Error() string { return fmt.Sprintf("exit %d", s.code) }
