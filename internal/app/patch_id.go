package app

import (
	"fmt"

	"github.com/dome-registry/dome/internal/patchcmd"
	"github.com/dome-registry/dome/pkg/patch"
	"github.com/urfave/cli/v2"
)

type patchIDOptions struct {
	Patches []string
	MaxSize int64
	JSON    bool
}

func newPatchIDCommand(env *Env) *cli.Command {
	return &cli.Command{
		Name:      "id",
		Usage:     "print the stable patch id of every patch (equal to git patch-id --stable): <patch-id> <commit-id>",
		ArgsUsage: "[PATCH...] (default: standard input)",
		Flags:     withGlobal(patchMaxSizeFlag()),
		Action: func(c *cli.Context) error {
			return runPatchID(env, patchIDOptions{Patches: c.Args().Slice(), MaxSize: c.Int64("max-size"), JSON: globalBool(c, flagJSON)})
		},
		Description: help("patch_id"),
	}
}

type patchIDResult struct {
	Source  string `json:"source"`
	PatchID string `json:"patch_id"`
	Commit  string `json:"commit"`
}

func runPatchID(env *Env, opts patchIDOptions) error {
	names := opts.Patches
	if len(names) == 0 {
		names = []string{"-"}
	}
	results := []patchIDResult{}
	for _, n := range names {
		data, err := patchcmd.ReadInput(env.patch(), n, opts.MaxSize)
		if err != nil {
			return err
		}
		src := n
		if n == "-" {
			src = "stdin"
		}
		for _, id := range patch.PatchIDs(data) {
			results = append(results, patchIDResult{Source: src, PatchID: id.ID.String(), Commit: id.Commit.String()})
		}
	}
	if opts.JSON {
		return writeJSON(env.Stdout, results)
	}
	for _, r := range results {
		fmt.Fprintf(env.Stdout, "%s %s\n", r.PatchID, r.Commit)
	}
	return nil
}
