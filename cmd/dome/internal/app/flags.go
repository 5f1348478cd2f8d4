package app

import (
	"strings"

	"github.com/urfave/cli/v2"
)

// Global flags are accepted before or after the command name:
// "dome --json resolve x" and "dome resolve x --json" mean the same.
const (
	flagRepo  = "repo"
	flagJSON  = "json"
	flagQuiet = "quiet"
)

func globalFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: flagRepo, Usage: "registry repository: a path (worktree or bare) or a URL (file://, https://, ssh://, git://); default: the repo containing the working directory", EnvVars: []string{"DOME_REPO"}},
		&cli.BoolFlag{Name: flagJSON, Usage: "machine-readable output on stdout"},
		&cli.BoolFlag{Name: flagQuiet, Aliases: []string{"q"}, Usage: "print only errors"},
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
// after "--" stays positional.
func interspersed(a *cli.App, args []string) []string {
	if len(args) < 2 {
		return args
	}
	out := []string{args[0]}
	rest := args[1:]
	flags := a.Flags
	cmds := a.Commands
	// Walk the command path: global flags and command names.
	for len(rest) > 0 {
		arg := rest[0]
		if arg == "--" {
			break // the rest is the leaf's, positional
		}
		if strings.HasPrefix(arg, "-") && arg != "-" {
			n := flagArity(flags, arg)
			if n > len(rest) {
				n = len(rest)
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
			n := flagArity(flags, arg)
			end := i + n
			if end > len(rest) {
				end = len(rest)
			}
			fl = append(fl, rest[i:end]...)
			i = end - 1
			continue
		}
		pos = append(pos, arg)
	}
	out = append(out, fl...)
	if len(pos) > 0 && pos[0] != "--" {
		out = append(out, "--")
	}
	return append(out, pos...)
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
