package app

import (
	"bytes"
	"context"
	"errors"

	"github.com/dome-registry/dome/pkg/canonical"
	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/dome-registry/dome/pkg/readlimit"
	"github.com/dome-registry/dome/pkg/signing"
	"github.com/urfave/cli/v2"
)

type signOptions struct {
	Key   string // PKCS#8 PEM file
	KID   string // default: the key file's name without .key/.pem
	Kind  string // payload type: the artifact kind
	Input string
	Embed bool
	Out   string
}

func newSignCommand(env *Env) *cli.Command {
	return &cli.Command{
		Name:      "sign",
		Usage:     "sign the canonical form of a JSON file with an Ed25519 key",
		ArgsUsage: "FILE",
		Flags: withGlobal(
			&cli.StringFlag{Name: "key", Usage: "private key `FILE` (PKCS#8 PEM, as dome keygen writes)"},
			&cli.StringFlag{Name: "kid", Usage: "key id `KID` (default: the key file name without .key or .pem)"},
			&cli.StringFlag{Name: "kind", Usage: "payload type `KIND` the signature is bound to (e.g. dome.action/v1)"},
			&cli.BoolFlag{Name: "embed", Usage: "print the document with its signature block embedded"},
			&cli.StringFlag{Name: "out", Aliases: []string{"o"}, Usage: "write to `FILE` instead of stdout (a file is replaced atomically; a device or FIFO is written in place)"},
		),
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return usagef("sign takes exactly one FILE (or - for stdin)")
			}
			if c.String("key") == "" || c.String("kind") == "" {
				return usagef("sign needs --key FILE and --kind KIND")
			}
			return runSign(c.Context, env, signOptions{
				Key: c.String("key"), KID: c.String("kid"), Kind: c.String("kind"), Input: c.Args().First(),
				Embed: c.Bool("embed"), Out: c.String("out"),
			})
		},
		Description: help("sign"),
	}
}

func runSign(_ context.Context, env *Env, opts signOptions) error {
	if err := signing.CheckPayloadType(opts.Kind); err != nil {
		return &errkind.InputError{Source: "--kind", Problem: err.Error()}
	}
	key, err := loadPrivateKey(env, opts.Key, opts.KID)
	if err != nil {
		return err
	}
	data, err := readInputFile(env, opts.Input, readlimit.Document)
	if err != nil {
		return err
	}
	if opts.Embed {
		doc, _, err := signing.SignEmbedded(key, opts.Kind, data)
		if err != nil {
			return signInputError(env, opts.Input, data, err)
		}
		return writeOutput(env, opts.Out, doc)
	}
	payload, err := canonical.Transform(data)
	if err != nil {
		return canonicalInputError(env, opts.Input, data, err)
	}
	sf, err := signing.NewSignatureFile(key, opts.Kind, payload)
	if err != nil {
		return signInputError(env, opts.Input, data, err)
	}
	var buf bytes.Buffer
	if err := writeJSON(&buf, sf); err != nil {
		return err
	}
	return writeOutput(env, opts.Out, buf.Bytes())
}

// signInputError names what is wrong with the input of sign or verify.
func signInputError(env *Env, arg string, data []byte, err error) error {
	var se *canonical.SyntaxError
	switch {
	case errors.As(err, &se):
		return canonicalInputError(env, arg, data, err)
	case errors.Is(err, signing.ErrNotObject):
		return &errkind.InputError{Source: sourceName(arg), Problem: err.Error(), Hint: "sign other JSON values with a detached signature (without --embed)"}
	}
	return &errkind.InputError{Source: sourceName(arg), Problem: err.Error()}
}
