package gitstore

import (
	"bytes"
	"errors"
	"fmt"
	"path"
	"sort"
	"strings"
	"time"
)

// Signature is an author, committer or tagger line.
type Signature struct {
	Name  string    `json:"name"`
	Email string    `json:"email"`
	When  time.Time `json:"when"`
}

// Commit is a decoded commit object.
type Commit struct {
	Hash      Hash      `json:"hash"`
	Tree      Hash      `json:"tree"`
	Parents   []Hash    `json:"parents"`
	Author    Signature `json:"author"`
	Committer Signature `json:"committer"`
	Message   string    `json:"message"`
}

// TreeEntry is one entry of a tree object.
type TreeEntry struct {
	Name string `json:"name"`
	Mode Mode   `json:"mode"`
	Hash Hash   `json:"hash"`
}

// ObjectType returns the type of the object h; ErrNotFound if absent.
func (r *Repo) ObjectType(h Hash) (ObjectType, error) {
	t, err := r.odb.readType(h)
	if errors.Is(err, errNoObject) {
		// A pack added since the packs were listed (a fetch, git gc).
		if err = r.odb.rescan(); err == nil {
			t, err = r.odb.readType(h)
		}
	}
	if errors.Is(err, errNoObject) {
		return "", fmt.Errorf("object %s: %w", h, ErrNotFound)
	}
	if err != nil {
		return "", fmt.Errorf("object %s: %w", h, err)
	}
	return t, nil
}

// raw returns the type and content of object h.
func (r *Repo) raw(h Hash) (ObjectType, []byte, error) {
	t, data, err := r.odb.read(h)
	if errors.Is(err, errNoObject) {
		if err = r.odb.rescan(); err == nil {
			t, data, err = r.odb.read(h)
		}
	}
	if errors.Is(err, errNoObject) {
		return "", nil, ErrNotFound
	}
	return t, data, err
}

// rawOf returns the content of h, which must be of type want.
func (r *Repo) rawOf(h Hash, want ObjectType) ([]byte, error) {
	t, data, err := r.raw(h)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", want, h, err)
	}
	if t != want {
		return nil, fmt.Errorf("%s %s: is a %s: %w", want, h, t, ErrNotFound)
	}
	return data, nil
}

// HasObject reports whether the object h is in the store.
func (r *Repo) HasObject(h Hash) bool {
	if _, err := r.ObjectType(h); err == nil {
		return true
	}
	return false
}

// Commit reads the commit h.
func (r *Repo) Commit(h Hash) (*Commit, error) {
	data, err := r.rawOf(h, TypeCommit)
	if err != nil {
		return nil, err
	}
	c, err := decodeCommit(data)
	if err != nil {
		return nil, fmt.Errorf("commit %s: %w", h, err)
	}
	return &Commit{
		Hash:      h,
		Tree:      c.tree,
		Parents:   c.parents,
		Author:    c.author,
		Committer: c.committer,
		Message:   c.message,
	}, nil
}

// CommitTree returns the root tree of commit h.
func (r *Repo) CommitTree(h Hash) (Hash, error) {
	c, err := r.Commit(h)
	if err != nil {
		return ZeroHash, err
	}
	return c.Tree, nil
}

// Tag is a decoded annotated tag object.
type Tag struct {
	Hash         Hash       `json:"hash"`
	Name         string     `json:"name"`
	Target       Hash       `json:"target"`
	TargetType   ObjectType `json:"target_type"`
	Tagger       Signature  `json:"tagger"`
	Message      string     `json:"message"`
	PGPSignature string     `json:"pgp_signature,omitempty"`
}

// Tag reads the annotated tag object h.
func (r *Repo) Tag(h Hash) (*Tag, error) {
	data, err := r.rawOf(h, TypeTag)
	if err != nil {
		return nil, err
	}
	t, err := decodeTag(data)
	if err != nil {
		return nil, fmt.Errorf("tag %s: %w", h, err)
	}
	return tagOf(h, t), nil
}

