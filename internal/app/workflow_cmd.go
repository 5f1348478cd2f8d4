package app

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/dome-registry/dome/pkg/agent"
	"github.com/dome-registry/dome/pkg/agent/provider"
	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/dome-registry/dome/pkg/ledger"
	"github.com/urfave/cli/v2"
)

func newWorkflowCommand(env *Env) *cli.Command {
	return &cli.Command{
		Name:        "workflow",
		Usage:       "run an agent's workflow with checkpoints in the run's ledger: validate, run, resume, status",
		Description: help("workflow"),
		Subcommands: []*cli.Command{
			newWorkflowValidateCommand(env),
			newWorkflowRunCommand(env),
			newWorkflowResumeCommand(env),
			newWorkflowStatusCommand(env),
		},
	}
}

// Flags shared by workflow run and resume.
func workflowProviderFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "exec", Usage: "the exec provider's command line `CMD` (split on spaces, no shell): it reads a dome.agent_request/v1 on stdin and writes {\"text\": ...} on stdout"},
		&cli.StringFlag{Name: "base-url", Usage: "send the openai provider's requests to `URL`, any OpenAI-compatible server, instead of the runtime's baseUrl"},
	}
}

func workflowRunFlag(required bool) cli.Flag {
	return &cli.StringFlag{Name: "run", Required: required, Usage: "the run `ID` (letters, digits, . _ -): its events go to <ops>/<ID>/events/"}
}

// providerOptions are what the providers take from the command line.
type providerOptions struct {
	Exec    []string
	BaseURL string
}

func readProviderOptions(c *cli.Context) (providerOptions, error) {
	o := providerOptions{Exec: strings.Fields(c.String("exec")), BaseURL: c.String("base-url")}
	if c.IsSet("exec") && len(o.Exec) == 0 {
		return o, usagef("--exec is empty: give the command that answers prompts")
	}
	if o.BaseURL != "" && !strings.HasPrefix(o.BaseURL, "http://") && !strings.HasPrefix(o.BaseURL, "https://") {
		return o, &errkind.InputError{Source: "--base-url", Problem: fmt.Sprintf("%q: want an http:// or https:// URL", o.BaseURL)}
	}
	return o, nil
}

func providerFactory(env *Env, o providerOptions) func(rt *provider.Runtime) (provider.Provider, error) {
	return func(rt *provider.Runtime) (provider.Provider, error) {
		return provider.New(rt, provider.Options{Exec: o.Exec, BaseURL: o.BaseURL, Getenv: env.Getenv, InstallHint: installHint})
	}
}

// reachableAgents lists an agent and every agent its workflow may delegate
// to, directly or not, sorted.
func reachableAgents(cat *agent.Catalog, id string) []string {
	seen := map[string]bool{}
	var walk func(string)
	walk = func(a string) {
		if seen[a] {
			return
		}
		seen[a] = true
		p, ok := cat.Agents.Get(a)
		if !ok || p.Workflow == nil {
			return
		}
		for _, s := range p.Workflow.Steps {
			for _, act := range []*agent.Action{{Delegate: s.Delegate}, s.Compensate} {
				if act != nil && act.Delegate != nil {
					walk(act.Delegate.Agent)
				}
			}
		}
	}
	walk(id)
	out := make([]string, 0, len(seen))
	for a := range seen {
		out = append(out, a)
	}
	sort.Strings(out)
	return out
}

// checkProviders fails before a run starts when an agent it may reach needs
// the exec command and none was given.
func checkProviders(cat *agent.Catalog, id string, o providerOptions) error {
	if len(o.Exec) > 0 {
		return nil
	}
	for _, a := range reachableAgents(cat, id) {
		p, _ := cat.Agents.Get(a)
		if rt, ok := cat.Runtimes[p.Provider.Runtime]; ok && rt.Kind == "exec" {
			return &errkind.InputError{Source: "--exec", Problem: fmt.Sprintf("agent %s uses the exec runtime %s: give the command that answers its prompts", a, rt.ID),
				Hint: "e.g. --exec examples/agent-exec/echo-model.sh (it reads a dome.agent_request/v1 on stdin, writes {\"text\": ...})"}
		}
	}
	return nil
}

// eventClock is the time events record: --created-at or SOURCE_DATE_EPOCH
// pin it (every event gets that time), else the clock.
func eventClock(env *Env, flag string) (func() time.Time, error) {
	if flag == "" && env.Getenv("SOURCE_DATE_EPOCH") == "" {
		return func() time.Time { return env.Now().UTC() }, nil
	}
	t, err := createdAt(env, flag)
	if err != nil {
		return nil, err
	}
	return func() time.Time { return t }, nil
}

// interruptible cancels ctx on SIGINT or SIGTERM, so running steps are
// stopped (their process groups killed) and recorded as cancelled, and the
// run can be resumed.
func interruptible(ctx context.Context) (context.Context, context.CancelFunc) {
	return signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
}

// openRunLog opens the ledger of a run for writing (its writer lock).
func openRunLog(runDir, runID string) (*ledger.Log, error) {
	l, err := ledger.Open(runDir, runID)
	if errors.Is(err, ledger.ErrLocked) {
		return nil, &errkind.InputError{Source: "--run", Problem: fmt.Sprintf("run %s is being written by another dome process", runID), Hint: "wait for it, or check with dome workflow status --run " + runID}
	}
	return l, err
}

// runFailed is the error of a run that finished failed (exit 1).
func runFailed(res *agent.Result) error {
	var details []string
	for _, f := range res.Summary.Failures {
		details = append(details, fmt.Sprintf("%s %s: %s", f.NodeID, f.Status, f.Reason))
	}
	return &errkind.CheckError{Problem: fmt.Sprintf("run %s of agent %s failed", res.RunID, res.Agent), Details: details,
		Hint: "dome workflow status --run " + res.RunID + " shows every step; fix the cause and start a new run"}
}

// interrupted is the error of a run stopped by a signal (exit 1).
func interrupted(runID string) error {
	return &errkind.CheckError{Problem: fmt.Sprintf("run %s was interrupted; the completed steps are recorded", runID),
		Hint: "continue it with dome workflow resume --run " + runID}
}

func runDirOf(runsDir, runID string) (string, error) {
	if err := ledger.CheckRunID(runID); err != nil {
		return "", &errkind.InputError{Source: "--run", Problem: err.Error()}
	}
	return filepath.Join(runsDir, runID), nil
}
