package app

import (
	"context"

	"github.com/dome-registry/dome/internal/buildinfo"
	"github.com/dome-registry/dome/internal/readcmd"
	"github.com/urfave/cli/v2"
)

// domeVersion is the version dome records in manifests and logs.
func domeVersion() string { return buildinfo.String() }

func newVersionCommand(env *Env) *cli.Command {
	return &cli.Command{
		Name:        "version",
		Usage:       "print dome's version, commit and Go version",
		Description: help("version"),
		Flags:       withGlobal(),
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usagef("version takes no arguments (got %q)", c.Args().First())
			}
			return runVersion(c.Context, env, globalBool(c, flagJSON))
		},
	}
}

func runVersion(_ context.Context, env *Env, asJSON bool) error {
	return readcmd.Version(env.Stdout, asJSON)
}
