package gitstore

import (
	"errors"
	"fmt"
	"io"
	"path"
	"sort"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
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
	obj, err := r.storage.EncodedObject(plumbing.AnyObject, toPlumbing(h))
	if err != nil {
		if errors.Is(err, plumbing.ErrObjectNotFound) {
			return "", fmt.Errorf("object %s: %w", h, ErrNotFound)
		}
		return "", fmt.Errorf("object %s: %w", h, err)
	}
	return fromPlumbingType(obj.Type()), nil
}

// HasObject reports whether the object h is in the store.
func (r *Repo) HasObject(h Hash) bool {
	return r.storage.HasEncodedObject(toPlumbing(h)) == nil
}

// Commit reads the commit h.
func (r *Repo) Commit(h Hash) (*Commit, error) {
	c, err := object.GetCommit(r.storage, toPlumbing(h))
	if err != nil {
		if errors.Is(err, plumbing.ErrObjectNotFound) {
			return nil, fmt.Errorf("commit %s: %w", h, ErrNotFound)
		}
		return nil, fmt.Errorf("commit %s: %w", h, err)
	}
	out := &Commit{
		Hash:      h,
		Tree:      fromPlumbing(c.TreeHash),
		Author:    Signature{c.Author.Name, c.Author.Email, c.Author.When},
		Committer: Signature{c.Committer.Name, c.Committer.Email, c.Committer.When},
		Message:   c.Message,
	}
	for _, p := range c.ParentHashes {
		out.Parents = append(out.Parents, fromPlumbing(p))
	}
	return out, nil
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
	t, err := object.GetTag(r.storage, toPlumbing(h))
	if err != nil {
		if errors.Is(err, plumbing.ErrObjectNotFound) {
			return nil, fmt.Errorf("tag %s: %w", h, ErrNotFound)
		}
		return nil, fmt.Errorf("tag %s: %w", h, err)
	}
	return &Tag{
		Hash:         h,
		Name:         t.Name,
		Target:       fromPlumbing(t.Target),
		TargetType:   fromPlumbingType(t.TargetType),
		Tagger:       Signature{t.Tagger.Name, t.Tagger.Email, t.Tagger.When},
		Message:      t.Message,
		PGPSignature: t.PGPSignature,
	}, nil
}

// ReadTree returns the entries of tree h in git's order.
func (r *Repo) ReadTree(h Hash) ([]TreeEntry, error) {
	r.treeMu.Lock()
	if es, ok := r.treeCache[h]; ok {
		r.treeMu.Unlock()
		return es, nil
	}
	r.treeMu.Unlock()
	t, err := object.GetTree(r.storage, toPlumbing(h))
	if err != nil {
		if errors.Is(err, plumbing.ErrObjectNotFound) {
			return nil, fmt.Errorf("tree %s: %w", h, ErrNotFound)
		}
		return nil, fmt.Errorf("tree %s: %w", h, err)
	}
	es := make([]TreeEntry, len(t.Entries))
	for i, e := range t.Entries {
		es[i] = TreeEntry{Name: e.Name, Mode: fromFileMode(e.Mode), Hash: fromPlumbing(e.Hash)}
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
		es, err := r.ReadTree(cur.Hash)
		if err != nil {
			return TreeEntry{}, err
		}
		i := sort.Search(len(es), func(i int) bool { return treeKey(es[i]) >= name })
		found := false
		// git orders directories as "name/", so a directory may sort just after a file prefix.
		for j := max(i-1, 0); j < len(es) && j <= i+1; j++ {
			if es[j].Name == name {
				cur, found = es[j], true
				break
			}
		}
		if !found {
			for _, e := range es { // defensive: trees written by other tools may be unsorted
				if e.Name == name {
					cur, found = e, true
					break
				}
			}
		}
		if !found {
			return TreeEntry{}, fmt.Errorf("%s: %w", p, ErrNotFound)
		}
	}
	cur.Name = path.Base(p)
	return cur, nil
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
	obj, err := r.storage.EncodedObject(plumbing.BlobObject, toPlumbing(h))
	if err != nil {
		if errors.Is(err, plumbing.ErrObjectNotFound) {
			return nil, fmt.Errorf("blob %s: %w", h, ErrNotFound)
		}
		return nil, fmt.Errorf("blob %s: %w", h, err)
	}
	rd, err := obj.Reader()
	if err != nil {
		return nil, fmt.Errorf("blob %s: %w", h, err)
	}
	defer rd.Close()
	buf := make([]byte, 0, obj.Size())
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := rd.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return nil, fmt.Errorf("blob %s: %w", h, err)
		}
	}
}

// BlobSize returns the size in bytes of blob h without reading it.
func (r *Repo) BlobSize(h Hash) (int64, error) {
	obj, err := r.storage.EncodedObject(plumbing.BlobObject, toPlumbing(h))
	if err != nil {
		return 0, fmt.Errorf("blob %s: %w", h, err)
	}
	return obj.Size(), nil
}

// HashesWithPrefix returns every object id starting with the hex prefix
// (any length, odd lengths included), sorted.
func (r *Repo) HashesWithPrefix(hexPrefix string) ([]Hash, error) {
	hexPrefix = strings.ToLower(hexPrefix)
	if !IsHex(hexPrefix) || len(hexPrefix) > 40 {
		return nil, fmt.Errorf("%q is not a hex object id prefix", hexPrefix)
	}
	even := hexPrefix[:len(hexPrefix)/2*2]
	var b []byte
	for i := 0; i < len(even); i += 2 {
		b = append(b, unhex(even[i])<<4|unhex(even[i+1]))
	}
	hs, err := r.storage.HashesWithPrefix(b)
	if err != nil {
		return nil, fmt.Errorf("search objects %s: %w", hexPrefix, err)
	}
	seen := map[Hash]bool{}
	var out []Hash
	for _, h := range hs {
		g := fromPlumbing(h)
		if !seen[g] && strings.HasPrefix(g.String(), hexPrefix) {
			seen[g] = true
			out = append(out, g)
		}
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
