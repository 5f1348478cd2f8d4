package app

import (
	"errors"
	"os"
	"path/filepath"

	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/dome-registry/dome/pkg/gitstore"
	"github.com/dome-registry/dome/pkg/stack"
	"github.com/urfave/cli/v2"
)

func newStackCommand(env *Env) *cli.Command {
	return &cli.Command{
		Name:  "stack",
		Usage: "stack workers' patch proposals onto an integration ref: init, propose, submit, plan, apply, validate, rollback, advance, promote, verify, status, replay",
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
	return &cli.StringFlag{Name: "policy", Usage: "stack policy `FILE` (default: <repo>/policy/stack_policy.json, else the built-in policy)"}
}

func createdAtFlag() cli.Flag {
	return &cli.StringFlag{Name: "created-at", Usage: "timestamp to record, RFC 3339 (default: SOURCE_DATE_EPOCH, else now)"}
}

// stackLayout returns the layout of --run under --ops or <repo>/ops/runs.
func stackLayout(env *Env, c *cli.Context, repo *gitstore.Repo) stack.Layout {
	dir := c.String("ops")
	if dir == "" {
		dir = filepath.Join(repo.Path(), filepath.FromSlash(stack.RunsDir))
	} else {
		dir = absPath(env, dir)
	}
	return stack.NewLayout(dir, c.String("run"))
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
	data, err := os.ReadFile(path)
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

// openStack opens the repository and the stack policy (--policy, else the
// repository's policy/stack_policy.json, else the built-in one) that every
// stack command works with; the caller closes the repository.
func openStack(env *Env, c *cli.Context) (*gitstore.Repo, *stack.Policy, error) {
	repo, err := openRepo(c.Context, env, c)
	if err != nil {
		return nil, nil, err
	}
	policy, _, err := loadStackPolicy(env, c.String("policy"), repo)
	if err != nil {
		repo.Close()
		return nil, nil, err
	}
	return repo, policy, nil
}

func producer(cmd string) string { return "dome/" + Version + " " + cmd }
