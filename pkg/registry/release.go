package registry

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/dome-registry/dome/pkg/gitstore"
	"github.com/dome-registry/dome/pkg/knowntags"
	"github.com/dome-registry/dome/pkg/specdiff"
	"golang.org/x/mod/semver"
)

// ReleaseRecordVersion is the schema_version of release records.
const ReleaseRecordVersion = "dome.release_record/v1"

// ReleaseRecord is what a release tag's message carries, as canonical JSON:
// enough to prove later that the release still reproduces.
type ReleaseRecord struct {
	SchemaVersion    string                   `json:"schema_version"`
	ToolID           string                   `json:"tool_id"`
	Version          string                   `json:"version"`
	Commit           gitstore.Hash            `json:"commit"`
	ToolTree         gitstore.Hash            `json:"tool_tree"`
	PreviousRelease  string                   `json:"previous_release,omitempty"`
	Profiles         map[string]ProfileRecord `json:"profiles"`
	Manifests        map[string]string        `json:"manifests"` // "<lang>/<profile>" -> client_artifact_hash
	BreakingChanges  []ProfileChange          `json:"breaking_changes"`
	AllowBreaking    string                   `json:"allow_breaking,omitempty"`
	Canonicalization string                   `json:"canonicalization"`
}

// ProfileRecord pins one profile of a release.
type ProfileRecord struct {
	ProfileBlob        gitstore.Hash `json:"profile_blob"`
	FilteredSpecDigest string        `json:"filtered_spec_digest"`
}

// ProfileChange is a breaking change found for one profile.
type ProfileChange struct {
	Profile string `json:"profile"`
	specdiff.Change
}

// ParseReleaseRecord reads the record from a release tag's message.
func ParseReleaseRecord(tag, message string) (*ReleaseRecord, error) {
	dec := json.NewDecoder(strings.NewReader(message))
	dec.DisallowUnknownFields()
	var rec ReleaseRecord
	if err := dec.Decode(&rec); err != nil {
		return nil, fmt.Errorf("tag %s: the message is not a release record: %w", tag, err)
	}
	if rec.SchemaVersion != ReleaseRecordVersion {
		return nil, fmt.Errorf("tag %s: release record schema_version %q, want %q", tag, rec.SchemaVersion, ReleaseRecordVersion)
	}
	return &rec, nil
}

// NextVersionCheck checks that version may be released for toolID: a
// release version, not released yet, and strictly greater than the latest
// release by SemVer precedence. It returns the previous release, if any.
func (r *Registry) NextVersionCheck(toolID, version string) (*Release, error) {
	if !IsReleaseVersion(version) {
		return nil, &errkind.InputError{Source: "version", Problem: fmt.Sprintf("%q is not a release version", version), Hint: "write vMAJOR.MINOR.PATCH, e.g. v1.2.0 (SemVer, optional -pre-release, no build metadata)"}
	}
	rels, err := r.Releases(toolID)
	if err != nil {
		return nil, err
	}
	for _, rel := range rels {
		if rel.Version == version {
			return nil, &errkind.CheckError{
				Problem: fmt.Sprintf("%s %s is already released: tag %s points at commit %s", toolID, version, rel.Tag, rel.Commit),
				Hint:    "releases are immutable; release a higher version",
			}
		}
	}
	// A lightweight or broken tag of that name also blocks the version.
	if _, err := r.repo.Ref(ReleaseRef(toolID, version)); err == nil {
		return nil, &errkind.CheckError{Problem: fmt.Sprintf("tag %s already exists", ReleaseTag(toolID, version)), Hint: "dome never moves or deletes a tag; release a higher version"}
	}
	// So does a release dome has read before and that is gone now: its
	// users hold it, and a version is never released twice.
	if m := r.tagMemory(); m != nil {
		if prev, ok, err := m.Lookup(r.RepoKey(), ReleaseTag(toolID, version)); err == nil && ok {
			return nil, &errkind.CheckError{
				Problem: fmt.Sprintf("%s %s was released before: dome read tag %s on commit %s (tag object %s), and it is gone now", toolID, version, prev.Tag, prev.Commit, prev.Object),
				Hint:    "a version is never released twice; release a higher version (the known tags are in " + m.Path() + ")",
			}
		}
	}
	if len(rels) == 0 {
		return nil, nil
	}
	latest := rels[len(rels)-1]
	if semver.Compare(version, latest.Version) <= 0 {
		return nil, &errkind.InputError{Source: "version", Problem: fmt.Sprintf("%s must be greater than the latest release %s of %s", version, latest.Version, toolID), Hint: "pick a higher version"}
	}
	return &latest, nil
}

