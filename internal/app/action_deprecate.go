package app

import (
	"context"
	"fmt"

	"github.com/dome-registry/dome/pkg/action"
	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/urfave/cli/v2"
)

type actionDeprecateOptions struct {
	Ref    string
	Reason string
	Undo   bool
	JSON   bool
	Quiet  bool
}

func newActionDeprecateCommand(env *Env) *cli.Command {
	return &cli.Command{
		Name:      "deprecate",
		Usage:     "mark a published version deprecated (--reason) or not any more (--undo)",
		ArgsUsage: "NAME@VERSION",
		Flags: withGlobal(actionStoreFlag(),
			&cli.StringFlag{Name: "reason", Usage: "why, and what to use instead (`TEXT`, at most 1024 bytes)"},
			&cli.BoolFlag{Name: "undo", Usage: "clear the deprecation"},
		),
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return usagef("action deprecate takes exactly one NAME@VERSION")
			}
			opts := actionDeprecateOptions{Ref: c.Args().First(), Reason: c.String("reason"), Undo: c.Bool("undo"),
				JSON: globalBool(c, flagJSON), Quiet: globalBool(c, flagQuiet)}
			if opts.Undo == (opts.Reason != "") {
				return usagef("action deprecate needs --reason TEXT (to deprecate) or --undo (to clear), not both")
			}
			store, err := actionStoreFromFlags(c, env)
			if err != nil {
				return err
			}
			defer store.Close()
			return runActionDeprecate(c.Context, env, store, opts)
		},
		Description: help("action_deprecate"),
	}
}

// actionDeprecateResult is dome action deprecate --json.
type actionDeprecateResult struct {
	Name              string `json:"name"`
	Version           string `json:"version"`
	Deprecated        bool   `json:"deprecated"`
	DeprecationReason string `json:"deprecation_reason,omitempty"`
}

func runActionDeprecate(ctx context.Context, env *Env, store action.Store, opts actionDeprecateOptions) error {
	name, version, err := action.ParseRef(opts.Ref)
	if err == nil && version == "" {
		err = fmt.Errorf("no version: deprecation is of one published version")
	}
	if err != nil {
		return &errkind.InputError{Source: opts.Ref, Problem: err.Error(), Hint: "write NAME@VERSION, e.g. files.move@1.1.0"}
	}
	var d *action.Deprecation
	if !opts.Undo {
		d = &action.Deprecation{Reason: opts.Reason}
	}
	rec, err := store.Deprecate(ctx, name, version, d)
	if err != nil {
		return actionStoreError(opts.Ref, err)
	}
	out := actionDeprecateResult{Name: rec.Name, Version: rec.Version}
	if rec.Deprecation != nil {
		out.Deprecated, out.DeprecationReason = true, rec.Deprecation.Reason
	}
	switch {
	case opts.JSON:
		return writeJSON(env.Stdout, out)
	case opts.Quiet:
	case out.Deprecated:
		fmt.Fprintf(env.Stdout, "deprecated %s@%s: %s\n", rec.Name, rec.Version, out.DeprecationReason)
	default:
		fmt.Fprintf(env.Stdout, "%s@%s is not deprecated\n", rec.Name, rec.Version)
	}
	return nil
}
