package app

import (
	"strings"

	"github.com/dome-registry/dome/internal/readcmd"
	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/urfave/cli/v2"
)

// Global flags are accepted before or after the command name:
// "dome --json resolve x" and "dome resolve x --json" mean the same.
const (
	flagRepo  = readcmd.FlagRepo
	flagJSON  = readcmd.FlagJSON
	flagQuiet = readcmd.FlagQuiet
)

func globalFlags() []cli.Flag {
	return []cli.Flag{
		// Not EnvVars: urfave counts a flag its variable sets as given at
		// every level of the command line, so $DOME_REPO would win over a
		// --repo given before the command (repoTarget reads it last).
		&cli.StringFlag{Name: flagRepo, Usage: "registry repository: a path (worktree or bare) or a URL (file://, https://, ssh://, git://); default: $DOME_REPO, else the repo containing the working directory"},
		&cli.BoolFlag{Name: flagJSON, Usage: "machine-readable output on stdout"},
		&cli.BoolFlag{Name: flagQuiet, Aliases: []string{readcmd.FlagQuietShort}, Usage: "print only errors"},
	}
}

// withGlobal appends the global flags to a leaf command's own flags.
func withGlobal(flags ...cli.Flag) []cli.Flag { return append(flags, globalFlags()...) }

// globalString returns a global string flag set at any level of the command line.
func globalString(c *cli.Context, name string) string {
	for _, ctx := range c.Lineage() {
		if ctx.IsSet(name) {
			return ctx.String(name)
		}
	}
	return c.String(name) // default or environment
}

// repoTarget is --repo, given anywhere on the command line, else $DOME_REPO
// ("": the repository containing the working directory).
func repoTarget(c *cli.Context, env *Env) string {
	for _, ctx := range c.Lineage() {
		if ctx.IsSet(flagRepo) {
			return ctx.String(flagRepo)
		}
	}
	return env.Getenv(readcmd.EnvRepo)
}

// globalBool returns a global bool flag set at any level of the command line.
func globalBool(c *cli.Context, name string) bool {
	for _, ctx := range c.Lineage() {
		if ctx.IsSet(name) && ctx.Bool(name) {
			return true
		}
	}
	return false
}

// interspersed moves flags that follow positional arguments in front of them,
// so that "dome resolve petstore@main --json" works: the standard flag package
// that urfave/cli/v2 uses stops at the first positional argument. Everything
// after "--" stays positional. A flag that takes a value but has none (last on
// the line, or followed by "--" or another of the command's flags) is a usage
// error here: the flag package would take the next word as its value.
func interspersed(a *cli.App, args []string) ([]string, error) {
	if len(args) < 2 {
		return args, nil
	}
	out := []string{args[0]}
	rest := args[1:]
	flags := a.Flags
	cmds := a.Commands
	path := "dome"
	// Walk the command path: global flags and command names.
	for len(rest) > 0 {
		arg := rest[0]
		if arg == "--" {
			break // the rest is the leaf's, positional
		}
		if strings.HasPrefix(arg, "-") && arg != "-" {
			if arg == "--" {
				break
			}
			n, err := flagWords(flags, rest, 0, path)
			if err != nil {
				return nil, err
			}
			out = append(out, rest[:n]...)
			rest = rest[n:]
			continue
		}
		var next *cli.Command
		for _, c := range cmds {
			if c.HasName(arg) {
				next = c
				break
			}
		}
		if next == nil {
			break
		}
		out = append(out, arg)
		rest = rest[1:]
		path += " " + next.Name
		flags = append(append([]cli.Flag{}, next.Flags...), flags...)
		cmds = next.Subcommands
	}
	// The leaf command's arguments: flags first, then positionals.
	var fl, pos []string
	for i := 0; i < len(rest); i++ {
		arg := rest[i]
		if arg == "--" {
			pos = append(pos, rest[i:]...)
			break
		}
		if strings.HasPrefix(arg, "-") && arg != "-" {
			n, err := flagWords(flags, rest, i, path)
			if err != nil {
				return nil, err
			}
			fl = append(fl, rest[i:i+n]...)
			i += n - 1
			continue
		}
		pos = append(pos, arg)
	}
	out = append(out, fl...)
	if len(pos) > 0 && pos[0] != "--" {
		out = append(out, "--")
	}
	return append(out, pos...), nil
}

// flagWords is how many words the flag at args[i] spans: 2 for a flag that
// takes a separate value, else 1 (a bool flag, "--name=value", or an unknown
// flag, which urfave reports).
func flagWords(flags []cli.Flag, args []string, i int, path string) (int, error) {
	if flagArity(flags, args[i]) == 1 {
		return 1, nil
	}
	if i+1 >= len(args) || args[i+1] == "--" || isFlagOf(flags, args[i+1]) {
		return 0, usageError{Err: &errkind.InputError{Source: cmdSource(path), Problem: "flag " + dashes(args[i]) + " needs a value", Hint: helpHint(path)}}
	}
	return 2, nil
}

// isFlagOf reports whether arg spells one of flags ("--json", "-q", "--out=x").
func isFlagOf(flags []cli.Flag, arg string) bool {
	if !strings.HasPrefix(arg, "-") || arg == "-" {
		return false
	}
	name, _, _ := strings.Cut(strings.TrimLeft(arg, "-"), "=")
	for _, f := range flags {
		for _, n := range f.Names() {
			if n == name {
				return true
			}
		}
	}
	return false
}

// flagArity is 1 for a bool flag or "--name=value", 2 for a flag that takes
// a separate value, 1 for an unknown flag (urfave reports it).
func flagArity(flags []cli.Flag, arg string) int {
	name := strings.TrimLeft(arg, "-")
	if strings.Contains(name, "=") {
		return 1
	}
	for _, f := range flags {
		for _, n := range f.Names() {
			if n != name {
				continue
			}
			if _, ok := f.(*cli.BoolFlag); ok {
				return 1
			}
			if h, ok := f.(interface{ TakesValue() bool }); ok && !h.TakesValue() {
				return 1
			}
			return 2
		}
	}
	return 1
}
