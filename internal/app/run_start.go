package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/dome-registry/dome/pkg/gitstore"
	"github.com/dome-registry/dome/pkg/helperexec"
	"github.com/dome-registry/dome/pkg/ledger"
	"github.com/dome-registry/dome/pkg/orchestrate"
	"github.com/dome-registry/dome/pkg/otelenv"
	"github.com/dome-registry/dome/pkg/readlimit"
	"github.com/dome-registry/dome/pkg/registry"
	"github.com/dome-registry/dome/pkg/runspec"
	"github.com/dome-registry/dome/pkg/sandbox"
	"github.com/dome-registry/dome/pkg/signing"
	"github.com/dome-registry/dome/pkg/stack"
	"github.com/urfave/cli/v2"
)

func runIDFlag(required bool) cli.Flag {
	return &cli.StringFlag{Name: "run", Required: required, Usage: "the run `ID` (default: the queue's run_id, else wq- and the queue's digest)"}
}

func newRunStartCommand(env *Env) *cli.Command {
	return &cli.Command{
		Name:        "start",
		Description: help("run_start"),
		Usage:       "run a work queue in waves of sandboxed workers that propose patches, stacked, validated and promoted; or resume a run",
		ArgsUsage:   "[QUEUE]",
		Flags: withGlobal(runIDFlag(false), stackOpsFlag(), runPolicyFlag(), maxConcurrencyFlag(),
			&cli.StringFlag{Name: "base", Value: "HEAD", Usage: "the commit the first wave reads (`REV`)"},
			&cli.StringFlag{Name: "registry", Usage: "read the grant policy, the resolver, the skills and the cards at `REV` (default: --base)"},
			&cli.StringFlag{Name: "stack-policy", Usage: "stack policy `FILE` the run is pinned to (default: <repo>/policy/stack_policy.json, else the built-in policy)"},
			&cli.StringFlag{Name: "target", Usage: "the ref promotion moves (`REF`; default refs/heads/waves/<run>)"},
			&cli.BoolFlag{Name: "no-promote", Usage: "stop once the head validates, without promoting it"},
			&cli.StringFlag{Name: "approved-by", Usage: "the `NAME` of the person approving promotion where the stack policy wants one"},
			&cli.StringFlag{Name: "seed", Usage: "the determinism `SEED` (default: derived from the run id and the base)"},
			&cli.StringFlag{Name: "sandbox", Value: "bwrap", Usage: "how workers are confined: bwrap, or none (no confinement at all; the run manifest records it) (`MODE`)"},
			&cli.StringFlag{Name: "tools", Usage: "a `DIR` of worker tools (scripts, generated clients) bound read-only at /run/dome/tools"},
			&cli.StringFlag{Name: "key", Usage: "the coordinator's Ed25519 key `FILE` that signs grants (default: a new key per session)"},
			&cli.StringFlag{Name: "dispatch", Value: "local", Usage: "where workers run: local (sandboxes on this machine), or nats://HOST:PORT (worker daemons pulling jobs from a NATS JetStream work queue) (`WHERE`)"},
			&cli.StringFlag{Name: "gateway-listen", Usage: "with --dispatch nats://...: the gateway's TCP `ADDR` (host:port) the worker daemons reach"},
			&cli.StringFlag{Name: "gateway-cert", Usage: "the gateway's TLS certificate chain `FILE` (PEM)"},
			&cli.StringFlag{Name: "gateway-key", Usage: "the gateway's TLS private key `FILE` (PEM)"},
			&cli.BoolFlag{Name: "insecure-loopback", Usage: "serve the gateway over plain http on a loopback address (tests, one machine)"},
			&cli.StringFlag{Name: "grant-store", EnvVars: []string{"DOME_GRANT_STORE"}, Usage: "the spent and revoked grants: a `DIR` (default ops/runs/<run>/grants), postgres://... or postgres ($DATABASE_URL), shared by several coordinators"},
			&cli.DurationFlag{Name: "ack-grace", Value: 10 * time.Second, Usage: "with NATS: added to the longest grant lifetime for the queue's ack wait (`DURATION` a daemon has to report)"},
			&cli.BoolFlag{Name: "verbose", Aliases: []string{"v"}, Usage: "print every step on stderr (default: only on a terminal)"},
		),
		Action: func(c *cli.Context) error {
			if c.NArg() > 1 {
				return usagef("dome run start takes at most one QUEUE")
			}
			return runStart(c, env)
		},
	}
}

