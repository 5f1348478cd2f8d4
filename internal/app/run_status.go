package app

import (
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/dome-registry/dome/pkg/gitstore"
	"github.com/dome-registry/dome/pkg/ledger"
	"github.com/dome-registry/dome/pkg/orchestrate"
	"github.com/dome-registry/dome/pkg/stack"
	"github.com/urfave/cli/v2"
)

func newRunStatusCommand(env *Env) *cli.Command {
	return &cli.Command{
		Name:        "status",
		Description: help("run_status"),
		Usage:       "show a run: why it stopped (or that it runs), its waves, its nodes with what they have and need, its attempts",
		ArgsUsage:   "[RUN]",
		Flags:       withGlobal(stackOpsFlag(), &cli.BoolFlag{Name: "tasks", Usage: "list every attempt"}),
		Action: func(c *cli.Context) error {
			if c.NArg() > 1 {
				return usagef("dome run status takes at most one RUN")
			}
			repo, err := openRepo(c.Context, env, c)
			if err != nil {
				return err
			}
			defer repo.Close()
			if c.NArg() == 0 {
				dir := runsDir(env, c, repo)
				runs, err := orchestrate.Runs(dir)
				if err != nil {
					return err
				}
				return listRuns(c, env, dir, runs)
			}
			l, err := runLayout(env, c, repo, c.Args().First())
			if err != nil {
				return err
			}
			st, err := runState(l)
			if err != nil {
				return err
			}
			if globalBool(c, flagJSON) {
				return writeJSON(env.Stdout, st)
			}
			if !globalBool(c, flagQuiet) {
				printRunState(env, st, l)
				if c.Bool("tasks") {
					printTasks(env, st)
				}
			}
			return nil
		},
	}
}

