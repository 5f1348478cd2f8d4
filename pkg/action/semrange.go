package action

import (
	"fmt"
	"strconv"
	"strings"
)

// A Range selects versions of an action for `dome action lock`. Syntax (the
// npm/Cargo conventions):
//
//	latest            the action's latest_version (LatestVersion); also a bare NAME
//	1.2.3, =1.2.3     exactly that version (pre-releases too: 2.0.0-rc.1)
//	^1.2.3            >=1.2.3 <2.0.0   (^0.2.3: <0.3.0; ^0.0.3: <0.0.4)
//	~1.2.3            >=1.2.3 <1.3.0   (~1.2: <1.3.0; ~1: <2.0.0)
//	1.x, 1.2.x, 1, 1.2, *   x-ranges: any version with those leading numbers
//	>=1.0.0 <2.0.0    comparators >, >=, <, <=, = joined by spaces or commas (all must hold);
//	                  a comparator may leave out numbers: >=1.2 is >=1.2.0, <2 is <2.0.0
//	^1.2 || ^2.1      alternatives: a version in any of them (not with latest)
//
// The highest matching version wins. A pre-release version matches only when
// the range names a pre-release of the same MAJOR.MINOR.PATCH (so ^1.0.0
// never picks 1.5.0-rc.1, but >=1.5.0-rc.1 does), as in npm.
type Range struct {
	text   string
	latest bool
	exact  string          // set for an exact version
	cmps   []comparator    // all must hold
	pre    map[string]bool // MAJOR.MINOR.PATCH tuples whose pre-releases may match
	alts   []Range         // "a || b": any of them (then the fields above are unused)
}

type comparator struct {
	op string // ">", ">=", "<", "<=", "="
	v  string // a full version
}

// String returns the range as written (trimmed).
func (r Range) String() string { return r.text }

// ParseRange parses a range (see Range). The error wraps ErrInvalid.
func ParseRange(s string) (Range, error) {
	text := strings.TrimSpace(s)
	if !strings.Contains(text, "||") {
		return parseSet(text)
	}
	if len(text) > 256 {
		return Range{}, fmt.Errorf("%w: version range %q: too long", ErrInvalid, text)
	}
	r := Range{text: text}
	for _, part := range strings.Split(text, "||") {
		part = strings.TrimSpace(part)
		if part == "" || part == "latest" {
			return Range{}, fmt.Errorf("%w: version range %q: each side of || must be a range of versions (not empty, not latest)", ErrInvalid, text)
		}
		alt, err := parseSet(part)
		if err != nil {
			return Range{}, err
		}
		r.alts = append(r.alts, alt)
	}
	return r, nil
}

// parseSet parses a range without "||".
func parseSet(text string) (Range, error) {
	r := Range{text: text, pre: map[string]bool{}}
	bad := func(format string, a ...any) (Range, error) {
		return Range{}, fmt.Errorf("%w: version range %q: %s (ranges: latest, 1.2.3, ^1.2.3, ~1.2.3, 1.x, >=1.0.0 <2.0.0, ^1.2 || ^2.0)", ErrInvalid, text, fmt.Sprintf(format, a...))
	}
	switch text {
	case "", "latest":
		r.text, r.latest = "latest", true
		return r, nil
	case "*", "x", "X":
		r.text = "*"
		return r, nil
	}
	if len(text) > 256 {
		return bad("too long")
	}
	parts := strings.FieldsFunc(text, func(c rune) bool { return c == ' ' || c == ',' || c == '\t' })
	if len(parts) == 1 && CheckVersion(strings.TrimPrefix(parts[0], "=")) == nil {
		r.exact = strings.TrimPrefix(parts[0], "=")
		return r, nil
	}
	for _, p := range parts {
		var op string
		for _, o := range []string{">=", "<=", ">", "<", "=", "^", "~"} {
			if strings.HasPrefix(p, o) {
				op = o
				break
			}
		}
		rest := strings.TrimSpace(p[len(op):])
		if rest == "" && len(parts) > 1 {
			return bad("operator %q has no version (write >=1.0.0 without a space)", op)
		}
		nums, pre, err := partial(rest)
		if err != nil {
			return bad("%v", err)
		}
		if pre != "" {
			r.pre[tuple(nums)] = true
		}
		full := func(n []int) string { return fmt.Sprintf("%d.%d.%d", at(n, 0), at(n, 1), at(n, 2)) }
		lo := full(nums)
		if pre != "" {
			lo += "-" + pre
		}
		switch op {
		case "^", "~", "", "=":
			if op == "=" && len(nums) == 3 {
				r.cmps = append(r.cmps, comparator{"=", lo})
				continue
			}
			if len(nums) == 0 {
				if op != "" {
					return bad("%q needs a version", op)
				}
				continue // "*" within a comparator set
			}
			var hi string
			switch {
			case op == "^":
				switch {
				case nums[0] > 0 || len(nums) == 1:
					hi = fmt.Sprintf("%d.0.0", nums[0]+1)
				case len(nums) == 2 || at(nums, 1) > 0:
					hi = fmt.Sprintf("0.%d.0", at(nums, 1)+1)
				default:
					hi = fmt.Sprintf("0.0.%d", at(nums, 2)+1)
				}
			case op == "~" && len(nums) >= 2:
				hi = fmt.Sprintf("%d.%d.0", nums[0], nums[1]+1)
			case len(nums) == 1: // ~1, 1, 1.x
				hi = fmt.Sprintf("%d.0.0", nums[0]+1)
			case len(nums) == 2: // 1.2, 1.2.x
				hi = fmt.Sprintf("%d.%d.0", nums[0], nums[1]+1)
			default: // a full version with "=" handled above; here op is "" with 3 numbers
				r.cmps = append(r.cmps, comparator{"=", lo})
				continue
			}
			r.cmps = append(r.cmps, comparator{">=", lo}, comparator{"<", hi + "-0"})
		case ">=", ">", "<=", "<":
			if len(nums) == 0 {
				return bad("%q needs a version", op)
			}
			v := lo
			if len(nums) < 3 && (op == ">" || op == "<=") {
				// >1.2 means >=1.3.0; <=1.2 means <1.3.0
				n := append([]int(nil), nums...)
				n[len(n)-1]++
				v = full(n)
				if op == ">" {
					op = ">="
				} else {
					op = "<"
				}
			}
			if op == "<" && pre == "" {
				v += "-0" // <2.0.0 excludes 2.0.0-rc.1 too
			}
			r.cmps = append(r.cmps, comparator{op, v})
		}
	}
	if len(r.cmps) == 0 {
		r.text = "*"
	}
	return r, nil
}

