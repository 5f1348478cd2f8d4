package grant

import (
	"github.com/bmatcuk/doublestar/v4"
)

// CheckRead returns the refusal a call reading p would get from the
// grant's read roots and deny globs (PATH_OUTSIDE_ROOTS, PATH_DENIED), or
// nil. A gateway uses it to filter what a listing or a search shows, and a
// coordinator to decide which files of the base a worker's scratch tree
// holds, the same way Authorize checks a call's paths.
func (g *Grant) CheckRead(p string) error {
	if e := checkPath(p, g.Payload.Constraints.IO.ReadRoots, g.Payload.Constraints.IO.DenyGlobs, false); e != nil {
		return e
	}
	return nil
}

// CheckWrite returns the refusal a call writing p would get from the
// grant's write roots and deny globs, or nil.
func (g *Grant) CheckWrite(p string) error {
	if e := checkPath(p, g.Payload.Constraints.IO.WriteRoots, g.Payload.Constraints.IO.DenyGlobs, true); e != nil {
		return e
	}
	return nil
}

// CanList reports whether a listing or search of folder dir may show
// anything: dir is inside a read root or above one, and no deny glob
// covers it. Entries below it are still filtered one by one (CheckRead).
func (g *Grant) CanList(dir string) bool {
	c, ok := cleanCallPath(dir)
	if !ok {
		return false
	}
	io := &g.Payload.Constraints.IO
	for _, gl := range io.DenyGlobs {
		if m, _ := doublestar.Match(gl, c); m && c != "." {
			return false
		}
	}
	for _, r := range io.ReadRoots {
		if rootContains(r, c) || rootContains(c, r) {
			return true
		}
	}
	return false
}
