package app

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"time"

	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/dome-registry/dome/pkg/gitstore"
	"github.com/dome-registry/dome/pkg/readlimit"
	"github.com/dome-registry/dome/pkg/runspec"
	"github.com/dome-registry/dome/pkg/sandbox"
	"github.com/dome-registry/dome/pkg/stack"
	"github.com/urfave/cli/v2"
)

func newSandboxCommand(env *Env) *cli.Command {
	return &cli.Command{
		Name:  "sandbox",
		Usage: "the bubblewrap sandbox workers run in: check this machine, or run a command in it",
		Subcommands: []*cli.Command{
			newSandboxCheckCommand(env),
			newSandboxExecCommand(env),
		},
	}
}

type sandboxCheckOutput struct {
	Available bool   `json:"available"`
	Bwrap     string `json:"bwrap_version,omitempty"`
	UID       int    `json:"uid,omitempty"`
	GID       int    `json:"gid,omitempty"`
	LimitsBy  string `json:"limits_by,omitempty"`
	Kernel    string `json:"kernel"`
	Code      string `json:"code,omitempty"`
	Problem   string `json:"problem,omitempty"`
	Hint      string `json:"hint,omitempty"`
}

func newSandboxCheckCommand(env *Env) *cli.Command {
	return &cli.Command{
		Name:        "check",
		Description: help("sandbox_check"),
		Usage:       "check that workers can be sandboxed here: bwrap, user namespaces, limits (exit 1 with what to install when not)",
		Flags:       withGlobal(&cli.StringFlag{Name: "bwrap", Usage: "the bwrap `PATH` (default: bwrap on PATH)"}),
		Action: func(c *cli.Context) error {
			out := sandboxCheckOutput{Kernel: kernelRelease()}
			s, err := sandbox.New(c.Context, sandbox.Options{Bwrap: c.String("bwrap")})
			var ue *sandbox.UnavailableError
			switch {
			case err == nil:
				out.Available, out.Bwrap = true, s.Version()
				out.UID, out.GID = s.User()
				out.LimitsBy = s.LimitsBy()
			case errors.As(err, &ue):
				out.Code, out.Problem, out.Hint = ue.Code, ue.Detail, ue.Hint
			default:
				return err
			}
			if globalBool(c, flagJSON) {
				if err := writeJSON(env.Stdout, out); err != nil {
					return err
				}
				if !out.Available {
					return silentError{ExitCheck}
				}
				return nil
			}
			if !out.Available {
				return &errkind.CheckError{Problem: "sandbox unavailable (" + out.Code + "): " + out.Problem, Hint: out.Hint}
			}
			if !globalBool(c, flagQuiet) {
				fmt.Fprintf(env.Stdout, "sandbox: ok: bubblewrap %s, workers run as uid %d, limits by %s, kernel %s\n", out.Bwrap, out.UID, out.LimitsBy, out.Kernel)
			}
			return nil
		},
	}
}

// kernelRelease is the running kernel's release, as uname -r prints it.
func kernelRelease() string {
	b, err := readlimit.ReadFile("/proc/sys/kernel/osrelease", 4096)
	if err != nil {
		return runtime.GOOS
	}
	return strings.TrimSpace(string(b))
}

type sandboxExecOptions struct {
	Base   string
	Limits sandbox.Limits
	Keep   bool
	JSON   bool
	Argv   []string
}

