package registry

import "golang.org/x/mod/semver"

// compareSemver orders versions by SemVer precedence (pre-releases before
// the release), with a byte-wise tie-break so the order is total.
func compareSemver(a, b string) int {
	if c := semver.Compare(a, b); c != 0 {
		return c
	}
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
