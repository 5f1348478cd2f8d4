package app

import (
	"fmt"
	"strings"

	"github.com/dome-registry/dome/internal/patchcmd"
	"github.com/dome-registry/dome/pkg/patch"
	"github.com/urfave/cli/v2"
)

type patchOverlapOptions struct {
	A, B    string
	Strip   int
	MaxSize int64
	JSON    bool
	Quiet   bool
}

func newPatchOverlapCommand(env *Env) *cli.Command {
	return &cli.Command{
		Name:      "overlap",
		Usage:     "tell whether two patches overlap (same file and intersecting hunk ranges, or equal context with different edits); exit 1 when they do",
		ArgsUsage: "A.patch B.patch",
		Flags:     withGlobal(patchStripFlag(), patchMaxSizeFlag()),
		Action: func(c *cli.Context) error {
			if c.NArg() != 2 {
				return usagef("patch overlap takes exactly two patch files")
			}
			return runPatchOverlap(env, patchOverlapOptions{A: c.Args().Get(0), B: c.Args().Get(1), Strip: stripArg(c), MaxSize: c.Int64("max-size"),
				JSON: globalBool(c, flagJSON), Quiet: globalBool(c, flagQuiet)})
		},
		Description: help("patch_overlap"),
	}
}

// mergedPatch reads one input as a single change (all its messages).
func mergedPatch(env *Env, name string, strip int, max int64) (*patch.Patch, error) {
	ps, err := patchcmd.ReadPatches(env.patch(), []string{name}, strip, max)
	if err != nil {
		return nil, err
	}
	m := &patch.Patch{}
	for _, p := range ps {
		m.Files = append(m.Files, p.Files...)
	}
	return m, nil
}

func runPatchOverlap(env *Env, opts patchOverlapOptions) error {
	a, err := mergedPatch(env, opts.A, opts.Strip, opts.MaxSize)
	if err != nil {
		return err
	}
	b, err := mergedPatch(env, opts.B, opts.Strip, opts.MaxSize)
	if err != nil {
		return err
	}
	ov := patch.ComputeOverlap(a, b, patch.Fingerprints(a, ""), patch.Fingerprints(b, ""))
	if opts.JSON {
		if err := writeJSON(env.Stdout, ov); err != nil {
			return err
		}
	} else if !opts.Quiet {
		fmt.Fprintf(env.Stdout, "files both touch: %s\n", orDash(strings.Join(ov.Files, ", ")))
		if !ov.Overlaps {
			fmt.Fprintln(env.Stdout, "no overlap")
		}
		w := table(env.Stdout)
		for _, h := range ov.Hunks {
			fmt.Fprintf(w, "overlap\t%s\tA hunk %d %s\tB hunk %d %s\t%s\n", h.Path, h.HunkA, rangeText(h.RangeA), h.HunkB, rangeText(h.RangeB), h.Reason)
		}
		w.Flush()
	}
	if ov.Overlaps {
		return silentError{code: ExitCheck}
	}
	return nil
}

func rangeText(r *patch.Range) string {
	if r == nil {
		return "(whole file)"
	}
	if r.End < r.Start {
		return fmt.Sprintf("(insert after line %d)", r.End)
	}
	return fmt.Sprintf("(lines %d-%d)", r.Start, r.End)
}