func newSandboxExecCommand(env *Env) *cli.Command {
	return &cli.Command{
		Name:        "exec",
		Description: help("sandbox_exec"),
		Usage:       "run a command in a sandbox on a scratch copy of a commit's tree, as a worker would run; prints its output and how it ended",
		ArgsUsage:   "[--base REV] -- COMMAND [ARGS...]",
		Flags: withGlobal(runPolicyFlag(),
			&cli.StringFlag{Name: "base", Value: "HEAD", Usage: "the commit whose tree the command gets at /work (`REV`)"},
			&cli.DurationFlag{Name: "wall", Usage: "wall-time limit (default: the run policy's max_wall_seconds)"},
			&cli.IntFlag{Name: "processes", Usage: "process limit (default: the run policy's)"},
			&cli.Int64Flag{Name: "memory", Usage: "address-space limit per process in `BYTES` (default: the run policy's)"},
			&cli.Int64Flag{Name: "output", Usage: "bound on stdout and stderr each, in `BYTES` (default: the run policy's)"},
			&cli.BoolFlag{Name: "keep", Usage: "keep the scratch tree and print where it is"},
		),
		Action: func(c *cli.Context) error {
			if c.NArg() == 0 {
				return usagef("name the command to run: dome sandbox exec -- COMMAND [ARGS...]")
			}
			repo, err := openRepo(c.Context, env, c)
			if err != nil {
				return err
			}
			defer repo.Close()
			p, _, err := loadRunPolicy(env, c.String("policy"), repo.Path())
			if err != nil {
				return err
			}
			l := limitsOf(p.Sandbox)
			if c.IsSet("wall") {
				l.WallTime = c.Duration("wall")
			}
			if c.IsSet("processes") {
				l.Processes = c.Int("processes")
			}
			if c.IsSet("memory") {
				l.MemoryBytes = c.Int64("memory")
			}
			if c.IsSet("output") {
				l.OutputBytes = c.Int64("output")
			}
			if l.WallTime <= 0 || l.Processes < 0 || l.MemoryBytes < 0 || l.OutputBytes < 0 {
				return usagef("limits must be positive")
			}
			return runSandboxExec(c.Context, env, repo, sandboxExecOptions{Base: c.String("base"), Limits: l, Keep: c.Bool("keep"),
				JSON: globalBool(c, flagJSON), Argv: c.Args().Slice()})
		},
	}
}

// limitsOf maps the run policy's sandbox limits onto the sandbox's.
func limitsOf(s runspec.SandboxLimits) sandbox.Limits {
	return sandbox.Limits{WallTime: time.Duration(s.MaxWallSeconds) * time.Second, Processes: s.MaxProcesses,
		MemoryBytes: s.MaxMemoryBytes, OpenFiles: s.MaxOpenFiles, FileBytes: s.MaxFileBytes, OutputBytes: s.MaxOutputBytes}
}

type sandboxExecOutput struct {
	Base    string         `json:"base"`
	Result  sandbox.Result `json:"result"`
	Stdout  string         `json:"stdout"`
	Stderr  string         `json:"stderr"`
	Scratch string         `json:"scratch,omitempty"`
}

func runSandboxExec(ctx context.Context, env *Env, repo *gitstore.Repo, opts sandboxExecOptions) error {
	base, err := repo.ResolveCommit(opts.Base)
	if err != nil {
		return &errkind.InputError{Source: "--base", Problem: fmt.Sprintf("%q: %v", opts.Base, err), Hint: "name a commit, branch or tag"}
	}
	s, err := sandbox.New(ctx, sandbox.Options{})
	if err != nil {
		var ue *sandbox.UnavailableError
		if errors.As(err, &ue) {
			return &errkind.InputError{Source: "sandbox", Problem: ue.Error(), Hint: ue.Hint}
		}
		return err
	}
	sc, err := s.NewScratch(func(dir string) error { _, err := stack.Materialize(repo, base, dir); return err })
	if err != nil {
		return err
	}
	if !opts.Keep {
		defer sc.Close()
	}
	res, err := s.Run(ctx, sandbox.Spec{Argv: opts.Argv, Scratch: sc, Limits: opts.Limits})
	if err != nil {
		return err
	}
	out := sandboxExecOutput{Base: base.String(), Result: res, Stdout: string(res.Stdout), Stderr: string(res.Stderr)}
	if opts.Keep {
		out.Scratch = sc.Dir()
	}
	if opts.JSON {
		if err := writeJSON(env.Stdout, out); err != nil {
			return err
		}
	} else {
		env.Stdout.Write(res.Stdout)
		env.Stderr.Write(res.Stderr)
		detail := res.Reason
		if res.Detail != "" {
			detail += ": " + res.Detail
		}
		fmt.Fprintf(env.Stderr, "dome: sandbox: %s (%s on %s)\n", detail, res.Wall.Round(time.Millisecond), base.Short())
		if opts.Keep {
			fmt.Fprintf(env.Stderr, "dome: sandbox: scratch tree kept at %s\n", sc.Dir())
		}
	}
	if res.Reason != sandbox.ReasonOK {
		return silentError{ExitCheck}
	}
	return nil
}
