package registry

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/dome-registry/dome/pkg/a2a"
	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/dome-registry/dome/pkg/gitstore"
	"github.com/dome-registry/dome/pkg/knowntags"
)

// Registry reads the registry layout from one repository. It caches pins,
// layouts and parsed files, so one Registry answers a batch of lookups
// quickly; it is safe for concurrent use.
type Registry struct {
	repo    *gitstore.Repo
	schemas *schemas
	a2a     a2a.Schemas // cards and A2A profiles, compiled on first use

	mu      sync.Mutex
	memory  TagMemory // the release tags dome has read (nil: none)
	batch   int       // > 0: tags to remember wait in pending (ResolveMany)
	pending []knowntags.Entry
	pins    map[string]Pin           // by rev
	layouts map[gitstore.Hash]layout // by commit tree
	tools   map[gitstore.Hash]*Tool  // by tool.json blob
}

// New returns a Registry over repo.
func New(repo *gitstore.Repo) *Registry {
	return &Registry{
		repo:    repo,
		schemas: &schemas{},
		pins:    map[string]Pin{},
		layouts: map[gitstore.Hash]layout{},
		tools:   map[gitstore.Hash]*Tool{},
	}
}

// Repo returns the underlying repository.
func (r *Registry) Repo() *gitstore.Repo { return r.repo }

// Ref kinds beyond gitstore's.
const (
	KindRelease gitstore.RefKind = "release_tag"
)

// Pin is a revision pinned to a commit.
type Pin struct {
	Requested string           `json:"requested_ref"`
	Kind      gitstore.RefKind `json:"ref_kind"`
	RefName   string           `json:"ref,omitempty"`
	TagObject *gitstore.Hash   `json:"tag_object,omitempty"`
	Commit    gitstore.Hash    `json:"commit"`
	Tree      gitstore.Hash    `json:"commit_tree"`
}

// PinOptions says how strictly to pin.
type PinOptions struct {
	// Pinned accepts only full SHAs and release tags (immutable names).
	Pinned bool
	// Source names the argument in errors ("tool", "--profile").
	Source string
	// Display is the reference as the user wrote it (default "<tool>@<rev>").
	Display string
}

// PinRev pins rev for tool toolID: "vX.Y.Z" means the tool's release tag
// registry/<toolID>/vX.Y.Z; anything else is resolved as git does (full SHA,
// HEAD, tag, branch, short SHA). For a remote repository it fetches only
// when the revision may have moved or is not in the cache yet.
func (r *Registry) PinRev(ctx context.Context, toolID, rev string, opts PinOptions) (Pin, error) {
	return r.pinNS(ctx, "registry/"+toolID+"/", toolID, rev, opts)
}

// pinNS pins rev for id, reading "vX.Y.Z" as the annotated tag
// <tagPrefix>vX.Y.Z, and applies opts.Pinned.
func (r *Registry) pinNS(ctx context.Context, tagPrefix, id, rev string, opts PinOptions) (Pin, error) {
	src := opts.Source
	if src == "" {
		src = "ref"
	}
	ref := opts.Display
	if ref == "" {
		ref = id + "@" + rev
	}
	key := tagPrefix + "\x00" + rev
	r.mu.Lock()
	p, ok := r.pins[key]
	r.mu.Unlock()
	if !ok {
		var err error
		p, err = r.pin(ctx, id, rev, src, ref, tagPrefix)
		if err != nil {
			return Pin{}, err
		}
		r.mu.Lock()
		r.pins[key] = p
		r.mu.Unlock()
	}
	if opts.Pinned && p.Kind != gitstore.KindFullSHA && p.Kind != KindRelease {
		return Pin{}, &errkind.InputError{
			Source:  src,
			Problem: fmt.Sprintf("%s is not pinned: %s", ref, unpinnedReason(p)),
			Hint:    fmt.Sprintf("use a full commit SHA (%s@%s) or a release tag (%s@vX.Y.Z)", id, p.Commit, id),
		}
	}
	return p, nil
}

