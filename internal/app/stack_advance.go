package app

import (
	"context"
	"fmt"

	"github.com/dome-registry/dome/pkg/gitstore"
	"github.com/dome-registry/dome/pkg/stack"
	"github.com/urfave/cli/v2"
)

func newStackAdvanceCommand(env *Env) *cli.Command {
	return &cli.Command{
		Name:  "advance",
		Usage: "start the next wave with base := the integration head; pending proposals of the old wave are superseded",
		Flags: withGlobal(stackRunFlag(), stackOpsFlag(), stackPolicyFlag(), createdAtFlag()),
		Action: func(c *cli.Context) error {
			repo, policy, err := openStack(env, c)
			if err != nil {
				return err
			}
			defer repo.Close()
			return runStackAdvance(c.Context, env, repo, stackLayout(env, c, repo), policy, c.String("created-at"), globalBool(c, flagJSON), globalBool(c, flagQuiet))
		},
		Description: help("stack_advance"),
	}
}

func runStackAdvance(_ context.Context, env *Env, repo *gitstore.Repo, l stack.Layout, policy *stack.Policy, created string, asJSON, quiet bool) error {
	ao, err := stackApplyOptionsFor(env, policy, created, "stack advance")
	if err != nil {
		return err
	}
	r, err := openRun(env, l)
	if err != nil {
		return err
	}
	defer r.Close()
	res, err := stack.Advance(repo, r, ao)
	if err != nil {
		return err
	}
	if asJSON {
		return writeJSON(env.Stdout, res)
	}
	if !quiet {
		fmt.Fprintf(env.Stdout, "run %s: %s -> %s, base %s (%d superseded)\n", res.RunID, res.PreviousWaveID, res.WaveID, res.BaseRef, len(res.Superseded))
	}
	return nil
}
