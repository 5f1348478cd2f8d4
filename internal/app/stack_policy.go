package app

import (
	"fmt"

	"github.com/dome-registry/dome/pkg/gitstore"
	"github.com/dome-registry/dome/pkg/stack"
	"github.com/urfave/cli/v2"
)

func newStackPolicyCommand(env *Env) *cli.Command {
	return &cli.Command{
		Name:        "policy",
		Usage:       "show the stack policy a run is pinned to, or change it on purpose (--policy FILE --reason TEXT)",
		Description: help("stack_policy"),
		Flags: withGlobal(stackRunFlag(), stackOpsFlag(), createdAtFlag(),
			&cli.StringFlag{Name: "policy", Usage: "the new stack policy `FILE`"},
			&cli.StringFlag{Name: "reason", Usage: "why the policy changes (`TEXT`, recorded in the event; required with --policy)"},
		),
		Action: func(c *cli.Context) error {
			if c.IsSet("reason") && !c.IsSet("policy") {
				return usagef("--reason goes with --policy FILE")
			}
			repo, err := openRepo(c.Context, env, c)
			if err != nil {
				return err
			}
			defer repo.Close()
			l := stackLayout(env, c, repo)
			if !c.IsSet("policy") {
				return runStackPolicyShow(env, l, globalBool(c, flagJSON))
			}
			if !c.IsSet("reason") {
				return usagef("--policy needs --reason TEXT: a policy change is recorded with why")
			}
			return runStackPolicyChange(env, repo, l, c.String("policy"), c.String("reason"), c.String("created-at"), globalBool(c, flagJSON), globalBool(c, flagQuiet))
		},
	}
}

// stackPolicyShown is dome stack policy --json.
type stackPolicyShown struct {
	RunID   string                    `json:"run_id"`
	Digest  string                    `json:"policy_digest"`
	Version string                    `json:"version"`
	Path    string                    `json:"path"`
	Since   int64                     `json:"since_sequence"`
	Changes []stack.PolicyChangeState `json:"changes"`
}

func runStackPolicyShow(env *Env, l stack.Layout, asJSON bool) error {
	st, _, err := stack.LoadState(l)
	if err != nil {
		return err
	}
	p, err := stack.PinnedPolicy(l, &st)
	if err != nil {
		return err
	}
	out := stackPolicyShown{RunID: st.RunID, Digest: st.PolicyDigest, Version: p.Version, Path: l.Rel(l.PolicyFile(st.PolicyDigest)),
		Since: st.PolicySequence, Changes: st.PolicyChanges}
	if asJSON {
		return writeJSON(env.Stdout, out)
	}
	fmt.Fprintf(env.Stdout, "run %s: stack policy %s (version %s), %s\n", out.RunID, out.Digest, out.Version, out.Path)
	for _, ch := range out.Changes {
		fmt.Fprintf(env.Stdout, "  event %d: %s -> %s (%s): %s\n", ch.Sequence, ch.FromDigest[:min(19, len(ch.FromDigest))], ch.ToDigest[:min(19, len(ch.ToDigest))], ch.Source, ch.Reason)
	}
	return nil
}

func runStackPolicyChange(env *Env, repo *gitstore.Repo, l stack.Layout, file, reason, created string, asJSON, quiet bool) error {
	policy, _, err := loadStackPolicy(env, file, repo)
	if err != nil {
		return err
	}
	at, err := createdAt(env, created)
	if err != nil {
		return err
	}
	r, err := openRun(env, l)
	if err != nil {
		return err
	}
	defer r.Close()
	res, err := r.ChangePolicy(policy, file, reason, at, producer("stack policy"))
	if err != nil {
		return err
	}
	if asJSON {
		return writeJSON(env.Stdout, res)
	}
	if quiet {
		return nil
	}
	if !res.Changed {
		fmt.Fprintf(env.Stdout, "run %s: %s is already the run's stack policy\n", res.RunID, res.ToDigest)
		return nil
	}
	fmt.Fprintf(env.Stdout, "run %s: stack policy %s -> %s (event %d, kept as %s); plan and validate again before promoting\n",
		res.RunID, res.FromDigest, res.ToDigest, res.Sequence, res.Path)
	return nil
}
