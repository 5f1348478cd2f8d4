package app

import (
	"fmt"
	"strings"

	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/urfave/cli/v2"
)

// newHelpCommand is "dome help [COMMAND...]": the same text as
// "dome [COMMAND...] --help", and a usage error for a command that does not
// exist.
func newHelpCommand(env *Env) *cli.Command {
	return &cli.Command{
		Name:      "help",
		Usage:     "show the commands, or the help of one command (the same as COMMAND --help)",
		ArgsUsage: "[COMMAND...]",
		Action: func(c *cli.Context) error {
			names := c.Args().Slice()
			if len(names) == 0 {
				return cli.ShowAppHelp(c)
			}
			cmds := c.App.Commands
			for i, name := range names {
				var found *cli.Command
				for _, cmd := range cmds {
					if cmd.HasName(name) && !cmd.Hidden {
						found = cmd
						break
					}
				}
				if found == nil {
					path := strings.Join(append([]string{"dome"}, names[:i]...), " ")
					return usageError{Err: &errkind.InputError{
						Source:  "help",
						Problem: fmt.Sprintf("no command %q in %q (commands: %s)", name, path, commandNames(cmds)),
						Hint:    "run '" + path + " --help'",
					}}
				}
				cmds = found.Subcommands
			}
			// A fresh command tree prints exactly what --help prints.
			args := append(append([]string{"dome"}, names...), "--help")
			a := newApp(env)
			loadHelp(a.Commands)
			return a.RunContext(c.Context, args)
		},
	}
}

// commandNames lists the visible commands, comma-separated.
func commandNames(cmds []*cli.Command) string {
	var names []string
	for _, c := range cmds {
		if !c.Hidden {
			names = append(names, c.Name)
		}
	}
	return strings.Join(names, ", ")
}
