package gitstore

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/storer"
)

// Ref is a reference and the object it points at (not peeled).
type Ref struct {
	Name   string `json:"name"`
	Target Hash   `json:"target"`
}

// Head returns the name of the branch HEAD points at ("" when detached) and
// the commit it resolves to. An unborn HEAD (no commits yet) is ErrEmptyRepo.
func (r *Repo) Head() (string, Hash, error) {
	ref, err := r.storage.Reference(plumbing.HEAD)
	if err != nil {
		return "", ZeroHash, fmt.Errorf("read HEAD: %w", err)
	}
	name := ""
	if ref.Type() == plumbing.SymbolicReference {
		name = ref.Target().String()
	}
	resolved, err := storer.ResolveReference(r.storage, plumbing.HEAD)
	if err != nil {
		if errors.Is(err, plumbing.ErrReferenceNotFound) {
			return name, ZeroHash, ErrEmptyRepo
		}
		return "", ZeroHash, fmt.Errorf("resolve HEAD: %w", err)
	}
	return name, fromPlumbing(resolved.Hash()), nil
}

// Ref returns the object a fully qualified ref points at, following symbolic
// refs; ErrNotFound when it does not exist.
func (r *Repo) Ref(name string) (Hash, error) {
	if h, ok := r.looseRef(name); ok {
		return h, nil
	}
	ref, err := storer.ResolveReference(r.storage, plumbing.ReferenceName(name))
	if err != nil {
		if errors.Is(err, plumbing.ErrReferenceNotFound) {
			return ZeroHash, fmt.Errorf("ref %s: %w", name, ErrNotFound)
		}
		return ZeroHash, fmt.Errorf("ref %s: %w", name, err)
	}
	return fromPlumbing(ref.Hash()), nil
}

// looseRef reads a branch or tag stored as a loose ref file straight from
// disk: one open and read instead of go-git's path resolution, which matters
// for servers that re-read a branch head on every request. Anything else
// (packed or symbolic refs, other namespaces) is left to go-git.
func (r *Repo) looseRef(name string) (Hash, bool) {
	if !strings.HasPrefix(name, "refs/heads/") && !strings.HasPrefix(name, "refs/tags/") {
		return ZeroHash, false
	}
	if CheckRefName(name) != nil {
		return ZeroHash, false
	}
	var buf [42]byte // a loose ref is 40 hex digits and a newline: a 42nd byte means it is not
	n, err := readSmallFile(filepath.Join(r.commonDir, filepath.FromSlash(name)), buf[:])
	if err != nil || n != 41 || buf[40] != '\n' {
		return ZeroHash, false
	}
	return ParseHash(string(buf[:40]))
}

