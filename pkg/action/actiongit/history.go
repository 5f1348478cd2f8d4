package actiongit

import (
	"errors"
	"fmt"
	"strings"

	"github.com/dome-registry/dome/pkg/action"
	"github.com/dome-registry/dome/pkg/gitstore"
)

func isNotFound(err error) bool { return errors.Is(err, gitstore.ErrNotFound) }

// history remembers, for the commits walked so far, which commit added each
// (path, blob): the Revision of a record.
type history struct {
	seen  map[gitstore.Hash]bool
	added map[addedKey]addedAt
}

type addedKey struct {
	path string
	blob gitstore.Hash
}

type addedAt struct {
	commit gitstore.Hash
	when   int64
}

func newHistory() *history {
	return &history{seen: map[gitstore.Hash]bool{}, added: map[addedKey]addedAt{}}
}

// addedIn returns the commit that added blob at path in the history of head.
// It walks only the commits not walked before, so following a growing
// branch costs one step per new commit.
func (s *Store) addedIn(head gitstore.Hash, path string, blob gitstore.Hash) (gitstore.Hash, error) {
	s.histMu.Lock()
	defer s.histMu.Unlock()
	k := addedKey{path, blob}
	if a, ok := s.hist.added[k]; ok && s.hist.seen[head] {
		return a.commit, nil
	}
	if err := s.walkNew(head); err != nil {
		return gitstore.ZeroHash, err
	}
	if a, ok := s.hist.added[k]; ok {
		return a.commit, nil
	}
	return gitstore.ZeroHash, fmt.Errorf("%s: no commit in the history of %s adds blob %s", path, head.Short(), blob.Short())
}

// walkNew records the additions of every commit reachable from head that
// was not walked yet. Called with s.histMu held.
func (s *Store) walkNew(head gitstore.Hash) error {
	stack := []gitstore.Hash{head}
	for len(stack) > 0 {
		h := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if h.IsZero() || s.hist.seen[h] {
			continue
		}
		c, err := s.repo.Commit(h)
		if err != nil {
			return fmt.Errorf("walk %s: %w", s.branch, err)
		}
		changes, err := s.commitChanges(c)
		if err != nil {
			return err
		}
		for _, ch := range changes {
			if !ch.added {
				continue
			}
			k := addedKey{ch.path, ch.after}
			when := c.Committer.When.Unix()
			if old, ok := s.hist.added[k]; !ok || when < old.when || when == old.when && c.Hash.String() < old.commit.String() {
				s.hist.added[k] = addedAt{commit: c.Hash, when: when}
			}
		}
		s.hist.seen[h] = true
		stack = append(stack, c.Parents...)
	}
	return nil
}

// change is one file of Dir that differs between a commit and its first
// parent (or the empty tree for a root commit).
type change struct {
	path          string
	before, after gitstore.Hash // ZeroHash: absent
	// added: after is not what any parent holds at path (a merge taking a
	// file from its second parent adds nothing).
	added bool
	// parent is the parent the change is against (ZeroHash for a root).
	parent gitstore.Hash
}

// commitChanges diffs the Dir tree of c against each parent's. A change
// against the first parent whose new blob another parent already holds is
// not an addition.
func (s *Store) commitChanges(c *gitstore.Commit) ([]change, error) {
	cur, err := s.dirTree(c.Tree)
	if err != nil {
		return nil, fmt.Errorf("commit %s: %w", c.Hash.Short(), err)
	}
	parents := c.Parents
	if len(parents) == 0 {
		parents = []gitstore.Hash{gitstore.ZeroHash}
	}
	parentDirs := make([]gitstore.Hash, len(parents))
	for i, p := range parents {
		if p.IsZero() {
			continue
		}
		t, err := s.repo.CommitTree(p)
		if err != nil {
			return nil, fmt.Errorf("commit %s: parent %s: %w", c.Hash.Short(), p.Short(), err)
		}
		if parentDirs[i], err = s.dirTree(t); err != nil {
			return nil, fmt.Errorf("commit %s: parent %s: %w", c.Hash.Short(), p.Short(), err)
		}
	}
	var out []change
	for i, pd := range parentDirs {
		diffs, err := s.diffTrees(pd, cur, Dir)
		if err != nil {
			return nil, fmt.Errorf("commit %s: %w", c.Hash.Short(), err)
		}
		for _, d := range diffs {
			d.parent = parents[i]
			if !d.after.IsZero() {
				d.added = true
				for j, other := range parentDirs {
					if j == i {
						continue
					}
					if b, _ := s.blobAt(other, strings.TrimPrefix(d.path, Dir+"/")); b == d.after {
						d.added = false
					}
				}
			}
			out = append(out, d)
		}
	}
	return out, nil
}

