package app

import (
	"context"

	"github.com/dome-registry/dome/pkg/canonical"
	"github.com/dome-registry/dome/pkg/readlimit"
	"github.com/urfave/cli/v2"
)

type canonOptions struct {
	Input    string // FILE, "" or "-" for stdin
	Out      string // "" for stdout
	MaxDepth int
	Newline  bool
}

func newCanonCommand(env *Env) *cli.Command {
	return &cli.Command{
		Name:      "canon",
		Usage:     "print the RFC 8785 canonical form of a JSON file",
		ArgsUsage: "[FILE|-]",
		Flags: withGlobal(
			&cli.StringFlag{Name: "out", Aliases: []string{"o"}, Usage: "write to `FILE` instead of stdout (a file is replaced atomically; a device or FIFO is written in place)"},
			&cli.IntFlag{Name: "max-depth", Value: canonical.DefaultMaxDepth, Usage: "deepest nesting of arrays and objects accepted"},
			&cli.BoolFlag{Name: "newline", Usage: "end the output with a newline (not part of the canonical bytes)"},
		),
		Action: func(c *cli.Context) error {
			if c.Int("max-depth") < 1 {
				return usagef("--max-depth must be at least 1")
			}
			return runCanon(c.Context, env, canonOptions{
				Input: c.Args().First(), Out: c.String("out"), MaxDepth: c.Int("max-depth"), Newline: c.Bool("newline"),
			})
		},
		Description: help("canon"),
	}
}

func runCanon(_ context.Context, env *Env, opts canonOptions) error {
	r, err := openInput(env, opts.Input, readlimit.Document)
	if err != nil {
		return err
	}
	defer r.Close()
	out, err := canonical.TransformReader(r, canonical.Options{MaxDepth: opts.MaxDepth})
	if err != nil {
		return canonicalInputError(env, opts.Input, nil, err)
	}
	if opts.Newline {
		out = append(out, '\n')
	}
	return writeOutput(env, opts.Out, out)
}
