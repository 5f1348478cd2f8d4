package patchcmd

import (
	"errors"
	"fmt"
	"strings"

	"github.com/dome-registry/dome/internal/readcmd"
	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/dome-registry/dome/pkg/gitstore"
	"github.com/dome-registry/dome/pkg/patch"
)

// ApplyOptions are dome patch apply's flags and arguments.
type ApplyOptions struct {
	Patches        []string
	Base           string
	ThreeWay       bool
	WriteConflicts bool
	Fuzz           int
	Strip          int // -1: -p as not given
	MaxSize        int64
	Commit         string // ref to commit onto, "" for trees only
	Message        string
	JSON           bool
}

// MoveBranch moves ref from old to new once every object is stored, by
// compare-and-swap (gitstore.ErrRefChanged, ErrRefExists when it moved
// meanwhile), and returns the worktrees it updated because they had ref
// checked out.
type MoveBranch func(repo *gitstore.Repo, ref string, old, new gitstore.Hash) (worktrees []string, err error)

// MoveUnchecked is a MoveBranch for a ref that no worktree has checked
// out: it refuses one that does (updating a worktree is the full command
// set's, gitworktree.MoveBranch).
func MoveUnchecked(repo *gitstore.Repo, ref string, old, new gitstore.Hash) ([]string, error) {
	wts, err := repo.CheckedOut(ref)
	if err != nil {
		return nil, err
	}
	if len(wts) > 0 {
		return nil, &errkind.CheckError{Problem: fmt.Sprintf("%s was checked out in %s while the patches were applied; it did not move", ref, wts[0].Dir), Hint: "run again"}
	}
	return nil, repo.UpdateRef(ref, new, old)
}

type applyResult struct {
	Source    string             `json:"source"`
	Subject   string             `json:"subject,omitempty"`
	Tree      string             `json:"tree,omitempty"`
	Commit    string             `json:"commit,omitempty"`
	Files     []patch.FileResult `json:"files"`
	Conflicts []patch.Conflict   `json:"conflicts,omitempty"`
}

type applyOutput struct {
	Base    string        `json:"base"`
	Ref     string        `json:"ref,omitempty"`
	Results []applyResult `json:"results"`
	// Worktrees had --commit's branch checked out and followed it.
	Worktrees []string `json:"worktrees,omitempty"`
}

// packLimit bounds the new objects patch apply holds in memory before it
// writes them out as a pack.
const packLimit = 16 << 20

// CommitRef is the ref --commit names: a name outside refs/ is a branch.
func CommitRef(commit string) string {
	if commit != "" && !strings.HasPrefix(commit, "refs/") {
		return "refs/heads/" + commit
	}
	return commit
}

// Series is a series Scan accepted, to apply.
type Series struct {
	env  *Env
	opts ApplyOptions
	// stdin holds what each "-" input read: standard input can be read
	// only once (a second "-" reads what the first left: nothing).
	stdin map[int][]byte
}

// Scan checks the options and reads and parses every patch, keeping none
// (but standard input's bytes): what would stop the series before its
// first patch (bad usage, a file it cannot read or parse, a patch with no
// message to commit) stops it here, before anything is printed or stored.
// Series.Apply reads the patch files again, one input at a time, so that
// memory follows one input and not the whole series.
func Scan(env *Env, opts ApplyOptions) (*Series, error) {
	if opts.WriteConflicts && !opts.ThreeWay {
		return nil, readcmd.Usagef("--write-conflicts needs --three-way")
	}
	if opts.Fuzz < 0 {
		return nil, readcmd.Usagef("--fuzz must not be negative")
	}
	if len(opts.Patches) == 0 {
		return nil, noInputs()
	}
	s := &Series{env: env, opts: opts}
	var noMessage string
	for i := range opts.Patches {
		ps, err := s.read(i)
		if err != nil {
			return nil, err
		}
		for _, p := range ps {
			if noMessage == "" && p.Header.Message() == "" {
				noMessage = p.Source
			}
		}
	}
	if opts.Commit != "" {
		if err := gitstore.CheckRefName(CommitRef(opts.Commit)); err != nil {
			return nil, &errkind.InputError{Source: "--commit", Field: opts.Commit, Problem: err.Error()}
		}
		if opts.Message == "" && noMessage != "" {
			return nil, readcmd.Usagef("%s has no commit message of its own: pass -m MSG", noMessage)
		}
	} else if opts.Message != "" {
		return nil, readcmd.Usagef("-m needs --commit REF")
	}
	return s, nil
}

// read reads and parses input i of the series.
func (s *Series) read(i int) ([]Sourced, error) {
	name := s.opts.Patches[i]
	if name != "-" {
		return ReadInputPatches(s.env, name, s.opts.Strip, s.opts.MaxSize)
	}
	data, ok := s.stdin[i]
	if !ok {
		var err error
		if data, err = ReadInput(s.env, name, s.opts.MaxSize); err != nil {
			return nil, err
		}
		if s.stdin == nil {
			s.stdin = map[int][]byte{}
		}
		s.stdin[i] = data
	}
	return ParseInput(data, name, s.opts.Strip, s.opts.MaxSize)
}

// Apply is dome patch apply: Scan, then Series.Apply.
func Apply(env *Env, repo *gitstore.Repo, opts ApplyOptions, move MoveBranch) error {
	s, err := Scan(env, opts)
	if err != nil {
		return err
	}
	return s.Apply(repo, move)
}

