package app

import (
	"context"
	"fmt"

	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/dome-registry/dome/pkg/registry"
	"github.com/dome-registry/dome/pkg/release"
	"github.com/urfave/cli/v2"
)

type specDiffOptions struct {
	A, B    string
	Profile string
	JSON    bool
	FailOn  bool
}

func newSpecDiffCommand(env *Env) *cli.Command {
	return &cli.Command{
		Name:      "diff",
		Usage:     "classify the changes of a tool's filtered specs between two refs (breaking or not), per profile",
		ArgsUsage: "<tool@refA> <tool@refB>",
		Flags: withGlobal(
			&cli.StringFlag{Name: "profile", Usage: "compare only `PROFILE` (default: every profile of either side)"},
			&cli.BoolFlag{Name: "fail-on-breaking", Usage: "exit 1 when a breaking change is found"},
		),
		Action: func(c *cli.Context) error {
			if c.NArg() != 2 {
				return usagef("spec diff takes <tool@refA> <tool@refB>")
			}
			reg, err := openRegistry(c.Context, env, c)
			if err != nil {
				return err
			}
			return runSpecDiff(c.Context, env, reg, specDiffOptions{A: c.Args().Get(0), B: c.Args().Get(1), Profile: c.String("profile"), JSON: globalBool(c, flagJSON), FailOn: c.Bool("fail-on-breaking")})
		},
		Description: help("spec_diff"),
	}
}

func runSpecDiff(ctx context.Context, env *Env, reg *registry.Registry, opts specDiffOptions) error {
	a, err := registry.ParseRef("tool A", opts.A)
	if err != nil {
		return err
	}
	b, err := registry.ParseRef("tool B", opts.B)
	if err != nil {
		return err
	}
	if a.ID != b.ID {
		return usagef("spec diff compares one tool at two refs; got %s and %s", a.ID, b.ID)
	}
	diffs, err := release.Diff(ctx, reg, a, b, opts.Profile)
	if err != nil {
		return err
	}
	breaking := 0
	for _, d := range diffs {
		breaking += len(d.Report.Breaking)
	}
	if opts.JSON {
		if err := writeJSON(env.Stdout, diffs); err != nil {
			return err
		}
	} else {
		for _, d := range diffs {
			fmt.Fprintf(env.Stdout, "profile %s (%s): %d breaking, %d non-breaking\n", d.Profile, d.Status, len(d.Report.Breaking), len(d.Report.NonBreaking))
			for _, c := range d.Report.Breaking {
				fmt.Fprintf(env.Stdout, "  BREAKING  %-28s %-20s %s\n", c.Kind, orDash(c.Operation), c.Detail)
			}
			for _, c := range d.Report.NonBreaking {
				fmt.Fprintf(env.Stdout, "  ok        %-28s %-20s %s\n", c.Kind, orDash(c.Operation), c.Detail)
			}
		}
	}
	if opts.FailOn && breaking > 0 {
		return &errkind.CheckError{Problem: fmt.Sprintf("%d breaking change(s) between %s and %s", breaking, opts.A, opts.B)}
	}
	return nil
}
