package app

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"strings"

	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/dome-registry/dome/pkg/gitstore"
	"github.com/dome-registry/dome/pkg/gitstore/gitworktree"
	"github.com/dome-registry/dome/pkg/patch"
	"github.com/urfave/cli/v2"
)

type patchApplyOptions struct {
	Patches        []string
	Base           string
	ThreeWay       bool
	WriteConflicts bool
	Fuzz           int
	Strip          int
	MaxSize        int64
	Commit         string // ref to commit onto, "" for trees only
	Message        string
	JSON           bool
}

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
			return runPatchApply(c.Context, env, repo, patchApplyOptions{
				Patches: c.Args().Slice(), Base: c.String("base"), ThreeWay: c.Bool("three-way"), WriteConflicts: c.Bool("write-conflicts"),
				Fuzz: c.Int("fuzz"), Strip: stripArg(c), MaxSize: c.Int64("max-size"), Commit: c.String("commit"), Message: c.String("m"),
				JSON: globalBool(c, flagJSON),
			})
		},
		Description: help("patch_apply"),
	}
}

// commitWriter stores a commit: a repository, or a pack being written.
type commitWriter interface {
	WriteCommit(gitstore.CommitSpec) (gitstore.Hash, error)
}

type patchApplyResult struct {
	Source    string             `json:"source"`
	Subject   string             `json:"subject,omitempty"`
	Tree      string             `json:"tree,omitempty"`
	Commit    string             `json:"commit,omitempty"`
	Files     []patch.FileResult `json:"files"`
	Conflicts []patch.Conflict   `json:"conflicts,omitempty"`
}

type patchApplyOutput struct {
	Base    string             `json:"base"`
	Ref     string             `json:"ref,omitempty"`
	Results []patchApplyResult `json:"results"`
	// Worktrees had --commit's branch checked out and followed it.
	Worktrees []string `json:"worktrees,omitempty"`
}

// patchPackLimit bounds the new objects patch apply holds in memory before
// it writes them out as a pack.
const patchPackLimit = 16 << 20

