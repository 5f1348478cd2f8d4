package registry

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/dome-registry/dome/pkg/gitstore"
	"github.com/dome-registry/dome/pkg/knowntags"
)

// Every read through a release tag (registry/<tool>/vX.Y.Z, and a generator
// bundle's generators/<bundle>/vX.Y.Z) is checked twice before anything is
// read at the commit it names:
//
//   - against the tag's own release record (tool tags): the record a tag
//     message carries names the tool, the version and the commit the release
//     was made of; a tag that points elsewhere, or carries the record of
//     another release, was moved or copied by hand, and is refused (exit 1);
//   - against dome's memory of the tags it has read (TagMemory,
//     pkg/knowntags): a tag that points at another tag object or commit than
//     when dome first read it is refused (exit 1) naming both commits, until
//     the move is accepted with dome registry accept-tag.
//
// A tag that passes is remembered.

// TagMemory is dome's memory of the release tags it has read
// (*knowntags.Store).
type TagMemory interface {
	Lookup(repo, tag string) (knowntags.Entry, bool, error)
	Observe(seen []knowntags.Entry) error
	Path() string
}

// SetTagMemory makes every read through a release tag check the tag against
// m and remember it. Without one, only the tags' own records are checked.
func (r *Registry) SetTagMemory(m TagMemory) {
	r.mu.Lock()
	r.memory = m
	r.mu.Unlock()
}

func (r *Registry) tagMemory() TagMemory {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.memory
}

// RepoKey is how the tag memory names this repository: the URL it was
// opened from, else its "origin" remote, so every clone of one registry
// shares its tags; else the path of its git folder.
func (r *Registry) RepoKey() string {
	if u := r.repo.RemoteURL(); u != "" {
		return knowntags.RepoKey(u)
	}
	if u := r.repo.OriginURL(); u != "" {
		return knowntags.RepoKey(u)
	}
	return knowntags.RepoKey(r.repo.CommonDir())
}

// ReleaseTagName splits a release tag's ref name (refs/tags/ optional):
// ns is "registry" (a tool release) or "generators" (a bundle release).
func ReleaseTagName(ref string) (ns, id, version string, ok bool) {
	rest := strings.TrimPrefix(ref, "refs/tags/")
	parts := strings.Split(rest, "/")
	if len(parts) != 3 || (parts[0] != "registry" && parts[0] != GeneratorsDir) || !ValidID(parts[1]) || !IsReleaseVersion(parts[2]) {
		return "", "", "", false
	}
	return parts[0], parts[1], parts[2], true
}

// releaseTag is a release tag as read now.
type releaseTag struct {
	ref       string // refs/tags/...
	ns, id, v string
	object    gitstore.Hash
	commit    gitstore.Hash
	annotated bool
}

func (t releaseTag) name() string { return strings.TrimPrefix(t.ref, "refs/tags/") }

func (t releaseTag) entry(repo string) knowntags.Entry {
	return knowntags.Entry{Repo: repo, Tag: t.name(), Object: t.object.String(), Commit: t.commit.String()}
}

// readReleaseTag resolves a release tag's ref now.
func (r *Registry) readReleaseTag(ref string) (releaseTag, error) {
	ns, id, v, ok := ReleaseTagName(ref)
	if !ok {
		return releaseTag{}, fmt.Errorf("%s is not a release tag", ref)
	}
	obj, err := r.repo.Ref(ref)
	if err != nil {
		return releaseTag{}, err
	}
	commit, annotated, err := r.repo.Peel(ref, obj)
	if err != nil {
		return releaseTag{}, err
	}
	return releaseTag{ref: ref, ns: ns, id: id, v: v, object: obj, commit: commit, annotated: annotated}, nil
}

// movedError is the refusal of a tag that moved since dome first read it.
func movedError(me *knowntags.MovedError) error {
	return &errkind.CheckError{
		Problem: me.Error(),
		Details: []string{
			fmt.Sprintf("first seen: commit %s (tag object %s)", me.First.Commit, me.First.Object),
			fmt.Sprintf("now:        commit %s (tag object %s)", me.Now.Commit, me.Now.Object),
			"remembered in " + me.Path,
		},
		Hint: fmt.Sprintf("pin the commit you trust by its full SHA; if the move is legitimate, accept it: dome registry accept-tag %s --reason TEXT", me.Now.Tag),
	}
}

