package registry

import (
	"context"
	"errors"
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/dome-registry/dome/pkg/gitstore"
)

// GeneratorsDir is the folder of generator bundles at the repository root:
// generators/<bundle_id>/bundle.json plus its templates.
const GeneratorsDir = "generators"

// BundleTag returns the release tag of a generator bundle:
// generators/<bundle_id>/<version>.
func BundleTag(bundleID, version string) string {
	return GeneratorsDir + "/" + bundleID + "/" + version
}

// BundleRef is a parsed generators.lock.json "bundle" value: "<id>@<rev>",
// or "<id>" alone for the bundle at the tool's own commit (InTree).
type BundleRef struct {
	ID     string
	Rev    string
	InTree bool
}

func (b BundleRef) String() string {
	if b.InTree {
		return b.ID
	}
	return b.ID + "@" + b.Rev
}

// ParseBundleRef parses a bundle reference as written in a lock file or on
// the command line (arg names it in errors).
func ParseBundleRef(arg, s string) (BundleRef, error) {
	if !strings.Contains(s, "@") {
		if !ValidID(s) {
			return BundleRef{}, &errkind.InputError{Source: arg, Problem: fmt.Sprintf("%q is not a bundle id", s), Hint: "bundle ids match ^[a-z0-9][a-z0-9._-]*$; write <bundle_id> or <bundle_id>@<ref>"}
		}
		return BundleRef{ID: s, InTree: true}, nil
	}
	r, err := ParseRef(arg, s)
	if err != nil {
		return BundleRef{}, err
	}
	return BundleRef{ID: r.ID, Rev: r.Rev}, nil
}

// BundleResolution is a generator bundle pinned to a commit, with the blob
// id of every file below its folder.
type BundleResolution struct {
	BundleID string `json:"bundle_id"`
	// Requested is the reference as the lock file wrote it.
	Requested string `json:"requested"`
	InTree    bool   `json:"in_tree,omitempty"`
	Pin
	Path  string        `json:"path"` // generators/<bundle_id>
	Tree  gitstore.Hash `json:"bundle_tree"`
	Files []FileEntry   `json:"files"` // relative to Path, sorted
}

// ResolveBundle pins a bundle reference. An in-tree reference (no @rev)
// takes the bundle from toolPin, the commit the tool was resolved at, so it
// is exactly as pinned as the tool. "vX.Y.Z" names the annotated tag
// generators/<bundle_id>/vX.Y.Z. With opts.Pinned a branch, HEAD or a short
// SHA is refused.
func (r *Registry) ResolveBundle(ctx context.Context, ref BundleRef, toolPin Pin, opts PinOptions) (*BundleResolution, error) {
	if opts.Source == "" {
		opts.Source = "bundle"
	}
	p := toolPin
	if !ref.InTree {
		var err error
		p, err = r.pinNS(ctx, GeneratorsDir+"/"+ref.ID+"/", ref.ID, ref.Rev, opts)
		if err != nil {
			return nil, err
		}
	}
	return r.BundleAt(ref, p, opts.Source)
}

// BundleAt returns the bundle at a pinned commit.
func (r *Registry) BundleAt(ref BundleRef, p Pin, source string) (*BundleResolution, error) {
	dir := GeneratorsDir + "/" + ref.ID
	e, err := r.repo.EntryAt(p.Tree, dir)
	if err != nil && !errors.Is(err, gitstore.ErrNotFound) {
		return nil, err
	}
	if err != nil || !e.Mode.IsDir() {
		ids, _ := r.BundleIDs(p)
		hint := "available bundles: " + strings.Join(ids, ", ")
		if len(ids) == 0 {
			hint = fmt.Sprintf("there is no %s/ folder at %s; add %s/%s/bundle.json or pin a ref that has it", GeneratorsDir, p.Commit.Short(), GeneratorsDir, ref.ID)
		}
		return nil, &errkind.InputError{
			Source:  source,
			Problem: fmt.Sprintf("bundle %s: %s/bundle.json does not exist at %s", ref, dir, p.Commit.Short()),
			Hint:    hint,
		}
	}
	files, err := r.repo.Walk(e.Hash)
	if err != nil {
		return nil, err
	}
	out := &BundleResolution{BundleID: ref.ID, Requested: ref.String(), InTree: ref.InTree, Pin: p, Path: dir, Tree: e.Hash}
	for _, f := range files {
		out.Files = append(out.Files, FileEntry{Path: f.Path, Mode: f.Mode.String(), Blob: f.Hash})
	}
	sort.Slice(out.Files, func(i, j int) bool { return out.Files[i].Path < out.Files[j].Path })
	return out, nil
}

// ReadBundleFile returns a file of a resolved bundle; rel is relative to
// the bundle folder and may not leave it.
func (r *Registry) ReadBundleFile(b *BundleResolution, rel string) ([]byte, error) {
	clean, err := CleanRelPath(rel)
	if err != nil {
		return nil, &errkind.InputError{Source: b.Path + "@" + b.Commit.Short(), Problem: fmt.Sprintf("file %q: %v", rel, err), Hint: "name a file inside the bundle folder"}
	}
	for _, f := range b.Files {
		if f.Path == clean {
			if f.Mode == gitstore.ModeSymlink.String() || f.Mode == gitstore.ModeSubmodule.String() {
				return nil, &errkind.InputError{Source: path.Join(b.Path, clean) + "@" + b.Commit.Short(), Problem: "is a symlink or submodule, which dome does not follow"}
			}
			return r.repo.ReadBlob(f.Blob)
		}
	}
	return nil, &errkind.InputError{Source: b.Path + "@" + b.Commit.Short(), Problem: fmt.Sprintf("bundle %s has no file %s", b.BundleID, clean), Hint: "add it to the bundle, or fix the name in bundle.json"}
}

// BundleIDs lists the generator bundles at a pinned commit, sorted.
func (r *Registry) BundleIDs(p Pin) ([]string, error) {
	e, err := r.repo.EntryAt(p.Tree, GeneratorsDir)
	if errors.Is(err, gitstore.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if !e.Mode.IsDir() {
		return nil, nil
	}
	es, err := r.repo.ReadTree(e.Hash)
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, x := range es {
		if x.Mode.IsDir() && ValidID(x.Name) {
			ids = append(ids, x.Name)
		}
	}
	sort.Strings(ids)
	return ids, nil
}
