package release

import (
	"context"
	"sort"

	"github.com/dome-registry/dome/pkg/registry"
	"github.com/dome-registry/dome/pkg/specdiff"
)

// ProfileDiff is the classified difference of one profile's filtered spec.
type ProfileDiff struct {
	Profile string          `json:"profile"`
	Status  string          `json:"status"` // "compared", "added" (only in B), "removed" (only in A)
	Report  specdiff.Report `json:"report"`
}

// Diff compares tool A and tool B (the same tool at two refs) per profile:
// the named profile, or every profile of either side.
func Diff(ctx context.Context, reg *registry.Registry, a, b registry.Ref, profile string) ([]ProfileDiff, error) {
	ta, err := reg.ResolveTool(ctx, a, registry.PinOptions{Source: "tool A"})
	if err != nil {
		return nil, err
	}
	tb, err := reg.ResolveTool(ctx, b, registry.PinOptions{Source: "tool B"})
	if err != nil {
		return nil, err
	}
	return diffTools(reg, ta, tb, profile)
}

func diffTools(reg *registry.Registry, ta, tb *registry.ToolResolution, profile string) ([]ProfileDiff, error) {
	var ids []string
	if profile != "" {
		ids = []string{profile}
	} else {
		seen := map[string]bool{}
		for _, t := range []*registry.ToolResolution{ta, tb} {
			list, err := reg.ProfileIDs(t.ToolID, t.Pin)
			if err != nil {
				return nil, err
			}
			for _, id := range list {
				if !seen[id] {
					seen[id] = true
					ids = append(ids, id)
				}
			}
		}
		sort.Strings(ids)
	}
	has := func(t *registry.ToolResolution, id string) bool {
		list, _ := reg.ProfileIDs(t.ToolID, t.Pin)
		for _, x := range list {
			if x == id {
				return true
			}
		}
		return false
	}
	var out []ProfileDiff
	for _, id := range ids {
		inA, inB := has(ta, id), has(tb, id)
		switch {
		case inA && !inB:
			out = append(out, ProfileDiff{Profile: id, Status: "removed", Report: specdiff.Report{Breaking: []specdiff.Change{{Kind: "removed_profile", Breaking: true, Detail: "profile " + id + " was removed"}}, NonBreaking: []specdiff.Change{}}})
			continue
		case !inA && inB:
			out = append(out, ProfileDiff{Profile: id, Status: "added", Report: specdiff.Report{Breaking: []specdiff.Change{}, NonBreaking: []specdiff.Change{}}})
			continue
		case !inA && !inB && profile != "":
			// let ProfileAt report the missing profile with the available ones
		}
		fa, err := FilterProfiles(reg, ta, []string{id})
		if err != nil {
			return nil, err
		}
		fb, err := FilterProfiles(reg, tb, []string{id})
		if err != nil {
			return nil, err
		}
		rep, err := specdiff.Diff(fa[id].Result.JSON, fb[id].Result.JSON)
		if err != nil {
			return nil, err
		}
		out = append(out, ProfileDiff{Profile: id, Status: "compared", Report: rep})
	}
	return out, nil
}