func runStart(c *cli.Context, env *Env) error {
	repo, err := openRepo(c.Context, env, c)
	if err != nil {
		return err
	}
	defer repo.Close()
	if repo.IsBare() || repo.RemoteURL() != "" {
		return &errkind.InputError{Source: "--repo", Problem: "dome run start needs a local repository with a worktree", Hint: "run it in a clone"}
	}
	cfg, err := runConfig(c, env, repo)
	if err != nil {
		return err
	}
	l := stack.NewLayout(cfg.OpsRuns, cfg.RunID)
	exists := fileExists(l.EventsDir())
	if c.NArg() == 1 {
		if err := loadNewRun(c, env, repo, &cfg); err != nil {
			return err
		}
	} else if !exists {
		return usagef("run %s does not exist: dome run start QUEUE starts it", cfg.RunID)
	}
	verbose := c.Bool("verbose") || env.StderrTTY
	if verbose && !globalBool(c, flagQuiet) {
		cfg.Progress = func(p orchestrate.Progress) {
			fmt.Fprintf(env.Stderr, "dome: %-10s %-8s %-16s %s\n", p.Kind, orDash(p.WaveID), orDash(p.TaskID), p.Detail)
		}
	}
	if gs := c.String("grant-store"); gs != "" {
		st, _, err := openGrantStore(c.Context, env, gs, cfg.RunID, true)
		if err != nil {
			return err
		}
		cfg.GrantStore = st
	}
	ctx, stop := context.WithCancel(c.Context)
	defer stop()
	out, err := orchestrate.Start(ctx, cfg)
	if errors.Is(err, orchestrate.ErrInterrupted) {
		return &errkind.CheckError{Problem: "run " + cfg.RunID + " interrupted: its workers were killed", Hint: "dome run start --run " + cfg.RunID + " resumes it (they run again)"}
	}
	if err != nil {
		return err
	}
	// With an OpenTelemetry endpoint configured, the run's trace goes
	// there once it stopped (derived from the ledger by the dome-otel
	// helper; a failed export, or no helper, is a warning: the ledger
	// holds everything).
	if endpoint, err := otelenv.FromEnv(env.Getenv); err != nil {
		fmt.Fprintf(env.Stderr, "dome: warning: no OpenTelemetry export: %v\n", err)
	} else if endpoint != "" {
		if err := exportOtelQuietly(c.Context, env, l, endpoint); err != nil {
			fmt.Fprintf(env.Stderr, "dome: warning: OpenTelemetry export: %v (dome run export-otel %s sends it again)\n", err, cfg.RunID)
		}
	}
	return printOutcome(c, env, out, l)
}

// runConfig builds what every session needs: the run's folder, the
// sandbox, the worker binds, the clock.
func runConfig(c *cli.Context, env *Env, repo *gitstore.Repo) (orchestrate.Config, error) {
	cfg := orchestrate.Config{Repo: repo, Registry: registry.New(repo), Now: env.Now, ApprovedBy: c.String("approved-by"),
		ValidateEnv: os.Environ(), Environment: orchestrate.HostEnvironment(domeVersion()), MaxConcurrency: c.Int("max-concurrency"),
		Producer: producer("run start")}
	run := c.String("run")
	if run == "" && c.NArg() == 1 {
		q, err := readQueueArg(env, c.Args().First())
		if err != nil {
			return cfg, err
		}
		run = q.RunID
		if run == "" {
			run = "wq-" + strings.TrimPrefix(q.Digest(), "sha256:")[:12]
		}
	}
	if run == "" {
		return cfg, usagef("name the run: dome run %s --run ID (or give the QUEUE to start)", c.Command.Name)
	}
	if err := ledger.CheckRunID(run); err != nil {
		return cfg, &errkind.InputError{Source: "--run", Field: run, Problem: err.Error()}
	}
	cfg.RunID = run
	cfg.OpsRuns = runsDir(env, c, repo)
	dispatch := c.String("dispatch")
	switch {
	case dispatch == "local":
	case strings.HasPrefix(dispatch, "nats://") || strings.HasPrefix(dispatch, "tls://"):
		d, err := natsDispatcher(c, env, dispatch)
		if err != nil {
			return cfg, err
		}
		sb, err := sandbox.NewUnconfined(sandbox.Options{})
		if err != nil {
			return cfg, err
		}
		cfg.Dispatcher, cfg.Sandbox = d, sb
		cfg.SandboxInfo = runspec.SandboxInfo{Kind: "remote", Reason: "worker daemons pulling jobs from " + orchestrate.NameOf(dispatch) + ": each attempt's sandbox is its daemon's (its task result says which)"}
		return cfg, loadKey(c, env, &cfg)
	default:
		return cfg, &errkind.InputError{Source: "--dispatch", Field: dispatch, Problem: "want local or nats://HOST:PORT"}
	}
	switch mode := c.String("sandbox"); mode {
	case "bwrap", "bubblewrap":
		sb, err := sandbox.New(c.Context, sandbox.Options{})
		if err != nil {
			var ue *sandbox.UnavailableError
			if errors.As(err, &ue) {
				return cfg, &errkind.InputError{Source: "sandbox", Problem: ue.Error(), Hint: ue.Hint}
			}
			return cfg, err
		}
		uid, _ := sb.User()
		cfg.Sandbox, cfg.SandboxInfo = sb, runspec.SandboxInfo{Kind: "bubblewrap", Version: sb.Version(), Reason: fmt.Sprintf("uid %d, limits by %s", uid, sb.LimitsBy())}
	case "none":
		sb, err := sandbox.NewUnconfined(sandbox.Options{})
		if err != nil {
			return cfg, err
		}
		cfg.Sandbox, cfg.SandboxInfo = sb, runspec.SandboxInfo{Kind: "none", Reason: "--sandbox=none: workers run unconfined on the host"}
	default:
		return cfg, &errkind.InputError{Source: "--sandbox", Field: mode, Problem: "want bwrap or none"}
	}
	if exe, err := os.Executable(); err == nil {
		cfg.DomeBinary = exe
	}
	if t := c.String("tools"); t != "" {
		cfg.Tools = absPath(env, t)
	}
	return cfg, loadKey(c, env, &cfg)
}