// runState reads run.state.json, or derives it when the coordinator has
// not written it yet.
func runState(l stack.Layout) (*orchestrate.State, error) {
	st, err := orchestrate.LoadState(l)
	if err == nil {
		return st, nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	if !fileExists(l.EventsDir()) {
		return nil, noSuchRun(l)
	}
	rr, err := orchestrate.Replay(l)
	if err != nil {
		return nil, err
	}
	return &rr.State, nil
}

// runLayout is the layout of run id under --ops or <repo>/ops/runs.
// existingRun is the layout of run id in the runs folder of --repo (or
// --ops); a run without events is an *errkind.InputError.
func existingRun(env *Env, c *cli.Context, id string) (stack.Layout, error) {
	repo, err := openRepo(c.Context, env, c)
	if err != nil {
		return stack.Layout{}, err
	}
	defer repo.Close()
	l, err := runLayout(env, c, repo, id)
	if err != nil {
		return l, err
	}
	if !fileExists(l.EventsDir()) {
		return l, noSuchRun(l)
	}
	return l, nil
}

// noSuchRun says that the run l has no events.
func noSuchRun(l stack.Layout) error {
	return &errkind.InputError{Source: "RUN", Field: l.RunID, Problem: "no such run: " + l.Root + " has no events", Hint: "list runs with dome run status"}
}

func runLayout(env *Env, c *cli.Context, repo *gitstore.Repo, id string) (stack.Layout, error) {
	if err := ledger.CheckRunID(id); err != nil {
		return stack.Layout{}, &errkind.InputError{Source: "RUN", Field: id, Problem: err.Error()}
	}
	return stack.NewLayout(runsDir(env, c, repo), id), nil
}

func listRuns(c *cli.Context, env *Env, dir string, runs []string) error {
	type row struct {
		RunID  string `json:"run_id"`
		Status string `json:"status"`
		Reason string `json:"reason,omitempty"`
		Waves  int    `json:"waves"`
		Nodes  int    `json:"nodes"`
	}
	var rows []row
	for _, id := range runs {
		r := row{RunID: id, Status: "unknown"}
		if st, err := orchestrate.LoadState(stack.NewLayout(dir, id)); err == nil {
			r.Status, r.Waves, r.Nodes = st.Status, len(st.Waves), len(st.Nodes)
			if st.Stopped != nil {
				r.Reason = st.Stopped.Reason
			}
		}
		rows = append(rows, r)
	}
	if globalBool(c, flagJSON) {
		if rows == nil {
			rows = []row{}
		}
		return writeJSON(env.Stdout, rows)
	}
	if len(rows) == 0 {
		fmt.Fprintf(env.Stdout, "no wave runs under %s\n", dir)
		return nil
	}
	w := table(env.Stdout)
	fmt.Fprintln(w, "run\tstatus\treason\twaves\tnodes")
	for _, r := range rows {
		fmt.Fprintf(w, "%s\t%s\t%s\t%d\t%d\n", r.RunID, r.Status, orDash(r.Reason), r.Waves, r.Nodes)
	}
	return w.Flush()
}

// printRunState prints a run's state for people.
func printRunState(env *Env, st *orchestrate.State, l stack.Layout) {
	w := env.Stdout
	head := fmt.Sprintf("run %s: %s", st.RunID, st.Status)
	if s := st.Stopped; s != nil {
		head = fmt.Sprintf("run %s: %s: %s", st.RunID, s.Reason, s.Detail)
	}
	fmt.Fprintln(w, head)
	c := st.Counters
	fmt.Fprintf(w, "  waves      %d", len(st.Waves))
	for i, wv := range st.Waves {
		sep := "; "
		if i == 0 {
			sep = " ("
		}
		fmt.Fprintf(w, "%s%s: %d started, %d applied, %d reopened", sep, wv.WaveID, wv.Dispatched, len(wv.Applied), len(wv.Reopened))
	}
	if len(st.Waves) > 0 {
		fmt.Fprint(w, ")")
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "  attempts   %d: %d succeeded, %d failed, %d cancelled, %d lost (%d timeouts); %d gateway calls, %d refused\n",
		c.Attempts, c.Succeeded, c.Failed, c.Cancelled, c.Lost, c.Timeouts, c.Calls, c.Refused)
	fmt.Fprintf(w, "  head       %s\n", orDash(st.IntegrationHead))
	if s := st.Stopped; s != nil && s.Promoted {
		fmt.Fprintf(w, "  promoted   %s\n", s.TargetRef)
	}
	if st.Started != nil {
		fmt.Fprintf(w, "  sandbox    %s", st.Started.Sandbox.Kind)
		if v := st.Started.Sandbox.Version; v != "" {
			fmt.Fprintf(w, " %s", v)
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "  folder     %s\n", l.Root)
	tw := table(w)
	fmt.Fprintln(tw, "node\tstatus\tattempts\thave / need")
	for _, n := range st.Nodes {
		var parts []string
		for _, h := range n.Have {
			parts = append(parts, "have "+h)
		}
		for _, x := range n.Need {
			parts = append(parts, "need "+x)
		}
		status := n.Status
		if n.Reason != "" && n.Status != "succeeded" {
			status += " (" + n.Reason + ")"
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\n", n.NodeID, status, n.Attempts, strings.Join(parts, "; "))
	}
	tw.Flush()
}

func printTasks(env *Env, st *orchestrate.State) {
	ids := make([]string, 0, len(st.Tasks))
	for id := range st.Tasks {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return st.Tasks[ids[i]].Dispatched < st.Tasks[ids[j]].Dispatched })
	tw := table(env.Stdout)
	fmt.Fprintln(tw, "task\twave\taction\toutcome\treason\tcalls\tproposals")
	for _, id := range ids {
		t := st.Tasks[id]
		var props []string
		for _, p := range t.Proposals {
			props = append(props, p.ProposalID+" "+p.Status)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%s\n", id, t.WaveID, t.Action, orDash(t.Outcome), orDash(t.Reason), t.Calls, orDash(strings.Join(props, ", ")))
	}
	tw.Flush()
}