func tagOf(h Hash, t *tagObject) *Tag {
	return &Tag{
		Hash:         h,
		Name:         t.name,
		Target:       t.target,
		TargetType:   t.targetType,
		Tagger:       t.tagger,
		Message:      t.message,
		PGPSignature: t.pgpSignature,
	}
}

// TagSignedPayload reads the annotated tag object h and returns it with
// the bytes its signature signs: the object without the signature block
// (and without gpgsig header lines), as git verify-tag checks it. For a
// tag without a signature that is its whole content.
func (r *Repo) TagSignedPayload(h Hash) (*Tag, []byte, error) {
	data, err := r.rawOf(h, TypeTag)
	if err != nil {
		return nil, nil, err
	}
	t, err := decodeTag(data)
	if err != nil {
		return nil, nil, fmt.Errorf("tag %s: %w", h, err)
	}
	return tagOf(h, t), tagSignedPayload(data), nil
}

// ReadTree returns the entries of tree h in git's order.
func (r *Repo) ReadTree(h Hash) ([]TreeEntry, error) {
	r.treeMu.Lock()
	if es, ok := r.treeCache[h]; ok {
		r.treeMu.Unlock()
		return es, nil
	}
	r.treeMu.Unlock()
	data, err := r.rawOf(h, TypeTree)
	if err != nil {
		return nil, err
	}
	es, err := parseTree(data)
	if err != nil {
		return nil, fmt.Errorf("tree %s: %w", h, err)
	}
	r.treeMu.Lock()
	if len(r.treeCache) > 1<<16 {
		r.treeCache = map[Hash][]TreeEntry{} // bound memory on huge walks
	}
	r.treeCache[h] = es
	r.treeMu.Unlock()
	return es, nil
}

// EntryAt returns the entry at the slash-separated path below tree root
// ("" is the root itself, returned as a directory entry). ErrNotFound when a
// component is missing or a non-directory is traversed.
func (r *Repo) EntryAt(root Hash, p string) (TreeEntry, error) {
	cur := TreeEntry{Mode: ModeDir, Hash: root}
	if p == "" || p == "." {
		return cur, nil
	}
	for _, name := range strings.Split(strings.Trim(p, "/"), "/") {
		if !cur.Mode.IsDir() {
			return TreeEntry{}, fmt.Errorf("%s: %w", p, ErrNotFound)
		}
		e, found, err := r.lookup(cur.Hash, name)
		if err != nil {
			return TreeEntry{}, err
		}
		if !found {
			return TreeEntry{}, fmt.Errorf("%s: %w", p, ErrNotFound)
		}
		cur = e
	}
	cur.Name = path.Base(p)
	return cur, nil
}

// lookup finds name in tree t: from the parsed-tree cache when present,
// otherwise by scanning the raw tree object without decoding every entry
// (a registry's tools/ tree has thousands of entries and differs per commit).
func (r *Repo) lookup(t Hash, name string) (TreeEntry, bool, error) {
	r.treeMu.Lock()
	es, ok := r.treeCache[t]
	r.treeMu.Unlock()
	if ok {
		for _, e := range es {
			if e.Name == name {
				return e, true, nil
			}
		}
		return TreeEntry{}, false, nil
	}
	data, err := r.rawOf(t, TypeTree)
	if err != nil {
		return TreeEntry{}, false, err
	}
	e, found, err := findInTree(data, name)
	if err != nil {
		return TreeEntry{}, false, fmt.Errorf("tree %s: %w", t, err)
	}
	return e, found, nil
}

// findInTree scans a raw tree object for one entry.
func findInTree(data []byte, name string) (TreeEntry, bool, error) {
	for len(data) > 0 {
		sp := bytes.IndexByte(data, ' ')
		if sp <= 0 {
			return TreeEntry{}, false, errors.New("corrupt tree: no mode")
		}
		modeBytes := data[:sp]
		data = data[sp+1:]
		nul := bytes.IndexByte(data, 0)
		if nul <= 0 || nul+21 > len(data) {
			return TreeEntry{}, false, errors.New("corrupt tree: bad entry")
		}
		if string(data[:nul]) == name {
			var mode uint32
			for _, c := range modeBytes {
				if c < '0' || c > '7' {
					return TreeEntry{}, false, errors.New("corrupt tree: bad mode")
				}
				mode = mode<<3 | uint32(c-'0')
			}
			e := TreeEntry{Name: name, Mode: Mode(mode)}
			copy(e.Hash[:], data[nul+1:nul+21])
			return e, true, nil
		}
		data = data[nul+21:]
	}
	return TreeEntry{}, false, nil
}

