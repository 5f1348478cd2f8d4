package app

import (
	"context"
	"fmt"
	"strings"

	"github.com/dome-registry/dome/internal/patchcmd"
	"github.com/dome-registry/dome/pkg/gitstore"
	"github.com/dome-registry/dome/pkg/stack"
	"github.com/urfave/cli/v2"
)

type stackApplyOptions struct {
	Mode, CreatedAt string
	ThreeWay        bool
	JSON, Quiet     bool
}

func newStackApplyCommand(env *Env) *cli.Command {
	return &cli.Command{
		Name:  "apply",
		Usage: "apply the run's plan onto refs/dome/integration/<run>: a checkpoint commit and an ApplyResult per proposal",
		Flags: withGlobal(stackRunFlag(), stackOpsFlag(), stackPolicyFlag(), createdAtFlag(),
			&cli.StringFlag{Name: "mode", Usage: "atomicity the conflict policy may split with: atomic_proposal, atomic_file or hunk_ok (default: each proposal's own, within the policy)"},
			&cli.BoolFlag{Name: "three-way", Usage: "fall back to a three-way merge for files whose hunks do not apply (also when the policy says apply.three_way)"},
		),
		Action: func(c *cli.Context) error {
			repo, policy, err := openStack(env, c)
			if err != nil {
				return err
			}
			defer repo.Close()
			return runStackApply(c.Context, env, repo, stackLayout(env, c, repo), policy, stackApplyOptions{
				Mode: c.String("mode"), ThreeWay: c.Bool("three-way"), CreatedAt: c.String("created-at"),
				JSON: globalBool(c, flagJSON), Quiet: globalBool(c, flagQuiet),
			})
		},
		Description: help("stack_apply"),
	}
}

// stackApplyOptionsFor builds the options every command that may reconcile
// the ledger with the integration ref (apply, validate, rollback, advance,
// promote) shares: the policy, the pinned time and the commit identity.
func stackApplyOptionsFor(env *Env, policy *stack.Policy, created, cmd string) (stack.ApplyOptions, error) {
	at, err := createdAt(env, created)
	if err != nil {
		return stack.ApplyOptions{}, err
	}
	author, err := patchcmd.Signature(env.patch(), "AUTHOR", "", "", "")
	if err != nil {
		return stack.ApplyOptions{}, err
	}
	committer, err := patchcmd.Signature(env.patch(), "COMMITTER", "", "", "")
	if err != nil {
		return stack.ApplyOptions{}, err
	}
	return stack.ApplyOptions{Policy: policy, CreatedAt: at, Producer: producer(cmd), Author: author, Committer: committer}, nil
}

func runStackApply(_ context.Context, env *Env, repo *gitstore.Repo, l stack.Layout, policy *stack.Policy, opts stackApplyOptions) error {
	if err := stack.CheckMode(opts.Mode); err != nil {
		return err
	}
	ao, err := stackApplyOptionsFor(env, policy, opts.CreatedAt, "stack apply")
	if err != nil {
		return err
	}
	ao.Mode, ao.ThreeWay = opts.Mode, opts.ThreeWay
	if env.StderrTTY && !opts.Quiet && !opts.JSON {
		ao.Progress = func(p stack.ApplyProgress) {
			fmt.Fprintf(env.Stderr, "\r\x1b[Kapplying %d/%d %s %s", p.Done, p.Total, p.Outcome, p.ProposalID)
			if p.Done == p.Total && p.Outcome != "deferred" {
				fmt.Fprintln(env.Stderr)
			}
		}
	}
	r, err := openRun(env, l)
	if err != nil {
		return err
	}
	defer r.Close()
	rep, err := stack.ApplyPlan(repo, r, ao)
	if err != nil {
		return err
	}
	if opts.JSON {
		return writeJSON(env.Stdout, rep)
	}
	if opts.Quiet {
		return nil
	}
	w := env.Stdout
	for _, id := range rep.Reconciled.Recovered {
		fmt.Fprintf(w, "recovered %s (its checkpoint was on the ref without an event)\n", id)
	}
	if rep.Reconciled.RolledBack != "" {
		fmt.Fprintf(w, "recorded the rollback to %s found on the ref\n", short12(rep.Reconciled.RolledBack))
	}
	for _, a := range rep.Applied {
		from := ""
		if a.DerivedFrom != "" {
			from = " (split from " + a.DerivedFrom + ")"
		}
		fmt.Fprintf(w, "applied  %-24s %s%s\n", a.ProposalID, short12(a.CheckpointID), from)
	}
	for _, x := range rep.Rejected {
		var cs []string
		for _, c := range x.ConflictSummary {
			cs = append(cs, c.String())
		}
		fmt.Fprintf(w, "rejected %-24s %s: %s\n", x.ProposalID, x.ReasonCode, strings.Join(cs, "; "))
	}
	fmt.Fprintf(w, "run %s: %d applied, %d deferred, %d rejected, %d split; %s at %s (tree %s)\n", rep.RunID, len(rep.Applied), len(rep.Deferred),
		len(rep.Rejected), len(rep.Split), stack.IntegrationRef(rep.RunID), short12(rep.HeadRef), short12(rep.Tree))
	return nil
}

func short12(s string) string {
	if len(s) > 12 {
		return s[:12]
	}
	return s
}
