package release

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/dome-registry/dome/pkg/gitstore"
	"github.com/dome-registry/dome/pkg/gitstore/gitsign"
	"github.com/dome-registry/dome/pkg/registry"
)

// Verification is the outcome of verifying one release tag.
type Verification struct {
	Tool     string        `json:"tool"`
	Version  string        `json:"version"`
	Tag      string        `json:"tag"`
	Commit   gitstore.Hash `json:"commit"`
	SignedBy string        `json:"signed_by,omitempty"` // OpenPGP key id, when a keyring was given
	Problems []string      `json:"problems"`
}

// OK reports whether the release verified.
func (v *Verification) OK() bool { return len(v.Problems) == 0 }

// VerifyOptions says what to check beyond the record.
type VerifyOptions struct {
	Keyring   []byte // armored OpenPGP public keys; when set the tag must be signed by one
	Reproduce ReproduceFunc
}

// Verify checks a release: the tag is annotated and carries a release
// record for that tool and version; it still points at the recorded commit
// (a tag moved by hand does not); it is signed by a trusted key when a
// keyring is given; and the recorded tool tree, profile blobs, filtered-spec
// digests and manifest hashes all reproduce. Every problem is reported.
func Verify(ctx context.Context, reg *registry.Registry, rel registry.Release, opts VerifyOptions) *Verification {
	toolID := strings.SplitN(strings.TrimPrefix(rel.Tag, "registry/"), "/", 2)[0]
	v := &Verification{Tool: toolID, Version: rel.Version, Tag: rel.Tag, Commit: rel.Commit, Problems: []string{}}
	add := func(format string, a ...any) { v.Problems = append(v.Problems, fmt.Sprintf(format, a...)) }
	info, err := reg.ReadRelease(rel)
	if err != nil {
		add("%v", err)
		return v
	}
	rec := info.Record
	if rec.ToolID != toolID || rec.Version != rel.Version {
		add("the record is for %s %s, not %s %s", rec.ToolID, rec.Version, toolID, rel.Version)
	}
	if rec.Commit != rel.Commit {
		add("the tag points at commit %s but its record says %s: the tag was moved", rel.Commit, rec.Commit)
	}
	if err := reg.CheckTagMemory(rel); err != nil {
		add("%v", err)
	}
	defer func() {
		// A release that verified in full is remembered, so a later move
		// is caught by every command.
		if v.OK() {
			if err := reg.RememberTag(rel); err != nil {
				add("%v", err)
			}
		}
	}()
	if len(opts.Keyring) > 0 {
		id, err := gitsign.VerifyTagSignature(reg.Repo(), rel.TagObject, opts.Keyring)
		switch {
		case errors.Is(err, gitsign.ErrUnsigned):
			add("the tag is not signed")
		case err != nil:
			add("signature: %v", err)
		default:
			v.SignedBy = id
		}
	}
	p, err := reg.PinRev(ctx, toolID, rec.Commit.String(), registry.PinOptions{Source: "release record"})
	if err != nil {
		add("recorded commit %s: %v", rec.Commit, err)
		return v
	}
	t, err := reg.ToolAt(registry.Ref{ID: toolID, Rev: rec.Commit.String()}, p)
	if err != nil {
		add("tool at %s: %v", rec.Commit.Short(), err)
		return v
	}
	if t.ToolTree != rec.ToolTree {
		add("tool tree is %s, the record says %s", t.ToolTree, rec.ToolTree)
	}
	var ids []string
	for id := range rec.Profiles {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	filtered, err := FilterProfiles(reg, t, ids)
	if err != nil {
		add("filter: %v", err)
		return v
	}
	for _, id := range ids {
		want, got := rec.Profiles[id], filtered[id]
		if got.Profile.Blob != want.ProfileBlob {
			add("profile %s: blob %s, the record says %s", id, got.Profile.Blob, want.ProfileBlob)
		}
		if got.Result.Digest != want.FilteredSpecDigest {
			add("profile %s: filtered spec %s, the record says %s", id, got.Result.Digest, want.FilteredSpecDigest)
		}
	}
	if opts.Reproduce != nil && len(rec.Manifests) > 0 {
		got, err := opts.Reproduce(ctx, t, filtered)
		if err != nil {
			add("generation: %v", err)
			return v
		}
		var keys []string
		for k := range rec.Manifests {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if got[k] != rec.Manifests[k] {
				add("client %s: %s, the record says %s", k, orNone(got[k]), rec.Manifests[k])
			}
		}
	}
	return v
}

func orNone(s string) string {
	if s == "" {
		return "(not generated)"
	}
	return s
}

// VerifyAll verifies every release tag of the registry (and reports tags
// under refs/tags/registry/ that are not releases at all).
func VerifyAll(ctx context.Context, reg *registry.Registry, opts VerifyOptions) ([]*Verification, error) {
	reg.Repo().KeepDeltaChains()  // every release reads trees of another commit
	all, err := reg.ReleaseTags() // as they are: every finding is reported
	if err != nil {
		return nil, err
	}
	var tools []string
	for id := range all {
		tools = append(tools, id)
	}
	sort.Strings(tools)
	var out []*Verification
	for _, id := range tools {
		for _, rel := range all[id] {
			out = append(out, Verify(ctx, reg, rel, opts))
		}
	}
	stray, err := reg.StrayReleaseTags()
	if err != nil {
		return nil, err
	}
	for _, s := range stray {
		out = append(out, &Verification{Tag: s.Tag, Problems: []string{s.Problem}})
	}
	return out, nil
}
