package app

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/dome-registry/dome/internal/buildinfo"
	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/dome-registry/dome/pkg/gitstore"
	"github.com/dome-registry/dome/pkg/ledger"
	"github.com/dome-registry/dome/pkg/readlimit"
	"github.com/dome-registry/dome/pkg/stack"
	"github.com/urfave/cli/v2"
)

func newStackCommand(env *Env) *cli.Command {
	return &cli.Command{
		Name:  "stack",
		Usage: "stack workers' patch proposals onto an integration ref: init, propose, submit, plan, apply, validate, rollback, advance, promote, verify, status, replay, policy",
		Subcommands: []*cli.Command{
			newStackInitCommand(env),
			newStackProposeCommand(env),
			newStackSubmitCommand(env),
			newStackPlanCommand(env),
			newStackStatusCommand(env),
			newStackReplayCommand(env),
			newStackApplyCommand(env),
			newStackValidateCommand(env),
			newStackRollbackCommand(env),
			newStackAdvanceCommand(env),
			newStackPromoteCommand(env),
			newStackVerifyCommand(env),
			newStackPolicyCommand(env),
		},
		Description: help("stack"),
	}
}

// Flags shared by the stack commands.
func stackRunFlag() cli.Flag {
	return &cli.StringFlag{Name: "run", Usage: "the run `ID` (letters, digits, . _ -)", Required: true}
}

func stackOpsFlag() cli.Flag {
	return &cli.StringFlag{Name: "ops", Usage: "runs folder `DIR` (default: <repo>/ops/runs)", EnvVars: []string{"DOME_OPS_DIR"}}
}

func stackPolicyFlag() cli.Flag {
	return &cli.StringFlag{Name: "policy", Usage: "stack policy `FILE`: at init, the policy the run is pinned to (default: <repo>/policy/stack_policy.json, else the built-in policy); later, only the run's own policy is accepted (dome stack policy changes it)"}
}

func createdAtFlag() cli.Flag {
	return &cli.StringFlag{Name: "created-at", Usage: "timestamp to record, RFC 3339 (default: SOURCE_DATE_EPOCH, else now)"}
}

// stackLayout returns the layout of --run under --ops or <repo>/ops/runs,
// <repo> being the main worktree also from a linked one (git worktree add):
// a run belongs to the repository, as its integration ref does.
func stackLayout(env *Env, c *cli.Context, repo *gitstore.Repo) stack.Layout {
	return stack.NewLayout(runsDir(env, c, repo), c.String("run"))
}

// runsDir is --ops, else <repo>/ops/runs of the main worktree.
func runsDir(env *Env, c *cli.Context, repo *gitstore.Repo) string {
	if dir := c.String("ops"); dir != "" {
		return absPath(env, dir)
	}
	root := repo.Path()
	if main := repo.MainWorktree(); main != "" {
		root = main
	}
	return filepath.Join(root, filepath.FromSlash(stack.RunsDir))
}

// loadStackPolicy reads --policy, else <repo>/policy/stack_policy.json,
// else the built-in policy.
func loadStackPolicy(env *Env, flag string, repo *gitstore.Repo) (*stack.Policy, string, error) {
	path, source := "", ""
	if flag != "" {
		path, source = absPath(env, flag), flag
	} else {
		path, source = filepath.Join(repo.Path(), filepath.FromSlash(stack.PolicyPath)), stack.PolicyPath
	}
	data, err := readlimit.ReadFile(path, readlimit.Profile)
	if err != nil {
		if flag == "" && errors.Is(err, os.ErrNotExist) {
			return stack.DefaultPolicy(), "built-in", nil
		}
		return nil, "", &errkind.InputError{Source: source, Problem: "cannot read the stack policy: " + pathErr(err)}
	}
	p, err := stack.ParsePolicy(source, data)
	if err != nil {
		return nil, "", err
	}
	return p, source, nil
}

// openStack opens the repository and the stack policy a stack command works
// under. For a run that exists that is the policy the run is pinned to (kept
// in the run at init, or by the last dome stack policy change): a --policy
// that is another policy is refused rather than used, and the repository's
// policy/stack_policy.json no longer matters. Before a run exists (init, a
// worker's propose in its own checkout) it is --policy, else
// <repo>/policy/stack_policy.json, else the built-in policy. The caller
// closes the repository.
func openStack(env *Env, c *cli.Context) (*gitstore.Repo, *stack.Policy, error) {
	repo, err := openRepo(c.Context, env, c)
	if err != nil {
		return nil, nil, err
	}
	policy, err := stackPolicyFor(env, c, repo)
	if err != nil {
		repo.Close()
		return nil, nil, err
	}
	return repo, policy, nil
}

func stackPolicyFor(env *Env, c *cli.Context, repo *gitstore.Repo) (*stack.Policy, error) {
	l := stackLayout(env, c, repo)
	st, evs, err := stack.LoadState(l)
	if err == nil {
		env.keepRun(l, st, evs)
	}
	if errors.Is(err, stack.ErrNoRun) {
		policy, _, err := loadStackPolicy(env, c.String("policy"), repo)
		return policy, err
	}
	if err != nil {
		return nil, err
	}
	var given *stack.Policy
	if c.IsSet("policy") {
		if given, _, err = loadStackPolicy(env, c.String("policy"), repo); err != nil {
			return nil, err
		}
	}
	pinned, err := stack.PinnedPolicy(l, &st)
	switch {
	case errors.Is(err, stack.ErrPolicyNotKept) && given == nil:
		// A run started before runs kept their policy: the repository's
		// (or the built-in) policy, if it is still the one recorded.
		if given, _, err = loadStackPolicy(env, "", repo); err != nil {
			return nil, err
		}
		if given.Digest() != st.PolicyDigest {
			return nil, &errkind.InputError{Source: "--run", Field: st.RunID, Problem: fmt.Sprintf("the run does not keep its stack policy %s, and the repository's is another one", st.PolicyDigest),
				Hint: "give the policy the run was started with: --policy FILE"}
		}
		return given, nil
	case errors.Is(err, stack.ErrPolicyNotKept):
		if given.Digest() != st.PolicyDigest {
			return nil, stack.PolicyMismatch(l, &st, given)
		}
		return given, nil
	case err != nil:
		return nil, err
	case given != nil && given.Digest() != pinned.Digest():
		return nil, stack.PolicyMismatch(l, &st, given)
	}
	return pinned, nil
}

func producer(cmd string) string { return "dome/" + buildinfo.Version + " " + cmd }

// loadedRun is a run read without its writer lock.
type loadedRun struct {
	layout stack.Layout
	state  stack.State
	events []ledger.Event
}

// keepRun keeps the run l read by LoadState for openRun.
func (env *Env) keepRun(l stack.Layout, st stack.State, evs []ledger.Event) {
	env.loadedRun = &loadedRun{l, st, evs}
}

// openRun opens the existing run l for writing (stack.OpenRun), reading
// only the events appended since this command read it to find its policy.
func openRun(env *Env, l stack.Layout) (*stack.Run, error) {
	lr := env.loadedRun
	env.loadedRun = nil // OpenRunAfter takes the state over
	if lr == nil || lr.layout != l {
		return stack.OpenRun(l, false)
	}
	return stack.OpenRunAfter(l, lr.state, lr.events)
}