// BumpKind says which SemVer component changed from prev to next: "major",
// "minor", "patch" or "prerelease" (same version core).
func BumpKind(prev, next string) string {
	switch {
	case semver.Major(prev) != semver.Major(next):
		return "major"
	case semver.MajorMinor(prev) != semver.MajorMinor(next):
		return "minor"
	case strings.SplitN(semver.Canonical(prev), "-", 2)[0] != strings.SplitN(semver.Canonical(next), "-", 2)[0]:
		return "patch"
	}
	return "prerelease"
}

// AllowsBreaking reports whether a release from prev to next may carry
// breaking changes: a major bump, or any bump below v1.0.0 (SemVer item 4).
func AllowsBreaking(prev, next string) bool {
	return BumpKind(prev, next) == "major" || semver.Major(next) == "v0"
}

// CreateReleaseTag writes the annotated tag registry/<tool>/<version> on
// commit with the given message (the canonical release record), signed when
// signer is set, and creates the ref with a compare-and-swap: of two
// concurrent releases of one version exactly one wins, and an existing tag
// is never moved.
func (r *Registry) CreateReleaseTag(toolID, version string, commit gitstore.Hash, message []byte, tagger gitstore.Signature, signer func([]byte) (string, error)) (gitstore.Hash, error) {
	name := ReleaseTag(toolID, version)
	h, err := r.repo.WriteTag(gitstore.TagSpec{Name: name, Target: commit, TargetType: gitstore.TypeCommit, Tagger: tagger, Message: string(message), Signer: signer})
	if err != nil {
		return gitstore.ZeroHash, err
	}
	if err := r.repo.UpdateRef("refs/tags/"+name, h, gitstore.ZeroHash); err != nil {
		if errors.Is(err, gitstore.ErrRefExists) || errors.Is(err, gitstore.ErrRefChanged) {
			existing := "another process"
			if t, rerr := r.repo.Ref("refs/tags/" + name); rerr == nil {
				if c, _, perr := r.repo.Peel(name, t); perr == nil {
					existing = "commit " + c.String()
				}
			}
			return gitstore.ZeroHash, &errkind.CheckError{Problem: fmt.Sprintf("%s %s was released concurrently: tag %s already points at %s", toolID, version, name, existing), Hint: "releases are immutable; release a higher version"}
		}
		return gitstore.ZeroHash, err
	}
	if m := r.tagMemory(); m != nil {
		t, err := r.readReleaseTag(ReleaseRef(toolID, version))
		if err == nil {
			err = r.remember(m, []knowntags.Entry{t.entry(r.RepoKey())})
		}
		if err != nil {
			return h, fmt.Errorf("the tag %s was created but not remembered: %w", name, err)
		}
	}
	return h, nil
}

// ReleaseTagInfo is a release tag read back with its record.
type ReleaseTagInfo struct {
	Release
	Tag    *gitstore.Tag
	Record *ReleaseRecord
	Raw    []byte // the record bytes as stored
}

// ReadRelease reads a release tag and its record. A lightweight tag or a
// message that is not a record is an error naming the tag.
func (r *Registry) ReadRelease(rel Release) (*ReleaseTagInfo, error) {
	if !rel.Annotated {
		return nil, fmt.Errorf("%s is a lightweight tag, not a release made by dome release", rel.Tag)
	}
	t, err := r.repo.Tag(rel.TagObject)
	if err != nil {
		return nil, err
	}
	rec, err := ParseReleaseRecord(rel.Tag, t.Message)
	if err != nil {
		return nil, err
	}
	return &ReleaseTagInfo{Release: rel, Tag: t, Record: rec, Raw: bytes.TrimRight([]byte(t.Message), "\n")}, nil
}