func runPatchApply(_ context.Context, env *Env, repo *gitstore.Repo, opts patchApplyOptions) (err error) {
	if opts.WriteConflicts && !opts.ThreeWay {
		return usagef("--write-conflicts needs --three-way")
	}
	if opts.Fuzz < 0 {
		return usagef("--fuzz must not be negative")
	}
	ps, err := readPatches(env, opts.Patches, opts.Strip, opts.MaxSize)
	if err != nil {
		return err
	}
	var ref string
	var oldRef gitstore.Hash
	if opts.Commit != "" {
		ref = opts.Commit
		if !strings.HasPrefix(ref, "refs/") {
			ref = "refs/heads/" + ref
		}
		if err := gitstore.CheckRefName(ref); err != nil {
			return &errkind.InputError{Source: "--commit", Field: opts.Commit, Problem: err.Error()}
		}
		if h, err := repo.Ref(ref); err == nil {
			oldRef = h
		} else if !errors.Is(err, gitstore.ErrNotFound) {
			return err
		}
		for _, p := range ps {
			if opts.Message == "" && p.Header.Message() == "" {
				return usagef("%s has no commit message of its own: pass -m MSG", p.Source)
			}
		}
	} else if opts.Message != "" {
		return usagef("-m needs --commit REF")
	}
	rev := opts.Base
	if rev == "" {
		rev = "HEAD"
		if !oldRef.IsZero() {
			rev = ref
		}
	}
	baseCommit, baseTree, err := resolveBase(repo, "--base", rev)
	if err != nil {
		return err
	}
	if !oldRef.IsZero() && baseCommit != oldRef {
		return &errkind.InputError{Source: "--commit", Field: ref, Problem: fmt.Sprintf("%s is at %s; committing onto --base %s would rewrite it", ref, oldRef.Short(), baseCommit.Short()),
			Hint: "omit --base to build on the ref, or commit onto a new ref"}
	}
	// New objects go into one pack, written before the ref moves, before a
	// conflict is reported (its tree is printed) and on any other way out.
	store := patch.NewPackStore(repo)
	defer func() {
		if ferr := store.Flush(); ferr != nil && err == nil {
			err = ferr
		}
	}()
	out := patchApplyOutput{Base: baseCommit.String(), Ref: ref, Results: []patchApplyResult{}}
	cur, parent := patch.OID(baseTree), baseCommit
	var failure error
	for i, p := range ps {
		// The parsed patch is dropped once applied: memory follows the
		// patches still to apply plus the pack being written, not both whole.
		ps[i] = sourcedPatch{}
		res, err := patch.Apply(store, cur, p.Patch, patch.Options{ThreeWay: opts.ThreeWay, WriteConflicts: opts.WriteConflicts, Fuzz: opts.Fuzz})
		r := patchApplyResult{Source: p.Source, Subject: p.Header.Subject, Files: res.Files, Conflicts: res.Conflicts}
		var ce *patch.ConflictError
		if err != nil && !errors.As(err, &ce) {
			return namePatch(err, p.Source)
		}
		if ce != nil && res.Tree.IsZero() {
			out.Results = append(out.Results, r)
			failure = conflictError(p.Source, p.Patch, ce, "rebase the patch onto the base, or try --three-way")
			break
		}
		tree := res.Tree
		if tree.IsZero() {
			if tree, err = store.WriteTree(nil); err != nil {
				return err
			}
		}
		r.Tree = tree.String()
		if ce != nil {
			out.Results = append(out.Results, r)
			if !opts.JSON {
				fmt.Fprintln(env.Stdout, r.Tree)
			}
			failure = conflictError(p.Source, p.Patch, ce, "the tree "+r.Tree[:12]+" holds conflict markers; resolve them and apply again")
			break
		}
		cur = tree
		if ref != "" {
			c, err := commitPatch(env, store.Pack, p, opts.Message, tree, parent)
			if err != nil {
				return err
			}
			parent = c
			r.Commit = c.String()
		}
		out.Results = append(out.Results, r)
		if store.Pack.Pending() > patchPackLimit {
			if err := store.Flush(); err != nil {
				return err
			}
		}
		if !opts.JSON {
			if r.Commit != "" {
				fmt.Fprintf(env.Stdout, "%s %s\n", r.Tree, r.Commit)
			} else {
				fmt.Fprintln(env.Stdout, r.Tree)
			}
		}
	}
	if err := store.Flush(); err != nil {
		return err
	}
	if failure == nil && ref != "" {
		// A branch checked out in a worktree moves with its clean worktree,
		// or not at all (gitworktree.MoveBranch).
		move, err := gitworktree.PrepareBranchMove(repo, ref, oldRef, parent)
		if errors.Is(err, gitworktree.ErrWorktreeBusy) {
			return &errkind.InputError{Source: "--commit", Field: ref, Problem: err.Error(),
				Hint: "commit or stash the changes there (or move the untracked files away), or commit onto a branch that is not checked out"}
		}
		if err != nil {
			return err
		}
		if err := gitworktree.MoveBranch(repo, move); err != nil {
			if errors.Is(err, gitstore.ErrRefChanged) || errors.Is(err, gitstore.ErrRefExists) {
				return &errkind.CheckError{Problem: fmt.Sprintf("update %s: %v", ref, err), Hint: "the ref moved while the patches were applied; run again"}
			}
			return err
		}
		for _, wt := range move.Worktrees {
			out.Worktrees = append(out.Worktrees, wt.Dir)
			if !opts.JSON {
				fmt.Fprintf(env.Stderr, "dome: updated the worktree %s, where %s is checked out (it was clean)\n", wt.Dir, ref)
			}
		}
	}
	if opts.JSON {
		if err := writeJSON(env.Stdout, out); err != nil {
			return err
		}
	}
	return failure
}

func commitPatch(env *Env, w commitWriter, p sourcedPatch, message string, tree patch.OID, parent gitstore.Hash) (gitstore.Hash, error) {
	def, err := signature(env, "AUTHOR", "", "", "")
	if err != nil {
		return gitstore.ZeroHash, err
	}
	committer, err := signature(env, "COMMITTER", "", "", "")
	if err != nil {
		return gitstore.ZeroHash, err
	}
	spec, err := p.Commit(tree, parent, def, committer)
	if err != nil {
		return gitstore.ZeroHash, namePatch(err, p.Source)
	}
	if message != "" {
		spec.Message = message
		if !strings.HasSuffix(message, "\n") {
			spec.Message += "\n"
		}
	}
	c, err := w.WriteCommit(spec)
	if err != nil {
		return gitstore.ZeroHash, fmt.Errorf("write commit: %w", err)
	}
	return c, nil
}
