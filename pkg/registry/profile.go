package registry

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/dome-registry/dome/pkg/gitstore"
)

// ProfileSuffix ends every profile file name.
const ProfileSuffix = ".profile.json"

// ProfileResolution is a tool's profile pinned to a commit.
type ProfileResolution struct {
	ProfileID string `json:"profile_id"`
	ToolID    string `json:"tool_id"`
	Pin
	Path string        `json:"path"`
	Blob gitstore.Hash `json:"blob"`
	Data []byte        `json:"-"` // the validated profile file
}

// ResolveProfile pins ref (profile_id@rev) for tool toolID and returns the
// validated profile file. "vX.Y.Z" means the tool's release tag, so a
// profile can be taken from another commit than the tool.
func (r *Registry) ResolveProfile(ctx context.Context, toolID string, ref Ref, opts PinOptions) (*ProfileResolution, error) {
	if opts.Source == "" {
		opts.Source = "--profile"
	}
	if opts.Display == "" {
		opts.Display = ref.String()
	}
	p, err := r.PinRev(ctx, toolID, ref.Rev, opts)
	if err != nil {
		return nil, err
	}
	return r.ProfileAt(toolID, ref.ID, p)
}

// ProfileAt returns profile profileID of toolID at a pinned commit.
func (r *Registry) ProfileAt(toolID, profileID string, p Pin) (*ProfileResolution, error) {
	l, err := r.layoutAt(p)
	if err != nil {
		return nil, err
	}
	toolPath := l.toolPath(toolID)
	file := toolPath + "/profiles/" + profileID + ProfileSuffix
	e, err := r.repo.EntryAt(p.Tree, file)
	if err != nil || e.Mode.IsDir() {
		if err != nil && !errors.Is(err, gitstore.ErrNotFound) {
			return nil, err
		}
		if te, terr := r.repo.EntryAt(p.Tree, toolPath); terr != nil || !te.Mode.IsDir() {
			return nil, r.missingTool(Ref{ID: toolID, Rev: p.Requested}, p, l)
		}
		ids, _ := r.ProfileIDs(toolID, p)
		hint := "available: " + strings.Join(ids, ", ")
		if len(ids) == 0 {
			hint = fmt.Sprintf("%s has no profiles at %s; add %s/profiles/<id>%s", toolID, p.Commit.Short(), toolPath, ProfileSuffix)
		}
		return nil, &errkind.InputError{
			Source:  "--profile",
			Problem: fmt.Sprintf("profile %q not found for tool %q at %s (%s)", profileID, toolID, p.Commit.Short(), file),
			Hint:    hint,
		}
	}
	source := file + "@" + p.Commit.Short()
	data, err := r.readRegular(e, source)
	if err != nil {
		return nil, err
	}
	if err := r.validate(SchemaProfile, source, data); err != nil {
		return nil, err
	}
	var head struct {
		ID string `json:"id"`
	}
	if err := jsonUnmarshal(data, &head); err != nil {
		return nil, &errkind.InputError{Source: source, Problem: err.Error()}
	}
	if head.ID != profileID {
		return nil, &errkind.InputError{Source: source, Field: "/id", Problem: fmt.Sprintf("id %q does not match the file name %q", head.ID, profileID+ProfileSuffix), Hint: "rename the file or fix the id"}
	}
	return &ProfileResolution{ProfileID: profileID, ToolID: toolID, Pin: p, Path: file, Blob: e.Hash, Data: data}, nil
}

// ProfileIDs lists the profiles of toolID at a pinned commit, sorted.
func (r *Registry) ProfileIDs(toolID string, p Pin) ([]string, error) {
	l, err := r.layoutAt(p)
	if err != nil {
		return nil, err
	}
	e, err := r.repo.EntryAt(p.Tree, l.toolPath(toolID)+"/profiles")
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
		if id, ok := strings.CutSuffix(x.Name, ProfileSuffix); ok && !x.Mode.IsDir() && ValidID(id) {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	return ids, nil
}