func at(n []int, i int) int {
	if i < len(n) {
		return n[i]
	}
	return 0
}

func tuple(n []int) string { return fmt.Sprintf("%d.%d.%d", at(n, 0), at(n, 1), at(n, 2)) }

// partial parses "1", "1.2", "1.2.3", "1.2.3-rc.1", "1.x", "1.2.*", "*".
func partial(s string) (nums []int, pre string, err error) {
	if s == "" || s == "*" || s == "x" || s == "X" {
		return nil, "", nil
	}
	core, pre, hasPre := strings.Cut(s, "-")
	if strings.Contains(s, "+") {
		return nil, "", fmt.Errorf("build metadata (+...) is not allowed")
	}
	fields := strings.Split(core, ".")
	if len(fields) > 3 {
		return nil, "", fmt.Errorf("%q has more than three numbers", s)
	}
	for i, f := range fields {
		if f == "x" || f == "X" || f == "*" {
			if hasPre || i+1 < len(fields) && fields[i+1] != "x" && fields[i+1] != "X" && fields[i+1] != "*" {
				return nil, "", fmt.Errorf("%q: nothing may follow a wildcard but wildcards", s)
			}
			break
		}
		n, err := strconv.Atoi(f)
		if err != nil || n < 0 || f != strconv.Itoa(n) {
			return nil, "", fmt.Errorf("%q: %q is not a number without leading zeros", s, f)
		}
		nums = append(nums, n)
	}
	if hasPre {
		if len(nums) != 3 {
			return nil, "", fmt.Errorf("%q: a pre-release needs all three numbers", s)
		}
		if err := CheckVersion(s); err != nil {
			return nil, "", fmt.Errorf("%q is not a SemVer version", s)
		}
	}
	return nums, pre, nil
}

// Match reports whether version v is in the range. A "latest" range matches
// no version by itself: use Resolve.
func (r Range) Match(v string) bool {
	if len(r.alts) > 0 {
		for _, a := range r.alts {
			if a.Match(v) {
				return true
			}
		}
		return false
	}
	if CheckVersion(v) != nil || r.latest {
		return false
	}
	if r.exact != "" {
		return v == r.exact
	}
	if IsPrerelease(v) {
		core, _, _ := strings.Cut(v, "-")
		if !r.pre[core] {
			return false
		}
	}
	for _, c := range r.cmps {
		d := CompareVersions(v, c.v)
		ok := false
		switch c.op {
		case "=":
			ok = d == 0
		case ">":
			ok = d > 0
		case ">=":
			ok = d >= 0
		case "<":
			ok = d < 0
		case "<=":
			ok = d <= 0
		}
		if !ok {
			return false
		}
	}
	return true
}

// Resolve returns the highest of versions in the range ("latest": the
// LatestVersion rule), and false when none matches. A deprecated version
// (deprecated[v] set) is picked only when no other version matches.
func (r Range) Resolve(versions []string, deprecated map[string]string) (string, bool) {
	if r.latest {
		v := LatestVersion(versions, deprecated)
		return v, v != ""
	}
	best, bestDep := "", ""
	for _, v := range versions {
		if !r.Match(v) {
			continue
		}
		if _, dep := deprecated[v]; dep {
			if bestDep == "" || CompareVersions(v, bestDep) > 0 {
				bestDep = v
			}
		} else if best == "" || CompareVersions(v, best) > 0 {
			best = v
		}
	}
	if best == "" {
		best = bestDep
	}
	return best, best != ""
}
