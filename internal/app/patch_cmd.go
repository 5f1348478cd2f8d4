package app

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/dome-registry/dome/pkg/gitstore"
	"github.com/dome-registry/dome/pkg/patch"
	"github.com/dome-registry/dome/pkg/readlimit"
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

// sourcedPatch is one patch (one message) read from one input.
type sourcedPatch struct {
	Source string
	*patch.Patch
}

// readInput reads a patch file ("-" is stdin) within max bytes.
func readInput(env *Env, name string, max int64) ([]byte, error) {
	var data []byte
	var err error
	if name == "-" {
		data, err = readlimit.ReadAll(env.Stdin, max)
	} else {
		p := name
		if !filepath.IsAbs(p) {
			p = filepath.Join(env.WorkDir, p)
		}
		data, err = readlimit.ReadFile(p, max)
	}
	if _, ok := readlimit.IsTooLarge(err); ok {
		return nil, &errkind.InputError{Source: name, Problem: "patch is over the limit of " + readlimit.Size(max), Hint: "split the patch or raise --max-size"}
	}
	if err != nil {
		return nil, &errkind.InputError{Source: name, Problem: "cannot read the patch: " + pathErr(err), Err: err}
	}
	return data, nil
}

// readPatches reads and parses every input in order; strip -1 is the
// default -p1 that a plain diff's names may turn into -p0 (stripArg).
func readPatches(env *Env, names []string, strip int, max int64) ([]sourcedPatch, error) {
	if len(names) == 0 {
		return nil, usagef("name at least one patch file (or - for standard input)")
	}
	var out []sourcedPatch
	for _, n := range names {
		data, err := readInput(env, n, max)
		if err != nil {
			return nil, err
		}
		src := n
		if n == "-" {
			src = "stdin"
		}
		opts := patch.ParseOptions{Source: src, Strip: strip, MaxBytes: max}
		if strip < 0 {
			opts.Strip, opts.GuessStrip = patch.DefaultStrip, true
		}
		ps, err := patch.Parse(data, opts)
		if err != nil {
			return nil, err
		}
		for _, p := range ps {
			out = append(out, sourcedPatch{Source: src, Patch: p})
		}
	}
	return out, nil
}

// resolveBase resolves rev to a commit and its tree.
func resolveBase(repo *gitstore.Repo, flag, rev string) (gitstore.Hash, gitstore.Hash, error) {
	c, err := repo.ResolveCommit(rev)
	if err != nil {
		return gitstore.ZeroHash, gitstore.ZeroHash, &errkind.InputError{Source: flag, Field: rev, Problem: err.Error(), Err: err,
			Hint: "name a commit: a full or short SHA, a branch, a tag or HEAD"}
	}
	t, err := repo.CommitTree(c)
	if err != nil {
		return gitstore.ZeroHash, gitstore.ZeroHash, fmt.Errorf("read commit %s: %w", c, err)
	}
	return c, t, nil
}

// conflictError turns a patch.ConflictError into the check error dome reports.
func conflictError(src string, p *patch.Patch, ce *patch.ConflictError, hint string) error {
	var details []string
	for _, c := range ce.Conflicts {
		details = append(details, c.String())
	}
	what := src
	if p.Header.Subject != "" {
		what += " (" + p.Header.Subject + ")"
	}
	return &errkind.CheckError{Problem: fmt.Sprintf("%s does not apply: %d conflict(s)", what, len(ce.Conflicts)), Details: details, Hint: hint}
}

// signature builds a commit identity from the patch (author) or the GIT_*
// environment, falling back to "dome" and env.Now.
func signature(env *Env, who string, name, email, date string) (gitstore.Signature, error) {
	if v := env.Getenv("GIT_" + who + "_NAME"); name == "" && v != "" {
		name = v
	}
	if v := env.Getenv("GIT_" + who + "_EMAIL"); email == "" && v != "" {
		email = v
	}
	if name == "" {
		name = "dome"
	}
	if email == "" {
		email = "dome@localhost"
	}
	if date == "" {
		date = env.Getenv("GIT_" + who + "_DATE")
	}
	when := env.Now()
	if date != "" {
		t, err := patch.ParseDate(date)
		if err != nil {
			return gitstore.Signature{}, &errkind.InputError{Source: "GIT_" + who + "_DATE", Field: date, Problem: err.Error(), Hint: "use RFC 3339, RFC 2822 or @<unix seconds> [+zone]"}
		}
		when = t
	}
	return gitstore.Signature{Name: name, Email: email, When: when}, nil
}

// namePatch puts the patch file's name on an input error from the engine.
func namePatch(err error, source string) error {
	var ie *errkind.InputError
	if errors.As(err, &ie) && ie.Source == "patch" {
		ie.Source = source
	}
	return err
}
