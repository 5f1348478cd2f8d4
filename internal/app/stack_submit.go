package app

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/dome-registry/dome/pkg/gitstore"
	"github.com/dome-registry/dome/pkg/readlimit"
	"github.com/dome-registry/dome/pkg/signing"
	"github.com/dome-registry/dome/pkg/stack"
	"github.com/urfave/cli/v2"
)

type stackSubmitOptions struct {
	Proposals        []string
	Trusted          string
	RequireSignature bool
	CreatedAt        string
	JSON, Quiet      bool
}

func newStackSubmitCommand(env *Env) *cli.Command {
	return &cli.Command{
		Name:      "submit",
		Usage:     "verify proposals (run, wave, base, diff digest, touched files, fingerprints, signature), pre-filter them with the stack policy, apply-check them on the base and record each decision",
		ArgsUsage: "PROPOSAL... (files written by dome stack propose; - for standard input)",
		Flags: withGlobal(stackRunFlag(), stackOpsFlag(), stackPolicyFlag(), createdAtFlag(),
			&cli.StringFlag{Name: "trusted", Usage: "trusted worker keys `FILE` (default: the policy's signatures.trusted_keys)"},
			&cli.BoolFlag{Name: "require-signature", Usage: "refuse unsigned proposals (also when the policy says so)"},
		),
		Action: func(c *cli.Context) error {
			repo, policy, err := openStack(env, c)
			if err != nil {
				return err
			}
			defer repo.Close()
			return runStackSubmit(c.Context, env, repo, stackLayout(env, c, repo), policy, stackSubmitOptions{
				Proposals: c.Args().Slice(), Trusted: c.String("trusted"), RequireSignature: c.Bool("require-signature"),
				CreatedAt: c.String("created-at"), JSON: globalBool(c, flagJSON), Quiet: globalBool(c, flagQuiet),
			})
		},
		Description: help("stack_submit"),
	}
}

type stackSubmitOutput struct {
	RunID    string                `json:"run_id"`
	WaveID   string                `json:"wave_id"`
	Outcomes []stack.SubmitOutcome `json:"outcomes"`
}

func runStackSubmit(_ context.Context, env *Env, repo *gitstore.Repo, l stack.Layout, policy *stack.Policy, opts stackSubmitOptions) error {
	if len(opts.Proposals) == 0 {
		return usagef("name at least one proposal file (or - for standard input)")
	}
	at, err := createdAt(env, opts.CreatedAt)
	if err != nil {
		return err
	}
	var trusted *signing.TrustedKeys
	keysFile, keysSource := opts.Trusted, "--trusted"
	if keysFile == "" && policy.Signatures.TrustedKeys != "" {
		keysFile, keysSource = filepath.Join(repo.Path(), filepath.FromSlash(policy.Signatures.TrustedKeys)), "policy signatures.trusted_keys"
	} else if keysFile != "" {
		keysFile = absPath(env, keysFile)
	}
	if keysFile != "" {
		data, err := readlimit.ReadFile(keysFile, readlimit.KeySet)
		if err != nil {
			return &errkind.InputError{Source: keysSource, Field: keysFile, Problem: "cannot read the trusted keys: " + pathErr(err)}
		}
		if trusted, err = stack.LoadTrustedKeys(keysFile, data); err != nil {
			return err
		}
	}
	// Read every input before taking the lock.
	docs := make([][]byte, len(opts.Proposals))
	for i, p := range opts.Proposals {
		if docs[i], err = readInputFile(env, p, readlimit.Proposal); err != nil {
			return err
		}
	}
	run, err := openRun(env, l)
	if err != nil {
		return err
	}
	defer run.Close()
	run.DeferState() // one state.json write for the whole batch
	out := stackSubmitOutput{RunID: l.RunID, WaveID: run.State.WaveID, Outcomes: []stack.SubmitOutcome{}}
	rejected := 0
	for i, p := range opts.Proposals {
		o, err := run.Submit(repo, sourceName(p), docs[i], stack.SubmitOptions{Policy: policy, Trusted: trusted, RequireSignature: opts.RequireSignature, At: at})
		if err != nil {
			return err
		}
		if o.Outcome == stack.OutcomeRejected {
			rejected++
		}
		out.Outcomes = append(out.Outcomes, o)
		if !opts.JSON && !opts.Quiet {
			printSubmitOutcome(env, o)
		}
	}
	if err := run.FlushState(); err != nil {
		return err
	}
	if opts.JSON {
		if err := writeJSON(env.Stdout, out); err != nil {
			return err
		}
	}
	if rejected > 0 {
		return &errkind.CheckError{Problem: fmt.Sprintf("%d of %d proposal(s) rejected", rejected, len(opts.Proposals)),
			Hint: "dome stack status --run " + l.RunID + " lists the rejections and their reason codes"}
	}
	return nil
}

func printSubmitOutcome(env *Env, o stack.SubmitOutcome) {
	id := o.ProposalID
	if id == "" {
		id = "(no proposal id)"
	}
	switch o.Outcome {
	case stack.OutcomeAccepted:
		fmt.Fprintf(env.Stdout, "accepted   %s  %s  risk %s\n", id, o.Source, o.RiskClass)
	case stack.OutcomeDuplicate:
		fmt.Fprintf(env.Stdout, "duplicate  %s  %s  %s\n", id, o.Source, o.Detail)
	default:
		fmt.Fprintf(env.Stdout, "rejected   %s  %s  %s/%s: %s\n", id, o.Source, o.ReasonClass, o.ReasonCode, o.Detail)
	}
}
