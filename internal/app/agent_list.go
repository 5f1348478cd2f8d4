package app

import (
	"context"
	"fmt"
	"strings"

	"github.com/dome-registry/dome/pkg/agent"
	"github.com/urfave/cli/v2"
)

type agentListOptions struct {
	Ref  string
	JSON bool
}

func newAgentListCommand(env *Env) *cli.Command {
	return &cli.Command{
		Name:        "list",
		Usage:       "list the agent profiles of the registry at a ref, validated",
		Description: help("agent_list"),
		Flags: withGlobal(
			&cli.StringFlag{Name: "ref", Value: "HEAD", Usage: "read the registry at `REF`"},
		),
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usagef("agent list takes no arguments (got %q)", c.Args().First())
			}
			cat, err := loadAgentCatalog(c.Context, env, c, "--ref", c.String("ref"), true)
			if err != nil {
				return err
			}
			return runAgentList(c.Context, env, cat, agentListOptions{Ref: c.String("ref"), JSON: globalBool(c, flagJSON)})
		},
	}
}

// agentSummary is one agent in dome agent list --json.
type agentSummary struct {
	ID            string          `json:"id"`
	Name          string          `json:"name"`
	Description   string          `json:"description"`
	Enabled       bool            `json:"enabled"`
	Path          string          `json:"path"`
	Digest        string          `json:"digest"`
	Provider      providerSummary `json:"provider"`
	Workflow      workflowSummary `json:"workflow"`
	CoreAbilities []string        `json:"coreAbilities"`
	Abilities     []string        `json:"abilities"`
	Delegates     []string        `json:"allowedDelegates"`
	MaxDepth      int             `json:"maxDepth"`
}

type providerSummary struct {
	Runtime string `json:"runtime"`
	Kind    string `json:"kind"`
	Model   string `json:"model"`
}

type workflowSummary struct {
	Mode            string `json:"mode"` // sequential or dag
	Steps           int    `json:"steps"`
	FailureStrategy string `json:"failureStrategy"`
	MaxConcurrency  int    `json:"maxConcurrency,omitempty"`
	Implicit        bool   `json:"implicit,omitempty"` // no workflow: one prompt step with the task
}

func summarizeAgent(cat *agent.Catalog, id string) agentSummary {
	p, _ := cat.Agents.Get(id)
	s := agentSummary{ID: p.ID, Name: p.Name, Description: p.Description, Enabled: p.Enabled, Path: cat.Agents.Source(id), Digest: p.Digest(),
		Provider: providerSummary{Runtime: p.Provider.Runtime, Model: p.Provider.Model}, CoreAbilities: emptyList(p.CoreAbilities), Abilities: emptyList(p.Abilities),
		Delegates: []string{}, MaxDepth: p.MaxDepth()}
	if rt, ok := cat.Runtimes[p.Provider.Runtime]; ok {
		s.Provider.Kind = rt.Kind
	}
	if p.Delegation != nil && p.Delegation.AllowedDelegates != nil {
		s.Delegates = p.Delegation.AllowedDelegates
	}
	w := p.EffectiveWorkflow()
	s.Workflow = workflowSummary{Mode: "sequential", Steps: len(w.Steps), FailureStrategy: w.Strategy(), Implicit: p.Workflow == nil}
	if w.Parallel() {
		s.Workflow.Mode, s.Workflow.MaxConcurrency = "dag", w.MaxConcurrency
	}
	return s
}

func emptyList(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func runAgentList(_ context.Context, env *Env, cat *agentCatalog, opts agentListOptions) error {
	var agents []agentSummary
	for _, id := range cat.Catalog.Agents.IDs() {
		agents = append(agents, summarizeAgent(cat.Catalog, id))
	}
	if opts.JSON {
		return writeJSON(env.Stdout, struct {
			Ref    string         `json:"requested_ref"`
			Commit string         `json:"commit"`
			Agents []agentSummary `json:"agents"`
		}{opts.Ref, cat.Pin.Commit.String(), agents})
	}
	fmt.Fprintf(env.Stdout, "agents at %s (%s)\n", opts.Ref, cat.Pin.Commit.Short())
	w := table(env.Stdout)
	fmt.Fprintln(w, "AGENT\tENABLED\tPROVIDER\tWORKFLOW\tABILITIES\tNAME")
	for _, a := range agents {
		fmt.Fprintf(w, "%s\t%s\t%s/%s\t%s\t%s\t%s\n", a.ID, yesNo(a.Enabled), a.Provider.Runtime, a.Provider.Model, a.Workflow.describe(),
			abilityCounts(a), a.Name)
	}
	return w.Flush()
}

func (w workflowSummary) describe() string {
	if w.Implicit {
		return "one prompt"
	}
	s := plural(w.Steps, "step", "steps") + ", " + w.Mode
	if w.Mode == "dag" {
		s += fmt.Sprintf(" (max %d)", w.MaxConcurrency)
	}
	return s
}

func abilityCounts(a agentSummary) string {
	return fmt.Sprintf("%d core, %d more", len(a.CoreAbilities), len(a.Abilities))
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func joinOrDash(s []string) string { return orDash(strings.Join(s, ", ")) }
