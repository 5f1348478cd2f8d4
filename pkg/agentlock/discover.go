package agentlock

import "sort"

// Category is one category of an index with its servers.
type Category struct {
	Category string   `json:"category"`
	Servers  []Server `json:"servers"`
}

// Discover groups the servers of idx by category: categories sorted, the
// servers of each in tie-break order (the first is the one Resolve would
// pick when no constraint or scope rules it out).
func Discover(idx *Index) []Category {
	by := map[string][]Server{}
	for _, s := range idx.Servers {
		for _, c := range s.Categories {
			by[c] = append(by[c], s)
		}
	}
	out := make([]Category, 0, len(by))
	for c, ss := range by {
		sort.SliceStable(ss, func(i, j int) bool { return lessTieBreak(&ss[i], &ss[j]) })
		out = append(out, Category{Category: c, Servers: ss})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Category < out[j].Category })
	return out
}
