package app

import (
	"context"
	"fmt"
	"strings"

	"github.com/dome-registry/dome/pkg/agent"
	"github.com/dome-registry/dome/pkg/agent/provider"
	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/urfave/cli/v2"
)

func newAgentShowCommand(env *Env) *cli.Command {
	return &cli.Command{
		Name:        "show",
		Usage:       "show one agent profile: provider, abilities with their token counts, delegation, workflow",
		Description: help("agent_show"),
		ArgsUsage:   "AGENT[@REF]",
		Flags:       withGlobal(),
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return usagef("name one agent: dome agent show AGENT[@REF]")
			}
			id, rev, err := splitAgentRef("AGENT", c.Args().First(), "HEAD")
			if err != nil {
				return err
			}
			cat, err := loadAgentCatalog(c.Context, env, c, "AGENT", rev, true)
			if err != nil {
				return err
			}
			return runAgentShow(c.Context, env, cat, id, globalBool(c, flagJSON))
		},
	}
}

// abilityInfo is one ability of an agent in dome agent show.
type abilityInfo struct {
	ID     string `json:"id"`
	Title  string `json:"title"`
	Core   bool   `json:"core"`
	Tokens int    `json:"tokens"`
	Path   string `json:"path"`
}

// agentDetails is the --json output of dome agent show.
type agentDetails struct {
	Ref       string            `json:"requested_ref"`
	Commit    string            `json:"commit"`
	Summary   agentSummary      `json:"summary"`
	Profile   *agent.Profile    `json:"profile"`
	Runtime   *provider.Runtime `json:"runtime"`
	Abilities []abilityInfo     `json:"abilities"`
	Budget    int               `json:"abilityTokenBudget"`
	Tokenizer string            `json:"tokenizer"`
}

func runAgentShow(_ context.Context, env *Env, cat *agentCatalog, id string, asJSON bool) error {
	p, ok := cat.Catalog.Agents.Get(id)
	if !ok {
		return agentNotFound(cat, id)
	}
	d := agentDetails{Ref: cat.Ref, Commit: cat.Pin.Commit.String(), Summary: summarizeAgent(cat.Catalog, id), Profile: p,
		Runtime: cat.Catalog.Runtimes[p.Provider.Runtime], Abilities: []abilityInfo{}, Budget: p.TokenBudget(), Tokenizer: agent.TokenizerName}
	abs := cat.Catalog.Abilities
	for i, aid := range append(append([]string(nil), p.CoreAbilities...), p.Abilities...) {
		a, _ := abs.Get(aid)
		d.Abilities = append(d.Abilities, abilityInfo{ID: aid, Title: a.Title, Core: i < len(p.CoreAbilities), Tokens: abs.Tokens(a), Path: a.Source})
	}
	if asJSON {
		return writeJSON(env.Stdout, d)
	}
	s := d.Summary
	fmt.Fprintf(env.Stdout, "agent %s (%s) at %s (%s), %s\n", p.ID, p.Name, cat.Ref, cat.Pin.Commit.Short(), s.Path)
	w := table(env.Stdout)
	fmt.Fprintf(w, "  enabled\t%s\n", yesNo(p.Enabled))
	fmt.Fprintf(w, "  description\t%s\n", p.Description)
	rt := d.Runtime
	smp := rt.Sampling(p.Provider.Temperature, p.Provider.Seed, p.Provider.MaxTokens)
	fmt.Fprintf(w, "  provider\truntime %s (%s), model %s, temperature %g, seed %d, timeout %ds\n", rt.ID, rt.Kind, p.Provider.Model, smp.Temperature, smp.Seed, rt.TimeoutSeconds)
	var core, more []string
	for _, a := range d.Abilities {
		item := fmt.Sprintf("%s (%d)", a.ID, a.Tokens)
		if a.Core {
			core = append(core, item)
		} else {
			more = append(more, item)
		}
	}
	fmt.Fprintf(w, "  core abilities\t%s\n", joinOrDash(core))
	fmt.Fprintf(w, "  abilities\t%s (injected when they match the task)\n", joinOrDash(more))
	fmt.Fprintf(w, "  token budget\t%d %s tokens\n", d.Budget, d.Tokenizer)
	fmt.Fprintf(w, "  delegation\tmaxDepth %d, allowed: %s\n", p.MaxDepth(), joinOrDash(s.Delegates))
	fmt.Fprintf(w, "  example tasks\t%s\n", joinOrDash(p.ExampleTasks))
	fmt.Fprintf(w, "  not for\t%s\n", joinOrDash(p.NotForTasks))
	if p.Tools != nil {
		fmt.Fprintf(w, "  tools\tgranted from card %s, capabilities %s\n", p.Tools.Card, strings.Join(p.Tools.Capabilities, ", "))
	}
	fmt.Fprintf(w, "  digest\t%s\n", s.Digest)
	if err := w.Flush(); err != nil {
		return err
	}
	return printSteps(env, p)
}

// printSteps prints an agent's workflow, one line per step.
func printSteps(env *Env, p *agent.Profile) error {
	wf := p.EffectiveWorkflow()
	mode := "sequential: one step at a time in array order"
	if wf.Parallel() {
		mode = fmt.Sprintf("dag: by dependsOn, at most %d at once", wf.MaxConcurrency)
	}
	what := "workflow"
	if p.Workflow == nil {
		what = "no workflow: one prompt step"
	}
	fmt.Fprintf(env.Stdout, "%s (%s, %s, %s):\n", what, plural(len(wf.Steps), "step", "steps"), mode, wf.Strategy())
	w := table(env.Stdout)
	for i, st := range wf.Steps {
		detail := ""
		switch st.Kind() {
		case "prompt":
			detail = st.Prompt
		case "tool":
			detail = st.Tool.Name + " " + string(st.Tool.Input)
		case "delegate":
			detail = st.Delegate.Agent + ": " + st.Delegate.Task
		}
		after := ""
		if len(st.DependsOn) > 0 {
			after = " (after " + strings.Join(st.DependsOn, ", ") + ")"
		}
		if st.Compensate != nil {
			after += " [compensable]"
		}
		fmt.Fprintf(w, "  %d\t%s\t%s\t%s%s\n", i, st.ID, st.Kind(), oneLine(detail, 80), after)
	}
	return w.Flush()
}

func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > n {
		return s[:n-3] + "..."
	}
	return s
}

func agentNotFound(cat *agentCatalog, id string) error {
	return &errkind.InputError{Source: "AGENT", Problem: fmt.Sprintf("no agent %q at %s (%s)", id, cat.Ref, cat.Pin.Commit.Short()),
		Hint: "agents: " + strings.Join(cat.Catalog.Agents.IDs(), ", ")}
}
