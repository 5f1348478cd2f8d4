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
		Description: `Reads one JSON text (FILE, or stdin when FILE is - or absent) and writes its RFC 8785
(JCS) canonical bytes: members sorted by UTF-16 code units, ECMAScript number form,
minimal string escapes, no whitespace and no final newline (unless --newline). Refuses
duplicate member names, invalid UTF-8, lone surrogates, numbers beyond a double,
NaN/Infinity, trailing data and nesting deeper than --max-depth, naming line, column and
byte offset (exit 2). The output is already JSON, so --json changes nothing.`,
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
