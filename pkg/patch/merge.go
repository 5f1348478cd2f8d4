package patch

import "github.com/dome-registry/dome/internal/xdiff"

// MergeLabels name the sides in conflict markers.
type MergeLabels struct {
	Ours, Theirs string
}

// MergeConflict is one region both sides changed differently. Lines are
// 1-based and inclusive in the base (End = Start-1 for an empty range).
type MergeConflict struct {
	BaseStart, BaseEnd int
}

// Merge3 merges ours and theirs, both derived from base, as `git apply
// --3way` does (git's ll_merge: xdiff's merge at the "zealous" level):
// changes that touch or overlap conflict unless identical, a conflict is
// narrowed to the lines that differ, and conflicts fewer than four lines
// apart are joined. The result is byte for byte git's, with conflicts
// written as "<<<<<<< ours", "=======", ">>>>>>> theirs" (the labels).
func Merge3(base, ours, theirs []byte, labels MergeLabels) ([]byte, []MergeConflict) {
	out, cs := xdiff.Merge(base, ours, theirs, xdiff.MergeOptions{Ours: labels.Ours, Theirs: labels.Theirs, Level: xdiff.Zealous})
	var conflicts []MergeConflict
	for _, c := range cs {
		conflicts = append(conflicts, MergeConflict{BaseStart: c.BaseStart + 1, BaseEnd: c.BaseEnd})
	}
	return out, conflicts
}
