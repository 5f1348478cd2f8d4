package orchestrate

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/dome-registry/dome/pkg/gateway"
	"github.com/dome-registry/dome/pkg/gitstore"
	"github.com/dome-registry/dome/pkg/grant"
	"github.com/dome-registry/dome/pkg/ledger"
	"github.com/dome-registry/dome/pkg/sandbox"
	"github.com/dome-registry/dome/pkg/signing"
	"github.com/dome-registry/dome/pkg/stack"
)

// Job is one attempt for a Dispatcher: everything it needs to run the
// worker, all of it serializable except the parsed grant (a Dispatcher
// that sends jobs elsewhere sends Grant and SpawnSpec).
type Job struct {
	Attempt   gateway.Attempt   // the run, wave, node, node execution, task, worker and base
	Argv      []string          // the container's command
	Env       map[string]string // the worker's environment (DOME_* ids, DOME_GRANT, ...)
	Limits    sandbox.Limits    // wall time from the grant and the run policy
	Grant     []byte            // the grant's bytes
	Parsed    *grant.Grant      // the grant, parsed (what the worker may read decides the scratch tree)
	SpawnSpec []byte            // the validated SpawnSpec, canonical JSON
	// OutputsDir is where the job's outputs and logs go (the task's
	// outputs folder, under the run).
	OutputsDir string
}

// Result is how an attempt ended, as a Dispatcher saw it.
type Result struct {
	Sandbox sandbox.Result
	Kind    string          // the sandbox kind: bubblewrap, none
	Session gateway.Summary // the gateway's calls and the proposals it registered
	Outputs []OutputRef     // the evidence files and logs kept
	// Err is an attempt that could not be run at all (the scratch tree,
	// the socket, the sandbox failed to start): it fails with
	// prepare_failed.
	Err error
}

// Dispatcher runs attempts. Run returns when the attempt has ended; it is
// called from many goroutines at once. Cancelling ctx kills the attempt
// (its Result says cancelled). started is called once the worker is about
// to run, with where it runs ("" for this machine's sandbox).
type Dispatcher interface {
	Name() string
	Run(ctx context.Context, job Job, started func(where string)) Result
	Close() error
}

// DispatchEnv is what a session hands a dispatcher that runs attempts on
// other machines: the run's gateway and repository, the key that signs its
// grants (and jobs), and the ledger.
type DispatchEnv struct {
	RunID   string
	Repo    *gitstore.Repo
	Gateway *gateway.Gateway
	Key     signing.PrivateKey
	// Record appends an event to the run's ledger (the ledger's one
	// writer is the coordinator: a dispatcher records through it).
	Record func(topic string, payload any) error
	// Events returns the run's events so far.
	Events func() []ledger.Event
	// Revoke revokes a grant by its jti until its expiry (an attempt that
	// ended without its worker: its late calls are refused).
	Revoke func(jti string, until time.Time, reason string)
	// MaxTTL is the longest lifetime of the run's grants.
	MaxTTL time.Duration
	// WorkDir is the session's folder, for the dispatcher's files: removed
	// when the session ends, and by the next session when this one was
	// killed.
	WorkDir    string
	Now        func() time.Time
	OnFlood    func(execID string)
	MaxOutputs OutputLimits
}

// Binder is a Dispatcher that needs the session: Bind is called once,
// before the first Run.
type Binder interface {
	Bind(env DispatchEnv) error
}

// Acker is a Dispatcher told when an attempt's result is durable
// (task.completed recorded, task.result.json written, task.ack recorded):
// a queue acknowledges its message only then.
type Acker interface {
	Acked(execID string)
}

// Local runs attempts on this machine: each in a sandbox (or, when the run
// asked for none, on the host) on a scratch copy of the wave's base made
// from git objects, holding only the files the attempt's grant may read,
// with the gateway serving the attempt on a socket bound into it.
type Local struct {
	Repo    *gitstore.Repo
	Gateway *gateway.Gateway
	Sandbox *sandbox.Sandbox
	// Binds are the read-only binds of every attempt (the dome binary at
	// /run/dome/bin/dome, the user's tools).
	Binds []sandbox.Bind
	// OnFlood is told which attempt flooded the gateway (the coordinator
	// kills it).
	OnFlood func(execID string)
	// MaxOutputs bounds what an attempt's outputs folder may hand back.
	MaxOutputs OutputLimits
	// ScratchParent is where the attempts' scratch folders go ("": the
	// sandbox's own).
	ScratchParent string
}

// Name is "local".
func (l *Local) Name() string { return "local" }

// Close releases nothing: the sandboxes end with their attempts.
func (l *Local) Close() error { return nil }

