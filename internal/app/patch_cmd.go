package app

import (
	"github.com/dome-registry/dome/internal/patchcmd"
	"github.com/dome-registry/dome/internal/readcmd"
	"github.com/dome-registry/dome/pkg/patch"
	"github.com/urfave/cli/v2"
)

func newPatchCommand(env *Env) *cli.Command {
	return &cli.Command{
		Name:  "patch",
		Usage: "parse, check and apply git diffs (and plain diff -u output) straight to the object store; patch ids, fingerprints, overlap",
		Subcommands: []*cli.Command{
			newPatchApplyCommand(env),
			newPatchCheckCommand(env),
			newPatchIDCommand(env),
			newPatchFingerprintsCommand(env),
			newPatchOverlapCommand(env),
		},
		Description: help("patch"),
	}
}

// Flags shared by the patch commands.
func patchStripFlag() cli.Flag {
	return &cli.IntFlag{Name: "p", Value: patch.DefaultStrip, Usage: "strip `N` leading path components (as git apply -p; default 1, or 0 for a plain diff -u of names without a /)"}
}

// stripArg is -p as given, or -1 when it was not: then a plain diff whose
// names have no "/" is read with -p0, as git apply guesses.
func stripArg(c *cli.Context) int {
	if !c.IsSet("p") {
		return -1
	}
	return c.Int("p")
}

func patchMaxSizeFlag() cli.Flag {
	return &cli.Int64Flag{Name: "max-size", Value: patch.DefaultMaxBytes, Usage: "refuse patch files larger than `BYTES`"}
}

func patchApplyFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "base", Usage: "apply onto the tree of commit `REV` (default: the --commit ref if it exists, else HEAD)"},
		&cli.BoolFlag{Name: "three-way", Aliases: []string{"3"}, Usage: "merge as git apply --3way: the patch applied to the preimage blob its index line names, merged onto the current file (hunks applied directly only when there is no preimage)"},
		&cli.IntFlag{Name: "fuzz", Usage: "let hunks apply with up to `N` context lines ignored at each end"},
		patchStripFlag(),
		patchMaxSizeFlag(),
	}
}

// patch is env as the patch commands (internal/patchcmd) take it.
func (e *Env) patch() *patchcmd.Env {
	return &readcmd.Env{Stdin: e.Stdin, Stdout: e.Stdout, Stderr: e.Stderr, Getenv: e.Getenv, Now: e.Now, WorkDir: e.WorkDir}
}