// Apply applies the series, in order, each patch onto the tree the one
// before made, printing each resulting tree (and commit); with --commit it
// commits each and moves the ref (by move) when all applied.
func (s *Series) Apply(repo *gitstore.Repo, move MoveBranch) (err error) {
	env, opts := s.env, s.opts
	ref := CommitRef(opts.Commit)
	var oldRef gitstore.Hash
	if ref != "" {
		if h, err := repo.Ref(ref); err == nil {
			oldRef = h
		} else if !errors.Is(err, gitstore.ErrNotFound) {
			return err
		}
	}
	rev := opts.Base
	if rev == "" {
		rev = "HEAD"
		if !oldRef.IsZero() {
			rev = ref
		}
	}
	baseCommit, baseTree, err := ResolveBase(repo, "--base", rev)
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
	out := applyOutput{Base: baseCommit.String(), Ref: ref, Results: []applyResult{}}
	st := &stacking{env: env, store: store, opts: opts, ref: ref, tree: patch.OID(baseTree), parent: baseCommit}
	var failure error
inputs:
	for in := range opts.Patches {
		ps, err := s.read(in)
		if err != nil {
			return err // changed since Scan read it
		}
		for i, p := range ps {
			// The parsed patch is dropped once applied: memory follows the
			// input being applied plus the pack being written.
			ps[i] = Sourced{}
			r, f, err := st.apply(p)
			if err != nil {
				return err
			}
			if opts.JSON {
				out.Results = append(out.Results, r) // only --json prints them
			} else if r.Tree != "" {
				if r.Commit != "" {
					fmt.Fprintf(env.Stdout, "%s %s\n", r.Tree, r.Commit)
				} else {
					fmt.Fprintln(env.Stdout, r.Tree)
				}
			}
			if failure = f; failure != nil {
				break inputs
			}
			if store.Pack.Pending() > packLimit {
				if err := store.Flush(); err != nil {
					return err
				}
			}
		}
	}
	if err := store.Flush(); err != nil {
		return err
	}
	if failure == nil && ref != "" {
		wts, err := move(repo, ref, oldRef, st.parent)
		if err != nil {
			if errors.Is(err, gitstore.ErrRefChanged) || errors.Is(err, gitstore.ErrRefExists) {
				return &errkind.CheckError{Problem: fmt.Sprintf("update %s: %v", ref, err), Hint: "the ref moved while the patches were applied; run again"}
			}
			return err
		}
		for _, wt := range wts {
			out.Worktrees = append(out.Worktrees, wt)
			if !opts.JSON {
				fmt.Fprintf(env.Stderr, "dome: updated the worktree %s, where %s is checked out (it was clean)\n", wt, ref)
			}
		}
	}
	if opts.JSON {
		if err := readcmd.WriteJSON(env.Stdout, out); err != nil {
			return err
		}
	}
	return failure
}

// stacking is a series being applied: each patch onto the tree the one
// before made, each commit onto the one before.
type stacking struct {
	env    *Env
	store  *patch.RepoStore
	opts   ApplyOptions
	ref    string // "": trees only
	tree   patch.OID
	parent gitstore.Hash
}

// apply applies p (and commits it when there is a ref); failure is the
// conflict that ends the series, whose result has a tree when the merge
// wrote one with conflict markers.
func (st *stacking) apply(p Sourced) (r applyResult, failure, err error) {
	opts := st.opts
	res, err := patch.Apply(st.store, st.tree, p.Patch, patch.Options{ThreeWay: opts.ThreeWay, WriteConflicts: opts.WriteConflicts, Fuzz: opts.Fuzz})
	r = applyResult{Source: p.Source, Subject: p.Header.Subject, Files: res.Files, Conflicts: res.Conflicts}
	var ce *patch.ConflictError
	if err != nil && !errors.As(err, &ce) {
		return r, nil, NamePatch(err, p.Source)
	}
	if ce != nil && res.Tree.IsZero() {
		return r, ConflictError(p.Source, p.Patch, ce, "rebase the patch onto the base, or try --three-way"), nil
	}
	tree := res.Tree
	if tree.IsZero() {
		if tree, err = st.store.WriteTree(nil); err != nil {
			return r, nil, err
		}
	}
	r.Tree = tree.String()
	if ce != nil {
		return r, ConflictError(p.Source, p.Patch, ce, "the tree "+r.Tree[:12]+" holds conflict markers; resolve them and apply again"), nil
	}
	if st.ref != "" {
		c, err := CommitPatch(st.env, st.store.Pack, p, opts.Message, tree, st.parent)
		if err != nil {
			return r, nil, err
		}
		st.parent = c
		r.Commit = c.String()
	}
	st.tree = tree
	return r, nil, nil
}

// commitWriter stores a commit: a repository, or a pack being written.
type commitWriter interface {
	WriteCommit(gitstore.CommitSpec) (gitstore.Hash, error)
}

// CommitPatch writes the commit of patch p with tree onto parent: the
// patch's author (else GIT_AUTHOR_*), the committer from GIT_COMMITTER_*,
// and message (else the patch's own).
func CommitPatch(env *Env, w commitWriter, p Sourced, message string, tree patch.OID, parent gitstore.Hash) (gitstore.Hash, error) {
	def, err := Signature(env, "AUTHOR", "", "", "")
	if err != nil {
		return gitstore.ZeroHash, err
	}
	committer, err := Signature(env, "COMMITTER", "", "", "")
	if err != nil {
		return gitstore.ZeroHash, err
	}
	spec, err := p.Commit(tree, parent, def, committer)
	if err != nil {
		return gitstore.ZeroHash, NamePatch(err, p.Source)
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
