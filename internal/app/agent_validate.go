package app

import (
	"context"
	"errors"
	"fmt"

	"github.com/dome-registry/dome/pkg/agentlock"
	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/urfave/cli/v2"
)

type agentValidateOptions struct {
	In    agentInputs
	JSON  bool
	Quiet bool
}

func newAgentValidateCommand(env *Env) *cli.Command {
	return &cli.Command{
		Name:  "validate",
		Usage: "check agents.md frontmatter and the MCP index (when present) against their schemas",
		Flags: withGlobal(agentInputFlags()...),
		Action: func(c *cli.Context) error {
			in, err := readAgentInputs(c)
			if err != nil {
				return err
			}
			return runAgentValidate(c.Context, env, c, agentValidateOptions{In: in, JSON: globalBool(c, flagJSON), Quiet: globalBool(c, flagQuiet)})
		},
		Description: help("agent_validate"),
	}
}

// fileReport is one validated file in dome agent validate --json.
type fileReport struct {
	File     string                 `json:"file"`
	Kind     string                 `json:"kind"` // "agents" or "index"
	Status   string                 `json:"status"`
	Summary  string                 `json:"summary,omitempty"`
	Problems []agentlock.Diagnostic `json:"problems"`
}

func runAgentValidate(ctx context.Context, env *Env, c *cli.Context, opts agentValidateOptions) error {
	var reports []fileReport
	agent, err := loadAgent(env, opts.In)
	r := fileReport{File: opts.In.Agents, Kind: "agents", Status: "ok", Problems: []agentlock.Diagnostic{}}
	if err != nil {
		if r.Problems, err = diagnosticsOf(err); err != nil {
			return err
		}
		r.Status = "invalid"
	} else {
		r.Summary = fmt.Sprintf("%s %s, %s", agent.Name, agent.Version, plural(len(agent.Requires.MCP), "requirement", "requirements"))
	}
	reports = append(reports, r)

	idx, _, name, ok, err := loadAgentIndex(ctx, env, c, opts.In, true)
	r = fileReport{File: name, Kind: "index", Status: "ok", Problems: []agentlock.Diagnostic{}}
	switch {
	case err != nil:
		if r.Problems, err = diagnosticsOf(err); err != nil {
			return err
		}
		r.Status = "invalid"
	case !ok:
		r.Status = "skipped"
		r.Summary = "not found; pass --index FILE or --index-ref REF to validate an index"
	default:
		r.Summary = plural(len(idx.Servers), "server", "servers") + ", " + plural(len(agentlock.Discover(idx)), "category", "categories")
	}
	reports = append(reports, r)

	failed := false
	for _, r := range reports {
		failed = failed || r.Status == "invalid"
	}
	if opts.JSON {
		status := "ok"
		if failed {
			status = "invalid"
		}
		if err := writeJSON(env.Stdout, map[string]any{"status": status, "files": reports}); err != nil {
			return err
		}
	} else {
		for _, r := range reports {
			switch r.Status {
			case "invalid":
				for _, d := range r.Problems {
					fmt.Fprintf(env.Stderr, "%s\n", d)
					if d.Hint != "" {
						fmt.Fprintf(env.Stderr, "  hint: %s\n", d.Hint)
					}
				}
			default:
				if !opts.Quiet {
					fmt.Fprintf(env.Stdout, "%s: %s (%s)\n", r.File, r.Status, r.Summary)
				}
			}
		}
	}
	if failed {
		if !opts.JSON {
			n := 0
			for _, r := range reports {
				n += len(r.Problems)
			}
			fmt.Fprintf(env.Stderr, "dome: agent validate: %s\n", plural(n, "problem", "problems"))
		}
		return silentError{ExitUsage}
	}
	return nil
}

// diagnosticsOf turns an input error into diagnostics; other errors are returned.
func diagnosticsOf(err error) ([]agentlock.Diagnostic, error) {
	var inv *agentlock.InvalidError
	if errors.As(err, &inv) {
		return inv.Diags, nil
	}
	var ie *errkind.InputError
	if errors.As(err, &ie) {
		return []agentlock.Diagnostic{{File: ie.Source, Field: ie.Field, Problem: ie.Problem, Hint: ie.Hint}}, nil
	}
	return nil, err
}

// plural writes n and the noun in the right number.
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
