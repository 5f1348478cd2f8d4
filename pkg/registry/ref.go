package registry

import (
	"fmt"
	"strings"

	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/dome-registry/dome/pkg/gitstore"
	"golang.org/x/mod/semver"
)

// ValidID reports whether id is a valid tool, profile or bundle id:
// ^[a-z0-9][a-z0-9._-]*$, at most 100 bytes, without "..". (A loop, not a
// regexp: it runs for every request of a batch and needs no compile at start.)
func ValidID(id string) bool {
	if id == "" || len(id) > 100 || strings.Contains(id, "..") {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
		case i > 0 && (c == '.' || c == '_' || c == '-'):
		default:
			return false
		}
	}
	return true
}

// Ref is a parsed "<id>@<rev>".
type Ref struct {
	ID  string
	Rev string
}

func (r Ref) String() string { return r.ID + "@" + r.Rev }

// ParseRef parses "<id>@<rev>" as given for the named argument (e.g. "tool",
// "--profile"); every malformed form is an *errkind.InputError with a hint.
func ParseRef(arg, s string) (Ref, error) {
	bad := func(problem, hint string) (Ref, error) {
		return Ref{}, &errkind.InputError{Source: arg, Problem: fmt.Sprintf("%q: %s", s, problem), Hint: hint}
	}
	const example = "write <id>@<ref>, e.g. petstore@main, petstore@v1.2.0 or petstore@<commit sha>"
	switch n := strings.Count(s, "@"); {
	case s == "":
		return bad("empty reference", example)
	case n == 0:
		return bad("missing @<ref>", example)
	case n > 1:
		return bad("more than one '@'", example)
	}
	id, rev, _ := strings.Cut(s, "@")
	if id == "" {
		return bad("missing id before '@'", example)
	}
	if rev == "" {
		return bad("missing ref after '@'", example+" (HEAD for the current commit)")
	}
	if !ValidID(id) {
		return bad(fmt.Sprintf("id %q must match ^[a-z0-9][a-z0-9._-]*$", id), "use lowercase letters, digits, '.', '_' and '-', starting with a letter or digit")
	}
	if _, err := gitstore.CheckRevision(rev); err != nil {
		return bad("invalid ref: "+err.Error(), "refs may not contain spaces, '..', control characters or :?*[\\ (~N and ^N go only at the end, as in main~2)")
	}
	return Ref{ID: id, Rev: rev}, nil
}

// IsReleaseVersion reports whether v is a release version "vX.Y.Z" (SemVer,
// optionally with a pre-release, no build metadata).
func IsReleaseVersion(v string) bool {
	return strings.HasPrefix(v, "v") && semver.IsValid(v) && semver.Build(v) == "" &&
		strings.Count(semver.Canonical(v), ".") >= 2 && semver.Canonical(v) == v
}

// ReleaseTag returns the tag name of a tool's release: registry/<id>/<version>.
func ReleaseTag(toolID, version string) string { return "registry/" + toolID + "/" + version }

// ReleaseRef returns the full ref name of a tool's release tag.
func ReleaseRef(toolID, version string) string { return "refs/tags/" + ReleaseTag(toolID, version) }