// loadKey reads --key, the coordinator's key.
func loadKey(c *cli.Context, env *Env, cfg *orchestrate.Config) error {
	if f := c.String("key"); f != "" {
		b, err := readlimit.ReadFile(absPath(env, f), readlimit.Profile)
		if err != nil {
			return &errkind.InputError{Source: "--key", Problem: "cannot read the key: " + pathErr(err)}
		}
		k, err := signing.ParsePrivateKey("", b)
		if err != nil {
			return &errkind.InputError{Source: "--key", Problem: err.Error()}
		}
		cfg.Key = &k
	}
	return nil
}

// natsDispatcher is --dispatch nats://...: the queue and the gateway's
// TCP listener (TLS, or plain http on loopback with --insecure-loopback).
func natsDispatcher(c *cli.Context, env *Env, url string) (*orchestrate.NATS, error) {
	listen := c.String("gateway-listen")
	if listen == "" {
		return nil, &errkind.InputError{Source: "--gateway-listen", Problem: "--dispatch " + orchestrate.NameOf(url) + " needs the address the worker daemons reach the gateway on",
			Hint: "--gateway-listen HOST:PORT with --gateway-cert FILE --gateway-key FILE"}
	}
	if _, _, err := net.SplitHostPort(listen); err != nil {
		return nil, &errkind.InputError{Source: "--gateway-listen", Field: listen, Problem: "want HOST:PORT"}
	}
	d := &orchestrate.NATS{URL: url, Listen: listen, AckGrace: c.Duration("ack-grace")}
	cert, key := c.String("gateway-cert"), c.String("gateway-key")
	switch {
	case cert != "" && key != "":
		tc, err := serverTLS(absPath(env, cert), absPath(env, key))
		if err != nil {
			return nil, err
		}
		d.TLS = tc
	case cert != "" || key != "":
		return nil, &errkind.InputError{Source: "--gateway-cert", Problem: "give both --gateway-cert and --gateway-key"}
	case c.Bool("insecure-loopback"):
		if !orchestrate.IsLoopback(listen) {
			return nil, &errkind.InputError{Source: "--insecure-loopback", Field: listen, Problem: "plain http only on a loopback address", Hint: "serve the gateway with TLS: --gateway-cert FILE --gateway-key FILE"}
		}
		d.Insecure = true
	default:
		return nil, &errkind.InputError{Source: "--gateway-cert", Problem: "the gateway needs TLS to serve worker daemons on other machines",
			Hint: "--gateway-cert FILE --gateway-key FILE (workers get the CA with --gateway-ca), or --insecure-loopback on 127.0.0.1"}
	}
	if c.Duration("ack-grace") < time.Second {
		return nil, &errkind.InputError{Source: "--ack-grace", Field: c.Duration("ack-grace").String(), Problem: "want at least 1s"}
	}
	return d, nil
}

// runConfigOffline is the configuration of a run no worker will run in
// (dome run cancel of a run nobody coordinates).
func runConfigOffline(env *Env, repo *gitstore.Repo, l stack.Layout) (orchestrate.Config, error) {
	sb, err := sandbox.NewUnconfined(sandbox.Options{})
	if err != nil {
		return orchestrate.Config{}, err
	}
	return orchestrate.Config{Repo: repo, Registry: registry.New(repo), Now: env.Now, RunID: l.RunID, OpsRuns: dirOfLayout(l),
		Sandbox: sb, SandboxInfo: runspec.SandboxInfo{Kind: "none", Reason: "dome run cancel"}, ValidateEnv: os.Environ(),
		Producer: producer("run cancel")}, nil
}

func dirOfLayout(l stack.Layout) string { return filepath.Dir(l.Root) }

