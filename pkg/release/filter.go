package release

import (
	"fmt"

	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/dome-registry/dome/pkg/registry"
	"github.com/dome-registry/dome/pkg/specfilter"
)

// Filtered is one profile of a tool filtered at a commit.
type Filtered struct {
	Profile *registry.ProfileResolution
	Result  *specfilter.Result
}

// FilterProfiles filters the tool's spec with each named profile (all of the
// tool's profiles when ids is empty) at the tool's commit. A profile that
// does not filter cleanly is an error naming it.
func FilterProfiles(reg *registry.Registry, t *registry.ToolResolution, ids []string) (map[string]Filtered, error) {
	if len(ids) == 0 {
		var err error
		if ids, err = reg.ProfileIDs(t.ToolID, t.Pin); err != nil {
			return nil, err
		}
	}
	files := reg.Files(t)
	doc, err := specfilter.Load(files, t.Tool.Spec, specfilter.LoadOptions{Describe: files.Describe})
	if err != nil {
		return nil, err
	}
	out := map[string]Filtered{}
	for _, id := range ids {
		pr, err := reg.ProfileAt(t.ToolID, id, t.Pin)
		if err != nil {
			return nil, err
		}
		p, err := specfilter.ParseProfile(pr.Path+"@"+pr.Commit.Short(), pr.Data)
		if err != nil {
			return nil, err
		}
		res, err := specfilter.Apply(doc, p, specfilter.Options{})
		if err != nil {
			if errkind.IsInput(err) {
				return nil, fmt.Errorf("profile %s of %s at %s does not filter cleanly: %w", id, t.ToolID, t.Commit.Short(), err)
			}
			return nil, err
		}
		out[id] = Filtered{Profile: pr, Result: res}
	}
	return out, nil
}
