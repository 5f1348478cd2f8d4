package app

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/dome-registry/dome/internal/patchcmd"
	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/dome-registry/dome/pkg/gitstore"
	"github.com/dome-registry/dome/pkg/patch"
	"github.com/dome-registry/dome/pkg/stack"
	"github.com/urfave/cli/v2"
)

type stackProposeOptions struct {
	Patch, FromWorktree string
	Excludes            []string
	NoGitignore         bool
	Base, Wave          string
	ID                  string
	Intents             []string
	Worker              stack.WorkerRunMeta
	IdempotencyKey      string
	Constraints         stack.DeclaredConstraints
	DiffRef             bool
	AssumeBaseTree      string
	SignKey, KID        string
	Out                 string
	CreatedAt           string
	JSON, Quiet         bool
}

func newStackProposeCommand(env *Env) *cli.Command {
	return &cli.Command{
		Name:      "propose",
		Usage:     "make a PatchProposal from a diff or a worktree against the wave base (a worker's command; it changes no ref)",
		ArgsUsage: "[PATCH] (a git diff file, - for standard input; or --from-worktree DIR)",
		Flags: withGlobal(stackRunFlag(), stackOpsFlag(), stackPolicyFlag(), createdAtFlag(),
			&cli.StringFlag{Name: "from-worktree", Usage: "diff the files of `DIR` against the base tree"},
			&cli.StringSliceFlag{Name: "exclude", Usage: "with --from-worktree: skip paths matching `GLOB` (ops/runs is always skipped)"},
			&cli.BoolFlag{Name: "no-gitignore", Usage: "with --from-worktree: also read untracked files that .gitignore or .git/info/exclude ignore"},
			&cli.StringFlag{Name: "base", Usage: "the wave base, a full `SHA` (default: the run's current wave base)"},
			&cli.StringFlag{Name: "wave", Usage: "the wave `ID` (default: the run's current wave)"},
			&cli.StringFlag{Name: "id", Usage: "proposal `ID` (default: derived from the content)"},
			&cli.StringSliceFlag{Name: "intent", Usage: "intent `TAG` (tests, docs, refactor, bugfix, deps, ...); repeat or comma-separate"},
			&cli.StringFlag{Name: "worker", Usage: "worker `ID`", Required: true},
			&cli.StringFlag{Name: "tool-profile", Usage: "the worker's tool profile `ID`"},
			&cli.StringFlag{Name: "node", Usage: "task graph node `ID`"},
			&cli.StringFlag{Name: "node-execution", Usage: "node execution `ID` minted by the coordinator"},
			&cli.Int64Flag{Name: "calls", Usage: "budget used: tool `N` calls"},
			&cli.Int64Flag{Name: "wall-ms", Usage: "budget used: wall time in `MS`"},
			&cli.Int64Flag{Name: "tokens", Usage: "budget used: `N` tokens"},
			&cli.StringFlag{Name: "idempotency-key", Usage: "idempotency `KEY` (default: derived from the run, wave, worker and diff)"},
			&cli.StringFlag{Name: "atomicity", Value: stack.AtomicProposal, Usage: "`POLICY`: atomic_proposal, atomic_file or hunk_ok"},
			&cli.BoolFlag{Name: "no-deps", Usage: "declare: touches no dependency manifest or lockfile"},
			&cli.BoolFlag{Name: "no-api-change", Usage: "declare: touches no API path"},
			&cli.BoolFlag{Name: "critical-path", Usage: "declare: unblocks other work (planned early)"},
			&cli.BoolFlag{Name: "diff-ref", Usage: "keep the diff as a blob in the repository (diff_ref) instead of inline"},
			&cli.StringFlag{Name: "sign-key", Usage: "sign with the Ed25519 private key `FILE` (dome keygen)"},
			&cli.StringFlag{Name: "kid", Usage: "key id `KID` of --sign-key (default: the file name without .key)"},
			&cli.StringFlag{Name: "out", Aliases: []string{"o"}, Usage: "write the proposal to `FILE` (default: stdout)"},
			&cli.StringFlag{Name: "assume-base-tree", Usage: "record `TREE` as base_tree_hash without computing it (to test a coordinator's verification)"},
		),
		Action: func(c *cli.Context) error {
			repo, policy, err := openStack(env, c)
			if err != nil {
				return err
			}
			defer repo.Close()
			var intents []string
			for _, v := range c.StringSlice("intent") {
				for _, t := range strings.Split(v, ",") {
					if t = strings.TrimSpace(t); t != "" {
						intents = append(intents, t)
					}
				}
			}
			return runStackPropose(c.Context, env, repo, stackLayout(env, c, repo), policy, stackProposeOptions{
				Patch: c.Args().First(), FromWorktree: c.String("from-worktree"), Excludes: c.StringSlice("exclude"), NoGitignore: c.Bool("no-gitignore"),
				Base: c.String("base"), Wave: c.String("wave"), ID: c.String("id"), Intents: intents,
				Worker: stack.WorkerRunMeta{WorkerID: c.String("worker"), ToolProfileID: c.String("tool-profile"), NodeID: c.String("node"),
					NodeExecutionID: c.String("node-execution"), BudgetsUsed: stack.BudgetsUsed{Calls: c.Int64("calls"), WallMS: c.Int64("wall-ms"), Tokens: c.Int64("tokens")}},
				IdempotencyKey: c.String("idempotency-key"),
				Constraints: stack.DeclaredConstraints{Atomicity: c.String("atomicity"), NoDeps: c.Bool("no-deps"), NoAPIChange: c.Bool("no-api-change"),
					CriticalPath: c.Bool("critical-path")},
				DiffRef: c.Bool("diff-ref"), AssumeBaseTree: c.String("assume-base-tree"), SignKey: c.String("sign-key"), KID: c.String("kid"), Out: c.String("out"),
				CreatedAt: c.String("created-at"), JSON: globalBool(c, flagJSON), Quiet: globalBool(c, flagQuiet),
			})
		},
		Description: help("stack_propose"),
	}
}

