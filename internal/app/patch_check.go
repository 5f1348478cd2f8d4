package app

import (
	"context"
	"errors"
	"fmt"

	"github.com/dome-registry/dome/internal/patchcmd"
	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/dome-registry/dome/pkg/gitstore"
	"github.com/dome-registry/dome/pkg/patch"
	"github.com/urfave/cli/v2"
)

type patchCheckOptions struct {
	Patches  []string
	Base     string
	ThreeWay bool
	Fuzz     int
	Strip    int
	MaxSize  int64
	JSON     bool
	Quiet    bool
}

func newPatchCheckCommand(env *Env) *cli.Command {
	return &cli.Command{
		Name:      "check",
		Usage:     "check that patches apply in order to a commit's tree, writing nothing",
		ArgsUsage: "PATCH... (- for standard input)",
		Flags:     withGlobal(patchApplyFlags()...),
		Action: func(c *cli.Context) error {
			repo, err := openRepo(c.Context, env, c)
			if err != nil {
				return err
			}
			defer repo.Close()
			return runPatchCheck(c.Context, env, repo, patchCheckOptions{
				Patches: c.Args().Slice(), Base: c.String("base"), ThreeWay: c.Bool("three-way"), Fuzz: c.Int("fuzz"),
				Strip: stripArg(c), MaxSize: c.Int64("max-size"), JSON: globalBool(c, flagJSON), Quiet: globalBool(c, flagQuiet),
			})
		},
		Description: help("patch_check"),
	}
}

type patchCheckResult struct {
	Source    string             `json:"source"`
	Subject   string             `json:"subject,omitempty"`
	Applies   bool               `json:"applies"`
	Tree      string             `json:"tree,omitempty"`
	Files     []patch.FileResult `json:"files"`
	Conflicts []patch.Conflict   `json:"conflicts,omitempty"`
}

func runPatchCheck(_ context.Context, env *Env, repo *gitstore.Repo, opts patchCheckOptions) error {
	if opts.Fuzz < 0 {
		return usagef("--fuzz must not be negative")
	}
	ps, err := patchcmd.ReadPatches(env.patch(), opts.Patches, opts.Strip, opts.MaxSize)
	if err != nil {
		return err
	}
	rev := opts.Base
	if rev == "" {
		rev = "HEAD"
	}
	baseCommit, baseTree, err := patchcmd.ResolveBase(repo, "--base", rev)
	if err != nil {
		return err
	}
	// Writes stay in memory: check never adds objects to the repository.
	store := patch.NewMemStore(patch.NewRepoStore(repo))
	cur := patch.OID(baseTree)
	var results []patchCheckResult
	var details []string
	for _, p := range ps {
		res, err := patch.Apply(store, cur, p.Patch, patch.Options{ThreeWay: opts.ThreeWay, Fuzz: opts.Fuzz})
		r := patchCheckResult{Source: p.Source, Subject: p.Header.Subject, Files: res.Files, Conflicts: res.Conflicts}
		var ce *patch.ConflictError
		if err != nil && !errors.As(err, &ce) {
			return patchcmd.NamePatch(err, p.Source)
		}
		if ce == nil {
			r.Applies = true
			cur = res.Tree
			r.Tree = cur.String()
		}
		results = append(results, r)
		if ce != nil {
			for _, c := range ce.Conflicts {
				details = append(details, p.Source+": "+c.String())
			}
			break // later patches build on this one
		}
	}
	if opts.JSON {
		if err := writeJSON(env.Stdout, map[string]any{"base": baseCommit.String(), "results": results}); err != nil {
			return err
		}
	} else if !opts.Quiet {
		for _, r := range results {
			state := "applies"
			if !r.Applies {
				state = "does not apply"
			}
			fmt.Fprintf(env.Stdout, "%s\t%s\t%s\n", r.Source, orDash(r.Subject), state)
		}
	}
	if len(details) > 0 {
		return &errkind.CheckError{Problem: fmt.Sprintf("patch does not apply to %s", baseCommit.Short()), Details: details,
			Hint: "rebase the patch onto the base, or try --three-way"}
	}
	return nil
}
