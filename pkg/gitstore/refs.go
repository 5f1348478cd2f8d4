package gitstore

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"

	"github.com/dome-registry/dome/pkg/readlimit"
)

// Ref is a reference and the object it points at (not peeled).
type Ref struct {
	Name   string `json:"name"`
	Target Hash   `json:"target"`
}

// Head returns the name of the branch HEAD points at ("" when detached) and
// the commit it resolves to. An unborn HEAD (no commits yet) is ErrEmptyRepo.
func (r *Repo) Head() (string, Hash, error) {
	h, target, err := r.readRef("HEAD")
	if err != nil {
		return "", ZeroHash, fmt.Errorf("read HEAD: %w", err)
	}
	if target == "" {
		return "", h, nil
	}
	h, err = r.resolveRef(target, maxSymrefDepth-1) // HEAD was the first read
	if errors.Is(err, ErrNotFound) {
		return target, ZeroHash, ErrEmptyRepo
	}
	if err != nil {
		return "", ZeroHash, fmt.Errorf("resolve HEAD: %w", err)
	}
	return target, h, nil
}

// Ref returns the object a fully qualified ref (refs/... or HEAD) points
// at, following symbolic refs; ErrNotFound when it does not exist.
func (r *Repo) Ref(name string) (Hash, error) {
	h, err := r.resolveRef(name, maxSymrefDepth)
	if err != nil {
		return ZeroHash, fmt.Errorf("ref %s: %w", name, err)
	}
	return h, nil
}

// maxSymrefDepth is how many refs git reads to resolve one (refs.h
// SYMREF_MAXDEPTH): HEAD -> a -> b -> c -> d is the longest chain.
const maxSymrefDepth = 5

// resolveRef follows name through symbolic refs to an object id, reading
// at most reads refs.
func (r *Repo) resolveRef(name string, reads int) (Hash, error) {
	for i := 0; i < reads; i++ {
		h, target, err := r.readRef(name)
		if err != nil {
			return ZeroHash, err
		}
		if target == "" {
			return h, nil
		}
		name = target
	}
	return ZeroHash, fmt.Errorf("symbolic refs nested deeper than %d", maxSymrefDepth)
}

// isRefName reports whether name may be read as a ref: HEAD, or a name
// below refs/ that check-ref-format accepts. Nothing else is ever opened,
// so no name can address a file outside the refs.
func isRefName(name string) bool {
	return name == "HEAD" || strings.HasPrefix(name, "refs/") && CheckRefName(name) == nil
}

// refFile returns the loose file of ref name. HEAD and the per-worktree
// refs (refs/bisect/, refs/worktree/, refs/rewritten/) live in the git
// directory of a worktree, every other ref in the common directory
// (gitrepository-layout(5)); the two are one for all but linked worktrees.
func (r *Repo) refFile(name string) string {
	dir := r.commonDir
	if name == "HEAD" || strings.HasPrefix(name, "refs/bisect/") || strings.HasPrefix(name, "refs/worktree/") || strings.HasPrefix(name, "refs/rewritten/") {
		dir = r.gitDir
	}
	return filepath.Join(dir, filepath.FromSlash(name))
}

// readRef reads the ref name without following it: its object id, or the
// target of a symbolic ref. A loose ref file wins over packed-refs, as in
// git. A ref that does not exist is ErrNotFound.
func (r *Repo) readRef(name string) (Hash, string, error) {
	if !isRefName(name) {
		return ZeroHash, "", fmt.Errorf("%q is not a full ref name: %w", name, ErrNotFound)
	}
	h, target, ok, err := readLooseRef(r.refFile(name))
	if err != nil || ok {
		return h, target, err
	}
	if name == "HEAD" {
		return ZeroHash, "", ErrNotFound
	}
	packed, err := r.packed.load(filepath.Join(r.commonDir, "packed-refs"))
	if err != nil {
		return ZeroHash, "", err
	}
	if h, ok := packed.refs[name]; ok {
		return h, "", nil
	}
	return ZeroHash, "", ErrNotFound
}

