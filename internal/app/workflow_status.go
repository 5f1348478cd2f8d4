package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/dome-registry/dome/pkg/agent"
	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/urfave/cli/v2"
)

func newWorkflowStatusCommand(env *Env) *cli.Command {
	return &cli.Command{
		Name:        "status",
		Usage:       "show a run from its events: each step's status, the last checkpoint, where a resume starts",
		Description: help("workflow_status"),
		Flags:       withGlobal(workflowRunFlag(true), stackOpsFlag()),
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usagef("workflow status takes no arguments (got %q)", c.Args().First())
			}
			repo, err := openRepo(c.Context, env, c)
			if err != nil {
				return err
			}
			defer repo.Close()
			runDir, err := runDirOf(agentRunsDir(env, c, repo), c.String("run"))
			if err != nil {
				return err
			}
			return runWorkflowStatus(c.Context, env, runDir, c.String("run"), globalBool(c, flagJSON))
		},
	}
}

// runStatus is the --json output of dome workflow status (and of run and
// resume).
type runStatus struct {
	RunID          string             `json:"runId"`
	Agent          string             `json:"agent"`
	Task           string             `json:"task"`
	RegistryCommit string             `json:"registryCommit"`
	Status         string             `json:"status"` // succeeded, failed or incomplete
	Mode           string             `json:"mode"`
	Checkpoint     *checkpointInfo    `json:"checkpoint"`
	ResumeFromStep int                `json:"resumeFromStep,omitempty"` // an incomplete run's next step after its checkpoint
	Steps          []*agent.StepState `json:"steps"`
	Usage          agent.Usage        `json:"usage"`
	Output         json.RawMessage    `json:"output,omitempty"`
	Resumes        int                `json:"resumes"`
	Events         int                `json:"events"`
	Dir            string             `json:"dir"`
}

type checkpointInfo struct {
	StepIndex       int    `json:"stepIndex"`
	CompletedStepID string `json:"completedStepId"`
}

func statusOf(rec *agent.Record) runStatus {
	st := rec.Started
	s := runStatus{RunID: st.RunID, Agent: st.Agent, Task: st.Task, RegistryCommit: st.RegistryCommit, Status: "incomplete", Mode: st.Mode,
		Usage: rec.Memory.Usage, Resumes: len(rec.Resumes), Events: rec.Events, Dir: rec.Dir}
	for _, id := range st.Steps {
		s.Steps = append(s.Steps, rec.Steps[id])
	}
	if cp := rec.Checkpoint; cp != nil {
		s.Checkpoint = &checkpointInfo{StepIndex: cp.StepIndex, CompletedStepID: cp.CompletedStepID}
		s.ResumeFromStep = cp.StepIndex + 1
	}
	if rec.Finished != nil {
		s.ResumeFromStep = 0 // nothing to resume
	}
	if f := rec.Finished; f != nil {
		s.Status, s.Output, s.Usage = f.Status, f.Output, f.Usage
	}
	return s
}

func loadRunRecord(runDir, runID string) (*agent.Record, error) {
	rec, err := agent.LoadRun(runDir, runID)
	if errors.Is(err, agent.ErrNoRun) {
		return nil, &errkind.InputError{Source: "--run", Problem: fmt.Sprintf("no agent run %s in %s", runID, runDir), Hint: "start one with dome workflow run AGENT TASK --run " + runID}
	}
	return rec, err
}

func runWorkflowStatus(_ context.Context, env *Env, runDir, runID string, asJSON bool) error {
	rec, err := loadRunRecord(runDir, runID)
	if err != nil {
		return err
	}
	s := statusOf(rec)
	if asJSON {
		return writeJSON(env.Stdout, s)
	}
	return printRunStatus(env, s)
}

func printRunStatus(env *Env, s runStatus) error {
	fmt.Fprintf(env.Stdout, "run %s: agent %s at %s, %s\n", s.RunID, s.Agent, short12(s.RegistryCommit), plural(len(s.Steps), "step", "steps")+" ("+s.Mode+")")
	fmt.Fprintf(env.Stdout, "task: %s\n", oneLine(s.Task, 200))
	w := table(env.Stdout)
	fmt.Fprintln(w, "  STEP\tSTATUS\tATTEMPTS\tDETAIL")
	for _, st := range s.Steps {
		var detail []string
		if st.Delegate != "" {
			detail = append(detail, "delegated to "+st.Delegate)
		}
		if st.Tool != "" {
			detail = append(detail, "tool "+st.Tool)
		}
		if st.Reason != "" {
			r := st.Reason
			if st.Message != "" {
				r += ": " + st.Message
			}
			detail = append(detail, r)
		}
		if st.Compensated != "" {
			detail = append(detail, "compensation "+st.Compensated)
		}
		fmt.Fprintf(w, "  %s\t%s\t%d\t%s\n", st.ID, st.Status, st.Attempts, oneLine(strings.Join(detail, "; "), 120))
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if s.Checkpoint != nil {
		fmt.Fprintf(env.Stdout, "checkpoint: step %d (%s) completed", s.Checkpoint.StepIndex, s.Checkpoint.CompletedStepID)
		if s.Status == "incomplete" {
			fmt.Fprintf(env.Stdout, "; a resume starts at step %d", s.ResumeFromStep)
		}
		fmt.Fprintln(env.Stdout)
	}
	u := s.Usage
	fmt.Fprintf(env.Stdout, "usage: %d provider calls (%d prompt, %d completion tokens), %d tool calls, %d delegations\n",
		u.ProviderCalls, u.PromptTokens, u.CompletionTokens, u.ToolCalls, u.Delegations)
	switch s.Status {
	case "incomplete":
		fmt.Fprintf(env.Stdout, "status: incomplete: continue with dome workflow resume --run %s\n", s.RunID)
	default:
		fmt.Fprintf(env.Stdout, "status: %s\n", s.Status)
	}
	if len(s.Output) > 0 {
		fmt.Fprintf(env.Stdout, "output:\n%s\n", agent.OutputText(s.Output))
	}
	return nil
}
