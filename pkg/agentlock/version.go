package agentlock

import (
	"strings"

	"golang.org/x/mod/semver"

	"github.com/dome-registry/dome/internal/lazyre"
)

// semverRE is the SemVer 2.0.0 grammar (https://semver.org/#backusnaur-form-grammar-for-valid-semver-versions),
// with an optional leading v.
var semverRE = lazyre.New(`^v?(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)` +
	`(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?` +
	`(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$`)

// IsSemver reports whether v is a SemVer 2.0.0 version (a leading v allowed).
func IsSemver(v string) bool { return semverRE().MatchString(v) }

// CompareVersions orders server versions totally: two SemVer versions by
// SemVer precedence (1.2.0 < 1.10.0, 1.0.0-rc.1 < 1.0.0), then byte-wise
// when their precedence is equal (build metadata, a leading v); every
// SemVer version before every other version; two other versions byte-wise.
// It returns -1, 0 or +1.
func CompareVersions(a, b string) int {
	sa, sb := IsSemver(a), IsSemver(b)
	switch {
	case sa && sb:
		if c := semver.Compare("v"+strings.TrimPrefix(a, "v"), "v"+strings.TrimPrefix(b, "v")); c != 0 {
			return c
		}
	case sa:
		return -1
	case sb:
		return 1
	}
	return strings.Compare(a, b)
}

// movingTags are version names that move: distribution tags and branch
// names that stand for whatever is newest.
var movingTags = map[string]bool{
	"latest": true, "stable": true, "current": true, "next": true, "nightly": true, "edge": true,
	"canary": true, "dev": true, "develop": true, "head": true, "main": true, "master": true,
	"trunk": true, "tip": true, "lts": true, "release": true, "beta": true, "alpha": true, "rc": true,
	"preview": true, "unstable": true, "snapshot": true, "default": true, "any": true,
}

// MovingVersion says why v names a moving target rather than one exact
// version ("" when it is exact): a distribution tag or branch name
// ("latest", "main", ...), a range or wildcard ("^1.2", "~1", ">=1.0",
// "1.x", "*"), or a snapshot ("1.0.0-SNAPSHOT"). Exact versions need not be
// SemVer ("2024-05-01", "r42" are exact).
func MovingVersion(v string) string {
	lower := strings.ToLower(strings.TrimPrefix(strings.TrimPrefix(v, "v"), "V"))
	switch {
	case movingTags[strings.ToLower(v)] || movingTags[lower]:
		return "a tag that follows new releases"
	case strings.ContainsAny(v, "^~<>=*|"):
		return "a range"
	case strings.HasSuffix(lower, "-snapshot"):
		return "a snapshot, rebuilt in place"
	}
	for _, part := range strings.Split(strings.SplitN(lower, "-", 2)[0], ".") {
		if part == "x" {
			return "a wildcard"
		}
	}
	return ""
}