func unpinnedReason(p Pin) string {
	switch p.Kind {
	case gitstore.KindBranch:
		return fmt.Sprintf("branch %s moves (it is at %s now)", strings.TrimPrefix(p.RefName, "refs/heads/"), p.Commit.Short())
	case gitstore.KindHead:
		return fmt.Sprintf("HEAD moves (it is at %s now)", p.Commit.Short())
	case gitstore.KindAncestor:
		return fmt.Sprintf("an ancestry expression moves with its base (it names %s now)", p.Commit)
	case gitstore.KindShortSHA:
		return fmt.Sprintf("a short SHA can become ambiguous as the repository grows (it names %s)", p.Commit)
	case gitstore.KindTag:
		if p.TagObject == nil && strings.HasPrefix(p.RefName, "refs/tags/registry/") {
			return "it is a lightweight tag; releases are annotated tags made by dome release"
		}
		if p.TagObject == nil && strings.HasPrefix(p.RefName, "refs/tags/generators/") {
			return "it is a lightweight tag; bundle releases are annotated tags generators/<bundle>/vX.Y.Z"
		}
		return fmt.Sprintf("tag %s is not a release tag registry/<tool>/vX.Y.Z and may be moved", strings.TrimPrefix(p.RefName, "refs/tags/"))
	}
	return fmt.Sprintf("%s refs can move", p.Kind)
}

// pin resolves rev; "vX.Y.Z" names the annotated tag <tagPrefix>vX.Y.Z
// (registry/<tool>/ for tools, generators/<bundle>/ for generator bundles).
func (r *Registry) pin(ctx context.Context, toolID, rev, src, ref, tagPrefix string) (Pin, error) {
	remote := r.repo.RemoteURL() != ""
	gitRev := rev
	base, suffix := gitstore.SplitAncestry(rev)
	release := IsReleaseVersion(base)
	if release {
		gitRev = "refs/tags/" + tagPrefix + base + suffix
	}
	// A remote's cache answers immutable names (full SHAs, release tags)
	// without the network; anything that can move is fetched first.
	_, fullSHA := gitstore.ParseHash(rev)
	if remote && !fullSHA && !release {
		if err := r.repo.Fetch(ctx); err != nil {
			return Pin{}, remoteErr(src, err)
		}
	}
	res, err := r.repo.ResolveRevision(gitRev)
	if err != nil && remote && !r.repo.Fetched() && errors.Is(err, gitstore.ErrNotFound) {
		if ferr := r.repo.Fetch(ctx); ferr != nil {
			return Pin{}, remoteErr(src, ferr)
		}
		res, err = r.repo.ResolveRevision(gitRev)
	}
	if err != nil {
		return Pin{}, r.revError(src, ref, toolID, rev, tagPrefix, release, err)
	}
	if err := r.checkTagOf(rev, gitRev, res); err != nil {
		return Pin{}, err
	}
	p := Pin{Requested: rev, Kind: res.Kind, RefName: res.RefName, Commit: res.Commit}
	if res.Annotated {
		obj := res.Object
		p.TagObject = &obj
	}
	if strings.HasPrefix(res.RefName, "refs/tags/") && res.Annotated {
		tag := strings.TrimPrefix(res.RefName, "refs/tags/")
		if v, ok := strings.CutPrefix(tag, tagPrefix); ok && IsReleaseVersion(v) {
			p.Kind = KindRelease
		}
	}
	if release && suffix == "" && p.Kind != KindRelease {
		return Pin{}, &errkind.InputError{Source: src, Problem: fmt.Sprintf("%s: %s is a lightweight tag, not a release", ref, tagPrefix+rev), Hint: "releases are annotated tags; recreate it as one (git tag -a)"}
	}
	tree, err := r.repo.CommitTree(p.Commit)
	if err != nil {
		return Pin{}, fmt.Errorf("%s: %w", ref, err)
	}
	p.Tree = tree
	return p, nil
}

// checkTagOf checks the release tag a resolved revision went through, if
// any: vX.Y.Z, a release tag's name, or either with ~N/^N steps.
func (r *Registry) checkTagOf(rev, gitRev string, res gitstore.Revision) error {
	ref := ""
	switch base, _ := gitstore.SplitAncestry(gitRev); {
	case strings.HasPrefix(res.RefName, "refs/tags/"):
		ref = res.RefName
	case strings.HasPrefix(base, "refs/tags/"):
		ref = base
	case base != rev || res.Kind == gitstore.KindAncestor:
		// An ancestry expression: resolve its base as a tag if it is one.
		if _, err := r.repo.Ref("refs/tags/" + base); err == nil {
			ref = "refs/tags/" + base
		}
	}
	if _, _, _, ok := ReleaseTagName(ref); !ok {
		return nil
	}
	t, err := r.readReleaseTag(ref)
	if err != nil {
		return err
	}
	return r.checkTag(t)
}

