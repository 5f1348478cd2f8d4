package app

import (
	"context"
	"strings"

	"github.com/dome-registry/dome/pkg/completion"
	"github.com/urfave/cli/v2"
)

func newCompletionCommand(env *Env) *cli.Command {
	return &cli.Command{
		Name:        "completion",
		Usage:       "print a shell completion script for bash, zsh or fish",
		ArgsUsage:   "<bash|zsh|fish>",
		Description: help("completion"),
		Flags:       withGlobal(),
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return usagef("completion takes one shell: %s", strings.Join(completion.Shells, ", "))
			}
			return runCompletion(c.Context, env, c.Args().First())
		},
	}
}

func runCompletion(_ context.Context, env *Env, shell string) error {
	script, err := completion.Write(shell, completionTree(newApp(env)))
	if err != nil {
		return usageError{Err: err}
	}
	_, err = env.Stdout.Write(script)
	return err
}

// completionTree is the command tree as completion sees it: visible
// commands and flags, plus the --help (and at the top --version) flags
// urfave adds when it runs.
func completionTree(a *cli.App) *completion.Command {
	helpFlag := completion.Flag{Names: []string{"help", "h"}, Usage: "show help"}
	root := &completion.Command{Name: a.Name, Usage: a.Usage,
		Flags: append(completionFlags(a.Flags), helpFlag, completion.Flag{Names: []string{"version", "v"}, Usage: "print the version", Local: true})}
	var walk func(cmds []*cli.Command) []*completion.Command
	walk = func(cmds []*cli.Command) []*completion.Command {
		var out []*completion.Command
		for _, c := range cmds {
			if c.Hidden {
				continue
			}
			out = append(out, &completion.Command{Name: c.Name, Usage: c.Usage,
				Flags: append(completionFlags(c.Flags), helpFlag), Subcommands: walk(c.Subcommands)})
		}
		return out
	}
	root.Subcommands = walk(a.Commands)
	return root
}

func completionFlags(flags []cli.Flag) []completion.Flag {
	var out []completion.Flag
	for _, f := range flags {
		if v, ok := f.(cli.VisibleFlag); ok && !v.IsVisible() {
			continue
		}
		cf := completion.Flag{Names: f.Names()}
		if d, ok := f.(cli.DocGenerationFlag); ok {
			cf.Usage = strings.ReplaceAll(d.GetUsage(), "`", "") // `NAME` marks the placeholder
			cf.TakesValue = d.TakesValue()
		}
		out = append(out, cf)
	}
	return out
}