// Run runs one attempt.
func (l *Local) Run(ctx context.Context, job Job, started func(where string)) Result {
	res := Result{Kind: "bubblewrap"}
	if l.Sandbox.Unconfined() {
		res.Kind = "none"
	}
	base, ok := gitstore.ParseHash(job.Attempt.BaseRef)
	if !ok {
		res.Err = fmt.Errorf("base %q is not a commit id", job.Attempt.BaseRef)
		return res
	}
	keep := func(p string, isDir bool) bool {
		if isDir {
			return job.Parsed.CanList(p)
		}
		return job.Parsed.CheckRead(p) == nil
	}
	fill := func(dir string) error {
		_, err := stack.MaterializeWith(l.Repo, base, dir, keep)
		return err
	}
	var sc *sandbox.Scratch
	var err error
	if l.ScratchParent != "" {
		sc, err = l.Sandbox.NewScratchIn(l.ScratchParent, fill)
	} else {
		sc, err = l.Sandbox.NewScratch(fill)
	}
	if err != nil {
		res.Err = err
		return res
	}
	defer sc.Close()
	s, err := l.Gateway.Open(job.Attempt, func() {
		if l.OnFlood != nil {
			l.OnFlood(job.Attempt.NodeExecutionID)
		}
	})
	if err != nil {
		res.Err = err
		return res
	}
	if err := s.Listen(sc.SocketPath()); err != nil {
		s.Close()
		res.Err = err
		return res
	}
	if started != nil {
		started("")
	}
	sr, err := l.Sandbox.Run(ctx, sandbox.Spec{Argv: job.Argv, Env: job.Env, Scratch: sc, Socket: sc.SocketPath(), Limits: job.Limits,
		Binds: l.Binds, Outputs: true})
	sum, cerr := s.Close()
	res.Session = sum
	if err != nil {
		res.Err = err
		return res
	}
	if cerr != nil {
		res.Err = fmt.Errorf("recording the attempt's calls: %w", cerr)
		return res
	}
	res.Sandbox = sr
	outs, err := keepOutputs(job.OutputsDir, sc.OutputsDir(), sr, l.MaxOutputs)
	if err != nil {
		res.Err = err
		return res
	}
	res.Outputs = outs
	return res
}

// ToolsBind is where the user's tools folder appears in a sandbox.
const ToolsBind = "/run/dome/tools"

// BinBind is the folder holding dome in a sandbox (on the worker's PATH).
const BinBind = "/run/dome/bin"

// DomeBinds returns the binds of the dome binary (as /run/dome/bin/dome)
// and of a tools folder (at /run/dome/tools, when given). Without a
// sandbox (unconfined) the binary's bind is a folder made in tmp holding a
// link to it, which the worker's PATH reaches.
func DomeBinds(domeBinary, tools string, unconfined bool, tmp string) ([]sandbox.Bind, error) {
	var out []sandbox.Bind
	if domeBinary != "" {
		abs, err := filepath.Abs(domeBinary)
		if err != nil {
			return nil, err
		}
		if unconfined {
			dir := filepath.Join(tmp, "bin")
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return nil, err
			}
			os.Remove(filepath.Join(dir, "dome"))
			if err := os.Symlink(abs, filepath.Join(dir, "dome")); err != nil {
				return nil, err
			}
			out = append(out, sandbox.Bind{Src: dir, Dst: BinBind})
		} else {
			out = append(out, sandbox.Bind{Src: abs, Dst: BinBind + "/dome"})
		}
	}
	if tools != "" {
		abs, err := filepath.Abs(tools)
		if err != nil {
			return nil, err
		}
		fi, err := os.Stat(abs)
		if err != nil || !fi.IsDir() {
			return nil, fmt.Errorf("tools folder %s: not a folder", tools)
		}
		out = append(out, sandbox.Bind{Src: abs, Dst: ToolsBind})
	}
	return out, nil
}

// workerEnv is the environment a worker gets beside the sandbox's own.
func workerEnv(a gateway.Attempt, attempt int, tok []byte, intent, params, spawn string, tools bool) map[string]string {
	env := map[string]string{
		"PATH":                    BinBind + ":/usr/local/bin:/usr/bin:/bin",
		"PYTHONDONTWRITEBYTECODE": "1",
		"DOME_RUN_ID":             a.RunID, "DOME_WAVE_ID": a.WaveID, "DOME_NODE_ID": a.NodeID,
		"DOME_NODE_EXECUTION_ID": a.NodeExecutionID, "DOME_TASK_ID": a.TaskID, "DOME_WORKER_ID": a.WorkerID,
		"DOME_ATTEMPT": fmt.Sprint(attempt), "DOME_BASE_REF": a.BaseRef, "DOME_GRANT": string(tok),
		"DOME_INTENT": intent, "DOME_ACTION_PARAMS": params, "DOME_SPAWN_SPEC": spawn,
	}
	if tools {
		env["DOME_TOOLS"] = ToolsBind
		env["PYTHONPATH"] = ToolsBind
	}
	keys := make([]string, 0, len(env))
	for k, v := range env {
		if v == "" {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		delete(env, k)
	}
	return env
}

// sandboxSummary keeps what the ledger records of a sandbox result.
func sandboxSummary(kind string, r sandbox.Result) *SandboxSummary {
	return &SandboxSummary{Kind: kind, Reason: r.Reason, Detail: strings.TrimSpace(r.Detail), ExitCode: r.ExitCode, Signal: r.Signal,
		WallMS: r.Wall.Milliseconds(), StdoutBytes: r.StdoutBytes, StderrBytes: r.StderrBytes, Processes: r.Processes}
}