// checkMemory refuses a tag that moved since dome first read it.
func (r *Registry) checkMemory(m TagMemory, repo string, t releaseTag) error {
	prev, ok, err := m.Lookup(repo, t.name())
	if err != nil {
		return &errkind.CheckError{Problem: err.Error(), Hint: "fix or remove the known-tags file (it is plain text: repository tag tag-object commit per line)"}
	}
	now := t.entry(repo)
	if ok && (prev.Object != now.Object || prev.Commit != now.Commit) {
		return movedError(&knowntags.MovedError{Path: m.Path(), First: prev, Now: now})
	}
	return nil
}

// errNotRelease marks a tag in the release namespace that is not a release
// made by dome release (lightweight, or its message is not a record).
var errNotRelease = errors.New("not a release")

// checkRecord checks a tool release tag against its own record: it must be
// annotated, carry a release record, and that record must name this tool,
// this version and the commit the tag points at. The record-less and
// lightweight cases wrap errNotRelease (input errors); a mismatch is a
// *errkind.CheckError (the tag was moved or copied).
func (r *Registry) checkRecord(t releaseTag) (*ReleaseRecord, error) {
	if t.ns != "registry" {
		return nil, nil // bundle releases carry no record
	}
	if !t.annotated {
		return nil, &errkind.InputError{Source: t.name(), Problem: "is a lightweight tag, not a release", Hint: "releases are annotated tags made by dome release", Err: errNotRelease}
	}
	tag, err := r.repo.Tag(t.object)
	if err != nil {
		return nil, err
	}
	rec, err := ParseReleaseRecord(t.name(), tag.Message)
	if err != nil {
		return nil, &errkind.InputError{Source: t.name(), Problem: "is not a release made by dome release: its message is not a release record", Hint: "make releases with dome release, which records what the release is of; pin a full commit SHA meanwhile", Err: fmt.Errorf("%w: %v", errNotRelease, err)}
	}
	var bad []string
	if rec.ToolID != t.id || rec.Version != t.v {
		bad = append(bad, fmt.Sprintf("its record is the release of %s %s", rec.ToolID, rec.Version))
	}
	if rec.Commit != t.commit {
		bad = append(bad, fmt.Sprintf("it points at commit %s but its record names commit %s", t.commit, rec.Commit))
	}
	if len(bad) > 0 {
		return nil, &errkind.CheckError{
			Problem: fmt.Sprintf("release tag %s does not match its own record: %s; the tag was moved or copied, and a release tag never moves", t.name(), strings.Join(bad, "; ")),
			Details: []string{"tag points at: commit " + t.commit.String(), "record names:  commit " + rec.Commit.String() + " (" + rec.ToolID + " " + rec.Version + ")"},
			Hint:    fmt.Sprintf("pin the commit you trust by its full SHA; dome release verify %s@%s shows every difference", t.id, t.v),
		}
	}
	return rec, nil
}

// checkTag runs every check on a release tag read through a pin and
// remembers it when it passes.
func (r *Registry) checkTag(t releaseTag) error {
	if !t.annotated {
		// A lightweight tag is no release: pinned use refuses it, and
		// vX.Y.Z says so.
		return nil
	}
	m := r.tagMemory()
	repo := ""
	if m != nil {
		repo = r.RepoKey()
		if err := r.checkMemory(m, repo, t); err != nil {
			return err
		}
	}
	if _, err := r.checkRecord(t); err != nil {
		return err
	}
	if m == nil {
		return nil
	}
	r.mu.Lock()
	if r.batch > 0 {
		// A batch remembers its tags in one write at its end.
		r.pending = append(r.pending, t.entry(repo))
		r.mu.Unlock()
		return nil
	}
	r.mu.Unlock()
	return r.remember(m, []knowntags.Entry{t.entry(repo)})
}

// beginBatch defers remembering tags until endBatch, so a batch of lookups
// writes the memory once, not once per tag.
func (r *Registry) beginBatch() {
	r.mu.Lock()
	r.batch++
	r.mu.Unlock()
}

// endBatch remembers the tags the batch read. A tag another process saw
// elsewhere meanwhile is the error (a moved tag).
func (r *Registry) endBatch() error {
	r.mu.Lock()
	r.batch--
	var es []knowntags.Entry
	if r.batch == 0 {
		es, r.pending = r.pending, nil
	}
	m := r.memory
	r.mu.Unlock()
	if m == nil {
		return nil
	}
	return r.remember(m, es)
}