// looseRefLimit bounds a loose ref file: an id, or "ref: " and a name.
const looseRefLimit = 64 << 10

// readLooseRef reads a loose ref file as git's files backend does: 40 hex
// digits (and white space after them), or "ref:" and the target's name.
// ok is false when there is no such file (or a folder is in its place).
// It reads a file with one open and one read in the common case, which
// matters to servers that re-read a branch head on every request.
func readLooseRef(path string) (h Hash, target string, ok bool, err error) {
	var buf [256]byte
	n, err := readSmallFile(path, buf[:])
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.EISDIR) || errors.Is(err, syscall.ENOTDIR) {
			return ZeroHash, "", false, nil
		}
		return ZeroHash, "", false, err
	}
	data := buf[:n]
	if n == len(buf) { // a long symbolic ref
		if data, err = readlimit.ReadFile(path, looseRefLimit); err != nil {
			return ZeroHash, "", false, err
		}
	}
	if rest, isSym := bytes.CutPrefix(data, []byte("ref:")); isSym {
		target := string(bytes.TrimFunc(rest, func(c rune) bool { return c < 0x80 && isGitSpace(byte(c)) }))
		if !isRefName(target) {
			return ZeroHash, "", false, fmt.Errorf("%s: symbolic ref to %q, not a ref", path, target)
		}
		return ZeroHash, target, true, nil
	}
	if len(data) >= 40 && (len(data) == 40 || isGitSpace(data[40])) {
		if h, ok := ParseHash(string(data[:40])); ok {
			return h, "", true, nil
		}
	}
	return ZeroHash, "", false, fmt.Errorf("%s: not a ref file (%q)", path, firstLine(data))
}

func firstLine(b []byte) []byte {
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		b = b[:i]
	}
	if len(b) > 80 {
		b = b[:80]
	}
	return b
}

// packedRefsLimit bounds packed-refs (a ref takes ~60 bytes: millions fit).
const packedRefsLimit = 1 << 30

// packedRefs is the parsed packed-refs file, kept while the file is the
// same: git rewrites it by renaming a new file over it, so a file with
// the same identity, size and time is the same content.
type packedRefs struct {
	mu     sync.Mutex
	stat   os.FileInfo // of the parsed file; nil when it did not exist
	loaded bool
	cur    *packedRefList
}

// packedRefList is one version of packed-refs.
type packedRefList struct {
	refs  map[string]Hash
	names []string // sorted
}

func (p *packedRefs) load(path string) (*packedRefList, error) {
	fi, err := os.Stat(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("read packed-refs: %w", err)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.loaded && sameFile(p.stat, fi) {
		return p.cur, nil
	}
	list := &packedRefList{refs: map[string]Hash{}}
	if fi != nil {
		data, err := readlimit.ReadFile(path, packedRefsLimit)
		if errors.Is(err, fs.ErrNotExist) {
			fi = nil // removed since the stat; no packed refs
		} else if err != nil {
			return nil, fmt.Errorf("read packed-refs: %w", err)
		} else if list, err = parsePackedRefs(data); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
	}
	p.stat, p.cur, p.loaded = fi, list, true
	return list, nil
}

func sameFile(a, b os.FileInfo) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return os.SameFile(a, b) && a.Size() == b.Size() && a.ModTime().Equal(b.ModTime())
}

