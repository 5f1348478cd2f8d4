package app

import (
	"fmt"

	"github.com/dome-registry/dome/pkg/workflow"
	"github.com/urfave/cli/v2"
)

func newRunGraphCommand(env *Env) *cli.Command {
	return &cli.Command{
		Name:        "graph",
		Description: help("run_graph"),
		Usage:       "draw a work queue's topological waves with each task's scores (text, json, mermaid or dot)",
		ArgsUsage:   "QUEUE",
		Flags: withGlobal(runPolicyFlag(), runResolverFlag(),
			&cli.StringFlag{Name: "format", Value: "text", Usage: "output `FORMAT`: text, json, mermaid or dot"}),
		Action: func(c *cli.Context) error {
			format := c.String("format")
			if globalBool(c, flagJSON) && !c.IsSet("format") {
				format = "json"
			}
			switch format {
			case "text", "json", "mermaid", "dot":
			default:
				return usagef("--format %q: want text, json, mermaid or dot", format)
			}
			in, err := loadRunInputs(env, c)
			if err != nil {
				return err
			}
			return runGraph(env, in, format)
		},
	}
}

type graphNodeOutput struct {
	NodeID       string            `json:"node_id"`
	Dependencies []string          `json:"dependencies"`
	Loop         string            `json:"loop,omitempty"`
	Scores       workflow.Scores   `json:"scores"`
	TieBreak     workflow.TieBreak `json:"tie_break"`
}

type graphOutput struct {
	Queue string              `json:"queue"`
	Waves [][]graphNodeOutput `json:"waves"`
	Loops []workflow.Loop     `json:"loops"`
}

func runGraph(env *Env, in *runInputs, format string) error {
	g := in.Graph
	switch format {
	case "mermaid":
		_, err := fmt.Fprint(env.Stdout, workflow.RenderMermaid(g))
		return err
	case "dot":
		_, err := fmt.Fprint(env.Stdout, workflow.RenderDot(g))
		return err
	}
	e, err := workflow.NewEngine(g, in.Sched, workflow.Options{RunID: in.Queue.RunID})
	if err != nil {
		return err
	}
	out := graphOutput{Queue: in.Source, Loops: g.Loops()}
	if out.Loops == nil {
		out.Loops = []workflow.Loop{}
	}
	for _, level := range g.Levels() {
		var wave []graphNodeOutput
		for _, i := range level {
			n := g.Node(i)
			sc, tb, _ := e.Score(n.ID)
			deps := n.Deps
			if deps == nil {
				deps = []string{}
			}
			loop, _, _ := g.LoopOf(i)
			wave = append(wave, graphNodeOutput{NodeID: n.ID, Dependencies: deps, Loop: loop, Scores: sc, TieBreak: tb})
		}
		out.Waves = append(out.Waves, wave)
	}
	if format == "json" {
		return writeJSON(env.Stdout, out)
	}
	tw := table(env.Stdout)
	fmt.Fprintln(tw, "wave\ttask\tgroup\tpriority\tcritical path\tunblocks\trarity\trisk\tdepends on")
	for k, wave := range out.Waves {
		for _, n := range wave {
			group := n.TieBreak.NodePriorityGroup
			if group == "" {
				group = "-"
			}
			deps := joinOr(n.Dependencies, "-")
			if n.Loop != "" {
				deps += " (loop " + n.Loop + ")"
			}
			fmt.Fprintf(tw, "%d\t%s\t%s\t%d\t%d\t%d\t%d\t%d\t%s\n", k+1, n.NodeID, group, n.Scores.Priority, n.Scores.CriticalPath,
				n.Scores.Descendants, n.Scores.Rarity, n.Scores.Risk, deps)
		}
	}
	return tw.Flush()
}
