package app

import "github.com/urfave/cli/v2"

func newRegistryCommand(env *Env) *cli.Command {
	return &cli.Command{
		Name:  "registry",
		Usage: "list, show and read the tools, cards and A2A profiles of the registry",
		Subcommands: []*cli.Command{
			newRegistryListCommand(env),
			newRegistryShowCommand(env),
			newRegistryCatCommand(env),
			newRegistryIndexCommand(env),
			newRegistryVerifyCommand(env),
			newRegistryAcceptTagCommand(env),
			newRegistryCardsCommand(env),
			newRegistryCardCommand(env),
		},
		Description: help("registry"),
	}
}