type stackProposeOutput struct {
	ProposalID     string   `json:"proposal_id"`
	Out            string   `json:"out"`
	BaseRef        string   `json:"base_ref"`
	WaveID         string   `json:"wave_id"`
	DiffDigest     string   `json:"diff_digest"`
	TouchedFiles   []string `json:"touched_files"`
	RiskClass      string   `json:"risk_class"`
	IdempotencyKey string   `json:"idempotency_key"`
	Signed         bool     `json:"signed"`
}

func runStackPropose(_ context.Context, env *Env, repo *gitstore.Repo, l stack.Layout, policy *stack.Policy, opts stackProposeOptions) error {
	if (opts.Patch == "") == (opts.FromWorktree == "") {
		return usagef("give a PATCH file or --from-worktree DIR (one of them)")
	}
	base, wave := opts.Base, opts.Wave
	if base == "" || wave == "" {
		st, _, err := stack.LoadState(l)
		if errors.Is(err, stack.ErrNoRun) {
			// A worker's own clone does not hold the coordinator's run.
			return &errkind.InputError{Source: "--run", Field: l.RunID,
				Problem: fmt.Sprintf("run %s is not in this repository (%s), so its wave base is not known here", l.RunID, l.Root),
				Hint:    fmt.Sprintf("in a worker's own clone give the base and wave the coordinator gave you: --base SHA --wave ID (dome stack status --run %s --json in the coordinator's repository prints them); or propose from the coordinator's repository with --from-worktree DIR", l.RunID)}
		}
		if err != nil {
			return err
		}
		if base == "" {
			base = st.BaseRef
		}
		if wave == "" {
			wave = st.WaveID
		}
	}
	at, err := createdAt(env, opts.CreatedAt)
	if err != nil {
		return err
	}
	po := stack.ProposeOptions{RunID: l.RunID, WaveID: wave, BaseRef: base, ProposalID: opts.ID, IntentTags: opts.Intents,
		Constraints: opts.Constraints, Worker: opts.Worker, IdempotencyKey: opts.IdempotencyKey, UseDiffRef: opts.DiffRef, AssumeBaseTree: opts.AssumeBaseTree,
		Policy: policy, CreatedAt: at, Producer: producer("stack propose")}
	if opts.FromWorktree != "" {
		dir := absPath(env, opts.FromWorktree)
		skip, err := stack.WorktreeSkip(repo, base, dir, opts.Excludes, opts.NoGitignore)
		if err != nil {
			return err
		}
		files, err := patch.ReadDir(dir, skip)
		if err != nil {
			return &errkind.InputError{Source: "--from-worktree", Field: opts.FromWorktree, Problem: err.Error()}
		}
		po.Files, po.FromFiles, po.DiffSource = files, true, opts.FromWorktree
	} else {
		data, err := patchcmd.ReadInput(env.patch(), opts.Patch, patch.DefaultMaxBytes)
		if err != nil {
			return err
		}
		po.Diff, po.DiffSource = data, sourceName(opts.Patch)
	}
	if opts.SignKey != "" {
		key, err := loadPrivateKey(env, opts.SignKey, opts.KID)
		if err != nil {
			return err
		}
		po.Key = &key
	}
	res, err := stack.Propose(repo, po)
	if err != nil {
		return err
	}
	if opts.Out == "" || opts.Out == "-" {
		_, err := env.Stdout.Write(append(res.Doc, '\n'))
		return err
	}
	if err := writeOutputFile(env, "--out", absPath(env, opts.Out), append(res.Doc, '\n')); err != nil {
		return err
	}
	pp := res.Proposal
	out := stackProposeOutput{ProposalID: pp.ProposalID, Out: opts.Out, BaseRef: pp.BaseRef, WaveID: wave, DiffDigest: pp.DiffDigest,
		TouchedFiles: pp.TouchedFiles, RiskClass: pp.Risk.Class, IdempotencyKey: pp.IdempotencyKey, Signed: po.Key != nil}
	if opts.JSON {
		return writeJSON(env.Stdout, out)
	}
	if !opts.Quiet {
		fmt.Fprintf(env.Stdout, "proposal %s: %d file(s), risk %s (%d), %s -> %s\n", pp.ProposalID, len(pp.TouchedFiles), pp.Risk.Class, pp.Risk.Score,
			pp.DiffDigest[:19], opts.Out)
	}
	return nil
}