// remember records tags in the memory; a tag that moved meanwhile (another
// process read it first) is refused like any moved tag.
func (r *Registry) remember(m TagMemory, es []knowntags.Entry) error {
	if len(es) == 0 {
		return nil
	}
	err := m.Observe(es)
	var me *knowntags.MovedError
	if errors.As(err, &me) {
		return movedError(me)
	}
	if err != nil {
		return &errkind.CheckError{Problem: err.Error(), Hint: "fix or remove the known-tags file (it is plain text: repository tag tag-object commit per line)"}
	}
	return nil
}

// CheckTagMemory reports whether a release tag moved since dome first read
// it (a *errkind.CheckError), without remembering anything. release verify
// and registry verify list it with their other findings.
func (r *Registry) CheckTagMemory(rel Release) error {
	m := r.tagMemory()
	if m == nil {
		return nil
	}
	t, err := r.readReleaseTag("refs/tags/" + rel.Tag)
	if err != nil {
		return nil // reported by the verification itself
	}
	return r.checkMemory(m, r.RepoKey(), t)
}

// RememberTag records a release tag that verified.
func (r *Registry) RememberTag(rel Release) error {
	m := r.tagMemory()
	if m == nil {
		return nil
	}
	t, err := r.readReleaseTag("refs/tags/" + rel.Tag)
	if err != nil {
		return err
	}
	return r.remember(m, []knowntags.Entry{t.entry(r.RepoKey())})
}

// CurrentTag reads a release tag as it is now and checks it against its own
// record (not against the memory): what dome registry accept-tag may accept.
func (r *Registry) CurrentTag(tag string) (knowntags.Entry, error) {
	ref := "refs/tags/" + strings.TrimPrefix(tag, "refs/tags/")
	t, err := r.readReleaseTag(ref)
	if err != nil {
		if errors.Is(err, gitstore.ErrNotFound) {
			return knowntags.Entry{}, &errkind.InputError{Source: tag, Problem: "no such tag in " + r.repo.Path()}
		}
		return knowntags.Entry{}, &errkind.InputError{Source: tag, Problem: err.Error(), Hint: "name a release tag registry/<tool>/vX.Y.Z or generators/<bundle>/vX.Y.Z, or <tool>@vX.Y.Z"}
	}
	if _, err := r.checkRecord(t); err != nil {
		return knowntags.Entry{}, err
	}
	return t.entry(r.RepoKey()), nil
}

// trustedReleases checks the tool release tags of a listing against their
// records and the memory: a tag that is not a release (lightweight, no
// record) is left out; a tag that moved or does not match its record fails
// the listing; the others are remembered, in one write.
func (r *Registry) trustedReleases(all map[string][]Release) (map[string][]Release, error) {
	m := r.tagMemory()
	repo := ""
	if m != nil {
		repo = r.RepoKey()
	}
	out := map[string][]Release{}
	var problems []error
	var seen []knowntags.Entry
	ids := make([]string, 0, len(all))
	for id := range all {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		for _, rel := range all[id] {
			t := releaseTag{ref: "refs/tags/" + rel.Tag, ns: "registry", id: id, v: rel.Version, object: rel.TagObject, commit: rel.Commit, annotated: rel.Annotated}
			if m != nil {
				if err := r.checkMemory(m, repo, t); err != nil {
					problems = append(problems, err)
					continue
				}
			}
			if _, err := r.checkRecord(t); err != nil {
				if errors.Is(err, errNotRelease) {
					continue
				}
				problems = append(problems, err)
				continue
			}
			out[id] = append(out[id], rel)
			if m != nil {
				seen = append(seen, t.entry(repo))
			}
		}
	}
	if len(problems) == 1 {
		return nil, problems[0]
	}
	if len(problems) > 1 {
		ce := &errkind.CheckError{Problem: fmt.Sprintf("%d release tags cannot be trusted:", len(problems)), Hint: "pin the commits you trust by their full SHAs; dome registry verify lists every finding"}
		for _, p := range problems {
			ce.Details = append(ce.Details, p.Error())
		}
		return nil, ce
	}
	if m != nil {
		if err := r.remember(m, seen); err != nil {
			return nil, err
		}
	}
	return out, nil
}
