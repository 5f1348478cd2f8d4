package app

import (
	"context"
	"fmt"

	"github.com/dome-registry/dome/pkg/agent"
	"github.com/urfave/cli/v2"
)

type agentSelectOptions struct {
	Task    string
	Ref     string
	Explain bool
	Limit   int
	JSON    bool
}

func newAgentSelectCommand(env *Env) *cli.Command {
	return &cli.Command{
		Name:        "select",
		Usage:       "rank the enabled agents for a task (example tasks, exclusions, terms), best first",
		Description: help("agent_select"),
		ArgsUsage:   "TASK",
		Flags: withGlobal(
			&cli.StringFlag{Name: "ref", Value: "HEAD", Usage: "read the registry at `REF`"},
			&cli.BoolFlag{Name: "explain", Usage: "show every rule's contribution to each agent's confidence, and the agents at 0"},
			&cli.IntFlag{Name: "limit", Value: 10, Usage: "show at most `N` agents (0: all)"},
		),
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return usagef("give the task as one argument: dome agent select \"TASK\"")
			}
			if c.Int("limit") < 0 {
				return usagef("--limit %d: want 0 (all) or more", c.Int("limit"))
			}
			cat, err := loadAgentCatalog(c.Context, env, c, "--ref", c.String("ref"), false)
			if err != nil {
				return err
			}
			return runAgentSelect(c.Context, env, cat, agentSelectOptions{Task: c.Args().First(), Ref: c.String("ref"), Explain: c.Bool("explain"),
				Limit: c.Int("limit"), JSON: globalBool(c, flagJSON)})
		},
	}
}

func runAgentSelect(_ context.Context, env *Env, cat *agentCatalog, opts agentSelectOptions) error {
	sel, err := agent.NewSelector(cat.Catalog.Agents)
	if err != nil {
		return err
	}
	var s agent.Selection
	if opts.Explain {
		s, err = sel.Explain(opts.Task)
	} else {
		s, err = sel.Select(opts.Task)
	}
	if err != nil {
		return err
	}
	shown := s.Candidates
	if opts.Limit > 0 && len(shown) > opts.Limit {
		shown = shown[:opts.Limit]
	}
	if opts.JSON {
		out := struct {
			Ref    string `json:"requested_ref"`
			Commit string `json:"commit"`
			agent.Selection
			Total int `json:"total"` // candidates before --limit
		}{opts.Ref, cat.Pin.Commit.String(), s, len(s.Candidates)}
		out.Candidates = shown
		return writeJSON(env.Stdout, out)
	}
	fmt.Fprintf(env.Stdout, "task: %s\n", s.Task)
	if s.Fallback {
		fmt.Fprintln(env.Stdout, "no agent matched the task: the standard agent is the fallback")
	}
	w := table(env.Stdout)
	fmt.Fprintln(w, "AGENT\tCONFIDENCE\tNAME")
	for _, c := range shown {
		fmt.Fprintf(w, "%s\t%.3f\t%s\n", c.AgentID, c.Confidence, c.Name)
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if opts.Explain {
		fmt.Fprintf(env.Stdout, "why (task terms: %s):\n", joinOrDash(s.Terms))
		for _, c := range shown {
			fmt.Fprintf(env.Stdout, "  %s %.3f (raw %.3f)\n", c.AgentID, c.Confidence, c.Raw)
			for _, r := range c.Reasons {
				fmt.Fprintf(env.Stdout, "    %+.3f %s: %s\n", r.Delta, r.Rule, r.Detail)
			}
			if len(c.Reasons) == 0 {
				fmt.Fprintln(env.Stdout, "    no rule matched")
			}
		}
	}
	if n := len(s.Candidates) - len(shown); n > 0 {
		fmt.Fprintf(env.Stdout, "(%d more; --limit 0 shows all)\n", n)
	}
	return nil
}
