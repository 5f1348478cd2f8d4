package app

import (
	"context"
	"fmt"

	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/dome-registry/dome/pkg/stack"
	"github.com/urfave/cli/v2"
)

func newStackReplayCommand(env *Env) *cli.Command {
	return &cli.Command{
		Name:  "replay",
		Usage: "re-derive a run's state from its events alone; exit 1 when it differs from state.json",
		Flags: withGlobal(stackRunFlag(), stackOpsFlag()),
		Action: func(c *cli.Context) error {
			repo, err := openRepo(c.Context, env, c)
			if err != nil {
				return err
			}
			defer repo.Close()
			return runStackReplay(c.Context, env, stackLayout(env, c, repo), globalBool(c, flagJSON), globalBool(c, flagQuiet))
		},
		Description: help("stack_replay"),
	}
}

func runStackReplay(_ context.Context, env *Env, l stack.Layout, asJSON, quiet bool) error {
	res, err := stack.Replay(l)
	if err != nil {
		return err
	}
	if asJSON {
		if err := writeJSON(env.Stdout, res); err != nil {
			return err
		}
	} else if !quiet && res.Equal {
		fmt.Fprintf(env.Stdout, "run %s: %d events replay to state.json (%s)\n", res.RunID, res.Events, res.Digest)
	}
	if !res.Equal {
		field := res.FirstDiff
		if field == "" {
			field = "(whole file)"
		}
		return &errkind.CheckError{Problem: fmt.Sprintf("run %s: state.json differs from the state re-derived from %d events at %s", res.RunID, res.Events, field),
			Details: []string{res.Detail}, Hint: "state.json is a view: any dome stack command that writes the run rewrites it from the events"}
	}
	return nil
}
