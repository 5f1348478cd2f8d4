package app

import (
	"context"
	"fmt"
	"os"

	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/dome-registry/dome/pkg/gitstore"
	"github.com/dome-registry/dome/pkg/stack"
	"github.com/urfave/cli/v2"
)

type stackValidateOptions struct {
	Tier, CreatedAt, ImageDigest string
	Tools                        []string
	Keep                         bool
	JSON, Quiet                  bool
}

func newStackValidateCommand(env *Env) *cli.Command {
	return &cli.Command{
		Name:  "validate",
		Usage: "run a validation tier of the policy on the materialized integration head and record a ValidationReport",
		Flags: withGlobal(stackRunFlag(), stackOpsFlag(), stackPolicyFlag(), createdAtFlag(),
			&cli.StringFlag{Name: "tier", Usage: "the policy tier `NAME` (fast, full, ...)", Required: true},
			&cli.StringSliceFlag{Name: "tool", Usage: "also record the version of `TOOL` (repeatable; each command's argv[0] is recorded anyway)"},
			&cli.StringFlag{Name: "image-digest", Usage: "the container image `DIGEST` the commands run in, to record", EnvVars: []string{"DOME_IMAGE_DIGEST"}},
			&cli.BoolFlag{Name: "keep", Usage: "keep the materialized head and print where it is"},
		),
		Action: func(c *cli.Context) error {
			repo, policy, err := openStack(env, c)
			if err != nil {
				return err
			}
			defer repo.Close()
			return runStackValidate(c.Context, env, repo, stackLayout(env, c, repo), policy, stackValidateOptions{
				Tier: c.String("tier"), CreatedAt: c.String("created-at"), ImageDigest: c.String("image-digest"), Tools: c.StringSlice("tool"),
				Keep: c.Bool("keep"), JSON: globalBool(c, flagJSON), Quiet: globalBool(c, flagQuiet),
			})
		},
		Description: help("stack_validate"),
	}
}

func runStackValidate(ctx context.Context, env *Env, repo *gitstore.Repo, l stack.Layout, policy *stack.Policy, opts stackValidateOptions) error {
	ao, err := stackApplyOptionsFor(env, policy, opts.CreatedAt, "stack validate")
	if err != nil {
		return err
	}
	r, err := openRun(env, l)
	if err != nil {
		return err
	}
	defer r.Close()
	// The commands see this process's environment (PATH, HOME, GOCACHE, ...).
	res, err := stack.ValidateHead(ctx, repo, r, stack.ValidateOptions{ApplyOptions: ao, Tier: opts.Tier, Env: os.Environ(), Tools: opts.Tools,
		ImageDigest: opts.ImageDigest, TempDir: env.Getenv("TMPDIR"), Keep: opts.Keep})
	if err != nil {
		return err
	}
	rep := res.Report
	if opts.JSON {
		if err := writeJSON(env.Stdout, res); err != nil {
			return err
		}
	} else if !opts.Quiet {
		for _, c := range rep.Commands {
			status := "ok"
			switch {
			case c.TimedOut:
				status = "TIMEOUT"
			case c.ExitCode != 0 || c.Error != "":
				status = fmt.Sprintf("FAIL (exit %d)", c.ExitCode)
			}
			fmt.Fprintf(env.Stdout, "%-8s %-20s %6d ms\n", status, c.Name, c.DurationMS)
		}
		verdict := "passed"
		if !rep.Passed {
			verdict = "failed"
		}
		fmt.Fprintf(env.Stdout, "tier %s %s on %s (%d proposals): %s\n", rep.Tier, verdict, short12(rep.HeadRef), len(rep.ProposalIDs), res.Path)
		if res.Dir != "" {
			fmt.Fprintf(env.Stdout, "head materialized in %s\n", res.Dir)
		}
	}
	if !rep.Passed {
		return &errkind.CheckError{Problem: fmt.Sprintf("validation tier %s failed on %s", rep.Tier, short12(rep.HeadRef)), Details: stack.FailedCommands(rep),
			Hint: "the report is recorded; see " + res.Path + " (output_tail of each command)"}
	}
	return nil
}