// parsePackedRefs reads packed-refs (gitrepository-layout(5)): a
// "# pack-refs with:" header, "<id> <name>" lines, and "^<id>" lines
// giving the peeled value of the tag before them (not needed here).
func parsePackedRefs(data []byte) (*packedRefList, error) {
	list := &packedRefList{refs: map[string]Hash{}}
	sorted := true
	for n := 1; len(data) > 0; n++ {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		line = bytes.TrimSuffix(line, []byte("\r"))
		if len(line) == 0 || line[0] == '#' || line[0] == '^' {
			continue
		}
		id, name, ok := bytes.Cut(line, []byte(" "))
		h, valid := ParseHash(string(id))
		if !ok || !valid || len(name) == 0 {
			return nil, fmt.Errorf("line %d: unexpected line %q", n, firstLine(line))
		}
		ref := string(name)
		if _, dup := list.refs[ref]; !dup {
			if k := len(list.names); k > 0 && list.names[k-1] >= ref {
				sorted = false
			}
			list.names = append(list.names, ref)
		}
		list.refs[ref] = h
	}
	if !sorted {
		sort.Strings(list.names)
	}
	return list, nil
}

// Refs lists the refs whose names start with prefix ("refs/tags/", ...),
// loose and packed (a loose ref hiding a packed one of its name), sorted
// by name. Symbolic refs, refs whose names git would refuse and loose ref
// files that do not parse are left out, as git for-each-ref leaves them;
// HEAD is not listed (Head reads it).
func (r *Repo) Refs(prefix string) ([]Ref, error) {
	dir := "refs"
	if prefix != "" {
		if !strings.HasPrefix(prefix, "refs/") {
			return nil, fmt.Errorf("list refs %q: not below refs/", prefix)
		}
		dir = prefix[:strings.LastIndexByte(prefix, '/')]
		if CheckRefName(dir) != nil {
			return nil, fmt.Errorf("list refs %q: not a ref name prefix", prefix)
		}
	}
	loose := map[string]Hash{}
	hidden := map[string]bool{} // loose symbolic refs, hiding packed refs of their names
	roots := []string{r.commonDir}
	if r.gitDir != r.commonDir {
		roots = append(roots, r.gitDir) // per-worktree refs
	}
	for _, root := range roots {
		walkRoot := filepath.Join(root, filepath.FromSlash(dir))
		err := filepath.WalkDir(walkRoot, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) {
					return nil
				}
				return err
			}
			if d.IsDir() {
				return nil
			}
			rel, err := filepath.Rel(root, path)
			if err != nil {
				return err
			}
			name := filepath.ToSlash(rel)
			if !strings.HasPrefix(name, prefix) || !isRefName(name) || r.refFile(name) != path {
				return nil
			}
			h, target, ok, err := readLooseRef(path)
			switch {
			case err != nil || !ok:
				// A broken ref file, or one removed while listing.
			case target != "":
				hidden[name] = true
			default:
				loose[name] = h
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("list refs: %w", err)
		}
	}
	packed, err := r.packed.load(filepath.Join(r.commonDir, "packed-refs"))
	if err != nil {
		return nil, fmt.Errorf("list refs: %w", err)
	}
	out := make([]Ref, 0, len(loose))
	for name, h := range loose {
		out = append(out, Ref{Name: name, Target: h})
	}
	for i := sort.SearchStrings(packed.names, prefix); i < len(packed.names) && strings.HasPrefix(packed.names[i], prefix); i++ {
		name := packed.names[i]
		if _, ok := loose[name]; !ok && !hidden[name] && isRefName(name) {
			out = append(out, Ref{Name: name, Target: packed.refs[name]})
		}
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
	path := r.refFile(name)
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
	// The value as it is under the lock, not following a symbolic ref (a
	// symbolic ref counts as existing with no id, so it is never replaced
	// unknowingly).
	have, _, err := r.readRef(name)
	switch {
	case errors.Is(err, ErrNotFound):
		if !oldHash.IsZero() {
			return fmt.Errorf("update ref %s: expected %s, but the ref does not exist: %w", name, oldHash, ErrRefChanged)
		}
	case err != nil:
		return fmt.Errorf("update ref %s: read current value: %w", name, err)
	default:
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
	lock := r.refFile(name) + ".lock"
	if err := os.Remove(lock); err != nil {
		if os.IsNotExist(err) {
			return false, nil
		}
		return false, fmt.Errorf("remove %s: %w", lock, err)
	}
	syncDir(filepath.Dir(lock))
	return true, nil
}
