package app

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/dome-registry/dome/pkg/agentlock"
	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/dome-registry/dome/pkg/readlimit"
	"github.com/urfave/cli/v2"
)

type agentResolveOptions struct {
	In      agentInputs
	Lock    string // default: agents.lock beside agents.md
	Explain bool
	Check   bool
	JSON    bool
	Quiet   bool
}

func newAgentResolveCommand(env *Env) *cli.Command {
	return &cli.Command{
		Name:  "resolve",
		Usage: "select one MCP server per requirement of agents.md and write agents.lock",
		Flags: withGlobal(append(agentInputFlags(),
			&cli.StringFlag{Name: "lock", Usage: "write the lock to `FILE` (default: agents.lock beside agents.md)"},
			&cli.BoolFlag{Name: "explain", Usage: "also write agents.resolution.json beside the lock"},
			&cli.BoolFlag{Name: "check", Usage: "write nothing; exit 1 when the lock is missing or stale"},
		)...),
		Action: func(c *cli.Context) error {
			in, err := readAgentInputs(c)
			if err != nil {
				return err
			}
			opts := agentResolveOptions{In: in, Lock: c.String("lock"), Explain: c.Bool("explain"), Check: c.Bool("check"),
				JSON: globalBool(c, flagJSON), Quiet: globalBool(c, flagQuiet)}
			if opts.Check && opts.Explain {
				return usagef("--check writes nothing; drop --explain (or run without --check)")
			}
			return runAgentResolve(c.Context, env, c, opts)
		},
		Description: help("agent_resolve"),
	}
}

func runAgentResolve(ctx context.Context, env *Env, c *cli.Context, opts agentResolveOptions) error {
	agent, err := loadAgent(env, opts.In)
	if err != nil {
		return err
	}
	idx, origin, _, _, err := loadAgentIndex(ctx, env, c, opts.In, false)
	if err != nil {
		return err
	}
	res, err := agentlock.Resolve(agent, idx, origin)
	if err != nil {
		return err
	}
	lockPath := filepath.Join(agentDir(env, opts.In), "agents.lock")
	if opts.Lock != "" {
		lockPath = absPath(env, opts.Lock)
	}
	explainPath := filepath.Join(filepath.Dir(lockPath), "agents.resolution.json")
	show := func(p string) string { return filepath.ToSlash(relTo(env.WorkDir, p)) }

	explain, err := res.Explain().Marshal()
	if err != nil {
		return err
	}
	if opts.JSON {
		if _, err := env.Stdout.Write(explain); err != nil {
			return err
		}
	}
	if opts.Check {
		return checkAgentLock(env, opts, agent, res, lockPath, show(lockPath))
	}
	if opts.Explain {
		if err := writeOutputFile(env, "--explain", explainPath, explain); err != nil {
			return err
		}
	}
	if !res.OK() {
		return unsatisfiedError(agent, res, opts)
	}
	lock, err := res.Lock()
	if err != nil {
		return err
	}
	body, err := lock.Marshal()
	if err != nil {
		return err
	}
	if err := writeOutputFile(env, "--lock", lockPath, body); err != nil {
		return err
	}
	if opts.JSON || opts.Quiet {
		return nil
	}
	fmt.Fprintf(env.Stdout, "%s %s: %s resolved\n", agent.Name, agent.Version, plural(len(lock.Selections), "requirement", "requirements"))
	tw := table(env.Stdout)
	for _, s := range lock.Selections {
		trust := "unsigned"
		if s.Signed {
			trust = "signed"
		}
		fmt.Fprintf(tw, "  %s\t%s@%s\t%s\t%s\t%s\n", s.Category, s.ID, s.Version, trust, s.Endpoint, strings.Join(s.Scopes, ","))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "wrote %s\n", show(lockPath))
	if opts.Explain {
		fmt.Fprintf(env.Stdout, "wrote %s\n", show(explainPath))
	}
	return nil
}

// unsatisfiedError explains, per requirement without a server, why each
// server that has the category was rejected.
func unsatisfiedError(agent *agentlock.Agent, res *agentlock.Resolution, opts agentResolveOptions) error {
	un := res.Unsatisfied()
	var details []string
	for _, o := range un {
		var lines []string
		for _, r := range o.Rejected {
			if len(r.Reasons) == 1 && r.Reasons[0].Code == agentlock.MissingCategory {
				continue
			}
			var rs []string
			for _, x := range r.Reasons {
				rs = append(rs, x.Code+" ("+x.Message+")")
			}
			lines = append(lines, fmt.Sprintf("  %s@%s: %s", r.ID, r.Version, strings.Join(rs, "; ")))
		}
		head := fmt.Sprintf("%s (%s line %d, needs %s): ", o.Category, opts.In.Agents, agent.Line(o.Category), strings.Join(o.Permissions, ","))
		if len(lines) == 0 {
			details = append(details, head+"no server in the index has this category")
			continue
		}
		details = append(details, head+plural(len(lines), "server", "servers")+" with the category, all rejected")
		details = append(details, lines...)
	}
	hint := "relax the constraint in agents.md or add a server to the index"
	if !opts.Explain {
		hint += "; --explain writes every candidate and reason to agents.resolution.json"
	}
	return &errkind.CheckError{
		Problem: fmt.Sprintf("cannot resolve %s %s: %d of %s without an eligible server; agents.lock not written", agent.Name, agent.Version, len(un), plural(len(res.Requirements), "requirement", "requirements")),
		Details: details,
		Hint:    hint,
	}
}

// checkAgentLock compares the lock on disk with the one resolve would write.
func checkAgentLock(env *Env, opts agentResolveOptions, agent *agentlock.Agent, res *agentlock.Resolution, lockPath, shown string) error {
	if !res.OK() {
		return unsatisfiedError(agent, res, opts)
	}
	lock, err := res.Lock()
	if err != nil {
		return err
	}
	want, err := lock.Marshal()
	if err != nil {
		return err
	}
	have, err := readlimit.ReadFile(lockPath, readlimit.Profile)
	if errors.Is(err, fs.ErrNotExist) {
		return &errkind.CheckError{Problem: shown + " does not exist", Hint: "run dome agent resolve and commit " + shown}
	}
	if err != nil {
		return &errkind.InputError{Source: shown, Problem: readProblem(err), Err: err}
	}
	if bytes.Equal(have, want) {
		if !opts.Quiet && !opts.JSON {
			fmt.Fprintf(env.Stdout, "%s is up to date\n", shown)
		}
		return nil
	}
	var details []string
	old, perr := agentlock.ParseLock(shown, have)
	switch {
	case perr != nil:
		details = []string{"cannot read it: " + strings.ReplaceAll(perr.Error(), "\n", "\n  ")}
	default:
		details = agentlock.Changes(old, lock)
		if len(details) == 0 {
			details = []string{"same content, different bytes (edited by hand?)"}
		}
	}
	return &errkind.CheckError{Problem: shown + " is stale", Details: details, Hint: "run dome agent resolve and commit " + shown}
}
