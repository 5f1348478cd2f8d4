package app

import (
	"fmt"

	"github.com/dome-registry/dome/pkg/workflow"
	"github.com/urfave/cli/v2"
)

func newRunPlanCommand(env *Env) *cli.Command {
	return &cli.Command{
		Name:        "plan",
		Description: help("run_plan"),
		Usage:       "show the order a run would dispatch a work queue in, wave by wave, if every attempt passed (the SchedulingDecisions)",
		ArgsUsage:   "QUEUE",
		Flags: withGlobal(runPolicyFlag(), runResolverFlag(), maxConcurrencyFlag(),
			&cli.StringFlag{Name: "run", Usage: "run `ID` to record in the decisions (default: the queue's run_id, else \"plan\")"},
			&cli.StringFlag{Name: "seed", Value: "plan", Usage: "determinism `SEED` to record (execution ids derive from it)"}),
		Action: func(c *cli.Context) error {
			in, err := loadRunInputs(env, c)
			if err != nil {
				return err
			}
			run := c.String("run")
			if run == "" {
				run = in.Queue.RunID
			}
			if run == "" {
				run = "plan"
			}
			return runPlan(env, in, workflow.Options{RunID: run, Seed: c.String("seed")}, globalBool(c, flagJSON), globalBool(c, flagQuiet))
		},
	}
}

// runPlan drives the engine as a run would if every attempt passed at
// once: a wave is what one scheduling call dispatches once the previous
// wave has finished.
func runPlan(env *Env, in *runInputs, opt workflow.Options, asJSON, quiet bool) error {
	e, err := workflow.NewEngine(in.Graph, in.Sched, opt)
	if err != nil {
		return err
	}
	var waves [][]workflow.Decision
	for k := 1; !e.Done(); k++ {
		ds := e.Next(fmt.Sprintf("w%d", k))
		if len(ds) == 0 {
			return fmt.Errorf("plan: the scheduler stalled with %d attempts running", e.Running())
		}
		wave := ds
		for _, d := range ds {
			if d.NodeExecutionID == "" || d.Action == workflow.ActCancel {
				continue
			}
			more, err := e.Report(d.NodeExecutionID, workflow.Outcome{Status: workflow.OutcomeSucceeded})
			if err != nil && d.Action == workflow.ActDuplicate {
				continue // cancelled by the first passing attempt
			}
			if err != nil {
				return err
			}
			for _, m := range more {
				if m.Action == workflow.ActCancel {
					if _, err := e.Report(m.NodeExecutionID, workflow.Outcome{Status: workflow.OutcomeCancelled}); err != nil {
						return err
					}
				}
			}
			wave = append(wave, more...)
		}
		waves = append(waves, wave)
	}
	if asJSON {
		for _, w := range waves {
			for _, d := range w {
				if err := writeJSONLine(env.Stdout, d); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if quiet {
		return nil
	}
	w := env.Stdout
	p := in.Sched
	fmt.Fprintf(w, "plan of %s: %s, max_concurrency %d, %s (policy %s)\n", in.Source, plural(len(in.Queue.Tasks), "task", "tasks"),
		p.MaxConcurrency, p.Strategy, in.PolicySource)
	tw := table(w)
	fmt.Fprintln(tw, "wave\trank\taction\ttask\tpriority\tgroup\tnode_execution_id")
	for k, wave := range waves {
		for _, d := range wave {
			if d.Scores == nil {
				continue
			}
			group := d.TieBreak.NodePriorityGroup
			if group == "" {
				group = "-"
			}
			fmt.Fprintf(tw, "w%d\t%d\t%s\t%s\t%d\t%s\t%s\n", k+1, d.Rank, d.Action, d.NodeID, d.Scores.Priority, group, d.NodeExecutionID)
		}
	}
	return tw.Flush()
}
