package stack

import (
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/dome-registry/dome/pkg/gitstore"
	"github.com/dome-registry/dome/pkg/patch"
)

// MaterializeStats counts what Materialize wrote.
type MaterializeStats struct {
	Files       int   `json:"files"`
	Executables int   `json:"executables"`
	Symlinks    int   `json:"symlinks"`
	Dirs        int   `json:"dirs"`
	Submodules  int   `json:"submodules"` // written as empty directories, as a checkout without submodules does
	Bytes       int64 `json:"bytes"`
}

// Materialize writes the tree (or the tree of the commit) id into dir, which
// must be empty or absent: regular files with mode 0644, executables with
// 0755, symlinks as symlinks, gitlinks as empty directories. It refuses
// entry names that could escape dir or enter a .git directory (empty, ".",
// "..", ".git" in any case, '/' or NUL inside) and symlinks whose target is
// absolute or leaves the tree; files are created exclusively and never
// through a symlink, so nothing outside dir is written.
func Materialize(repo *gitstore.Repo, id gitstore.Hash, dir string) (MaterializeStats, error) {
	return MaterializeWith(repo, id, dir, nil)
}

// MaterializeWith is Materialize keeping only the entries keep accepts (nil
// keeps all): a folder it refuses is left out with everything below it. A
// coordinator gives a worker the files its grant may read, and nothing else.
func MaterializeWith(repo *gitstore.Repo, id gitstore.Hash, dir string, keep func(path string, isDir bool) bool) (MaterializeStats, error) {
	var st MaterializeStats
	tree := id
	if t, err := repo.ObjectType(id); err != nil {
		return st, fmt.Errorf("materialize %s: %w", id, err)
	} else if t == gitstore.TypeCommit {
		if tree, err = repo.CommitTree(id); err != nil {
			return st, fmt.Errorf("materialize %s: %w", id, err)
		}
	} else if t != gitstore.TypeTree {
		return st, fmt.Errorf("materialize %s: a %s, not a commit or tree", id, t)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return st, fmt.Errorf("materialize into %s: %w", dir, err)
	}
	if ents, err := os.ReadDir(dir); err != nil {
		return st, fmt.Errorf("materialize into %s: %w", dir, err)
	} else if len(ents) > 0 {
		return st, fmt.Errorf("materialize into %s: the directory is not empty", dir)
	}
	m := materializer{repo: repo, root: dir, st: &st, keep: keep}
	if err := m.tree("", tree); err != nil {
		return st, err
	}
	// Each target was checked on its own; a chain (d -> ".", e -> "d/..")
	// can still leave the tree, so resolve every link through the others.
	for _, l := range m.links {
		if err := resolveInside(dir, l); err != nil {
			return st, fmt.Errorf("materialize %s: refused: %w", l, err)
		}
	}
	return st, nil
}

// resolveInside follows the symlink at rel (slash-separated, relative to
// root) through any further symlinks below root, as the kernel would, and
// fails if the resolution ever climbs above root or is absolute.
func resolveInside(root, rel string) error {
	var cur []string
	todo := strings.Split(rel, "/")
	hops := 0
	for len(todo) > 0 {
		c := todo[0]
		todo = todo[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			if len(cur) == 0 {
				return fmt.Errorf("symlink %s resolves outside the tree", rel)
			}
			cur = cur[:len(cur)-1]
			continue
		}
		cur = append(cur, c)
		full := filepath.Join(root, filepath.FromSlash(strings.Join(cur, "/")))
		fi, err := os.Lstat(full)
		if err != nil || fi.Mode()&os.ModeSymlink == 0 {
			continue // a file, a directory or nothing: nothing to follow
		}
		if hops++; hops > 40 {
			return fmt.Errorf("symlink %s: too many levels of symbolic links", rel)
		}
		target, err := os.Readlink(full)
		if err != nil {
			return err
		}
		if strings.HasPrefix(target, "/") {
			return fmt.Errorf("symlink %s resolves to an absolute path", rel)
		}
		cur = cur[:len(cur)-1]
		todo = append(strings.Split(target, "/"), todo...)
	}
	return nil
}

type materializer struct {
	repo  *gitstore.Repo
	root  string
	st    *MaterializeStats
	links []string
	keep  func(path string, isDir bool) bool
}

func (m *materializer) tree(rel string, id gitstore.Hash) error {
	es, err := m.repo.ReadTree(id)
	if err != nil {
		return fmt.Errorf("materialize %s: read tree %s: %w", orRoot(rel), id.Short(), err)
	}
	for _, e := range es {
		p := path.Join(rel, e.Name)
		if err := gitstore.CheckEntryName(e.Name, e.Mode); err != nil {
			return fmt.Errorf("materialize %s: refused: %w", p, err)
		}
		if m.keep != nil && !m.keep(p, e.Mode == gitstore.ModeDir) {
			continue
		}
		full := filepath.Join(m.root, filepath.FromSlash(p))
		switch e.Mode {
		case gitstore.ModeDir:
			if err := os.Mkdir(full, 0o755); err != nil {
				return fmt.Errorf("materialize %s: %w", p, err)
			}
			m.st.Dirs++
			if err := m.tree(p, e.Hash); err != nil {
				return err
			}
		case gitstore.ModeFile, gitstore.ModeExec:
			if err := m.file(p, full, e); err != nil {
				return err
			}
		case gitstore.ModeSymlink:
			target, err := m.repo.ReadBlob(e.Hash)
			if err != nil {
				return fmt.Errorf("materialize %s: read symlink target: %w", p, err)
			}
			if err := patch.CheckSymlink(p, target); err != nil {
				return fmt.Errorf("materialize %s: refused: %w", p, err)
			}
			if err := os.Symlink(string(target), full); err != nil {
				return fmt.Errorf("materialize %s: %w", p, err)
			}
			m.st.Symlinks++
			m.links = append(m.links, p)
		case gitstore.ModeSubmodule:
			if err := os.Mkdir(full, 0o755); err != nil {
				return fmt.Errorf("materialize %s: %w", p, err)
			}
			m.st.Submodules++
		default:
			return fmt.Errorf("materialize %s: unsupported mode %s", p, e.Mode)
		}
	}
	return nil
}

func (m *materializer) file(p, full string, e gitstore.TreeEntry) error {
	data, err := m.repo.ReadBlob(e.Hash)
	if err != nil {
		return fmt.Errorf("materialize %s: %w", p, err)
	}
	perm := os.FileMode(0o644)
	if e.Mode == gitstore.ModeExec {
		perm = 0o755
	}
	f, err := os.OpenFile(full, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, perm)
	if err != nil {
		return fmt.Errorf("materialize %s: %w", p, err)
	}
	_, werr := f.Write(data)
	cerr := f.Close()
	if err := errors.Join(werr, cerr); err != nil {
		return fmt.Errorf("materialize %s: %w", p, err)
	}
	if e.Mode == gitstore.ModeExec {
		// the umask may have cleared bits; an executable must be one
		if err := os.Chmod(full, perm); err != nil {
			return fmt.Errorf("materialize %s: %w", p, err)
		}
		m.st.Executables++
	}
	m.st.Files++
	m.st.Bytes += int64(len(data))
	return nil
}

func orRoot(rel string) string {
	if rel == "" {
		return "/"
	}
	return rel
}