func treeKey(e TreeEntry) string {
	if e.Mode.IsDir() {
		return e.Name + "/"
	}
	return e.Name
}

// File is a file found by Walk, with its path relative to the walked tree.
type File struct {
	Path string `json:"path"`
	Mode Mode   `json:"mode"`
	Hash Hash   `json:"blob"`
}

// Walk lists every non-directory entry below tree h, sorted by path.
func (r *Repo) Walk(h Hash) ([]File, error) {
	var out []File
	var walk func(prefix string, t Hash) error
	walk = func(prefix string, t Hash) error {
		es, err := r.ReadTree(t)
		if err != nil {
			return err
		}
		for _, e := range es {
			p := e.Name
			if prefix != "" {
				p = prefix + "/" + e.Name
			}
			if e.Mode.IsDir() {
				if err := walk(p, e.Hash); err != nil {
					return err
				}
				continue
			}
			out = append(out, File{Path: p, Mode: e.Mode, Hash: e.Hash})
		}
		return nil
	}
	if err := walk("", h); err != nil {
		return nil, err
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, nil
}

// ReadBlob returns the content of blob h.
func (r *Repo) ReadBlob(h Hash) ([]byte, error) {
	data, err := r.rawOf(h, TypeBlob)
	if err != nil {
		return nil, err
	}
	// The reader caches resolved objects; the caller owns its copy.
	return bytes.Clone(data), nil
}

// BlobSize returns the size in bytes of blob h without reading it.
func (r *Repo) BlobSize(h Hash) (int64, error) {
	data, err := r.ReadBlob(h)
	return int64(len(data)), err
}

// parseTree decodes a tree object: repeated "<octal mode> <name>\x00<20-byte id>".
func parseTree(data []byte) ([]TreeEntry, error) {
	var es []TreeEntry
	for len(data) > 0 {
		sp := bytes.IndexByte(data, ' ')
		if sp <= 0 {
			return nil, errors.New("corrupt tree: no mode")
		}
		var mode uint32
		for _, c := range data[:sp] {
			if c < '0' || c > '7' {
				return nil, errors.New("corrupt tree: bad mode")
			}
			mode = mode<<3 | uint32(c-'0')
		}
		data = data[sp+1:]
		nul := bytes.IndexByte(data, 0)
		if nul <= 0 || nul+21 > len(data) {
			return nil, errors.New("corrupt tree: bad entry")
		}
		e := TreeEntry{Name: string(data[:nul]), Mode: Mode(mode)}
		copy(e.Hash[:], data[nul+1:nul+21])
		es = append(es, e)
		data = data[nul+21:]
	}
	return es, nil
}

// HashesWithPrefix returns every object id starting with the hex prefix
// (any length, odd lengths included), sorted.
func (r *Repo) HashesWithPrefix(hexPrefix string) ([]Hash, error) {
	hexPrefix = strings.ToLower(hexPrefix)
	if !IsHex(hexPrefix) || len(hexPrefix) > 40 {
		return nil, fmt.Errorf("%q is not a hex object id prefix", hexPrefix)
	}
	out, err := r.odb.prefixed(hexPrefix)
	if err != nil {
		return nil, fmt.Errorf("search objects %s: %w", hexPrefix, err)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out, nil
}

func unhex(c byte) byte {
	switch {
	case c >= '0' && c <= '9':
		return c - '0'
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10
	}
	return 0
}

// ReadOrder returns a key that orders reads of many objects for locality:
// objects of one pack in pack order, so that a delta base is read (and
// cached) before the objects built on it. Missing or loose objects sort last.
func (r *Repo) ReadOrder(h Hash) uint64 {
	if i, off, ok := r.odb.order(h); ok {
		return uint64(i)<<48 | uint64(off)
	}
	return ^uint64(0)
}
