package app

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/dome-registry/dome/pkg/agent"
	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/dome-registry/dome/pkg/readlimit"
	"github.com/urfave/cli/v2"
)

func newWorkflowValidateCommand(env *Env) *cli.Command {
	return &cli.Command{
		Name:        "validate",
		Usage:       "check agents' workflows: the graph, placeholders, delegates and the whole agent registry at a ref",
		Description: help("workflow_validate"),
		ArgsUsage:   "[AGENT[@REF] | FILE]...",
		Flags: withGlobal(
			&cli.StringFlag{Name: "ref", Value: "HEAD", Usage: "read the registry at `REF` (for agents named without @REF)"},
		),
		Action: func(c *cli.Context) error {
			return runWorkflowValidate(c.Context, env, c, c.Args().Slice(), c.String("ref"), globalBool(c, flagJSON))
		},
	}
}

// workflowReport is one validated workflow in --json.
type workflowReport struct {
	Agent     string          `json:"agent"`
	Source    string          `json:"source"`
	Commit    string          `json:"commit,omitempty"`
	Workflow  workflowSummary `json:"workflow"`
	Waves     [][]string      `json:"waves"`     // steps that may run together, in order
	Delegates []string        `json:"delegates"` // agents its steps delegate to, directly or not
	Tools     []string        `json:"tools"`
}

func isProfileFile(arg string) bool {
	_, ok := agent.ProfileFileID(arg)
	return ok && (strings.Contains(arg, "/") || fileExists(arg))
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

func runWorkflowValidate(ctx context.Context, env *Env, c *cli.Context, args []string, ref string, asJSON bool) error {
	var reports []workflowReport
	catalogs := map[string]*agentCatalog{}
	catalogAt := func(rev string) (*agentCatalog, error) {
		if cat, ok := catalogs[rev]; ok {
			return cat, nil
		}
		cat, err := loadAgentCatalog(ctx, env, c, "AGENT", rev, true)
		if err != nil {
			return nil, err
		}
		catalogs[rev] = cat
		return cat, nil
	}
	if len(args) == 0 {
		cat, err := catalogAt(ref)
		if err != nil {
			return err
		}
		for _, id := range cat.Catalog.Agents.IDs() {
			reports = append(reports, reportWorkflow(cat, id))
		}
	}
	for _, arg := range args {
		if isProfileFile(arg) {
			r, err := validateProfileFile(env, arg)
			if err != nil {
				return err
			}
			reports = append(reports, r)
			continue
		}
		id, rev, err := splitAgentRef("AGENT", arg, ref)
		if err != nil {
			return err
		}
		cat, err := catalogAt(rev)
		if err != nil {
			return err
		}
		if _, ok := cat.Catalog.Agents.Get(id); !ok {
			return agentNotFound(cat, id)
		}
		reports = append(reports, reportWorkflow(cat, id))
	}
	if asJSON {
		return writeJSON(env.Stdout, struct {
			Status    string           `json:"status"`
			Workflows []workflowReport `json:"workflows"`
		}{"ok", reports})
	}
	for _, r := range reports {
		at := r.Source
		if r.Commit != "" {
			at = short12(r.Commit)
		}
		fmt.Fprintf(env.Stdout, "%s: ok (%s, %s; at %s)\n", r.Agent, r.Workflow.describe(), r.Workflow.FailureStrategy, at)
		if r.Workflow.Mode == "dag" {
			var ws []string
			for _, w := range r.Waves {
				ws = append(ws, "["+strings.Join(w, " ")+"]")
			}
			fmt.Fprintf(env.Stdout, "  waves: %s\n", strings.Join(ws, " "))
		}
		if len(r.Delegates) > 0 {
			fmt.Fprintf(env.Stdout, "  delegates to: %s\n", strings.Join(r.Delegates, ", "))
		}
		if len(r.Tools) > 0 {
			fmt.Fprintf(env.Stdout, "  tools: %s\n", strings.Join(r.Tools, ", "))
		}
	}
	return nil
}

func reportWorkflow(cat *agentCatalog, id string) workflowReport {
	p, _ := cat.Catalog.Agents.Get(id)
	r := workflowFacts(p)
	r.Source, r.Commit, r.Workflow = cat.Catalog.Agents.Source(id), cat.Pin.Commit.String(), summarizeAgent(cat.Catalog, id).Workflow
	for _, a := range reachableAgents(cat.Catalog, id) {
		if a != id {
			r.Delegates = append(r.Delegates, a)
		}
	}
	return r
}

// workflowFacts are the graph's waves and the tools of a profile.
func workflowFacts(p *agent.Profile) workflowReport {
	r := workflowReport{Agent: p.ID, Delegates: []string{}, Tools: []string{}, Waves: [][]string{}}
	w := p.EffectiveWorkflow()
	g, err := agent.BuildGraph(w)
	if err == nil {
		for _, level := range g.Levels() {
			var ids []string
			for _, i := range level {
				ids = append(ids, g.Node(i).ID)
			}
			r.Waves = append(r.Waves, ids)
		}
	}
	seen := map[string]bool{}
	for _, s := range w.Steps {
		if s.Tool != nil && !seen[s.Tool.Name] {
			seen[s.Tool.Name] = true
			r.Tools = append(r.Tools, s.Tool.Name)
		}
	}
	return r
}

// validateProfileFile checks one profile file on its own: the schema and
// the rules of one profile (the registry-wide checks need the registry).
func validateProfileFile(env *Env, arg string) (workflowReport, error) {
	data, err := readlimit.ReadFile(absPath(env, arg), agent.MaxProfileBytes)
	if err != nil {
		return workflowReport{}, &errkind.InputError{Source: arg, Problem: readProblem(err), Err: err}
	}
	p, err := agent.NewValidator().Parse(arg, data)
	if err != nil {
		return workflowReport{}, err
	}
	if id, _ := agent.ProfileFileID(arg); id != p.ID {
		return workflowReport{}, &errkind.InputError{Source: arg, Field: "/id", Problem: fmt.Sprintf("%q, but the file is named for %q", p.ID, id), Hint: "name the file <id>.agent.json"}
	}
	r := workflowFacts(p)
	r.Source = arg
	w := p.EffectiveWorkflow()
	r.Workflow = workflowSummary{Mode: "sequential", Steps: len(w.Steps), FailureStrategy: w.Strategy(), Implicit: p.Workflow == nil}
	if w.Parallel() {
		r.Workflow.Mode, r.Workflow.MaxConcurrency = "dag", w.MaxConcurrency
	}
	for _, s := range w.Steps {
		if s.Delegate != nil {
			r.Delegates = append(r.Delegates, s.Delegate.Agent)
		}
	}
	return r, nil
}