func readQueueArg(env *Env, arg string) (*runspec.Queue, error) {
	data, err := readInputFile(env, arg, runspec.MaxQueueBytes)
	if err != nil {
		return nil, err
	}
	q, _, err := runspec.ParseQueue(arg, data)
	return q, err
}

// loadNewRun reads what a new run pins: the queue (checked against the
// resolver at the registry commit), the run policy, the stack policy, the
// base and registry commits.
func loadNewRun(c *cli.Context, env *Env, repo *gitstore.Repo, cfg *orchestrate.Config) error {
	arg := c.Args().First()
	data, err := readInputFile(env, arg, runspec.MaxQueueBytes)
	if err != nil {
		return err
	}
	q, _, err := runspec.ParseQueue(arg, data)
	if err != nil {
		return err
	}
	if q.RunID != "" && q.RunID != cfg.RunID {
		return &errkind.InputError{Source: arg, Field: "/run_id", Problem: fmt.Sprintf("%q, but the run is %q", q.RunID, cfg.RunID), Hint: "leave --run out, or make them the same"}
	}
	cfg.Queue, cfg.QueueBytes, cfg.QueueSource = q, data, arg
	root := repo.Path()
	rp, src, err := loadRunPolicy(env, c.String("policy"), root)
	if err != nil {
		return err
	}
	cfg.RunPolicy, cfg.RunPolicySource = rp, src
	if src == "built-in" {
		cfg.RunPolicyBytes = runspec.DefaultPolicyJSON()
	} else {
		p := c.String("policy")
		if p == "" {
			p = filepath.Join(root, filepath.FromSlash(runspec.PolicyPath))
		}
		if cfg.RunPolicyBytes, err = readlimit.ReadFile(absPath(env, p), readlimit.Profile); err != nil {
			return err
		}
	}
	if cfg.StackPolicy, _, err = loadStackPolicy(env, c.String("stack-policy"), repo); err != nil {
		return err
	}
	base, err := repo.ResolveCommit(c.String("base"))
	if err != nil {
		return &errkind.InputError{Source: "--base", Problem: fmt.Sprintf("%q: %v", c.String("base"), err), Hint: "name a commit, branch or tag"}
	}
	cfg.Base = base.String()
	reg := base
	if r := c.String("registry"); r != "" {
		if reg, err = repo.ResolveCommit(r); err != nil {
			return &errkind.InputError{Source: "--registry", Problem: fmt.Sprintf("%q: %v", r, err), Hint: "name a commit, branch or tag"}
		}
	}
	cfg.RegistryCommit = reg.String()
	// The queue's capabilities must be the resolver's at that commit.
	p, err := cfg.Registry.PinRev(c.Context, "", cfg.RegistryCommit, registry.PinOptions{Source: "--registry"})
	if err != nil {
		return err
	}
	if rb, err := cfg.Registry.ReadPolicyFile(p, registry.ResolverSpecPath); err == nil {
		known, _, err := resolverCapabilities(registry.ResolverSpecPath+"@"+reg.Short(), rb)
		if err != nil {
			return err
		}
		if err := q.CheckCapabilities(arg, known); err != nil {
			return err
		}
	}
	cfg.Target = c.String("target")
	if cfg.Target == "" {
		cfg.Target = "refs/heads/waves/" + cfg.RunID
	}
	cfg.Promote = !c.Bool("no-promote")
	cfg.Seed = c.String("seed")
	return nil
}

// printOutcome prints how the run stopped; it exits 1 unless its
// constraints are met.
func printOutcome(c *cli.Context, env *Env, out *orchestrate.Outcome, l stack.Layout) error {
	if globalBool(c, flagJSON) {
		if err := writeJSON(env.Stdout, struct {
			*orchestrate.Outcome
			State *orchestrate.State `json:"state"`
		}{out, out.State}); err != nil {
			return err
		}
	} else if !globalBool(c, flagQuiet) {
		printRunState(env, out.State, l)
	}
	if out.Stop.Reason != orchestrate.StopConstraintsMet {
		return silentError{ExitCheck}
	}
	return nil
}

// exportOtelQuietly exports a stopped run's trace through dome-otel and
// says in one line why it did not.
func exportOtelQuietly(ctx context.Context, env *Env, l stack.Layout, endpoint string) error {
	helper, err := findHelper(env, helperexec.OTel)
	if err != nil {
		return fmt.Errorf("%v; %s", err, errkind.HintOf(err))
	}
	var stderr helperOutput
	if err := runHelper(ctx, helper, append(exportOtelArgs(l, endpoint), "--quiet"), io.Discard, &stderr); err != nil {
		if msg := stderr.Summary(); msg != "" {
			return errors.New(msg)
		}
		return err
	}
	return nil
}
