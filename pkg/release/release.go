package release

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/dome-registry/dome/pkg/canonical"
	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/dome-registry/dome/pkg/gitstore"
	"github.com/dome-registry/dome/pkg/gitstore/gitremote"
	"github.com/dome-registry/dome/pkg/gitstore/gitsign"
	"github.com/dome-registry/dome/pkg/registry"
)

// Options describes one release.
type Options struct {
	ToolID        string
	Version       string // vX.Y.Z
	Ref           string // the commit to release (default HEAD)
	AllowBreaking string // a reason; empty means breaking changes need a major bump
	Key           *gitsign.OpenPGPKey
	Tagger        gitstore.Signature
	Push          string // a remote name or URL; empty: do not push
	// Reproduce, when set, proves that generation reproduces for the tool at
	// the pinned commit and returns the manifest hashes to record
	// ("<lang>/<profile>" -> client_artifact_hash); it also runs the tool's
	// contract tests. pkg/codegen and pkg/contracttest provide it.
	Reproduce ReproduceFunc
}

// Result is a release that was made.
type Result struct {
	Tag       string                  `json:"tag"`
	TagObject gitstore.Hash           `json:"tag_object"`
	Signed    bool                    `json:"signed"`
	Pushed    string                  `json:"pushed_to,omitempty"`
	Record    *registry.ReleaseRecord `json:"record"`
	Bump      string                  `json:"bump,omitempty"`
}

// Run checks the release and creates its tag. Nothing is written unless
// every check passes; the tag ref is created with a compare-and-swap.
func Run(ctx context.Context, reg *registry.Registry, opts Options) (*Result, error) {
	ref := opts.Ref
	if ref == "" {
		ref = "HEAD"
	}
	if !registry.ValidID(opts.ToolID) {
		return nil, &errkind.InputError{Source: "tool", Problem: fmt.Sprintf("%q is not a tool id", opts.ToolID), Hint: "tool ids match ^[a-z0-9][a-z0-9._-]*$"}
	}
	prev, err := reg.NextVersionCheck(opts.ToolID, opts.Version)
	if err != nil {
		return nil, err
	}
	t, err := reg.ResolveTool(ctx, registry.Ref{ID: opts.ToolID, Rev: ref}, registry.PinOptions{Source: "--ref", Display: opts.ToolID + "@" + ref})
	if err != nil {
		return nil, err
	}
	filtered, err := FilterProfiles(reg, t, nil)
	if err != nil {
		return nil, &errkind.CheckError{Problem: err.Error(), Hint: "fix the profile or the spec; every profile must filter cleanly before a release"}
	}
	manifests := map[string]string{}
	if opts.Reproduce != nil {
		if manifests, err = opts.Reproduce(ctx, t, filtered); err != nil {
			return nil, err
		}
	}
	rec := &registry.ReleaseRecord{
		SchemaVersion:    registry.ReleaseRecordVersion,
		ToolID:           opts.ToolID,
		Version:          opts.Version,
		Commit:           t.Commit,
		ToolTree:         t.ToolTree,
		Profiles:         map[string]registry.ProfileRecord{},
		Manifests:        manifests,
		BreakingChanges:  []registry.ProfileChange{},
		AllowBreaking:    opts.AllowBreaking,
		Canonicalization: canonical.Name,
	}
	for id, f := range filtered {
		rec.Profiles[id] = registry.ProfileRecord{ProfileBlob: f.Profile.Blob, FilteredSpecDigest: f.Result.Digest}
	}
	res := &Result{Tag: registry.ReleaseTag(opts.ToolID, opts.Version), Record: rec}
	if prev != nil {
		rec.PreviousRelease = prev.Version
		res.Bump = registry.BumpKind(prev.Version, opts.Version)
		pt, err := reg.ResolveTool(ctx, registry.Ref{ID: opts.ToolID, Rev: prev.Version}, registry.PinOptions{Source: "previous release"})
		if err != nil {
			return nil, fmt.Errorf("previous release %s: %w", prev.Version, err)
		}
		diffs, err := diffTools(reg, pt, t, "")
		if err != nil {
			return nil, fmt.Errorf("compare with %s: %w", prev.Version, err)
		}
		for _, d := range diffs {
			for _, c := range d.Report.Breaking {
				rec.BreakingChanges = append(rec.BreakingChanges, registry.ProfileChange{Profile: d.Profile, Change: c})
			}
		}
		sort.SliceStable(rec.BreakingChanges, func(i, j int) bool { return rec.BreakingChanges[i].Profile < rec.BreakingChanges[j].Profile })
		if len(rec.BreakingChanges) > 0 && !registry.AllowsBreaking(prev.Version, opts.Version) && opts.AllowBreaking == "" {
			var lines []string
			for _, c := range rec.BreakingChanges {
				op := c.Operation
				if op == "" {
					op = "-"
				}
				lines = append(lines, fmt.Sprintf("%s: %s %s: %s", c.Profile, c.Kind, op, c.Detail))
			}
			return nil, &errkind.CheckError{
				Problem: fmt.Sprintf("%s %s -> %s is a %s bump but has %d breaking change(s):", opts.ToolID, prev.Version, opts.Version, res.Bump, len(lines)),
				Details: lines,
				Hint:    fmt.Sprintf("release %s instead, or pass --allow-breaking REASON", nextMajor(prev.Version)),
			}
		}
	}
	body, err := canonical.Marshal(rec)
	if err != nil {
		return nil, err
	}
	var signer func([]byte) (string, error)
	if opts.Key != nil {
		signer = opts.Key.Sign
		res.Signed = true
	}
	h, err := reg.CreateReleaseTag(opts.ToolID, opts.Version, t.Commit, append(body, '\n'), opts.Tagger, signer)
	if err != nil {
		return nil, err
	}
	res.TagObject = h
	if opts.Push != "" {
		if err := gitremote.PushRef(ctx, reg.Repo(), opts.Push, "refs/tags/"+res.Tag); err != nil {
			return res, fmt.Errorf("the tag %s was created locally but not pushed: %w", res.Tag, err)
		}
		res.Pushed = opts.Push
	}
	return res, nil
}

func nextMajor(v string) string {
	var major int
	fmt.Sscanf(strings.TrimPrefix(v, "v"), "%d", &major)
	return fmt.Sprintf("v%d.0.0", major+1)
}
