package registry

import (
	"sort"

	"github.com/dome-registry/dome/pkg/gitstore"
	"golang.org/x/mod/semver"
)

// IndexVersion is the schema_version of the registry index.
const IndexVersion = "dome.registry_index/v1"

// Index is the registry index: every tool at a commit with every release.
type Index struct {
	SchemaVersion string      `json:"schema_version"`
	Commit        string      `json:"commit"`
	Tools         []IndexTool `json:"tools"`
}

// IndexTool is one tool of the index.
type IndexTool struct {
	ID            string            `json:"id"`
	Title         string            `json:"title"`
	Deprecated    *Deprecated       `json:"deprecated,omitempty"`
	Profiles      []string          `json:"profiles"`
	Languages     []string          `json:"languages"`
	Releases      []IndexRelease    `json:"releases"`
	Latest        string            `json:"latest,omitempty"`
	LatestByMajor map[string]string `json:"latest_by_major"`
}

// IndexRelease is one release of a tool in the index.
type IndexRelease struct {
	Version         string            `json:"version"`
	Tag             string            `json:"tag"`
	TagObject       gitstore.Hash     `json:"tag_object"`
	Commit          gitstore.Hash     `json:"commit"`
	Signed          bool              `json:"signed"`
	ProfileDigests  map[string]string `json:"profile_digests"`
	Manifests       map[string]string `json:"manifests"`
	BreakingChanges int               `json:"breaking_changes"`
	Problem         string            `json:"problem,omitempty"` // a tag dome cannot read as a release
}

// BuildIndex builds the index of the registry at a pinned commit. Releases
// whose tags cannot be read as releases are listed with their problem
// rather than hidden (dome registry verify reports them in full).
func (r *Registry) BuildIndex(p Pin) (*Index, error) {
	tools, err := r.List(p)
	if err != nil {
		return nil, err
	}
	all, err := r.AllReleases()
	if err != nil {
		return nil, err
	}
	idx := &Index{SchemaVersion: IndexVersion, Commit: p.Commit.String(), Tools: []IndexTool{}}
	for _, t := range tools {
		it := IndexTool{ID: t.ID, Title: t.Title, Deprecated: t.Deprecated, Profiles: t.Profiles, Languages: t.Languages,
			Releases: []IndexRelease{}, LatestByMajor: map[string]string{}}
		for _, rel := range all[t.ID] {
			ir := IndexRelease{Version: rel.Version, Tag: rel.Tag, TagObject: rel.TagObject, Commit: rel.Commit,
				ProfileDigests: map[string]string{}, Manifests: map[string]string{}}
			info, err := r.ReadRelease(rel)
			if err != nil {
				ir.Problem = err.Error()
			} else {
				ir.Signed = info.Tag.PGPSignature != ""
				for name, pr := range info.Record.Profiles {
					ir.ProfileDigests[name] = pr.FilteredSpecDigest
				}
				for k, v := range info.Record.Manifests {
					ir.Manifests[k] = v
				}
				ir.BreakingChanges = len(info.Record.BreakingChanges)
			}
			it.Releases = append(it.Releases, ir)
			if semver.Prerelease(rel.Version) == "" {
				it.LatestByMajor[semver.Major(rel.Version)] = rel.Version // ascending order: the last wins
			}
		}
		if l, ok := Latest(all[t.ID]); ok {
			it.Latest = l.Version
		}
		idx.Tools = append(idx.Tools, it)
	}
	sort.Slice(idx.Tools, func(i, j int) bool { return idx.Tools[i].ID < idx.Tools[j].ID })
	return idx, nil
}
