package grant

import (
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// Constraints are what a grant lets a call touch. Every list is always
// present in a grant (an empty list grants nothing of its kind).
type Constraints struct {
	IO  IO  `json:"io"`
	Net Net `json:"net"`
}

// IO holds the filesystem constraints: repository-relative roots ("." is
// the whole tree) and doublestar deny globs, which win over the roots.
type IO struct {
	DenyGlobs  []string `json:"deny_globs"`
	ReadRoots  []string `json:"read_roots"`
	WriteRoots []string `json:"write_roots"`
}

// Net holds the network constraints: the hosts a call may reach (exact
// names, or "*.example.com" for any subdomain).
type Net struct {
	AllowHosts []string `json:"allow_hosts"`
}

// Budgets bound the calls of a grant: in all, per capability, and the wall
// time from the first call.
type Budgets struct {
	MaxCalls             int64            `json:"max_calls"`
	MaxCallsByCapability map[string]int64 `json:"max_calls_by_capability"`
	MaxWallSeconds       int64            `json:"max_wall_seconds"`
}

// Template is a partial set of constraints: the policy's defaults, a
// capability's constraints_template, an A2A profile's or a request's
// narrowing. A nil list or number is unset; an empty list is set to nothing.
type Template struct {
	Net     *NetTemplate     `json:"net,omitempty"`
	IO      *IOTemplate      `json:"io,omitempty"`
	Budgets *BudgetsTemplate `json:"budgets,omitempty"`
}

// NetTemplate is the net part of a Template.
type NetTemplate struct {
	AllowHosts []string `json:"allow_hosts,omitempty"`
}

// IOTemplate is the io part of a Template.
type IOTemplate struct {
	ReadRoots  []string `json:"read_roots,omitempty"`
	WriteRoots []string `json:"write_roots,omitempty"`
	DenyGlobs  []string `json:"deny_globs,omitempty"`
}

// BudgetsTemplate is the budgets part of a Template.
type BudgetsTemplate struct {
	MaxCalls             *int64           `json:"max_calls,omitempty"`
	MaxWallSeconds       *int64           `json:"max_wall_seconds,omitempty"`
	MaxCallsByCapability map[string]int64 `json:"max_calls_by_capability,omitempty"`
}

// maxBudget bounds every budget number (far below 2^53, so JSON numbers
// stay exact everywhere).
const maxBudget = 1_000_000_000_000

func (t *Template) hosts() []string {
	if t == nil || t.Net == nil {
		return nil
	}
	return t.Net.AllowHosts
}

func (t *Template) readRoots() []string {
	if t == nil || t.IO == nil {
		return nil
	}
	return t.IO.ReadRoots
}

func (t *Template) writeRoots() []string {
	if t == nil || t.IO == nil {
		return nil
	}
	return t.IO.WriteRoots
}

func (t *Template) denyGlobs() []string {
	if t == nil || t.IO == nil {
		return nil
	}
	return t.IO.DenyGlobs
}

func (t *Template) maxCalls() *int64 {
	if t == nil || t.Budgets == nil {
		return nil
	}
	return t.Budgets.MaxCalls
}

func (t *Template) maxWall() *int64 {
	if t == nil || t.Budgets == nil {
		return nil
	}
	return t.Budgets.MaxWallSeconds
}

// check validates a template: clean roots, valid globs and hosts, budgets in
// range. field prefixes the JSON pointer in errors ("/defaults").
func (t *Template) check(field string) error {
	if t == nil {
		return nil
	}
	if t.Net != nil {
		for i, h := range t.Net.AllowHosts {
			if _, err := NormalizeHost(h); err != nil {
				return fieldErr(fmt.Sprintf("%s/net/allow_hosts/%d", field, i), err)
			}
		}
	}
	if t.IO != nil {
		for name, roots := range map[string][]string{"read_roots": t.IO.ReadRoots, "write_roots": t.IO.WriteRoots} {
			for i, r := range roots {
				if _, err := NormalizeRoot(r); err != nil {
					return fieldErr(fmt.Sprintf("%s/io/%s/%d", field, name, i), err)
				}
			}
		}
		for i, g := range t.IO.DenyGlobs {
			if err := CheckGlob(g); err != nil {
				return fieldErr(fmt.Sprintf("%s/io/deny_globs/%d", field, i), err)
			}
		}
	}
	if t.Budgets != nil {
		for name, v := range map[string]*int64{"max_calls": t.Budgets.MaxCalls, "max_wall_seconds": t.Budgets.MaxWallSeconds} {
			if v != nil && (*v < 0 || *v > maxBudget) {
				return fieldErr(field+"/budgets/"+name, fmt.Errorf("%d: want 0 to %d", *v, int64(maxBudget)))
			}
		}
		for c, v := range t.Budgets.MaxCallsByCapability {
			if err := checkCapabilityID(c); err != nil {
				return fieldErr(field+"/budgets/max_calls_by_capability", err)
			}
			if v < 0 || v > maxBudget {
				return fieldErr(field+"/budgets/max_calls_by_capability/"+c, fmt.Errorf("%d: want 0 to %d", v, int64(maxBudget)))
			}
		}
	}
	return nil
}

// fieldError is a problem at a JSON pointer of an input file.
type fieldError struct {
	field string
	err   error
}

func (e *fieldError) Error() string { return e.field + ": " + e.err.Error() }
func (e *fieldError) Unwrap() error { return e.err }

func fieldErr(field string, err error) error { return &fieldError{field: field, err: err} }

// NormalizeRoot checks a root: a clean, relative, slash-separated path ("."
// is the whole tree) without "..", backslashes or control characters.
func NormalizeRoot(r string) (string, error) {
	if r == "" {
		return "", errors.New(`empty root: write "." for the whole tree`)
	}
	if strings.HasPrefix(r, "/") || strings.Contains(r, `\`) {
		return "", fmt.Errorf("root %q: want a relative path with forward slashes", r)
	}
	for _, c := range r {
		if c < 0x20 || c == 0x7f {
			return "", fmt.Errorf("root %q: control characters are not allowed", r)
		}
	}
	if clean := path.Clean(r); clean != r {
		return "", fmt.Errorf("root %q: write it clean, as %q", r, clean)
	}
	if r == ".." || strings.HasPrefix(r, "../") {
		return "", fmt.Errorf("root %q: '..' is not allowed", r)
	}
	return r, nil
}

// CheckGlob checks a doublestar deny glob.
func CheckGlob(g string) error {
	for _, c := range g {
		if c < 0x20 || c == 0x7f || c == 0x2028 || c == 0x2029 {
			return fmt.Errorf("deny glob %q: control characters and line separators are not allowed", g)
		}
	}
	if g == "" || !doublestar.ValidatePattern(g) {
		return fmt.Errorf("deny glob %q is not a valid doublestar pattern", g)
	}
	return nil
}

// NormalizeHost lowercases and checks a host name: letters, digits, '-' and
// '.', optionally starting with "*." (any subdomain).
func NormalizeHost(h string) (string, error) {
	l := strings.ToLower(h)
	name := strings.TrimPrefix(l, "*.")
	if name == "" || len(l) > 253 || strings.HasPrefix(name, ".") || strings.HasSuffix(name, ".") || strings.Contains(name, "..") {
		return "", fmt.Errorf("host %q: want a host name such as api.example.com or *.example.com", h)
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '.') {
			return "", fmt.Errorf("host %q: want a host name such as api.example.com or *.example.com (no scheme, port or path)", h)
		}
	}
	return l, nil
}

// rootContains reports whether root r contains path p (both clean).
func rootContains(r, p string) bool {
	return r == "." || p == r || len(p) > len(r) && p[len(r)] == '/' && p[:len(r)] == r
}

// minimalRoots sorts roots and drops those inside another: each root's
// ancestors are looked up in a set, so n roots cost O(n * depth).
func minimalRoots(roots []string) []string {
	set := make(map[string]bool, len(roots))
	for _, r := range roots {
		set[r] = true
	}
	if set["."] {
		return []string{"."}
	}
	out := make([]string, 0, len(set))
	for r := range set {
		inside := false
		for p := r; !inside; {
			i := strings.LastIndexByte(p, '/')
			if i < 0 {
				break
			}
			p = p[:i]
			inside = set[p]
		}
		if !inside {
			out = append(out, r)
		}
	}
	slices.Sort(out)
	return out
}

// unionRoots is the minimal set of roots covering a and b.
func unionRoots(a, b []string) []string { return minimalRoots(append(slices.Clone(a), b...)) }

// intersectRoots is the minimal set of roots covering exactly what both a
// and ceiling cover.
func intersectRoots(a, ceiling []string) []string {
	var out []string
	for _, r := range a {
		for _, c := range ceiling {
			switch {
			case rootContains(c, r):
				out = append(out, r)
			case rootContains(r, c):
				out = append(out, c)
			}
		}
	}
	return minimalRoots(out)
}

// hostCovers reports whether allow entry a admits host h (h may itself be
// a "*." pattern, admitted only by an equal or broader pattern).
func hostCovers(a, h string) bool {
	if a == h {
		return true
	}
	if !strings.HasPrefix(a, "*.") {
		return false
	}
	suffix := a[1:] // ".example.com"
	return strings.HasSuffix(strings.TrimPrefix(h, "*"), suffix) && len(strings.TrimPrefix(h, "*")) > len(suffix)
}

func sortedSet(xs []string) []string {
	out := slices.Clone(xs)
	slices.Sort(out)
	return slices.Compact(out)
}

// unionHosts is the sorted union of two host lists.
func unionHosts(a, b []string) []string { return sortedSet(append(slices.Clone(a), b...)) }

// intersectHosts keeps the hosts of a that ceiling admits, and the hosts of
// ceiling that a admits.
func intersectHosts(a, ceiling []string) []string {
	var out []string
	for _, h := range a {
		for _, c := range ceiling {
			switch {
			case hostCovers(c, h):
				out = append(out, h)
			case hostCovers(h, c):
				out = append(out, c)
			}
		}
	}
	return sortedSet(out)
}

// normalizeAll normalizes a list with f, sorted and without duplicates.
func normalizeAll(xs []string, f func(string) (string, error)) ([]string, error) {
	out := make([]string, 0, len(xs))
	for _, x := range xs {
		n, err := f(x)
		if err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	return sortedSet(out), nil
}

// cleanCallPath normalizes a path a call names. ok is false for a path that
// leaves the tree (absolute, "..", backslashes, control characters).
func cleanCallPath(p string) (string, bool) {
	if p == "" || strings.HasPrefix(p, "/") || strings.Contains(p, `\`) {
		return "", false
	}
	for i := 0; i < len(p); i++ {
		if c := p[i]; c < 0x20 || c == 0x7f {
			return "", false
		}
	}
	c := path.Clean(p)
	if c == ".." || strings.HasPrefix(c, "../") {
		return "", false
	}
	return c, true
}

// checkPath checks one path of a call against roots and deny globs.
func checkPath(p string, roots, deny []string, write bool) *Error {
	kind := "read"
	if write {
		kind = "write"
	}
	c, ok := cleanCallPath(p)
	if !ok {
		return refuse(CodePathOutsideRoots, "", "%s path %q leaves the repository tree", kind, p)
	}
	inside := false
	for _, r := range roots {
		if rootContains(r, c) {
			inside = true
			break
		}
	}
	if !inside {
		return refuse(CodePathOutsideRoots, "", "%s path %q is outside the %s roots %v", kind, p, kind, roots)
	}
	for _, g := range deny {
		if m, _ := doublestar.Match(g, c); m {
			return refuse(CodePathDenied, "", "%s path %q matches the deny glob %q", kind, p, g)
		}
	}
	return nil
}

// checkHost checks one host of a call against allow_hosts.
func checkHost(h string, allow []string) *Error {
	n, err := NormalizeHost(h)
	if err != nil || strings.HasPrefix(n, "*.") {
		return refuse(CodeHostNotAllowed, "", "host %q is not a host name", h)
	}
	for _, a := range allow {
		if hostCovers(a, n) {
			return nil
		}
	}
	return refuse(CodeHostNotAllowed, "", "host %q is not in allow_hosts %v", h, allow)
}
