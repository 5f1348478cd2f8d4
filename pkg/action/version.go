package action

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"golang.org/x/mod/semver"
)

// MaxNameLength and MaxVersionLength bound names and versions: both become
// path components in the git store and keys in PostgreSQL.
const (
	MaxNameLength    = 128
	MaxVersionLength = 128
)

// CheckName reports whether name is a valid action name: 1 to 128
// characters matching ^[a-z0-9]+([._-][a-z0-9]+)*$ (lowercase letters and
// digits in runs joined by single '.', '_' or '-', e.g. "files.move"). Such a
// name is always a safe file name: it never starts with '.', never holds '/'
// and never equals "." or "..". The error wraps ErrInvalid.
func CheckName(name string) error {
	if name == "" {
		return fmt.Errorf("%w: action name is empty", ErrInvalid)
	}
	if len(name) > MaxNameLength {
		return fmt.Errorf("%w: action name %.40q... is %d characters long, the limit is %d", ErrInvalid, name, len(name), MaxNameLength)
	}
	prevSep := true // a separator may not come first
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9':
			prevSep = false
		case c == '.' || c == '_' || c == '-':
			if prevSep {
				return fmt.Errorf("%w: action name %q: %q at offset %d must sit between lowercase letters or digits (want ^[a-z0-9]+([._-][a-z0-9]+)*$, e.g. files.move)", ErrInvalid, name, c, i)
			}
			prevSep = true
		default:
			// Decode the whole character: a look-alike such as the Cyrillic
			// U+0430 must be shown as itself, not as its first byte.
			r, _ := utf8.DecodeRuneInString(name[i:])
			return fmt.Errorf("%w: action name %q: character %s at offset %d is not allowed (want ^[a-z0-9]+([._-][a-z0-9]+)*$: lowercase letters, digits, and single . _ - between them)", ErrInvalid, name, describeRune(r), i)
		}
	}
	if prevSep {
		return fmt.Errorf("%w: action name %q must not end with %q (want ^[a-z0-9]+([._-][a-z0-9]+)*$)", ErrInvalid, name, name[len(name)-1])
	}
	return nil
}

// describeRune shows a character for an error message: 'x' for printable
// ASCII, 'а' (U+0430) beyond it (look-alikes of ASCII letters exist), U+FFFD
// for a byte that is not UTF-8.
func describeRune(r rune) string {
	switch {
	case r == utf8.RuneError:
		return "U+FFFD (not UTF-8)"
	case r < 0x80:
		return fmt.Sprintf("%q", r)
	}
	return fmt.Sprintf("%q (%U)", r, r)
}

// CheckVersion reports whether v is a valid action version: a full SemVer
// 2.0.0 version MAJOR.MINOR.PATCH with an optional pre-release
// (-rc.1), written without a leading "v" and without build metadata
// (+build: versions differing only in build metadata have equal precedence,
// so one of them could never be the latest). The error wraps ErrInvalid.
//
// golang.org/x/mod/semver, used for the comparison, expects a "v" prefix; the
// functions of this package add it internally, so callers never write it.
func CheckVersion(v string) error {
	switch {
	case v == "":
		return fmt.Errorf("%w: version is empty (want SemVer MAJOR.MINOR.PATCH, e.g. 1.0.0)", ErrInvalid)
	case len(v) > MaxVersionLength:
		return fmt.Errorf("%w: version %.40q... is %d characters long, the limit is %d", ErrInvalid, v, len(v), MaxVersionLength)
	case v[0] == 'v' || v[0] == 'V':
		return fmt.Errorf("%w: version %q: write it without the leading %q (%s)", ErrInvalid, v, v[:1], v[1:])
	case strings.Contains(v, "+"):
		return fmt.Errorf("%w: version %q: build metadata (+...) is not allowed: it does not take part in SemVer precedence", ErrInvalid, v)
	}
	sv := "v" + v
	if !semver.IsValid(sv) {
		return fmt.Errorf("%w: version %q is not SemVer 2.0.0 (want MAJOR.MINOR.PATCH with an optional -pre.release, numbers without leading zeros, e.g. 1.0.0 or 2.1.0-rc.1)", ErrInvalid, v)
	}
	if c := semver.Canonical(sv); c != sv {
		return fmt.Errorf("%w: version %q is incomplete: write all three numbers (%s)", ErrInvalid, v, c[1:])
	}
	return nil
}

// IsPrerelease reports whether the valid version v has a pre-release part.
func IsPrerelease(v string) bool { return semver.Prerelease("v"+v) != "" }

// CompareVersions compares two versions by SemVer 2.0.0 precedence (section
// 11): numerically by major, minor, patch; a pre-release is below the release
// it precedes (1.0.0-rc.1 < 1.0.0); pre-release identifiers compare one by
// one, numeric ones numerically and below alphanumeric ones. It returns -1, 0
// or +1. An invalid version is below every valid one; two invalid versions
// compare as strings, so the order is total.
func CompareVersions(a, b string) int {
	va, vb := CheckVersion(a) == nil, CheckVersion(b) == nil
	switch {
	case va && vb:
		return semver.Compare("v"+a, "v"+b)
	case va:
		return 1
	case vb:
		return -1
	}
	return cmp.Compare(a, b)
}

// SortVersions sorts versions in place by SemVer precedence, lowest first
// (CompareVersions).
func SortVersions(versions []string) {
	slices.SortFunc(versions, CompareVersions)
}

// LatestVersion returns the version an action's latest_version names: the
// highest release (a version without pre-release part) by SemVer precedence,
// or, when every version is a pre-release, the highest pre-release. So a
// release always wins over any pre-release for "latest": with 1.1.0 and
// 2.0.0-rc.1 published the latest is 1.1.0 (the rule of Go's "@latest"
// module query). Invalid versions are ignored; "" when none is valid.
//
// Deprecated versions (deprecated[v] set) count only when every version is
// deprecated.
func LatestVersion(versions []string, deprecated map[string]string) string {
	if len(deprecated) > 0 {
		var live []string
		for _, v := range versions {
			if _, dep := deprecated[v]; !dep {
				live = append(live, v)
			}
		}
		if l := LatestVersion(live, nil); l != "" {
			return l
		}
	}
	best, bestPre := "", ""
	for _, v := range versions {
		if CheckVersion(v) != nil {
			continue
		}
		if IsPrerelease(v) {
			if bestPre == "" || CompareVersions(v, bestPre) > 0 {
				bestPre = v
			}
			continue
		}
		if best == "" || CompareVersions(v, best) > 0 {
			best = v
		}
	}
	if best != "" {
		return best
	}
	return bestPre
}

// ParseRef splits "NAME@VERSION" or "NAME" (version "") and checks the name
// (and the version when given).
func ParseRef(ref string) (name, version string, err error) {
	name, version, found := strings.Cut(ref, "@")
	if err := CheckName(name); err != nil {
		return "", "", err
	}
	if found {
		if err := CheckVersion(version); err != nil {
			return "", "", err
		}
	}
	return name, version, nil
}

// IsInvalid reports whether err is a bad name, version or document.
func IsInvalid(err error) bool { return errors.Is(err, ErrInvalid) }
