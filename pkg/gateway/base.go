package gateway

import (
	"bytes"
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/dome-registry/dome/internal/xdiff"
	"github.com/dome-registry/dome/pkg/gitstore"
)

// Entry types of a listing.
const (
	TypeBlob      = "blob"
	TypeTree      = "tree"
	TypeSymlink   = "symlink"
	TypeSubmodule = "submodule"
)

// baseEntry is one entry of a base tree, flattened.
type baseEntry struct {
	path string
	mode gitstore.Mode
	hash gitstore.Hash
	size atomic.Int64 // -1 until read
}

func (e *baseEntry) typ() string {
	switch e.mode {
	case gitstore.ModeDir:
		return TypeTree
	case gitstore.ModeSymlink:
		return TypeSymlink
	case gitstore.ModeSubmodule:
		return TypeSubmodule
	}
	return TypeBlob
}

// isBlob reports whether the entry is a file or a symlink (a blob object).
func (e *baseEntry) isBlob() bool {
	return e.mode == gitstore.ModeFile || e.mode == gitstore.ModeExec || e.mode == gitstore.ModeSymlink
}

// MaxBaseEntries bounds the tree a gateway indexes.
const MaxBaseEntries = 1 << 20

// baseTree is a commit's tree flattened and sorted by path (an entry below
// folder d is in the contiguous range of paths starting "d/"), shared by
// every session of a wave.
type baseTree struct {
	commit, tree gitstore.Hash
	entries      []*baseEntry
	byPath       map[string]*baseEntry
}

func indexTree(repo *gitstore.Repo, commit gitstore.Hash) (*baseTree, error) {
	tree, err := repo.CommitTree(commit)
	if err != nil {
		return nil, fmt.Errorf("base %s: %w", commit, err)
	}
	b := &baseTree{commit: commit, tree: tree, byPath: map[string]*baseEntry{}}
	var walk func(prefix string, t gitstore.Hash) error
	walk = func(prefix string, t gitstore.Hash) error {
		es, err := repo.ReadTree(t)
		if err != nil {
			return fmt.Errorf("base %s: read tree %s: %w", commit.Short(), t.Short(), err)
		}
		for _, e := range es {
			p := e.Name
			if prefix != "" {
				p = prefix + "/" + e.Name
			}
			if len(b.entries) >= MaxBaseEntries {
				return fmt.Errorf("base %s: more than %d entries", commit.Short(), MaxBaseEntries)
			}
			be := &baseEntry{path: p, mode: e.Mode, hash: e.Hash}
			be.size.Store(-1)
			b.entries = append(b.entries, be)
			b.byPath[p] = be
			if e.Mode == gitstore.ModeDir {
				if err := walk(p, e.Hash); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if err := walk("", tree); err != nil {
		return nil, err
	}
	sort.Slice(b.entries, func(i, j int) bool { return b.entries[i].path < b.entries[j].path })
	return b, nil
}

// under returns the entries below folder dir ("." for all), in path order.
func (b *baseTree) under(dir string) []*baseEntry {
	if dir == "." {
		return b.entries
	}
	prefix := dir + "/"
	lo := sort.Search(len(b.entries), func(i int) bool { return b.entries[i].path >= prefix })
	hi := lo
	for hi < len(b.entries) && strings.HasPrefix(b.entries[hi].path, prefix) {
		hi++
	}
	return b.entries[lo:hi]
}

// blobCache keeps blobs the gateway read, up to a number of bytes; an
// arbitrary entry leaves when a new one does not fit. Safe for concurrent
// use.
type blobCache struct {
	mu    sync.RWMutex
	max   int64
	total int64
	m     map[gitstore.Hash][]byte
}

func newBlobCache(max int64) *blobCache {
	return &blobCache{max: max, m: map[gitstore.Hash][]byte{}}
}

func (c *blobCache) get(repo *gitstore.Repo, h gitstore.Hash) ([]byte, error) {
	c.mu.RLock()
	b, ok := c.m[h]
	c.mu.RUnlock()
	if ok {
		return b, nil
	}
	b, err := repo.ReadBlob(h)
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > c.max/4 {
		return b, nil // too big to keep
	}
	c.mu.Lock()
	for k, v := range c.m {
		if c.total+int64(len(b)) <= c.max {
			break
		}
		delete(c.m, k)
		c.total -= int64(len(v))
	}
	if _, ok := c.m[h]; !ok {
		c.m[h] = b
		c.total += int64(len(b))
	}
	c.mu.Unlock()
	return b, nil
}

// isBinary is git's test: a NUL byte in the first 8000 bytes.
func isBinary(data []byte) bool {
	if len(data) > 8000 {
		data = data[:8000]
	}
	return bytes.IndexByte(data, 0) >= 0
}

// numstat counts the lines a change adds and removes, as git diff
// --numstat does (git's xdiff alignment); binary content counts nothing.
func numstat(old, new []byte) (added, removed int, binary bool) {
	if isBinary(old) || isBinary(new) {
		return 0, 0, true
	}
	for _, c := range xdiff.Diff(xdiff.Lines(old), xdiff.Lines(new)) {
		added += c.Chg2
		removed += c.Chg1
	}
	return added, removed, false
}

// modeString is a mode as git writes it in a tree listing (six octal
// digits).
func modeString(m gitstore.Mode) string { return fmt.Sprintf("%06o", uint32(m)) }
