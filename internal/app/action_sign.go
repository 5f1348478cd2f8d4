package app

import (
	"context"
	"errors"

	"github.com/dome-registry/dome/pkg/action"
	"github.com/dome-registry/dome/pkg/canonical"
	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/dome-registry/dome/pkg/readlimit"
	"github.com/urfave/cli/v2"
)

type actionSignOptions struct {
	Key, KID string
	Input    string
	Out      string
}

func newActionSignCommand(env *Env) *cli.Command {
	return &cli.Command{
		Name:      "sign",
		Usage:     "sign an action document with an Ed25519 key",
		ArgsUsage: "FILE",
		Flags: withGlobal(
			&cli.StringFlag{Name: "key", Usage: "private key `FILE` (PKCS#8 PEM, as dome action keygen writes)"},
			&cli.StringFlag{Name: "kid", Usage: "key id `KID` (default: the key file name without .key or .pem)"},
			&cli.StringFlag{Name: "out", Aliases: []string{"o"}, Usage: "write to `FILE` instead of stdout (a file is replaced atomically; a device or FIFO is written in place)"},
		),
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return usagef("action sign takes exactly one FILE (or - for stdin)")
			}
			if c.String("key") == "" {
				return usagef("action sign needs --key FILE")
			}
			return runActionSign(c.Context, env, actionSignOptions{Key: c.String("key"), KID: c.String("kid"), Input: c.Args().First(), Out: c.String("out")})
		},
		Description: help("action_sign"),
	}
}

func runActionSign(_ context.Context, env *Env, opts actionSignOptions) error {
	key, err := loadPrivateKey(env, opts.Key, opts.KID)
	if err != nil {
		return err
	}
	data, err := readInputFile(env, opts.Input, readlimit.Document)
	if err != nil {
		return err
	}
	signed, err := action.Sign(key, data)
	if err != nil {
		return actionDocError(env, opts.Input, data, err)
	}
	if opts.Out == "" || opts.Out == "-" {
		signed = append(signed, '\n') // for the terminal; the file form is the exact canonical bytes
	}
	return writeOutput(env, opts.Out, signed)
}

// actionDocError names what is wrong with an action document file.
func actionDocError(env *Env, arg string, data []byte, err error) error {
	var se *canonical.SyntaxError
	if errors.As(err, &se) {
		return canonicalInputError(env, arg, data, se)
	}
	return &errkind.InputError{Source: sourceName(arg), Problem: err.Error(), Err: err, Hint: `an action document is a JSON object {"name": "files.move", "version": "1.0.0", ...}`}
}
