package app

import (
	"context"
	"fmt"

	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/dome-registry/dome/pkg/gitstore"
	"github.com/dome-registry/dome/pkg/stack"
	"github.com/urfave/cli/v2"
)

func newStackVerifyCommand(env *Env) *cli.Command {
	return &cli.Command{
		Name:  "verify",
		Usage: "check a promoted run's evidence chain after the fact: decision signature, cited artifacts, ledger, target ref",
		Flags: withGlobal(stackRunFlag(), stackOpsFlag(), trustedFlag(),
			&cli.BoolFlag{Name: "require-signature", Usage: "require a signed promotion decision even where the policy did not"},
		),
		Action: func(c *cli.Context) error {
			keys, err := optionalTrustedKeys(env, c.String("trusted"))
			if err != nil {
				return err
			}
			repo, err := openRepo(c.Context, env, c)
			if err != nil {
				return err
			}
			defer repo.Close()
			return runStackVerify(c.Context, env, repo, stackLayout(env, c, repo),
				stack.VerifyPromotionOptions{Trusted: keys, RequireSignature: c.Bool("require-signature")}, globalBool(c, flagJSON), globalBool(c, flagQuiet))
		},
		Description: help("stack_verify"),
	}
}

func runStackVerify(_ context.Context, env *Env, repo *gitstore.Repo, l stack.Layout, opts stack.VerifyPromotionOptions, asJSON, quiet bool) error {
	v, err := stack.VerifyPromotion(repo, l, opts)
	if err != nil {
		return err
	}
	if asJSON {
		if err := writeJSON(env.Stdout, v); err != nil {
			return err
		}
	} else if !quiet && v.OK() {
		signed := "unsigned"
		if v.SignedBy != "" {
			signed = "signed by " + v.SignedBy
		}
		fmt.Fprintf(env.Stdout, "verified: run %s promoted %s to %s (now at %s) under %s, %s; %d evidence artifacts intact; %d events replay to state.json\n",
			v.RunID, short12(v.FromHeadRef), v.ToRef, short12(v.ToRefAt), v.DecisionID, signed, v.Evidence, v.Events)
	}
	if !v.OK() {
		return &errkind.CheckError{Problem: fmt.Sprintf("run %s: the evidence chain of promotion %s does not hold (%d problems)", v.RunID, v.DecisionID, len(v.Problems)),
			Details: v.Problems, Hint: "the ops/runs folder or the target ref changed after the promotion; restore them, or promote again"}
	}
	return nil
}
