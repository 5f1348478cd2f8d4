package app

import (
	"context"
	"errors"
	"fmt"

	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/dome-registry/dome/pkg/gitstore"
	"github.com/dome-registry/dome/pkg/stack"
	"github.com/urfave/cli/v2"
)

func newStackPromoteCommand(env *Env) *cli.Command {
	return &cli.Command{
		Name: "promote",
		Usage: "fast-forward a ref to the integration head (compare-and-swap), only on the complete evidence chain: " +
			"StackPlan, an ApplyResult per applied proposal, passing ValidationReports of the head for the required tiers, PromotionDecision",
		Flags: withGlobal(stackRunFlag(), stackOpsFlag(), stackPolicyFlag(), createdAtFlag(),
			&cli.StringFlag{Name: "to", Usage: "the `REF` to fast-forward (default: the run's target, from init)"},
			&cli.StringFlag{Name: "approved-by", Usage: "`NAME` of the person approving, where the policy requires a human for the head's risk class"},
		),
		Action: func(c *cli.Context) error {
			repo, policy, err := openStack(env, c)
			if err != nil {
				return err
			}
			defer repo.Close()
			return runStackPromote(c.Context, env, repo, stackLayout(env, c, repo), policy, c.String("to"), c.String("approved-by"),
				c.String("created-at"), globalBool(c, flagJSON), globalBool(c, flagQuiet))
		},
	}
}

func runStackPromote(_ context.Context, env *Env, repo *gitstore.Repo, l stack.Layout, policy *stack.Policy, to, approvedBy, created string, asJSON, quiet bool) error {
	ao, err := stackApplyOptionsFor(env, policy, created, "stack promote")
	if err != nil {
		return err
	}
	r, err := stack.OpenRun(l, false)
	if err != nil {
		return err
	}
	defer r.Close()
	res, err := stack.Promote(repo, r, stack.PromoteOptions{ApplyOptions: ao, ToRef: to, ApprovedBy: approvedBy})
	var ce *errkind.CheckError
	if err != nil && !(errors.As(err, &ce) && res != nil && res.Decision.DecisionID != "") {
		return err
	}
	if asJSON {
		if werr := writeJSON(env.Stdout, res); werr != nil {
			return werr
		}
	} else if !quiet {
		d := res.Decision
		switch {
		case res.Already:
			fmt.Fprintf(env.Stdout, "run %s: already promoted: %s at %s\n", l.RunID, d.ToRef, short12(d.FromHeadRef))
		case res.Promoted:
			fmt.Fprintf(env.Stdout, "promoted %s to %s (was %s); decision %s, %d evidence artifacts\n", short12(d.FromHeadRef), d.ToRef, orNone(short12(d.OldTarget)),
				d.DecisionID, len(d.Evidence))
		default:
			fmt.Fprintf(env.Stdout, "refused: %s to %s; decision %s\n", short12(d.FromHeadRef), d.ToRef, d.DecisionID)
			for _, m := range d.Missing {
				fmt.Fprintf(env.Stdout, "  missing: %s\n", m)
			}
		}
	}
	return err
}

func orNone(s string) string {
	if s == "" {
		return "absent"
	}
	return s
}
