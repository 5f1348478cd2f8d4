package patch

import (
	"github.com/dome-registry/dome/pkg/gitstore"
)

// RepoStore is the Store over a repository opened with pkg/gitstore: base
// trees are read from its object database and results are written to it.
type RepoStore struct {
	Repo *gitstore.Repo
	// Pack, when set, takes the writes: they are readable through this
	// store at once and reach the repository as one packfile at Flush (a
	// series of patches stores much faster than as a file per object).
	Pack *gitstore.PackWriter
	// trees keeps the last trees written to Pack decoded, up to
	// keptTrees (a series reads the trees the patch before wrote); older
	// pending ones are decoded from Pack again.
	trees     map[OID][]TreeEntry
	treesFIFO []OID
}

// keptTrees bounds RepoStore.trees: 256 trees of 100 entries are about
// 2 MB, and a long series must not hold every tree it wrote.
const keptTrees = 32

// NewRepoStore returns a Store over r.
func NewRepoStore(r *gitstore.Repo) *RepoStore { return &RepoStore{Repo: r} }

// NewPackStore returns a Store over r whose writes go to a PackWriter;
// Flush stores them.
func NewPackStore(r *gitstore.Repo) *RepoStore {
	return &RepoStore{Repo: r, Pack: r.NewPackWriter(), trees: map[OID][]TreeEntry{}}
}

// Flush stores what was written (nothing to do without Pack).
func (s *RepoStore) Flush() error {
	if s.Pack == nil {
		return nil
	}
	if err := s.Pack.Flush(); err != nil {
		return err
	}
	clear(s.trees)
	s.treesFIFO = s.treesFIFO[:0]
	return nil
}

// ReadTree implements Store.
func (s *RepoStore) ReadTree(id OID) ([]TreeEntry, error) {
	if es, ok := s.trees[id]; ok {
		return es, nil
	}
	var es []gitstore.TreeEntry
	var err error
	if s.Pack != nil && s.Pack.Has(id) {
		es, err = s.Pack.ReadTree(id)
	} else {
		es, err = s.Repo.ReadTree(id)
	}
	if err != nil {
		return nil, err
	}
	out := make([]TreeEntry, len(es))
	for i, e := range es {
		out[i] = TreeEntry{Name: e.Name, Mode: Mode(e.Mode), ID: e.Hash}
	}
	return out, nil
}

// ReadBlob implements Store.
func (s *RepoStore) ReadBlob(id OID) ([]byte, error) {
	if s.Pack != nil {
		if t, data, ok := s.Pack.Read(id); ok && t == gitstore.TypeBlob {
			return data, nil // a fresh copy
		}
	}
	return s.Repo.ReadBlob(id)
}

// WriteBlob implements Store.
func (s *RepoStore) WriteBlob(data []byte) (OID, error) {
	if s.Pack != nil {
		return s.Pack.WriteBlob(data) // compressed at once: data is not kept
	}
	return s.Repo.WriteBlob(data)
}

// WriteTree implements Store.
func (s *RepoStore) WriteTree(entries []TreeEntry) (OID, error) {
	es := make([]gitstore.TreeEntry, len(entries))
	for i, e := range entries {
		es[i] = gitstore.TreeEntry{Name: e.Name, Mode: gitstore.Mode(e.Mode), Hash: e.ID}
	}
	if s.Pack == nil {
		return s.Repo.WriteTree(es)
	}
	id, err := s.Pack.WriteTree(es)
	if err != nil {
		return id, err
	}
	if _, kept := s.trees[id]; !kept && s.Pack.Has(id) {
		sorted, _, err := EncodeTree(entries)
		if err != nil {
			return id, err
		}
		s.trees[id] = sorted
		s.treesFIFO = append(s.treesFIFO, id)
		if len(s.treesFIFO) > keptTrees {
			delete(s.trees, s.treesFIFO[0])
			s.treesFIFO = s.treesFIFO[1:]
		}
	}
	return id, nil
}

// ResolvePrefix implements PrefixResolver.
func (s *RepoStore) ResolvePrefix(prefix string) ([]OID, error) {
	out, err := s.Repo.HashesWithPrefix(prefix)
	if s.Pack != nil && err == nil {
		out = append(out, s.Pack.WithPrefix(prefix)...)
	}
	return out, err
}
