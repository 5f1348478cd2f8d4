package patch

import (
	"github.com/dome-registry/dome/pkg/gitstore"
)

// RepoStore is the Store over a repository opened with pkg/gitstore: base
// trees are read from its object database and results are written to it.
type RepoStore struct{ Repo *gitstore.Repo }

// NewRepoStore returns a Store over r.
func NewRepoStore(r *gitstore.Repo) *RepoStore { return &RepoStore{Repo: r} }

// ReadTree implements Store.
func (s *RepoStore) ReadTree(id OID) ([]TreeEntry, error) {
	es, err := s.Repo.ReadTree(id)
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
func (s *RepoStore) ReadBlob(id OID) ([]byte, error) { return s.Repo.ReadBlob(id) }

// WriteBlob implements Store.
func (s *RepoStore) WriteBlob(data []byte) (OID, error) {
	return s.Repo.WriteBlob(data)
}

// WriteTree implements Store.
func (s *RepoStore) WriteTree(entries []TreeEntry) (OID, error) {
	es := make([]gitstore.TreeEntry, len(entries))
	for i, e := range entries {
		es[i] = gitstore.TreeEntry{Name: e.Name, Mode: gitstore.Mode(e.Mode), Hash: e.ID}
	}
	return s.Repo.WriteTree(es)
}

// ResolvePrefix implements PrefixResolver.
func (s *RepoStore) ResolvePrefix(prefix string) ([]OID, error) {
	return s.Repo.HashesWithPrefix(prefix)
}
