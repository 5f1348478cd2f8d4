package app

import (
	"context"
	"errors"

	"github.com/dome-registry/dome/pkg/agent"
	"github.com/urfave/cli/v2"
)

type workflowResumeOptions struct {
	RunID    string
	Provider providerOptions
	JSON     bool
}

func newWorkflowResumeCommand(env *Env) *cli.Command {
	return &cli.Command{
		Name:        "resume",
		Usage:       "continue an interrupted run from its last checkpoint; completed steps are restored, never run again",
		Description: help("workflow_resume"),
		Flags:       withGlobal(append(workflowProviderFlags(), workflowRunFlag(true), stackOpsFlag())...),
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usagef("workflow resume takes no arguments (got %q)", c.Args().First())
			}
			po, err := readProviderOptions(c)
			if err != nil {
				return err
			}
			return runWorkflowResume(c.Context, env, c, workflowResumeOptions{RunID: c.String("run"), Provider: po, JSON: globalBool(c, flagJSON)})
		},
	}
}

func runWorkflowResume(ctx context.Context, env *Env, c *cli.Context, opts workflowResumeOptions) error {
	reg, err := openRegistry(ctx, env, c)
	if err != nil {
		return err
	}
	repo := reg.Repo()
	defer repo.Close()
	runDir, err := runDirOf(agentRunsDir(env, c, repo), opts.RunID)
	if err != nil {
		return err
	}
	if _, err := loadRunRecord(runDir, opts.RunID); err != nil {
		return err
	}
	// Take the writer lock first, then read what is there: nothing can be
	// appended between the read and the resume.
	log, err := openRunLog(runDir, opts.RunID)
	if err != nil {
		return err
	}
	defer log.Close()
	rec, err := loadRunRecord(runDir, opts.RunID)
	if err != nil {
		return err
	}
	cat, err := agentCatalogAt(ctx, reg, "--run", rec.Started.RegistryCommit, true)
	if err != nil {
		return err
	}
	if len(opts.Provider.Exec) == 0 {
		opts.Provider.Exec = rec.Started.Exec
	}
	if err := checkProviders(cat.Catalog, rec.Started.Agent, opts.Provider); err != nil {
		return err
	}
	clock, err := eventClock(env, "")
	if err != nil {
		return err
	}
	tools, err := agentTools(ctx, cat, rec.Started.Agent, opts.RunID, runDir, clock)
	if err != nil {
		return err
	}
	defer tools.Close()
	ictx, stop := interruptible(ctx)
	defer stop()
	r := agent.NewRunner(agent.Env{Catalog: cat.Catalog, Provider: providerFactory(env, opts.Provider), Tools: tools.Exec, Grants: tools.Grants})
	res, err := r.Resume(ictx, rec, &agent.LedgerJournal{Log: log, Now: clock})
	if err != nil {
		if errors.Is(err, agent.ErrInterrupted) {
			return interrupted(opts.RunID)
		}
		return err
	}
	return reportRun(env, runDir, res, opts.JSON)
}
