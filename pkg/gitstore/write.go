package gitstore

import (
	"fmt"
	"strings"

	"github.com/dome-registry/dome/pkg/gitpath"
)

// WriteBlob stores data as a blob and returns its id.
func (r *Repo) WriteBlob(data []byte) (Hash, error) {
	return r.writeObject(TypeBlob, data)
}

// writeObject stores an object as a loose object unless the repository
// has it already (objects are content-addressed: the same id is the same
// object).
func (r *Repo) writeObject(t ObjectType, data []byte) (Hash, error) {
	h := objectHash(t, data)
	if r.hasObjectFast(h) {
		return h, nil
	}
	if err := r.odb.writeLoose(h, t, data); err != nil {
		return ZeroHash, fmt.Errorf("store %s: %w", t, err)
	}
	return h, nil
}

// CheckEntryName refuses a tree entry name (of an entry of mode mode) that
// git would refuse to check out, or that would escape a checkout: see
// pkg/gitpath (empty, ".", "..", ".git" and its NTFS and HFS+ aliases, a
// .gitmodules symlink, "/", control bytes).
func CheckEntryName(name string, mode Mode) error {
	return gitpath.VerifyName(name, uint32(mode))
}

// WriteTree stores one tree level. Entries are sorted the way git sorts them
// (directories compare as "name/"); duplicate or invalid names are refused.
func (r *Repo) WriteTree(entries []TreeEntry) (Hash, error) {
	body, err := EncodeTree(entries)
	if err != nil {
		return ZeroHash, err
	}
	return r.writeObject(TypeTree, body)
}

// identOf is the ident git writes for s (ident.c fmt_ident): name and
// e-mail without leading and trailing "crud" (white space and . , : ; < > "
// \ '), and without the newlines and angle brackets that would break the
// line. So "Ann Example Jr." commits as "Ann Example Jr", as with git.
func identOf(s Signature) Signature {
	return Signature{Name: WithoutCrud(s.Name), Email: WithoutCrud(s.Email), When: s.When}
}

// WithoutCrud is git's strbuf_addstr_without_crud.
func WithoutCrud(s string) string {
	crud := func(c byte) bool {
		return c <= 32 || strings.IndexByte(".,:;<>\"\\'", c) >= 0
	}
	for len(s) > 0 && crud(s[0]) {
		s = s[1:]
	}
	for len(s) > 0 && crud(s[len(s)-1]) {
		s = s[:len(s)-1]
	}
	if !strings.ContainsAny(s, "\n<>") {
		return s
	}
	return strings.NewReplacer("\n", "", "<", "", ">", "").Replace(s)
}

// CommitSpec is what WriteCommit needs.
type CommitSpec struct {
	Tree      Hash
	Parents   []Hash
	Author    Signature
	Committer Signature
	Message   string
}

// WriteCommit stores a commit object.
func (r *Repo) WriteCommit(c CommitSpec) (Hash, error) {
	return r.writeObject(TypeCommit, encodeCommit(c))
}

// HashCommit returns the id WriteCommit would give c, writing nothing.
func HashCommit(c CommitSpec) (Hash, error) {
	return objectHash(TypeCommit, encodeCommit(c)), nil
}

// TagSpec is what WriteTag needs. Signer, when set, returns an armored
// OpenPGP signature over the tag's encoded bytes (without signature).
type TagSpec struct {
	Name       string
	Target     Hash
	TargetType ObjectType
	Tagger     Signature
	Message    string
	Signer     func(payload []byte) (string, error)
}

// WriteTag stores an annotated tag object (it does not create the ref).
func (r *Repo) WriteTag(t TagSpec) (Hash, error) {
	tt := t.TargetType
	switch tt {
	case "":
		tt = TypeCommit
	case TypeCommit, TypeTree, TypeBlob, TypeTag:
	default:
		return ZeroHash, fmt.Errorf("write tag: unknown target type %q", t.TargetType)
	}
	sig := ""
	if t.Signer != nil {
		var err error
		if sig, err = t.Signer(encodeTag(t, tt, "")); err != nil {
			return ZeroHash, fmt.Errorf("sign tag %s: %w", t.Name, err)
		}
	}
	return r.writeObject(TypeTag, encodeTag(t, tt, sig))
}

