package app

import (
	"fmt"

	"github.com/urfave/cli/v2"
)

func newRunValidateCommand(env *Env) *cli.Command {
	return &cli.Command{
		Name:        "validate",
		Description: help("run_validate"),
		Usage:       "check a work queue: schema, ids, capabilities, dependencies, cycles (exit 2 naming the nodes and the cycle's path)",
		ArgsUsage:   "QUEUE",
		Flags:       withGlobal(runPolicyFlag(), runResolverFlag()),
		Action: func(c *cli.Context) error {
			in, err := loadRunInputs(env, c)
			if err != nil {
				return err
			}
			return runValidate(env, in, globalBool(c, flagJSON), globalBool(c, flagQuiet))
		},
	}
}

type runValidateOutput struct {
	Queue        string           `json:"queue"`
	Valid        bool             `json:"valid"`
	Digest       string           `json:"digest"`
	Tasks        int              `json:"tasks"`
	Waves        [][]string       `json:"waves"`
	Cycles       []runCycleOutput `json:"cycles"`
	Policy       sourceDigest     `json:"policy"`
	Capabilities capabilityCheck  `json:"capabilities"`
}

type runCycleOutput struct {
	LoopID        string   `json:"loop_id"`
	Nodes         []string `json:"nodes"`
	MaxIterations int      `json:"max_iterations"`
}

type sourceDigest struct {
	Source string `json:"source"`
	Digest string `json:"digest"`
}

type capabilityCheck struct {
	Checked  bool   `json:"checked"`
	Resolver string `json:"resolver,omitempty"`
}

func runValidate(env *Env, in *runInputs, asJSON, quiet bool) error {
	out := runValidateOutput{Queue: in.Source, Valid: true, Digest: in.Queue.Digest(), Tasks: len(in.Queue.Tasks),
		Waves: waveIDs(in.Graph), Cycles: []runCycleOutput{}, Policy: sourceDigest{in.PolicySource, in.Policy.Digest()},
		Capabilities: capabilityCheck{Checked: in.ResolverSource != "", Resolver: in.ResolverSource}}
	for _, l := range in.Graph.Loops() {
		out.Cycles = append(out.Cycles, runCycleOutput{LoopID: l.ID, Nodes: l.Nodes, MaxIterations: l.MaxIterations})
	}
	if asJSON {
		return writeJSON(env.Stdout, out)
	}
	if quiet {
		return nil
	}
	w := env.Stdout
	fmt.Fprintf(w, "%s: valid: %s in %s, %s\n", in.Source, plural(out.Tasks, "task", "tasks"), plural(len(out.Waves), "wave", "waves"),
		plural(len(out.Cycles), "declared cycle", "declared cycles"))
	fmt.Fprintf(w, "  queue         %s\n", out.Digest)
	fmt.Fprintf(w, "  policy        %s (%s)\n", in.PolicySource, in.Policy.Digest())
	if in.ResolverSource != "" {
		fmt.Fprintf(w, "  capabilities  checked against %s\n", in.ResolverSource)
	} else {
		fmt.Fprintf(w, "  capabilities  not checked: no capability resolver file (pass --resolver FILE)\n")
	}
	for _, l := range out.Cycles {
		fmt.Fprintf(w, "  cycle         %s: %s, at most %d iterations\n", l.LoopID, joinOr(l.Nodes, "-"), l.MaxIterations)
	}
	return nil
}