func remoteErr(src string, err error) error {
	return &errkind.InputError{Source: src, Problem: err.Error(), Err: err, Hint: "check the URL, your network and credentials; a full SHA or release tag already in the cache resolves offline"}
}

// revError turns a resolution failure into an error that says what to do.
func (r *Registry) revError(src, ref, toolID, rev, tagPrefix string, release bool, err error) error {
	var amb *gitstore.AmbiguousError
	var ambRef *gitstore.AmbiguousRefError
	var notCommit *gitstore.NotCommitError
	switch {
	case errors.As(err, &amb):
		var c []string
		for _, x := range amb.Candidates {
			c = append(c, fmt.Sprintf("%s (%s)", x.Hash, x.Type))
		}
		return &errkind.InputError{Source: src, Problem: fmt.Sprintf("%s: short SHA %s is ambiguous; candidates: %s", ref, rev, strings.Join(c, ", ")), Hint: "give more hex digits or the full SHA", Err: err}
	case errors.As(err, &ambRef):
		return &errkind.InputError{Source: src, Problem: fmt.Sprintf("%s: %s", ref, ambRef.Error()), Hint: fmt.Sprintf("write %s@refs/tags/%s or %s@refs/heads/%s", toolID, rev, toolID, rev), Err: err}
	case errors.As(err, &notCommit):
		return &errkind.InputError{Source: src, Problem: fmt.Sprintf("%s: %s", ref, notCommit.Error()), Hint: "point the ref at a commit", Err: err}
	case errors.Is(err, gitstore.ErrEmptyRepo):
		return &errkind.InputError{Source: src, Problem: fmt.Sprintf("%s: the repository %s has no commits", ref, r.repo.Path()), Hint: "commit the registry first, or pass --repo", Err: err}
	case errors.Is(err, gitstore.ErrNotFound) && strings.ContainsAny(rev, "~^"):
		return &errkind.InputError{Source: src, Problem: fmt.Sprintf("%s: %v", ref, err), Hint: "the ancestry steps go past the history; use fewer", Err: err}
	case errors.Is(err, gitstore.ErrNotFound):
		if release && tagPrefix != "registry/"+toolID+"/" {
			return &errkind.InputError{Source: src, Problem: fmt.Sprintf("%s: no release tag %s", ref, tagPrefix+rev), Hint: "list them with: git tag -l '" + tagPrefix + "*'; or pin a full commit SHA", Err: err}
		}
		if release {
			hint := fmt.Sprintf("list releases with: dome registry show %s@HEAD", toolID)
			if vs, lerr := r.Releases(toolID); lerr == nil && len(vs) > 0 {
				var names []string
				for _, v := range vs {
					names = append(names, v.Version)
				}
				hint = "releases of " + toolID + ": " + strings.Join(names, ", ")
			} else if lerr == nil {
				hint = toolID + " has no releases yet; use a commit SHA or a branch, or create one with dome release"
			}
			return &errkind.InputError{Source: src, Problem: fmt.Sprintf("%s: no release tag %s", ref, ReleaseTag(toolID, rev)), Hint: hint, Err: err}
		}
		hint := "use a full SHA, a short SHA (at least 7 hex digits), a tag, a branch, HEAD or vX.Y.Z"
		if gitstore.IsHex(rev) && len(rev) < gitstore.MinShortSHA {
			hint = fmt.Sprintf("a short SHA needs at least %d hex digits", gitstore.MinShortSHA)
		}
		return &errkind.InputError{Source: src, Problem: fmt.Sprintf("%s: no commit, tag or branch %q in %s", ref, rev, r.repo.Path()), Hint: hint, Err: err}
	}
	return &errkind.InputError{Source: src, Problem: fmt.Sprintf("%s: %v", ref, err), Err: err}
}

