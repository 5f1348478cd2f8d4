// Package app is dome's command tree: it parses flags, calls pkg/, renders
// results and maps errors to exit codes. It holds no business logic.
package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"time"

	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/urfave/cli/v2"
	"golang.org/x/term"
)

// Exit codes, documented in the README.
const (
	ExitOK    = 0 // success
	ExitCheck = 1 // a check failed: drift, conflict, verification, or an internal error
	ExitUsage = 2 // bad usage or bad input
)

// Env is everything a command may take from the outside world. Tests build
// one with buffers and a fixed clock; Main builds it from the process.
type Env struct {
	Stdin     io.Reader
	Stdout    io.Writer
	Stderr    io.Writer
	Getenv    func(string) string
	Now       func() time.Time
	WorkDir   string
	StdoutTTY bool
	StderrTTY bool
}

// Main runs dome with args (args[0] is the program name) and returns the exit code.
func Main(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	wd, err := os.Getwd()
	if err != nil {
		fmt.Fprintf(stderr, "dome: cannot read the working directory: %v\n", err)
		return ExitUsage
	}
	// dome is a short-lived CLI: trade memory for fewer collections unless
	// the user tuned the collector.
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	env := &Env{
		Stdin:     stdin,
		Stdout:    stdout,
		Stderr:    stderr,
		Getenv:    os.Getenv,
		Now:       time.Now,
		WorkDir:   wd,
		StdoutTTY: isTerminal(stdout),
		StderrTTY: isTerminal(stderr),
	}
	return Run(ctx, env, args)
}

// Run runs dome in env.
func Run(ctx context.Context, env *Env, args []string) int {
	a := newApp(env)
	if helpWanted(a, args) {
		loadHelpAs(a.Commands, terminalHelp)
	}
	args, err := interspersed(a, args)
	if err == nil {
		err = a.RunContext(ctx, args)
	}
	return report(env, err)
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

func newApp(env *Env) *cli.App {
	a := &cli.App{
		Name:                 "dome",
		Usage:                "turn a git repository into a trustworthy tool registry",
		Version:              domeVersion(),
		Reader:               env.Stdin,
		Writer:               env.Stdout,
		ErrWriter:            env.Stderr,
		Flags:                append(globalFlags(), cli.HelpFlag), // urfave adds --help only when no command is named "help" (help.go)
		EnableBashCompletion: false,
		HideHelpCommand:      true,
		// dome maps errors to exit codes itself (report); urfave must not exit.
		ExitErrHandler: func(*cli.Context, error) {},
		OnUsageError: func(_ *cli.Context, err error, _ bool) error {
			return usageError{&errkind.InputError{Problem: flagProblem(err), Hint: helpHint("dome")}}
		},
		Commands: commands(env),
		Action: func(c *cli.Context) error {
			if c.Args().Present() {
				return usagef("unknown command %q", c.Args().First())
			}
			return cli.ShowAppHelp(c)
		},
	}
	return a
}

// commands is the whole command tree, one constructor per file.
func commands(env *Env) []*cli.Command {
	cmds := []*cli.Command{
		newResolveCommand(env),
		newRegistryCommand(env),
		newSpecCommand(env),
		newGenCommand(env),
		newManifestCommand(env),
		newContractTestCommand(env),
		newReleaseCommand(env),
		newPatchCommand(env),
		newCanonCommand(env),
		newDigestCommand(env),
		newKeygenCommand(env),
		newSignCommand(env),
		newVerifyCommand(env),
		newServeCommand(env),
		newAgentCommand(env),
		newContractCommand(env),
		newActionCommand(env),
		newStackCommand(env),
		newRunCommand(env),
		newSandboxCommand(env),
		newTraceCommand(env),
		newHelpCommand(env),
		newCompletionCommand(env),
		newVersionCommand(env),
		newGrantCommand(env),
		newSpawnCommand(env),
		newWorkflowCommand(env),
		newWorkerCommand(env),
	}
	wireUsage(cmds, "dome") // usage.go: flag errors, required flags, unknown commands, stray arguments
	return cmds
}

// usageError marks bad usage: unknown flags, missing arguments.
type usageError struct{ err error }

func (u usageError) Error() string { return u.err.Error() }
func (u usageError) Unwrap() error { return u.err }

// usagef returns a usage error (exit 2).
func usagef(format string, a ...any) error { return usageError{fmt.Errorf(format, a...)} }

func isUsage(err error) bool {
	var u usageError
	return errors.As(err, &u)
}
