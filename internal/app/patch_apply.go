package app

import (
	"errors"
	"runtime/debug"

	"github.com/dome-registry/dome/internal/patchcmd"
	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/dome-registry/dome/pkg/gitstore"
	"github.com/dome-registry/dome/pkg/gitstore/gitworktree"
	"github.com/urfave/cli/v2"
)

func newPatchApplyCommand(env *Env) *cli.Command {
	return &cli.Command{
		Name:      "apply",
		Usage:     "apply patches in order to a commit's tree in the object store; print each resulting tree (and commit)",
		ArgsUsage: "PATCH... (- for standard input)",
		Flags: withGlobal(append(patchApplyFlags(),
			&cli.BoolFlag{Name: "write-conflicts", Usage: "with --three-way: write the merged tree with conflict markers (still exit 1)"},
			&cli.StringFlag{Name: "commit", Usage: "commit each patch onto `REF` (compare-and-swap when done)"},
			&cli.StringFlag{Name: "m", Aliases: []string{"message"}, Usage: "commit message `MSG` (default: the patch's own subject and body)"},
		)...),
		Action: func(c *cli.Context) error {
			// A series makes garbage at the pace of its patches' files:
			// dome's default GOGC=400 (app.go) would let the heap grow to
			// five times what is live.
			if env.Getenv("GOGC") == "" {
				defer debug.SetGCPercent(debug.SetGCPercent(100))
			}
			repo, err := openRepo(c.Context, env, c)
			if err != nil {
				return err
			}
			defer repo.Close()
			return patchcmd.Apply(env.patch(), repo, patchcmd.ApplyOptions{
				Patches: c.Args().Slice(), Base: c.String("base"), ThreeWay: c.Bool("three-way"), WriteConflicts: c.Bool("write-conflicts"),
				Fuzz: c.Int("fuzz"), Strip: stripArg(c), MaxSize: c.Int64("max-size"), Commit: c.String("commit"), Message: c.String("m"),
				JSON: globalBool(c, flagJSON),
			}, moveBranch)
		},
		Description: help("patch_apply"),
	}
}

// moveBranch moves a branch with the worktrees that have it checked out
// (gitworktree.MoveBranch), or not at all.
func moveBranch(repo *gitstore.Repo, ref string, old, new gitstore.Hash) ([]string, error) {
	move, err := gitworktree.PrepareBranchMove(repo, ref, old, new)
	if errors.Is(err, gitworktree.ErrWorktreeBusy) {
		return nil, &errkind.InputError{Source: "--commit", Field: ref, Problem: err.Error(),
			Hint: "commit or stash the changes there (or move the untracked files away), or commit onto a branch that is not checked out"}
	}
	if err != nil {
		return nil, err
	}
	if err := gitworktree.MoveBranch(repo, move); err != nil {
		return nil, err
	}
	var dirs []string
	for _, wt := range move.Worktrees {
		dirs = append(dirs, wt.Dir)
	}
	return dirs, nil
}
