package app

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/dome-registry/dome/pkg/agent"
	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/dome-registry/dome/pkg/ledger"
	"github.com/urfave/cli/v2"
)

type workflowRunOptions struct {
	Agent, Rev, Task string
	RunID            string
	Seed             string
	CreatedAt        string
	Provider         providerOptions
	JSON             bool
}

func newWorkflowRunCommand(env *Env) *cli.Command {
	return &cli.Command{
		Name:        "run",
		Usage:       "run an agent's workflow on a task, recording every step and checkpoint in ops/runs/<run>/",
		Description: help("workflow_run"),
		ArgsUsage:   "AGENT[@REF] TASK",
		Flags: withGlobal(append(workflowProviderFlags(), workflowRunFlag(false), stackOpsFlag(), createdAtFlag(),
			&cli.StringFlag{Name: "seed", Usage: "the run's determinism `SEED` (default: the run id)"})...),
		Action: func(c *cli.Context) error {
			if c.NArg() != 2 {
				return usagef("give the agent and the task: dome workflow run AGENT[@REF] \"TASK\"")
			}
			id, rev, err := splitAgentRef("AGENT", c.Args().Get(0), "HEAD")
			if err != nil {
				return err
			}
			po, err := readProviderOptions(c)
			if err != nil {
				return err
			}
			return runWorkflowRun(c.Context, env, c, workflowRunOptions{Agent: id, Rev: rev, Task: c.Args().Get(1), RunID: c.String("run"),
				Seed: c.String("seed"), CreatedAt: c.String("created-at"), Provider: po, JSON: globalBool(c, flagJSON)})
		},
	}
}

func runWorkflowRun(ctx context.Context, env *Env, c *cli.Context, opts workflowRunOptions) error {
	cat, err := loadAgentCatalog(ctx, env, c, "AGENT", opts.Rev, true)
	if err != nil {
		return err
	}
	repo := cat.Reg.Repo()
	defer repo.Close()
	if _, ok := cat.Catalog.Agents.Get(opts.Agent); !ok {
		return agentNotFound(cat, opts.Agent)
	}
	if err := checkProviders(cat.Catalog, opts.Agent, opts.Provider); err != nil {
		return err
	}
	clock, err := eventClock(env, opts.CreatedAt)
	if err != nil {
		return err
	}
	if opts.RunID == "" {
		opts.RunID = opts.Agent + "-" + clock().Format("20060102T150405Z")
	}
	runDir, err := runDirOf(agentRunsDir(env, c, repo), opts.RunID)
	if err != nil {
		return err
	}
	if evs, err := ledger.Read(runDir, opts.RunID); err == nil && len(evs) > 0 {
		return &errkind.InputError{Source: "--run", Problem: fmt.Sprintf("run %s exists (%s)", opts.RunID, runDir),
			Hint: "continue it with dome workflow resume --run " + opts.RunID + ", or start another with --run NEW_ID"}
	}
	// What this command creates, it removes again when it refuses the run
	// before the first event: the run folder, and the runs folder and its
	// parent when they did not exist.
	var made []string
	for _, d := range []string{filepath.Dir(filepath.Dir(runDir)), filepath.Dir(runDir), runDir} {
		if _, err := os.Stat(d); errors.Is(err, os.ErrNotExist) {
			made = append(made, d)
		}
	}
	log, err := openRunLog(runDir, opts.RunID)
	if err != nil {
		return err
	}
	defer log.Close()
	// Refused before the first event: leave nothing behind.
	cleanup := func() {
		if log.Next() != 1 || len(made) == 0 {
			return
		}
		log.Close()
		for i := len(made) - 1; i >= 0; i-- {
			if made[i] == runDir {
				os.RemoveAll(runDir)
			} else {
				os.Remove(made[i]) // only when empty
			}
		}
	}
	tools, err := agentTools(ctx, cat, opts.Agent, opts.RunID, runDir, clock)
	if err != nil {
		cleanup()
		return err
	}
	defer tools.Close()
	ictx, stop := interruptible(ctx)
	defer stop()
	r := agent.NewRunner(agent.Env{Catalog: cat.Catalog, Provider: providerFactory(env, opts.Provider), Tools: tools.Exec, Grants: tools.Grants})
	res, err := r.Start(ictx, agent.StartOptions{RunID: opts.RunID, Agent: opts.Agent, Task: opts.Task, Seed: opts.Seed, Exec: opts.Provider.Exec,
		Journal: &agent.LedgerJournal{Log: log, Now: clock}})
	if err != nil {
		tools.Close()
		cleanup()
		if errors.Is(err, agent.ErrInterrupted) {
			return interrupted(opts.RunID)
		}
		return err
	}
	return reportRun(env, runDir, res, opts.JSON)
}

// reportRun prints a finished run (from its events) and maps a failed run
// to exit 1.
func reportRun(env *Env, runDir string, res *agent.Result, asJSON bool) error {
	rec, err := agent.LoadRun(runDir, res.RunID)
	if err != nil {
		return err
	}
	s := statusOf(rec)
	if asJSON {
		if err := writeJSON(env.Stdout, s); err != nil {
			return err
		}
	} else {
		if err := printRunStatus(env, s); err != nil {
			return err
		}
		for _, w := range res.Warnings {
			fmt.Fprintf(env.Stderr, "dome: warning: %s\n", w)
		}
		fmt.Fprintf(env.Stderr, "dome: events in %s\n", filepath.Join(runDir, ledger.EventsDir))
	}
	if res.Status != agent.StatusSucceeded {
		if asJSON {
			return silentError{code: ExitCheck}
		}
		return runFailed(res)
	}
	return nil
}
