package app

import (
	"context"
	"errors"
	"fmt"

	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/dome-registry/dome/pkg/orchestrate"
	"github.com/urfave/cli/v2"
)

func newRunReplayCommand(env *Env) *cli.Command {
	return &cli.Command{
		Name:        "replay",
		Description: help("run_replay"),
		Usage:       "re-derive every SchedulingDecision of a run from its queue, policy, seed and ledger, and its state byte for byte (exit 1 on any difference)",
		ArgsUsage:   "RUN",
		Flags:       withGlobal(stackOpsFlag()),
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return usagef("name one run: dome run replay RUN")
			}
			l, err := existingRun(env, c, c.Args().First())
			if err != nil {
				return err
			}
			rr, err := orchestrate.Replay(l)
			var re *orchestrate.ReplayError
			if errors.As(err, &re) {
				return &errkind.CheckError{Problem: fmt.Sprintf("run %s does not replay: %v", l.RunID, re)}
			}
			if err != nil {
				return err
			}
			ok := rr.Matches && rr.Stack.Equal && rr.Unrecorded == 0
			if globalBool(c, flagJSON) {
				if err := writeJSON(env.Stdout, rr); err != nil {
					return err
				}
			} else if !globalBool(c, flagQuiet) {
				w := env.Stdout
				fmt.Fprintf(w, "run %s: %d events, %d scheduling decisions re-derived byte for byte\n", rr.RunID, rr.Events, rr.Decisions)
				switch {
				case rr.Matches:
					fmt.Fprintf(w, "  run.state.json  matches (%s)\n", rr.Digest)
				case rr.StoredSequence == 0:
					fmt.Fprintf(w, "  run.state.json  missing (the derived state is %s)\n", rr.Digest)
				default:
					fmt.Fprintf(w, "  run.state.json  differs: written after event %d; %s\n", rr.StoredSequence, rr.FirstDiff)
				}
				if rr.Stack.Equal {
					fmt.Fprintf(w, "  state.json      matches (%s)\n", rr.Stack.Digest)
				} else {
					fmt.Fprintf(w, "  state.json      differs: %s %s\n", rr.Stack.FirstDiff, rr.Stack.Detail)
				}
				if rr.Unrecorded > 0 {
					fmt.Fprintf(w, "  %d decision(s) the engine derives are not recorded yet: dome run start --run %s records them\n", rr.Unrecorded, rr.RunID)
				}
			}
			if !ok {
				return silentError{ExitCheck}
			}
			return nil
		},
	}
}

func newRunCancelCommand(env *Env) *cli.Command {
	return &cli.Command{
		Name:        "cancel",
		Description: help("run_cancel"),
		Usage:       "end a run: its coordinator kills its workers and stops it (cancelled), or, when none runs it, it is stopped here",
		ArgsUsage:   "RUN",
		Flags:       withGlobal(stackOpsFlag(), &cli.StringFlag{Name: "reason", Value: "dome run cancel", Usage: "why (`TEXT`, recorded)"}),
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return usagef("name one run: dome run cancel RUN")
			}
			repo, err := openRepo(c.Context, env, c)
			if err != nil {
				return err
			}
			defer repo.Close()
			l, err := runLayout(env, c, repo, c.Args().First())
			if err != nil {
				return err
			}
			cfg, err := runConfigOffline(env, repo, l)
			if err != nil {
				return err
			}
			asked, out, err := orchestrate.Cancel(context.Background(), cfg, c.String("reason"))
			if err != nil {
				return err
			}
			if asked {
				if !globalBool(c, flagQuiet) {
					fmt.Fprintf(env.Stdout, "run %s: its coordinator was asked to stop (it kills its workers and records why)\n", cfg.RunID)
				}
				return nil
			}
			if globalBool(c, flagJSON) {
				return writeJSON(env.Stdout, out)
			}
			if !globalBool(c, flagQuiet) {
				fmt.Fprintf(env.Stdout, "run %s: %s: %s\n", cfg.RunID, out.Stop.Reason, out.Stop.Detail)
			}
			return nil
		},
	}
}
