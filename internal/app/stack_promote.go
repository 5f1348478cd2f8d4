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
		Name:  "promote",
		Usage: "fast-forward a ref to the integration head (compare-and-swap), only on the complete evidence chain",
		Flags: withGlobal(stackRunFlag(), stackOpsFlag(), stackPolicyFlag(), createdAtFlag(),
			&cli.StringFlag{Name: "to", Usage: "the `REF` to fast-forward (default: the run's target, from init)"},
			&cli.StringFlag{Name: "approved-by", Usage: "`NAME` of the person approving, where the policy requires a human for the head's risk class"},
			&cli.StringFlag{Name: "sign-key", Usage: "sign the gate and promotion decisions with the Ed25519 private key `FILE` (dome keygen); required where the policy's promotion.signature says so"},
			&cli.StringFlag{Name: "kid", Usage: "key id `KID` of --sign-key (default: the file name without .key)"},
		),
		Action: func(c *cli.Context) error {
			repo, policy, err := openStack(env, c)
			if err != nil {
				return err
			}
			defer repo.Close()
			po := stack.PromoteOptions{ToRef: c.String("to"), ApprovedBy: c.String("approved-by")}
			if k := c.String("sign-key"); k != "" {
				key, err := loadPrivateKey(env, k, c.String("kid"))
				if err != nil {
					return err
				}
				po.Key = &key
			}
			return runStackPromote(c.Context, env, repo, stackLayout(env, c, repo), policy, po, c.String("created-at"), globalBool(c, flagJSON), globalBool(c, flagQuiet))
		},
		Description: help("stack_promote"),
	}
}

func runStackPromote(_ context.Context, env *Env, repo *gitstore.Repo, l stack.Layout, policy *stack.Policy, po stack.PromoteOptions, created string, asJSON, quiet bool) error {
	ao, err := stackApplyOptionsFor(env, policy, created, "stack promote")
	if err != nil {
		return err
	}
	r, err := openRun(env, l)
	if err != nil {
		return err
	}
	defer r.Close()
	po.ApplyOptions = ao
	res, err := stack.Promote(repo, r, po)
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
			signed := ""
			if po.Key != nil {
				signed = ", signed by " + po.Key.KID
			}
			fmt.Fprintf(env.Stdout, "promoted %s to %s (was %s); decision %s, %d evidence artifacts%s\n", short12(d.FromHeadRef), d.ToRef, orNone(short12(d.OldTarget)),
				d.DecisionID, len(d.Evidence), signed)
			for _, wt := range res.Worktrees {
				fmt.Fprintf(env.Stdout, "updated the worktree %s, where %s is checked out, to %s (it was clean)\n", wt, d.ToRef, short12(d.FromHeadRef))
			}
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
