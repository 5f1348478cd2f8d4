package registry

import (
	"encoding/json"
	"errors"
	"sort"

	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/dome-registry/dome/pkg/gitstore"
)

func jsonUnmarshal(data []byte, v any) error { return json.Unmarshal(data, v) }

// GeneratorsLock is a parsed generators.lock.json.
type GeneratorsLock struct {
	SchemaVersion string                     `json:"schema_version"`
	Targets       map[string]GeneratorTarget `json:"targets"`
}

// GeneratorTarget pins the bundle that generates one language.
type GeneratorTarget struct {
	Bundle    string         `json:"bundle"`
	SDKFlavor string         `json:"sdk_flavor,omitempty"`
	Options   map[string]any `json:"options,omitempty"`
}

// GeneratorsLockFile is the lock file's name in a tool folder.
const GeneratorsLockFile = "generators.lock.json"

// ReadGeneratorsLock returns the tool's validated generators.lock.json, or
// nil when the tool has none.
func (r *Registry) ReadGeneratorsLock(t *ToolResolution) (*GeneratorsLock, error) {
	e, err := r.repo.EntryAt(t.ToolTree, GeneratorsLockFile)
	if errors.Is(err, gitstore.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	source := t.ToolPath + "/" + GeneratorsLockFile + "@" + t.Commit.Short()
	data, err := r.readRegular(e, source)
	if err != nil {
		return nil, err
	}
	if err := r.validate(SchemaGeneratorsLock, source, data); err != nil {
		return nil, err
	}
	var lock GeneratorsLock
	if err := decodeStrict(data, &lock); err != nil {
		return nil, &errkind.InputError{Source: source, Problem: err.Error()}
	}
	return &lock, nil
}

// ToolSummary is one row of the registry listing.
type ToolSummary struct {
	ID             string      `json:"id"`
	Title          string      `json:"title"`
	Profiles       []string    `json:"profiles"`
	DefaultProfile string      `json:"default_profile,omitempty"`
	Languages      []string    `json:"languages"`
	LatestRelease  *Release    `json:"latest_release"`
	Releases       int         `json:"releases"`
	Deprecated     *Deprecated `json:"deprecated,omitempty"`
}

// List summarizes every tool at a pinned commit, sorted by id. Every file it
// reads is validated; the first invalid one is the error.
func (r *Registry) List(p Pin) ([]ToolSummary, error) {
	ids, err := r.ToolIDs(p)
	if err != nil {
		return nil, err
	}
	rels, err := r.AllReleases()
	if err != nil {
		return nil, err
	}
	out := make([]ToolSummary, 0, len(ids))
	for _, id := range ids {
		s, err := r.Summarize(Ref{ID: id, Rev: p.Requested}, p, rels[id])
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// Summarize describes one tool at a pinned commit.
func (r *Registry) Summarize(ref Ref, p Pin, releases []Release) (ToolSummary, error) {
	t, err := r.ToolAt(ref, p)
	if err != nil {
		return ToolSummary{}, err
	}
	return r.summary(t, releases)
}

func (r *Registry) summary(t *ToolResolution, releases []Release) (ToolSummary, error) {
	profiles, err := r.ProfileIDs(t.ToolID, t.Pin)
	if err != nil {
		return ToolSummary{}, err
	}
	lock, err := r.ReadGeneratorsLock(t)
	if err != nil {
		return ToolSummary{}, err
	}
	langs := []string{}
	if lock != nil {
		for l := range lock.Targets {
			langs = append(langs, l)
		}
		sort.Strings(langs)
	}
	if profiles == nil {
		profiles = []string{}
	}
	s := ToolSummary{
		ID: t.ToolID, Title: t.Tool.Title, Profiles: profiles, DefaultProfile: t.Tool.DefaultProfile,
		Languages: langs, Releases: len(releases), Deprecated: t.Tool.Deprecated,
	}
	if l, ok := Latest(releases); ok {
		s.LatestRelease = &l
	}
	return s, nil
}

// ToolDetails is what dome registry show prints.
type ToolDetails struct {
	ToolSummary
	Description string                     `json:"description,omitempty"`
	Owners      []string                   `json:"owners"`
	Spec        string                     `json:"spec"`
	Labels      []string                   `json:"labels,omitempty"`
	Resolution  *ToolResolution            `json:"resolution"`
	Generators  map[string]GeneratorTarget `json:"generators"`
	AllReleases []Release                  `json:"all_releases"`
}

// Show describes a resolved tool in full.
func (r *Registry) Show(t *ToolResolution) (*ToolDetails, error) {
	rels, err := r.Releases(t.ToolID)
	if err != nil {
		return nil, err
	}
	s, err := r.summary(t, rels)
	if err != nil {
		return nil, err
	}
	lock, _ := r.ReadGeneratorsLock(t)
	gens := map[string]GeneratorTarget{}
	if lock != nil {
		gens = lock.Targets
	}
	if rels == nil {
		rels = []Release{}
	}
	return &ToolDetails{
		ToolSummary: s, Description: t.Tool.Description, Owners: t.Tool.Owners, Spec: t.Tool.Spec,
		Labels: t.Tool.Labels, Resolution: t, Generators: gens, AllReleases: rels,
	}, nil
}