// Refs lists the refs whose names start with prefix ("refs/tags/", ...),
// sorted by name. Symbolic refs are left out.
func (r *Repo) Refs(prefix string) ([]Ref, error) {
	it, err := r.storage.IterReferences()
	if err != nil {
		return nil, fmt.Errorf("list refs: %w", err)
	}
	defer it.Close()
	var out []Ref
	err = it.ForEach(func(ref *plumbing.Reference) error {
		if ref.Type() != plumbing.HashReference {
			return nil
		}
		n := ref.Name().String()
		if strings.HasPrefix(n, prefix) {
			out = append(out, Ref{Name: n, Target: fromPlumbing(ref.Hash())})
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list refs: %w", err)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// CheckRefName validates a ref name (or a short name such as a branch) by
// git's check-ref-format rules, so that a hostile name can never address a
// file outside refs/.
func CheckRefName(name string) error {
	if name == "" {
		return errors.New("empty ref name")
	}
	if name == "@" {
		return errors.New(`"@" alone is not a valid ref name`)
	}
	if strings.HasPrefix(name, "/") || strings.HasSuffix(name, "/") || strings.HasSuffix(name, ".") {
		return fmt.Errorf("ref name %q must not start or end with '/' or end with '.'", name)
	}
	for _, bad := range []string{"..", "//", "@{"} {
		if strings.Contains(name, bad) {
			return fmt.Errorf("ref name %q must not contain %q", name, bad)
		}
	}
	for _, c := range name {
		if c < 0x20 || c == 0x7f || strings.ContainsRune(" ~^:?*[\\", c) {
			return fmt.Errorf("ref name %q must not contain %q (spaces, control characters and ~^:?*[\\ are not allowed)", name, c)
		}
	}
	for _, comp := range strings.Split(name, "/") {
		if strings.HasPrefix(comp, ".") || strings.HasSuffix(comp, ".lock") {
			return fmt.Errorf("ref name %q: component %q must not start with '.' or end with '.lock'", name, comp)
		}
	}
	return nil
}

// UpdateRef sets the fully qualified ref name to newHash if and only if it
// currently points at oldHash (ZeroHash: the ref must not exist yet). It
// follows git's protocol: create "<ref>.lock" exclusively, compare, write,
// fsync, rename; so it is atomic for readers and safe against concurrent
// writers, dome or git. A lost race is ErrRefChanged (or ErrRefExists).
func (r *Repo) UpdateRef(name string, newHash, oldHash Hash) error {
	if !strings.HasPrefix(name, "refs/") {
		return fmt.Errorf("update ref %q: only refs/... may be updated", name)
	}
	if err := CheckRefName(name); err != nil {
		return fmt.Errorf("update ref: %w", err)
	}
	if newHash.IsZero() {
		return fmt.Errorf("update ref %s: refusing to write the zero id", name)
	}
	path := filepath.Join(r.commonDir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(path), 0o777); err != nil {
		return fmt.Errorf("update ref %s: %w", name, err)
	}
	lock := path + ".lock"
	f, err := os.OpenFile(lock, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666)
	if err != nil {
		if os.IsExist(err) {
			return fmt.Errorf("update ref %s: locked by another process (%s): %w", name, lock, ErrRefChanged)
		}
		return fmt.Errorf("update ref %s: %w", name, err)
	}
	committed := false
	defer func() {
		if !committed {
			f.Close()
			os.Remove(lock)
		}
	}()
	cur, err := r.storage.Reference(plumbing.ReferenceName(name))
	switch {
	case errors.Is(err, plumbing.ErrReferenceNotFound):
		if !oldHash.IsZero() {
			return fmt.Errorf("update ref %s: expected %s, but the ref does not exist: %w", name, oldHash, ErrRefChanged)
		}
	case err != nil:
		return fmt.Errorf("update ref %s: read current value: %w", name, err)
	default:
		have := fromPlumbing(cur.Hash())
		if oldHash.IsZero() {
			return fmt.Errorf("update ref %s: already exists at %s: %w", name, have, ErrRefExists)
		}
		if have != oldHash {
			return fmt.Errorf("update ref %s: expected %s, found %s: %w", name, oldHash, have, ErrRefChanged)
		}
	}
	if _, err := f.WriteString(newHash.String() + "\n"); err != nil {
		return fmt.Errorf("update ref %s: %w", name, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("update ref %s: %w", name, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("update ref %s: %w", name, err)
	}
	if err := os.Rename(lock, path); err != nil {
		os.Remove(lock)
		return fmt.Errorf("update ref %s: %w", name, err)
	}
	committed = true
	syncDir(filepath.Dir(path))
	return nil
}

// syncDir makes a rename durable; errors are ignored because some
// filesystems do not support syncing directories.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}

// RemoveRefLock removes the lock file "<ref>.lock" a writer killed between
// creating it and renaming it left behind (git's protocol leaves it, and
// every later update of the ref fails until it is gone). Only a caller
// that knows no other process may be updating the ref (dome stack holds its
// run's writer lock for the run's integration ref) may call it. It reports
// whether there was a lock file.
func (r *Repo) RemoveRefLock(name string) (bool, error) {
	if err := CheckRefName(name); err != nil || !strings.HasPrefix(name, "refs/") {
		return false, fmt.Errorf("remove lock of %q: not a full ref name", name)
	}
	lock := filepath.Join(r.commonDir, filepath.FromSlash(name)) + ".lock"
	if err := os.Remove(lock); err != nil {
		if os.IsNotExist(err) {
			return false, nil
		}
		return false, fmt.Errorf("remove %s: %w", lock, err)
	}
	syncDir(filepath.Dir(lock))
	return true, nil
}
