package app

import (
	"context"
	"fmt"
	"strings"

	"github.com/dome-registry/dome/pkg/gitstore"
	"github.com/dome-registry/dome/pkg/stack"
	"github.com/urfave/cli/v2"
)

func newStackRollbackCommand(env *Env) *cli.Command {
	return &cli.Command{
		Name:  "rollback",
		Usage: "move the integration ref back to a checkpoint of the current wave; the layers above become plannable again",
		Flags: withGlobal(stackRunFlag(), stackOpsFlag(), stackPolicyFlag(), createdAtFlag(),
			&cli.StringFlag{Name: "to", Usage: "the `CHECKPOINT`: a checkpoint commit (full or >= 7 hex digits), a layer's proposal id, or \"base\"", Required: true},
		),
		Action: func(c *cli.Context) error {
			repo, policy, err := openStack(env, c)
			if err != nil {
				return err
			}
			defer repo.Close()
			return runStackRollback(c.Context, env, repo, stackLayout(env, c, repo), policy, c.String("to"), c.String("created-at"),
				globalBool(c, flagJSON), globalBool(c, flagQuiet))
		},
		Description: help("stack_rollback"),
	}
}

func runStackRollback(_ context.Context, env *Env, repo *gitstore.Repo, l stack.Layout, policy *stack.Policy, to, created string, asJSON, quiet bool) error {
	ao, err := stackApplyOptionsFor(env, policy, created, "stack rollback")
	if err != nil {
		return err
	}
	r, err := openRun(env, l)
	if err != nil {
		return err
	}
	defer r.Close()
	res, err := stack.Rollback(repo, r, to, ao)
	if err != nil {
		return err
	}
	switch {
	case asJSON:
		return writeJSON(env.Stdout, res)
	case quiet:
	case len(res.Removed) == 0:
		fmt.Fprintf(env.Stdout, "run %s: already at %s\n", res.RunID, short12(res.To))
	default:
		fmt.Fprintf(env.Stdout, "run %s: rolled back %s -> %s, removed %s\n", res.RunID, short12(res.FromHeadRef), short12(res.To), strings.Join(res.Removed, " "))
	}
	return nil
}