// Change sets or deletes one path in a tree (ApplyChanges).
type Change struct {
	Path   string // slash-separated, relative to the tree root
	Mode   Mode   // ignored for deletions
	Hash   Hash   // the blob (or submodule commit) to place at Path
	Delete bool
}

// ApplyChanges returns the id of the tree obtained from base (ZeroHash: an
// empty tree) by applying changes; only the subtrees on changed paths are
// rewritten. Deleting a path that does not exist is an error; emptied
// directories disappear, as in git. A change may not put a file where a
// directory is or the other way round unless the other side is deleted in
// the same call.
func (r *Repo) ApplyChanges(base Hash, changes []Change) (Hash, error) {
	root := &node{}
	for _, c := range changes {
		if !c.Delete { // (deleting an entry git would refuse is a repair)
			if err := gitpath.Verify(c.Path, uint32(c.Mode)); err != nil {
				return ZeroHash, err
			}
		}
		parts := strings.Split(c.Path, "/")
		n := root
		for _, p := range parts[:len(parts)-1] {
			n = n.child(p)
		}
		leaf := parts[len(parts)-1]
		if n.files == nil {
			n.files = map[string]*Change{}
		}
		if _, dup := n.files[leaf]; dup {
			return ZeroHash, fmt.Errorf("path %q changed twice", c.Path)
		}
		cc := c
		n.files[leaf] = &cc
	}
	return r.applyNode(base, root, "")
}

type node struct {
	dirs  map[string]*node
	files map[string]*Change
}

func (n *node) child(name string) *node {
	if n.dirs == nil {
		n.dirs = map[string]*node{}
	}
	c, ok := n.dirs[name]
	if !ok {
		c = &node{}
		n.dirs[name] = c
	}
	return c
}

func (r *Repo) applyNode(base Hash, n *node, prefix string) (Hash, error) {
	entries := map[string]TreeEntry{}
	if !base.IsZero() {
		es, err := r.ReadTree(base)
		if err != nil {
			return ZeroHash, err
		}
		for _, e := range es {
			entries[e.Name] = e
		}
	}
	for name, c := range n.files {
		e, exists := entries[name]
		if c.Delete {
			if !exists || e.Mode.IsDir() {
				return ZeroHash, fmt.Errorf("delete %s%s: %w", prefix, name, ErrNotFound)
			}
			delete(entries, name)
			continue
		}
		if exists && e.Mode.IsDir() {
			if sub, ok := n.dirs[name]; !ok || !deletesAll(r, e.Hash, sub) {
				return ZeroHash, fmt.Errorf("write %s%s: a directory is in the way", prefix, name)
			}
		}
		entries[name] = TreeEntry{Name: name, Mode: c.Mode, Hash: c.Hash}
	}
	for name, sub := range n.dirs {
		var subBase Hash
		if e, ok := entries[name]; ok {
			if c, isFile := n.files[name]; isFile && !c.Delete {
				// a file replaces this directory; its deletions were checked above
				continue
			}
			if !e.Mode.IsDir() {
				if c, ok := n.files[name]; !ok || !c.Delete {
					return ZeroHash, fmt.Errorf("write below %s%s: a file is in the way", prefix, name)
				}
			} else {
				subBase = e.Hash
			}
		}
		h, err := r.applyNode(subBase, sub, prefix+name+"/")
		if err != nil {
			return ZeroHash, err
		}
		if h.IsZero() {
			delete(entries, name)
			continue
		}
		entries[name] = TreeEntry{Name: name, Mode: ModeDir, Hash: h}
	}
	if len(entries) == 0 {
		return ZeroHash, nil
	}
	list := make([]TreeEntry, 0, len(entries))
	for _, e := range entries {
		list = append(list, e)
	}
	return r.WriteTree(list)
}

// deletesAll reports whether sub deletes every file below tree t.
func deletesAll(r *Repo, t Hash, sub *node) bool {
	es, err := r.ReadTree(t)
	if err != nil {
		return false
	}
	for _, e := range es {
		if e.Mode.IsDir() {
			s, ok := sub.dirs[e.Name]
			if !ok || !deletesAll(r, e.Hash, s) {
				return false
			}
			continue
		}
		c, ok := sub.files[e.Name]
		if !ok || !c.Delete {
			return false
		}
	}
	return true
}
