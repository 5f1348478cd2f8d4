package patch

import (
	"bytes"
	"crypto/sha1"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/dome-registry/dome/pkg/gitpath"
)

// MemStore keeps objects in memory with git's ids; reads it cannot answer go
// to Base (when set), writes never do. It serves tests, dry runs (check) and
// any caller that wants to see a result before storing it.
type MemStore struct {
	Base Store

	mu    sync.Mutex
	blobs map[OID][]byte
	trees map[OID][]TreeEntry
}

// NewMemStore returns an empty store over base (which may be nil).
func NewMemStore(base Store) *MemStore {
	return &MemStore{Base: base, blobs: map[OID][]byte{}, trees: map[OID][]TreeEntry{}}
}

// ReadBlob implements Store.
func (m *MemStore) ReadBlob(id OID) ([]byte, error) {
	m.mu.Lock()
	d, ok := m.blobs[id]
	m.mu.Unlock()
	if ok {
		return d, nil
	}
	if m.Base != nil {
		return m.Base.ReadBlob(id)
	}
	return nil, fmt.Errorf("blob %s: not found", id)
}

// ReadTree implements Store.
func (m *MemStore) ReadTree(id OID) ([]TreeEntry, error) {
	m.mu.Lock()
	t, ok := m.trees[id]
	m.mu.Unlock()
	if ok {
		return t, nil
	}
	if m.Base != nil {
		return m.Base.ReadTree(id)
	}
	return nil, fmt.Errorf("tree %s: not found", id)
}

// WriteBlob implements Store.
func (m *MemStore) WriteBlob(data []byte) (OID, error) {
	id := BlobID(data)
	m.mu.Lock()
	m.blobs[id] = append([]byte(nil), data...)
	m.mu.Unlock()
	return id, nil
}

// WriteTree implements Store: entries are sorted as git sorts them.
func (m *MemStore) WriteTree(entries []TreeEntry) (OID, error) {
	es, raw, err := EncodeTree(entries)
	if err != nil {
		return OID{}, err
	}
	id := objectID("tree", raw)
	m.mu.Lock()
	m.trees[id] = es
	m.mu.Unlock()
	return id, nil
}

// ResolvePrefix implements PrefixResolver over the objects in memory, then Base.
func (m *MemStore) ResolvePrefix(prefix string) ([]OID, error) {
	var out []OID
	m.mu.Lock()
	for id := range m.blobs {
		if strings.HasPrefix(id.String(), prefix) {
			out = append(out, id)
		}
	}
	m.mu.Unlock()
	if pr, ok := m.Base.(PrefixResolver); ok && len(out) == 0 {
		return pr.ResolvePrefix(prefix)
	}
	return out, nil
}

// EncodeTree sorts entries as git does (a directory sorts as "name/") and
// returns them with the tree object's body.
func EncodeTree(entries []TreeEntry) ([]TreeEntry, []byte, error) {
	es := append([]TreeEntry(nil), entries...)
	sort.Slice(es, func(i, j int) bool { return sortKey(es[i]) < sortKey(es[j]) })
	var b bytes.Buffer
	for i, e := range es {
		if err := gitpath.VerifyName(e.Name, uint32(e.Mode)); err != nil {
			return nil, nil, fmt.Errorf("write tree: %w", err)
		}
		if i > 0 && es[i-1].Name == e.Name {
			return nil, nil, fmt.Errorf("duplicate tree entry %q", e.Name)
		}
		b.WriteString(strconv.FormatUint(uint64(e.Mode), 8))
		b.WriteByte(' ')
		b.WriteString(e.Name)
		b.WriteByte(0)
		b.Write(e.ID[:])
	}
	return es, b.Bytes(), nil
}

func sortKey(e TreeEntry) string {
	if e.Mode == ModeDir {
		return e.Name + "/"
	}
	return e.Name
}

func objectID(kind string, body []byte) OID {
	h := sha1.New()
	fmt.Fprintf(h, "%s %d\x00", kind, len(body))
	h.Write(body)
	var o OID
	copy(o[:], h.Sum(nil))
	return o
}
