// Package app is dome's command tree: it parses flags, calls pkg/, renders
// results and maps errors to exit codes. It holds no business logic.
package app

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/dome-registry/dome/internal/readcmd"
	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/dome-registry/dome/pkg/patch"
	"github.com/dome-registry/dome/pkg/patch/charsets"
	"github.com/urfave/cli/v2"
	"golang.org/x/term"
)

// Exit codes, documented in the README.
const (
	ExitOK    = readcmd.ExitOK    // success
	ExitCheck = readcmd.ExitCheck // a check failed: drift, conflict, verification, or an internal error
	ExitUsage = readcmd.ExitUsage // bad usage or bad input
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

	// loadedRun is the run a stack command read to find its policy, for
	// the same command to open it without reading it again (openRun).
	loadedRun *loadedRun
}

// Main runs dome with args (args[0] is the program name) and returns the exit code.
func Main(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	wd, err := os.Getwd()
	if err != nil {
		fmt.Fprintf(stderr, "dome: cannot read the working directory: %v\n", err)
		return ExitUsage
	}
	readcmd.ShortLived(os.Getenv)
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
	// Mail in every charset (the front, which does not link them, hands a
	// series that needs them to this program).
	patch.UseCharsets(charsets.Decode)
	a := newAppFor(env, args)
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

// newApp is the app with the whole command tree.
func newApp(env *Env) *cli.App { return appWith(env, commands(env)) }

// newAppFor is the app for one run: only the top-level command that args
// name is built (the others are bare names urfave never runs), since
// building the whole tree, some 150 commands with their flags, cost every
// start about 0.4 ms (bench/startup). Help, completion, a command line
// naming no command (the app's help) and anything unusual get the whole
// tree.
func newAppFor(env *Env, args []string) *cli.App {
	name, ok := namedCommand(args)
	if !ok {
		return newApp(env)
	}
	var cmds []*cli.Command
	for _, t := range topLevel() {
		if t.name == name {
			c := t.build(env)
			wireCommand(c, "dome "+c.Name)
			cmds = append(cmds, c)
		} else {
			cmds = append(cmds, &cli.Command{Name: t.name, Hidden: true})
		}
	}
	return appWith(env, cmds)
}

// namedCommand finds the top-level command args name ("" for none, when
// they only ask for the version); ok is false when the run needs the whole
// tree.
func namedCommand(args []string) (name string, ok bool) {
	version := false
	for i := 1; i < len(args); i++ {
		arg := args[i]
		switch arg {
		case "--version", "-version", "-v", "--v":
			version = true
			continue
		case "--" + flagJSON, "-" + flagJSON, "--" + flagQuiet, "-" + flagQuiet, "-" + readcmd.FlagQuietShort, "--" + readcmd.FlagQuietShort:
			continue
		case "--" + flagRepo, "-" + flagRepo:
			i++ // its value
			continue
		}
		if strings.HasPrefix(arg, "--"+flagRepo+"=") || strings.HasPrefix(arg, "-"+flagRepo+"=") {
			continue
		}
		if strings.HasPrefix(arg, "-") {
			return "", false // help, or a flag urfave is to refuse
		}
		if arg == "help" || arg == "completion" {
			return "", false
		}
		for _, t := range topLevel() {
			if t.name == arg {
				return arg, true
			}
		}
		return "", false // an unknown command: urfave lists them all
	}
	return "", version
}

func appWith(env *Env, cmds []*cli.Command) *cli.App {
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
			return usageError{Err: &errkind.InputError{Problem: flagProblem(err), Hint: helpHint("dome")}}
		},
		Commands: cmds,
		Action: func(c *cli.Context) error {
			if c.Args().Present() {
				return usagef("unknown command %q", c.Args().First())
			}
			return cli.ShowAppHelp(c)
		},
	}
	return a
}

// topCommand is a top-level command: its name and its constructor.
type topCommand struct {
	name  string
	build func(*Env) *cli.Command
}

// topLevel lists the top-level commands in the order of the help, one
// constructor per file (TestTopLevelNames keeps each name its command's).
func topLevel() []topCommand {
	return []topCommand{
		{"resolve", newResolveCommand},
		{"registry", newRegistryCommand},
		{"spec", newSpecCommand},
		{"gen", newGenCommand},
		{"manifest", newManifestCommand},
		{"contract-test", newContractTestCommand},
		{"release", newReleaseCommand},
		{"patch", newPatchCommand},
		{"canon", newCanonCommand},
		{"digest", newDigestCommand},
		{"keygen", newKeygenCommand},
		{"sign", newSignCommand},
		{"verify", newVerifyCommand},
		{"serve", newServeCommand},
		{"agent", newAgentCommand},
		{"contract", newContractCommand},
		{"action", newActionCommand},
		{"stack", newStackCommand},
		{"run", newRunCommand},
		{"sandbox", newSandboxCommand},
		{"trace", newTraceCommand},
		{"help", newHelpCommand},
		{"completion", newCompletionCommand},
		{"version", newVersionCommand},
		{"grant", newGrantCommand},
		{"spawn", newSpawnCommand},
		{"workflow", newWorkflowCommand},
		{"worker", newWorkerCommand},
	}
}

// commands is the whole command tree.
func commands(env *Env) []*cli.Command {
	var cmds []*cli.Command
	for _, t := range topLevel() {
		cmds = append(cmds, t.build(env))
	}
	wireUsage(cmds, "dome") // usage.go: flag errors, required flags, unknown commands, stray arguments
	return cmds
}

// usageError marks bad usage: unknown flags, missing arguments (exit 2,
// and a pointer to the help).
type usageError = readcmd.UsageError

// usagef returns a usage error (exit 2).
func usagef(format string, a ...any) error { return readcmd.Usagef(format, a...) }

func isUsage(err error) bool { return readcmd.IsUsage(err) }
