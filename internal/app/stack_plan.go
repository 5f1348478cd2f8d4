package app

import (
	"context"
	"fmt"

	"github.com/dome-registry/dome/pkg/gitstore"
	"github.com/dome-registry/dome/pkg/stack"
	"github.com/urfave/cli/v2"
)

type stackPlanOptions struct {
	Format, Seed, CreatedAt string
	JSON, Quiet             bool
}

func newStackPlanCommand(env *Env) *cli.Command {
	return &cli.Command{
		Name:  "plan",
		Usage: "compute the deterministic StackPlan of the pending proposals (overlap graph, order, rejections, decisions)",
		Flags: withGlobal(stackRunFlag(), stackOpsFlag(), stackPolicyFlag(), createdAtFlag(),
			&cli.StringFlag{Name: "format", Value: "text", Usage: "output `FORMAT`: text, json (the sealed plan), mermaid or dot"},
			&cli.StringFlag{Name: "seed", Usage: "determinism seed to record (default: the run's)"},
		),
		Action: func(c *cli.Context) error {
			repo, policy, err := openStack(env, c)
			if err != nil {
				return err
			}
			defer repo.Close()
			format := c.String("format")
			if globalBool(c, flagJSON) && !c.IsSet("format") {
				format = "json"
			}
			return runStackPlan(c.Context, env, repo, stackLayout(env, c, repo), policy, stackPlanOptions{
				Format: format, Seed: c.String("seed"), CreatedAt: c.String("created-at"), Quiet: globalBool(c, flagQuiet),
			})
		},
		Description: help("stack_plan"),
	}
}

func runStackPlan(_ context.Context, env *Env, repo *gitstore.Repo, l stack.Layout, policy *stack.Policy, opts stackPlanOptions) error {
	switch opts.Format {
	case "text", "json", "mermaid", "dot":
	default:
		return usagef("--format %q: want text, json, mermaid or dot", opts.Format)
	}
	at, err := createdAt(env, opts.CreatedAt)
	if err != nil {
		return err
	}
	run, err := openRun(env, l)
	if err != nil {
		return err
	}
	defer run.Close()
	res, err := run.Plan(repo, stack.PlanOptions{Policy: policy, At: at, Producer: producer("stack plan"), Seed: opts.Seed})
	if err != nil {
		return err
	}
	p := res.Plan
	switch opts.Format {
	case "json":
		_, err := env.Stdout.Write(append(res.Doc, '\n'))
		return err
	case "mermaid":
		_, err := fmt.Fprint(env.Stdout, stack.RenderMermaid(p))
		return err
	case "dot":
		_, err := fmt.Fprint(env.Stdout, stack.RenderDot(p))
		return err
	}
	if opts.Quiet {
		return nil
	}
	w := env.Stdout
	note := ""
	if res.Unchanged {
		note = " (unchanged)"
	}
	fmt.Fprintf(w, "plan %s for run %s %s onto %s%s\n", p.StackPlanID, p.RunID, p.WaveID, p.StartRef[:12], note)
	tw := table(w)
	fmt.Fprintln(tw, "  #\tproposal\tgroup\trisk\tmode")
	scores := map[string]stack.SelectionScore{}
	for _, s := range p.SelectionScores {
		scores[s.ProposalID] = s
	}
	for _, o := range p.OrderedProposals {
		fmt.Fprintf(tw, "  %d\t%s\t%s\t%d\t%s\n", o.Position, o.ProposalID, o.PriorityGroup, scores[o.ProposalID].RiskScore, o.Mode)
	}
	tw.Flush()
	if len(p.Rejected) > 0 {
		fmt.Fprintf(w, "rejected %d\n", len(p.Rejected))
		tw = table(w)
		for _, r := range p.Rejected {
			fmt.Fprintf(tw, "  %s\t%s/%s\t%s\n", r.ProposalID, r.ReasonClass, r.ReasonCode, r.Detail)
		}
		tw.Flush()
	}
	if len(p.OverlapGraph.Edges) > 0 {
		fmt.Fprintf(w, "overlaps %d\n", len(p.OverlapGraph.Edges))
		tw = table(w)
		for _, e := range p.OverlapGraph.Edges {
			fmt.Fprintf(tw, "  %s\t%s\t%s\n", e.A, e.B, e.Level)
		}
		tw.Flush()
	}
	fmt.Fprintf(w, "checkpoints %s; validations", p.CheckpointStrategy)
	for _, v := range p.ExpectedValidations {
		req := ""
		if v.RequiredForPromotion {
			req = ", required"
		}
		fmt.Fprintf(w, " %s (%s%s)", v.Tier, v.When, req)
	}
	fmt.Fprintf(w, "\nfinal tree %s\n", p.FinalTree)
	return nil
}
