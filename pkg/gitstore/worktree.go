package gitstore

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5"
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

// Worktree is a worktree of the repository.
type Worktree struct {
	Dir    string // its top directory
	Linked bool   // made by git worktree add (not the main worktree)
}

// CheckedOut returns the worktrees whose HEAD is the branch ref (a full
// name, refs/heads/...), the main worktree first, then linked ones by
// directory.
func (r *Repo) CheckedOut(ref string) ([]Worktree, error) {
	var out []Worktree
	if main := r.mainWorktree(); main != "" && headIs(filepath.Join(r.commonDir, "HEAD"), ref) {
		out = append(out, Worktree{Dir: main})
	}
	entries, err := os.ReadDir(filepath.Join(r.commonDir, "worktrees"))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("list worktrees: %w", err)
	}
	var linked []Worktree
	for _, e := range entries {
		admin := filepath.Join(r.commonDir, "worktrees", e.Name())
		if !e.IsDir() || !headIs(filepath.Join(admin, "HEAD"), ref) {
			continue
		}
		b, err := os.ReadFile(filepath.Join(admin, "gitdir"))
		if err != nil {
			continue // not a worktree admin directory
		}
		dotGit := strings.TrimSpace(string(b))
		if !filepath.IsAbs(dotGit) {
			dotGit = filepath.Join(admin, dotGit)
		}
		dir := filepath.Dir(dotGit)
		if _, err := os.Stat(dir); err != nil {
			continue // a worktree that was deleted (git worktree prune removes it)
		}
		linked = append(linked, Worktree{Dir: dir, Linked: true})
	}
	sort.Slice(linked, func(i, j int) bool { return linked[i].Dir < linked[j].Dir })
	return append(out, linked...), nil
}

// MainWorktree returns the directory of the repository's main worktree
// (also when r was opened from a linked worktree), "" for a bare repository.
func (r *Repo) MainWorktree() string { return r.mainWorktree() }

func (r *Repo) mainWorktree() string {
	if r.gitDir == r.commonDir {
		return r.workTree
	}
	if filepath.Base(r.commonDir) == ".git" {
		return filepath.Dir(r.commonDir)
	}
	return ""
}

// headIs reports whether the HEAD file at path is the symbolic ref ref.
func headIs(path, ref string) bool {
	b, err := os.ReadFile(path)
	return err == nil && strings.TrimSpace(string(b)) == "ref: "+ref
}

// BranchMove is a checked move of a branch: from Old to New, carrying the
// worktrees that have it checked out.
type BranchMove struct {
	Ref       string
	Old, New  Hash
	Worktrees []Worktree
}

// PrepareBranchMove checks that ref can move from old to new: every worktree
// that has ref checked out must be clean (no changes to tracked files,
// staged or not) and hold no untracked file where new adds one. It changes
// nothing.
func (r *Repo) PrepareBranchMove(ref string, old, new Hash) (*BranchMove, error) {
	wts, err := r.CheckedOut(ref)
	if err != nil {
		return nil, err
	}
	m := &BranchMove{Ref: ref, Old: old, New: new, Worktrees: wts}
	if len(wts) == 0 {
		return m, nil
	}
	added, err := r.addedPaths(old, new)
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
func (r *Repo) addedPaths(old, new Hash) ([]string, error) {
	before := map[string]bool{}
	if !old.IsZero() {
		files, err := r.commitFiles(old)
		if err != nil {
			return nil, err
		}
		for _, f := range files {
			before[f] = true
		}
	}
	files, err := r.commitFiles(new)
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

func (r *Repo) commitFiles(c Hash) ([]string, error) {
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

func checkWorktreeFollows(wt Worktree, ref string, added []string) error {
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
func (r *Repo) MoveBranch(m *BranchMove) error {
	if err := r.UpdateRef(m.Ref, m.New, m.Old); err != nil {
		return err
	}
	for i, wt := range m.Worktrees {
		if err := r.checkoutWorktree(wt.Dir, m.Old, m.New); err != nil {
			undo := r.UpdateRef(m.Ref, m.Old, m.New)
			for _, done := range m.Worktrees[:i+1] {
				if undo == nil {
					undo = r.checkoutWorktree(done.Dir, m.New, m.Old)
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
func (r *Repo) checkoutWorktree(dir string, from, to Hash) error {
	before, err := r.commitFileMap(from)
	if err != nil {
		return err
	}
	after, err := r.commitFileMap(to)
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
		if err := r.writeWorktreeFile(dir, f); err != nil {
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
	return w.Reset(&git.ResetOptions{Commit: toPlumbing(to), Mode: git.MixedReset})
}

func (r *Repo) commitFileMap(c Hash) (map[string]File, error) {
	tree, err := r.CommitTree(c)
	if err != nil {
		return nil, err
	}
	files, err := r.Walk(tree)
	if err != nil {
		return nil, err
	}
	m := make(map[string]File, len(files))
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

func (r *Repo) writeWorktreeFile(dir string, f File) error {
	full, err := worktreePath(dir, f.Path)
	if err != nil {
		return err
	}
	if f.Mode == ModeSubmodule {
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
	if f.Mode == ModeSymlink {
		if err := os.Symlink(string(data), tmp); err != nil {
			return err
		}
	} else {
		perm := os.FileMode(0o644)
		if f.Mode == ModeExec {
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