// Release is one release tag of a tool.
type Release struct {
	Version   string        `json:"version"`
	Tag       string        `json:"tag"`
	TagObject gitstore.Hash `json:"tag_object"`
	Commit    gitstore.Hash `json:"commit"`
	Annotated bool          `json:"annotated"`
}

// Releases lists a tool's releases sorted by SemVer precedence, oldest
// first: its annotated tags registry/<id>/vX.Y.Z whose records match what
// they point at. Tags that are no releases (lightweight, not vX.Y.Z, no
// record) are left out; a tag that moved since dome first read it or does
// not match its own record is an error (exit 1), never listed.
func (r *Registry) Releases(toolID string) ([]Release, error) {
	raw, err := r.releaseTags(toolID)
	if err != nil {
		return nil, err
	}
	all, err := r.trustedReleases(map[string][]Release{toolID: raw[toolID]})
	if err != nil {
		return nil, err
	}
	return all[toolID], nil
}

// AllReleases lists the releases of every tool, per tool id, checked as
// Releases checks them.
func (r *Registry) AllReleases() (map[string][]Release, error) {
	raw, err := r.releaseTags("")
	if err != nil {
		return nil, err
	}
	return r.trustedReleases(raw)
}

// ReleaseTags lists every tag registry/<id>/vX.Y.Z that names a commit, per
// tool id, as it is (lightweight, record-less and moved tags included), for
// the commands that verify them.
func (r *Registry) ReleaseTags() (map[string][]Release, error) { return r.releaseTags("") }

// releaseTags lists the tags of one tool ("" every tool).
func (r *Registry) releaseTags(only string) (map[string][]Release, error) {
	prefix := "refs/tags/registry/"
	if only != "" {
		prefix += only + "/"
	}
	refs, err := r.repo.Refs(prefix)
	if err != nil {
		return nil, err
	}
	out := map[string][]Release{}
	for _, ref := range refs {
		rest := strings.TrimPrefix(ref.Name, "refs/tags/registry/")
		id, v, ok := strings.Cut(rest, "/")
		if !ok || !ValidID(id) || !IsReleaseVersion(v) {
			continue
		}
		commit, annotated, err := r.repo.Peel(ref.Name, ref.Target)
		if err != nil {
			continue // a release tag that does not name a commit is reported by registry verify
		}
		out[id] = append(out[id], Release{Version: v, Tag: strings.TrimPrefix(ref.Name, "refs/tags/"), TagObject: ref.Target, Commit: commit, Annotated: annotated})
	}
	for id := range out {
		rs := out[id]
		sort.Slice(rs, func(i, j int) bool { return compareSemver(rs[i].Version, rs[j].Version) < 0 })
	}
	return out, nil
}

// Latest returns the highest release that is not a pre-release, or the
// highest pre-release when there is nothing else; ok is false without releases.
func Latest(rs []Release) (Release, bool) {
	for i := len(rs) - 1; i >= 0; i-- {
		if !strings.Contains(rs[i].Version, "-") {
			return rs[i], true
		}
	}
	if len(rs) > 0 {
		return rs[len(rs)-1], true
	}
	return Release{}, false
}

// StrayTag is a tag under refs/tags/registry/ that is not a release.
type StrayTag struct {
	Tag     string
	Problem string
}

// StrayReleaseTags lists tags in the release namespace that dome cannot
// treat as releases: bad names, bad versions, or tags that do not name a commit.
func (r *Registry) StrayReleaseTags() ([]StrayTag, error) {
	refs, err := r.repo.Refs("refs/tags/registry/")
	if err != nil {
		return nil, err
	}
	var out []StrayTag
	for _, ref := range refs {
		tag := strings.TrimPrefix(ref.Name, "refs/tags/")
		rest := strings.TrimPrefix(tag, "registry/")
		id, v, ok := strings.Cut(rest, "/")
		switch {
		case !ok || !ValidID(id) || strings.Contains(v, "/"):
			out = append(out, StrayTag{tag, "not a release tag name (want registry/<tool_id>/vX.Y.Z)"})
		case !IsReleaseVersion(v):
			out = append(out, StrayTag{tag, fmt.Sprintf("%q is not a release version vX.Y.Z", v)})
		default:
			if _, _, err := r.repo.Peel(ref.Name, ref.Target); err != nil {
				out = append(out, StrayTag{tag, err.Error()})
			}
		}
	}
	return out, nil
}
