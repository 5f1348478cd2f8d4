package app

import (
	"context"

	"github.com/dome-registry/dome/internal/readcmd"
	"github.com/dome-registry/dome/pkg/registry"
	"github.com/urfave/cli/v2"
)

type registryCatOptions struct {
	Tool, Path string
}

func newRegistryCatCommand(env *Env) *cli.Command {
	return &cli.Command{
		Name:      "cat",
		Usage:     "print the raw bytes of a file of a tool at a ref",
		ArgsUsage: "<tool@ref> <path-in-tool>",
		Flags:     withGlobal(),
		Action: func(c *cli.Context) error {
			if c.NArg() != 2 {
				return usagef("registry cat takes <tool@ref> <path-in-tool>")
			}
			reg, err := openRegistry(c.Context, env, c)
			if err != nil {
				return err
			}
			return runRegistryCat(c.Context, env, reg, registryCatOptions{Tool: c.Args().Get(0), Path: c.Args().Get(1)})
		},
		Description: help("registry_cat"),
	}
}

func runRegistryCat(ctx context.Context, env *Env, reg *registry.Registry, opts registryCatOptions) error {
	return readcmd.RegistryCat(ctx, reg, opts.Tool, opts.Path, env.Stdout)
}
