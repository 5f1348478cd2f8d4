package app

import (
	"errors"
	"fmt"
	"strings"

	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/dome-registry/dome/pkg/gateway"
	"github.com/dome-registry/dome/pkg/readlimit"
	"github.com/dome-registry/dome/pkg/stack"
	"github.com/dome-registry/dome/pkg/worker"
	"github.com/urfave/cli/v2"
)

func newWorkerCommand(env *Env) *cli.Command {
	return &cli.Command{
		Name:        "worker",
		Usage:       "a worker daemon pulling a run's jobs from NATS (--nats URL --gateway URL); inside a sandbox: submit its change through the gateway",
		Description: help("worker"),
		Flags:       withGlobal(workerDaemonFlags()...),
		Subcommands: []*cli.Command{newWorkerSubmitCommand(env)},
		Action:      func(c *cli.Context) error { return runWorkerDaemon(c, env) },
	}
}

func newWorkerSubmitCommand(env *Env) *cli.Command {
	return &cli.Command{
		Name:        "submit",
		Description: help("worker_submit"),
		Usage:       "diff the scratch tree against the wave's base (through the gateway) and submit it as a patch proposal with the attempt's grant",
		Flags: withGlobal(
			&cli.StringFlag{Name: "dir", Usage: "the tree to diff (`DIR`; default $DOME_WORKDIR, else the working directory)"},
			&cli.StringFlag{Name: "socket", Usage: "the gateway's Unix socket (`PATH`; default $DOME_GATEWAY_SOCKET)"},
			&cli.StringFlag{Name: "grant", Usage: "a `FILE` holding the grant (default $DOME_GRANT)"},
			&cli.StringSliceFlag{Name: "intent", Usage: "an intent tag of the change, `TAG` (tests, docs, refactor, ...; repeat)"},
			&cli.StringFlag{Name: "atomicity", Value: stack.AtomicProposal, Usage: "how the change may be split when it conflicts: atomic_proposal, atomic_file or hunk_ok (`MODE`)"},
			&cli.BoolFlag{Name: "no-deps", Usage: "declare that the change touches no dependency manifest or lockfile"},
			&cli.BoolFlag{Name: "no-api-change", Usage: "declare that the change touches no API surface"},
			&cli.BoolFlag{Name: "critical-path", Usage: "declare that the change unblocks other work (planned early)"},
			&cli.StringSliceFlag{Name: "exclude", Usage: "leave paths matching `GLOB` out of the diff (repeat)"},
			&cli.StringFlag{Name: "key", Value: "submit_patch:1", Usage: "the idempotency key after the node execution id (`SUFFIX`): a repeated request gets the first answer"},
		),
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usagef("dome worker submit takes no arguments: it submits the whole tree")
			}
			return runWorkerSubmit(c, env)
		},
	}
}

func runWorkerSubmit(c *cli.Context, env *Env) error {
	dir := c.String("dir")
	if dir == "" {
		dir = env.Getenv("DOME_WORKDIR")
	}
	if dir == "" {
		dir = env.WorkDir
	}
	dir = absPath(env, dir)
	socket := c.String("socket")
	if socket == "" {
		socket = env.Getenv("DOME_GATEWAY_SOCKET")
	}
	if socket == "" {
		return &errkind.InputError{Source: "--socket", Problem: "no gateway socket: $DOME_GATEWAY_SOCKET is not set",
			Hint: "run it as a worker of dome run start, which binds the gateway's socket into the sandbox"}
	}
	var grant []byte
	if f := c.String("grant"); f != "" {
		b, err := readlimit.ReadFile(absPath(env, f), readlimit.Profile)
		if err != nil {
			return &errkind.InputError{Source: "--grant", Problem: "cannot read the grant: " + pathErr(err)}
		}
		grant = []byte(strings.TrimSpace(string(b)))
	} else {
		grant = []byte(env.Getenv("DOME_GRANT"))
	}
	if len(grant) == 0 {
		return &errkind.InputError{Source: "--grant", Problem: "no grant: $DOME_GRANT is not set", Hint: "dome run start hands each worker its grant in $DOME_GRANT"}
	}
	atom := c.String("atomicity")
	switch atom {
	case stack.AtomicProposal, stack.AtomicFile, stack.HunkOK:
	default:
		return &errkind.InputError{Source: "--atomicity", Field: atom, Problem: "want atomic_proposal, atomic_file or hunk_ok"}
	}
	opts := worker.Options{Dir: dir, IntentTags: c.StringSlice("intent"), Exclude: c.StringSlice("exclude"), KeySuffix: c.String("key"),
		Attempt: worker.Attempt{RunID: env.Getenv("DOME_RUN_ID"), WaveID: env.Getenv("DOME_WAVE_ID"), NodeID: env.Getenv("DOME_NODE_ID"),
			NodeExecutionID: env.Getenv("DOME_NODE_EXECUTION_ID"), WorkerID: env.Getenv("DOME_WORKER_ID")},
		Constraints: stack.DeclaredConstraints{Atomicity: atom, NoDeps: c.Bool("no-deps"), NoAPIChange: c.Bool("no-api-change"), CriticalPath: c.Bool("critical-path")},
		Now:         env.Now()}
	res, err := worker.Submit(c.Context, gateway.NewUnixClient(socket, grant), opts)
	var ce *gateway.CallError
	if errors.As(err, &ce) {
		return &errkind.CheckError{Problem: err.Error(), Hint: refusalHint(ce)}
	}
	if err != nil {
		return err
	}
	if globalBool(c, flagJSON) {
		if err := writeJSON(env.Stdout, res); err != nil {
			return err
		}
	} else if !globalBool(c, flagQuiet) {
		switch {
		case res.NoChange:
			fmt.Fprintf(env.Stdout, "no change against the base %s: nothing submitted\n", short(res.BaseRef))
		default:
			s := res.Submit
			fmt.Fprintf(env.Stdout, "%s: proposal %s (%s)", s.Status, s.ProposalID, plural(len(res.Touched), "file", "files"))
			if s.ReasonCode != "" {
				fmt.Fprintf(env.Stdout, ", reason %s", s.ReasonCode)
			}
			if s.Replayed {
				fmt.Fprint(env.Stdout, ", replayed")
			}
			fmt.Fprintf(env.Stdout, "; %d gateway calls\n", res.Calls)
		}
	}
	if res.Submit != nil && res.Submit.Status == gateway.StatusRejected {
		return silentError{ExitCheck}
	}
	return nil
}

// refusalHint says what a refused call means for the worker.
func refusalHint(ce *gateway.CallError) string {
	switch ce.Info.Details["reason"] {
	case "REPLAYED":
		return "the attempt's single-use grant already wrote once: a worker submits one proposal"
	case "PATH_OUTSIDE_ROOTS", "PATH_DENIED":
		return "the change touches a path the task may not write: keep to the task's write roots"
	case "BUDGET_EXHAUSTED", "CALL_FLOOD":
		return "the attempt used up its calls: read less (dome worker submit needs 3 calls and one per changed file)"
	case "EXPIRED":
		return "the grant outlived its lifetime: the attempt ran too long"
	}
	return ""
}
