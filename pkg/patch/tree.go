package patch

import (
	"fmt"
	"sort"
	"strings"
)

// tree is an editable overlay over a stored tree: only the directories on
// changed paths are read, and only changed directories are written.
type tree struct {
	st   Store
	root *dirNode
}

type dirNode struct {
	id      OID // the stored tree, zero for a new directory
	loaded  bool
	dirty   bool
	entries map[string]*entry
}

type entry struct {
	mode    Mode
	id      OID
	data    []byte // pending blob content when hasData
	hasData bool
	dir     *dirNode // for ModeDir, once visited
}

func newTree(st Store, base OID) *tree {
	return &tree{st: st, root: &dirNode{id: base, loaded: base.IsZero(), entries: map[string]*entry{}}}
}

func (t *tree) load(d *dirNode) error {
	if d.loaded {
		return nil
	}
	es, err := t.st.ReadTree(d.id)
	if err != nil {
		return fmt.Errorf("read tree %s: %w", d.id, err)
	}
	d.entries = make(map[string]*entry, len(es))
	for _, e := range es {
		d.entries[e.Name] = &entry{mode: e.Mode, id: e.ID}
	}
	d.loaded = true
	return nil
}

func (t *tree) sub(e *entry) *dirNode {
	if e.dir == nil {
		e.dir = &dirNode{id: e.id, entries: map[string]*entry{}}
	}
	return e.dir
}

// lookup returns the non-directory entry at p.
func (t *tree) lookup(p string) (*entry, error) {
	d := t.root
	parts := strings.Split(p, "/")
	for i, name := range parts {
		if err := t.load(d); err != nil {
			return nil, err
		}
		e, ok := d.entries[name]
		if !ok {
			return nil, nil
		}
		if i == len(parts)-1 {
			if e.mode == ModeDir {
				return nil, nil
			}
			return e, nil
		}
		if e.mode != ModeDir {
			return nil, nil
		}
		d = t.sub(e)
	}
	return nil, nil
}

// isDir reports whether p is a directory in the tree.
func (t *tree) isDir(p string) (bool, error) {
	d := t.root
	parts := strings.Split(p, "/")
	for i, name := range parts {
		if err := t.load(d); err != nil {
			return false, err
		}
		e, ok := d.entries[name]
		if !ok || e.mode != ModeDir {
			return false, nil
		}
		if i == len(parts)-1 {
			return true, nil
		}
		d = t.sub(e)
	}
	return false, nil
}

// remove deletes the file at p; emptied directories disappear on write.
func (t *tree) remove(p string) error {
	d := t.root
	parts := strings.Split(p, "/")
	var path []*dirNode
	for i, name := range parts {
		if err := t.load(d); err != nil {
			return err
		}
		path = append(path, d)
		e, ok := d.entries[name]
		if !ok {
			return fmt.Errorf("%s: not in the tree", p)
		}
		if i == len(parts)-1 {
			if e.mode == ModeDir {
				return fmt.Errorf("%s: is a directory", p)
			}
			delete(d.entries, name)
			break
		}
		if e.mode != ModeDir {
			return fmt.Errorf("%s: %s is a file", p, strings.Join(parts[:i+1], "/"))
		}
		d = t.sub(e)
	}
	for _, n := range path {
		n.dirty = true
	}
	return nil
}

// put places a file at p. A file in the way of a directory on the path, or a
// non-empty directory at p, is an error: the patch must delete it itself.
func (t *tree) put(p string, e *entry) error {
	d := t.root
	parts := strings.Split(p, "/")
	var path []*dirNode
	for i, name := range parts {
		if err := t.load(d); err != nil {
			return err
		}
		path = append(path, d)
		cur, ok := d.entries[name]
		if i == len(parts)-1 {
			if ok && cur.mode == ModeDir {
				empty, err := t.empty(t.sub(cur))
				if err != nil {
					return err
				}
				if !empty {
					return &pathError{Path: p, Problem: "a directory is there and the patch does not delete what it holds"}
				}
			}
			d.entries[name] = e
			break
		}
		if !ok {
			cur = &entry{mode: ModeDir, dir: &dirNode{loaded: true, entries: map[string]*entry{}}}
			d.entries[name] = cur
		} else if cur.mode != ModeDir {
			return &pathError{Path: p, Problem: fmt.Sprintf("%s is a file and the patch does not delete it", strings.Join(parts[:i+1], "/"))}
		}
		d = t.sub(cur)
	}
	for _, n := range path {
		n.dirty = true
	}
	return nil
}

func (t *tree) empty(d *dirNode) (bool, error) {
	if !d.loaded && !d.dirty {
		return false, nil // stored trees are never empty
	}
	if err := t.load(d); err != nil {
		return false, err
	}
	for _, e := range d.entries {
		if e.mode != ModeDir {
			return false, nil
		}
		ok, err := t.empty(t.sub(e))
		if err != nil || !ok {
			return ok, err
		}
	}
	return true, nil
}

// write stores changed blobs and trees and returns the root id (zero for
// an empty tree).
func (t *tree) write() (OID, error) {
	id, _, err := t.writeDir(t.root)
	return id, err
}

func (t *tree) writeDir(d *dirNode) (OID, bool, error) {
	if !d.dirty {
		return d.id, !d.id.IsZero() || len(d.entries) > 0, nil
	}
	names := make([]string, 0, len(d.entries))
	for n := range d.entries {
		names = append(names, n)
	}
	sort.Strings(names)
	out := make([]TreeEntry, 0, len(names))
	for _, n := range names {
		e := d.entries[n]
		switch {
		case e.mode == ModeDir && e.dir != nil:
			id, nonEmpty, err := t.writeDir(e.dir)
			if err != nil {
				return OID{}, false, err
			}
			if !nonEmpty {
				continue
			}
			out = append(out, TreeEntry{Name: n, Mode: ModeDir, ID: id})
		case e.hasData:
			id, err := t.st.WriteBlob(e.data)
			if err != nil {
				return OID{}, false, fmt.Errorf("write blob %s: %w", n, err)
			}
			e.id, e.hasData, e.data = id, false, nil
			out = append(out, TreeEntry{Name: n, Mode: e.mode, ID: e.id})
		default:
			out = append(out, TreeEntry{Name: n, Mode: e.mode, ID: e.id})
		}
	}
	if len(out) == 0 {
		return OID{}, false, nil
	}
	id, err := t.st.WriteTree(out)
	if err != nil {
		return OID{}, false, fmt.Errorf("write tree: %w", err)
	}
	d.id, d.dirty = id, false
	return id, true, nil
}

// pathError is a refusal tied to a path.
type pathError struct {
	Path    string
	Problem string
}

func (e *pathError) Error() string { return e.Path + ": " + e.Problem }
