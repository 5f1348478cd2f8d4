package gitworktree

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"

	"github.com/dome-registry/dome/pkg/gitstore"
)

// A branch can be checked out in a worktree: the repository's main worktree
// or a linked one (git worktree add). Moving such a branch with a plain ref
// update leaves the worktree's files and index at the old commit, which git
// then shows as staged changes undoing the move; git itself refuses to
// update a checked-out branch of a non-bare repository by default
// (receive.denyCurrentBranch). MoveBranch does what git's updateInstead
// does: it moves the branch and carries a clean worktree along, and refuses
// (ErrWorktreeBusy, before moving anything) when the worktree has changes
// to tracked files or untracked files the new commit would overwrite.

// ErrWorktreeBusy is returned (wrapped) when a checked-out branch cannot
// move because its worktree cannot follow.
var ErrWorktreeBusy = errors.New("the branch is checked out in a worktree that cannot follow")

// BranchMove is a checked move of a branch: from Old to New, carrying the
// worktrees that have it checked out.
type BranchMove struct {
	Ref       string
	Old, New  gitstore.Hash
	Worktrees []gitstore.Worktree
}

// PrepareBranchMove checks that ref can move from old to new: every worktree
// that has ref checked out must be clean (no changes to tracked files,
// staged or not) and hold no untracked file where new adds one. It changes
// nothing.
func PrepareBranchMove(r *gitstore.Repo, ref string, old, new gitstore.Hash) (*BranchMove, error) {
	wts, err := r.CheckedOut(ref)
	if err != nil {
		return nil, err
	}
	m := &BranchMove{Ref: ref, Old: old, New: new, Worktrees: wts}
	if len(wts) == 0 {
		return m, nil
	}
	added, err := addedPaths(r, old, new)
	if err != nil {
		return nil, err
	}
	for _, wt := range wts {
		if err := checkWorktreeFollows(wt, ref, added); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// addedPaths lists the files new has and old does not.
func addedPaths(r *gitstore.Repo, old, new gitstore.Hash) ([]string, error) {
	before := map[string]bool{}
	if !old.IsZero() {
		files, err := commitFiles(r, old)
		if err != nil {
			return nil, err
		}
		for _, f := range files {
			before[f] = true
		}
	}
	files, err := commitFiles(r, new)
	if err != nil {
		return nil, err
	}
	var added []string
	for _, f := range files {
		if !before[f] {
			added = append(added, f)
		}
	}
	return added, nil
}

func commitFiles(r *gitstore.Repo, c gitstore.Hash) ([]string, error) {
	tree, err := r.CommitTree(c)
	if err != nil {
		return nil, err
	}
	walked, err := r.Walk(tree)
	if err != nil {
		return nil, err
	}
	files := make([]string, len(walked))
	for i, f := range walked {
		files[i] = f.Path
	}
	return files, nil
}

func openWorktree(dir string) (*git.Worktree, error) {
	repo, err := git.PlainOpenWithOptions(dir, &git.PlainOpenOptions{EnableDotGitCommonDir: true})
	if err != nil {
		return nil, fmt.Errorf("open the worktree %s: %w", dir, err)
	}
	return repo.Worktree()
}

func checkWorktreeFollows(wt gitstore.Worktree, ref string, added []string) error {
	w, err := openWorktree(wt.Dir)
	if err != nil {
		return err
	}
	status, err := w.Status()
	if err != nil {
		return fmt.Errorf("status of the worktree %s: %w", wt.Dir, err)
	}
	var changed []string
	for path, s := range status {
		if s.Staging == git.Untracked && s.Worktree == git.Untracked {
			continue
		}
		if s.Staging != git.Unmodified || s.Worktree != git.Unmodified {
			changed = append(changed, path)
		}
	}
	if len(changed) > 0 {
		sort.Strings(changed)
		return fmt.Errorf("%s is checked out in %s, which has changes to tracked files (%s): %w", ref, wt.Dir, listSome(changed), ErrWorktreeBusy)
	}
	var inTheWay []string
	for _, p := range added {
		if _, err := os.Lstat(filepath.Join(wt.Dir, filepath.FromSlash(p))); err == nil {
			inTheWay = append(inTheWay, p)
		}
	}
	if len(inTheWay) > 0 {
		return fmt.Errorf("%s is checked out in %s, where untracked files would be overwritten (%s): %w", ref, wt.Dir, listSome(inTheWay), ErrWorktreeBusy)
	}
	return nil
}

func listSome(paths []string) string {
	if len(paths) > 5 {
		return strings.Join(paths[:5], ", ") + fmt.Sprintf(" and %d more", len(paths)-5)
	}
	return strings.Join(paths, ", ")
}

// MoveBranch moves the branch by compare-and-swap (UpdateRef) and brings
// every worktree that has it checked out to the new commit: the files that
// differ between the two commits are written (each through a temporary file
// and a rename) or removed, then the index is set to the new commit.
// Untracked files are never touched; PrepareBranchMove made sure nothing
// else is there to lose. When a worktree cannot be updated, the branch is
// moved back and the worktrees restored to the old commit.
func MoveBranch(r *gitstore.Repo, m *BranchMove) error {
	if err := r.UpdateRef(m.Ref, m.New, m.Old); err != nil {
		return err
	}
	for i, wt := range m.Worktrees {
		if err := checkoutWorktree(r, wt.Dir, m.Old, m.New); err != nil {
			undo := r.UpdateRef(m.Ref, m.Old, m.New)
			for _, done := range m.Worktrees[:i+1] {
				if undo == nil {
					undo = checkoutWorktree(r, done.Dir, m.New, m.Old)
				}
			}
			if undo != nil {
				return fmt.Errorf("update the worktree %s: %v; moving %s back to %s failed too: %v (see git -C %s status)", wt.Dir, err, m.Ref, m.Old.Short(), undo, wt.Dir)
			}
			return fmt.Errorf("update the worktree %s: %w (%s is back at %s)", wt.Dir, err, m.Ref, m.Old.Short())
		}
	}
	return nil
}

// checkoutWorktree turns a worktree holding commit from into one holding
// commit to: files, then index.
func checkoutWorktree(r *gitstore.Repo, dir string, from, to gitstore.Hash) error {
	before, err := commitFileMap(r, from)
	if err != nil {
		return err
	}
	after, err := commitFileMap(r, to)
	if err != nil {
		return err
	}
	paths := make([]string, 0, len(after))
	for p := range after {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		f := after[p]
		if old, ok := before[p]; ok && old.Hash == f.Hash && old.Mode == f.Mode {
			continue
		}
		if err := writeWorktreeFile(r, dir, f); err != nil {
			return err
		}
	}
	var gone []string
	for p := range before {
		if _, ok := after[p]; !ok {
			gone = append(gone, p)
		}
	}
	sort.Sort(sort.Reverse(sort.StringSlice(gone)))
	for _, p := range gone {
		full, err := worktreePath(dir, p)
		if err != nil {
			return err
		}
		if err := os.Remove(full); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
		// Remove the directories it leaves empty (os.Remove refuses others).
		for d := filepath.Dir(full); d != dir && strings.HasPrefix(d, dir); d = filepath.Dir(d) {
			if os.Remove(d) != nil {
				break
			}
		}
	}
	w, err := openWorktree(dir)
	if err != nil {
		return err
	}
	// A mixed reset sets the index to the commit and leaves files alone
	// (go-git's hard reset would also delete untracked files).
	return w.Reset(&git.ResetOptions{Commit: plumbing.Hash(to), Mode: git.MixedReset})
}

func commitFileMap(r *gitstore.Repo, c gitstore.Hash) (map[string]gitstore.File, error) {
	tree, err := r.CommitTree(c)
	if err != nil {
		return nil, err
	}
	files, err := r.Walk(tree)
	if err != nil {
		return nil, err
	}
	m := make(map[string]gitstore.File, len(files))
	for _, f := range files {
		m[f.Path] = f
	}
	return m, nil
}

// worktreePath joins a path from a tree to the worktree directory, refusing
// any that would leave it or enter .git.
func worktreePath(dir, p string) (string, error) {
	for _, part := range strings.Split(p, "/") {
		if part == "" || part == "." || part == ".." || strings.EqualFold(part, ".git") {
			return "", fmt.Errorf("tree path %q cannot be written into a worktree", p)
		}
	}
	return filepath.Join(dir, filepath.FromSlash(p)), nil
}

func writeWorktreeFile(r *gitstore.Repo, dir string, f gitstore.File) error {
	full, err := worktreePath(dir, f.Path)
	if err != nil {
		return err
	}
	if f.Mode == gitstore.ModeSubmodule {
		return os.MkdirAll(full, 0o755)
	}
	data, err := r.ReadBlob(f.Hash)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		return err
	}
	tmp := filepath.Join(filepath.Dir(full), ".dome-"+filepath.Base(full)+".tmp")
	os.Remove(tmp)
	if f.Mode == gitstore.ModeSymlink {
		if err := os.Symlink(string(data), tmp); err != nil {
			return err
		}
	} else {
		perm := os.FileMode(0o644)
		if f.Mode == gitstore.ModeExec {
			perm = 0o755
		}
		if err := os.WriteFile(tmp, data, perm); err != nil {
			os.Remove(tmp)
			return err
		}
		if err := os.Chmod(tmp, perm); err != nil { // whatever the umask
			os.Remove(tmp)
			return err
		}
	}
	if err := os.Rename(tmp, full); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}
