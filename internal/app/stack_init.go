package app

import (
	"context"
	"fmt"

	"github.com/dome-registry/dome/pkg/gitstore"
	"github.com/dome-registry/dome/pkg/stack"
	"github.com/urfave/cli/v2"
)

type stackInitOptions struct {
	Base, Target, Seed, CreatedAt string
	JSON, Quiet                   bool
}

func newStackInitCommand(env *Env) *cli.Command {
	return &cli.Command{
		Name:  "init",
		Usage: "start a run: ops/runs/<run>/ and the integration ref refs/dome/integration/<run> at --base",
		Flags: withGlobal(stackRunFlag(), stackOpsFlag(), stackPolicyFlag(), createdAtFlag(),
			&cli.StringFlag{Name: "base", Usage: "the base commit: a full `SHA`", Required: true},
			&cli.StringFlag{Name: "target", Value: "refs/heads/main", Usage: "the `REF` promotion fast-forwards"},
			&cli.StringFlag{Name: "seed", Usage: "determinism seed to record (default: derived from the run id and the base)"},
		),
		Action: func(c *cli.Context) error {
			repo, policy, err := openStack(env, c)
			if err != nil {
				return err
			}
			defer repo.Close()
			return runStackInit(c.Context, env, repo, stackLayout(env, c, repo), policy, stackInitOptions{
				Base: c.String("base"), Target: c.String("target"), Seed: c.String("seed"), CreatedAt: c.String("created-at"),
				JSON: globalBool(c, flagJSON), Quiet: globalBool(c, flagQuiet),
			})
		},
		Description: help("stack_init"),
	}
}

func runStackInit(_ context.Context, env *Env, repo *gitstore.Repo, l stack.Layout, policy *stack.Policy, opts stackInitOptions) error {
	at, err := createdAt(env, opts.CreatedAt)
	if err != nil {
		return err
	}
	res, err := stack.Init(repo, l, stack.InitOptions{Base: opts.Base, TargetRef: opts.Target, DeterminismSeed: opts.Seed, Policy: policy,
		CreatedAt: at, Producer: producer("stack init")})
	if err != nil {
		return err
	}
	if opts.JSON {
		return writeJSON(env.Stdout, res)
	}
	if opts.Quiet {
		return nil
	}
	verb := "initialized"
	if !res.Created {
		verb = "already initialized"
	}
	fmt.Fprintf(env.Stdout, "run %s %s: %s at %s (%s), target %s\n", res.RunID, verb, res.IntegrationRef, res.BaseRef[:12], res.WaveID, res.TargetRef)
	return nil
}