// dirTree returns the tree of Dir in a commit tree (ZeroHash if absent).
func (s *Store) dirTree(tree gitstore.Hash) (gitstore.Hash, error) {
	e, err := s.repo.EntryAt(tree, Dir)
	if err != nil {
		if isNotFound(err) {
			return gitstore.ZeroHash, nil
		}
		return gitstore.ZeroHash, err
	}
	if !e.Mode.IsDir() {
		return gitstore.ZeroHash, nil
	}
	return e.Hash, nil
}

func (s *Store) blobAt(dir gitstore.Hash, rel string) (gitstore.Hash, error) {
	if dir.IsZero() {
		return gitstore.ZeroHash, nil
	}
	e, err := s.repo.EntryAt(dir, rel)
	if err != nil {
		return gitstore.ZeroHash, err
	}
	return e.Hash, nil
}

// diffTrees lists the action files (<name>/<version>.json, as actionFiles
// reads them) that differ between trees a and b, skipping equal subtrees.
func (s *Store) diffTrees(a, b gitstore.Hash, prefix string) ([]change, error) {
	if a == b {
		return nil, nil
	}
	ea, err := s.entries(a)
	if err != nil {
		return nil, err
	}
	eb, err := s.entries(b)
	if err != nil {
		return nil, err
	}
	var out []change
	for name, x := range ea {
		y := eb[name]
		if x == y {
			continue
		}
		cs, err := s.diffActionDir(name, x.Hash, y.Hash, prefix)
		if err != nil {
			return nil, err
		}
		out = append(out, cs...)
	}
	for name, y := range eb {
		if _, ok := ea[name]; ok {
			continue
		}
		cs, err := s.diffActionDir(name, gitstore.ZeroHash, y.Hash, prefix)
		if err != nil {
			return nil, err
		}
		out = append(out, cs...)
	}
	return out, nil
}

// entries returns the action name folders of a Dir tree by name.
func (s *Store) entries(t gitstore.Hash) (map[string]gitstore.TreeEntry, error) {
	out := map[string]gitstore.TreeEntry{}
	if t.IsZero() {
		return out, nil
	}
	es, err := s.repo.ReadTree(t)
	if err != nil {
		return nil, err
	}
	for _, e := range es {
		if e.Mode.IsDir() && action.CheckName(e.Name) == nil {
			out[e.Name] = e
		}
	}
	return out, nil
}

// diffActionDir diffs two <name> folders (either may be ZeroHash).
func (s *Store) diffActionDir(name string, a, b gitstore.Hash, prefix string) ([]change, error) {
	files := func(t gitstore.Hash) (map[string]gitstore.Hash, error) {
		out := map[string]gitstore.Hash{}
		if t.IsZero() {
			return out, nil
		}
		es, err := s.repo.ReadTree(t)
		if err != nil {
			return nil, err
		}
		for _, e := range es {
			if _, ok := versionOf(e); ok {
				out[e.Name] = e.Hash
			}
		}
		return out, nil
	}
	fa, err := files(a)
	if err != nil {
		return nil, err
	}
	fb, err := files(b)
	if err != nil {
		return nil, err
	}
	var out []change
	for f, x := range fa {
		if y := fb[f]; y != x {
			out = append(out, change{path: prefix + "/" + name + "/" + f, before: x, after: y})
		}
	}
	for f, y := range fb {
		if _, ok := fa[f]; !ok {
			out = append(out, change{path: prefix + "/" + name + "/" + f, after: y})
		}
	}
	return out, nil
}
