// Package netpolicy holds the rules for a profile's net.allow_hosts: what
// an allowlist entry may be, and how the host of a request URL is read for
// comparison with it. The generated clients of every language apply the
// same rules (their runtimes are rendered from the bundles' templates); the
// contract tests run shared vectors through all of them, so the Go here is
// the reference.
//
// An entry is a lower-case DNS name of letters, digits and hyphens (labels
// of 1 to 63 characters, at most 253 in all, IDNs in their ASCII "xn--"
// form), a dotted-quad IPv4 address without leading zeros, or an IPv6
// address in brackets in its RFC 5952 form. Ports, wildcards, trailing dots,
// zone ids and IPv4-mapped IPv6 forms are refused: an allowlist is compared
// by exact string, so each host must have exactly one spelling.
package netpolicy

import (
	"fmt"
	"net/netip"
	"strings"

	"golang.org/x/net/idna"
)

// HostError is a refused allowlist entry: Problem says why, Hint how to
// write it instead ("" when there is nothing better to say).
type HostError struct {
	Entry   string
	Problem string
	Hint    string
}

func (e *HostError) Error() string { return fmt.Sprintf("%s: %s", Quote(e.Entry), e.Problem) }

// CheckAllowHost validates one net.allow_hosts entry and returns it (an
// entry has one spelling: upper case is refused with the lower-case form as
// the hint, as a trailing dot is).
func CheckAllowHost(entry string) (string, *HostError) {
	bad := func(problem, hint string) (string, *HostError) {
		return "", &HostError{Entry: entry, Problem: problem, Hint: hint}
	}
	e := entry
	switch {
	case e == "":
		return bad("an empty host", "")
	case strings.Contains(e, "://") || strings.ContainsAny(e, "/?#@"):
		return bad("a URL, not a host", "list the host alone, e.g. api.example.com")
	case strings.ContainsAny(e, " \t\r\n"):
		return bad("contains white space", "")
	case strings.Contains(e, "*"):
		return bad("wildcards are not supported", "list each host")
	}
	for _, r := range e {
		if r >= 0x80 {
			hint := "write it in its ASCII (punycode) form"
			if a, err := idna.Lookup.ToASCII(e); err == nil && a != e {
				hint = "write it as " + a
			}
			return bad("an internationalized name (IDN)", hint)
		}
	}
	if strings.HasPrefix(e, "[") {
		end := strings.IndexByte(e, ']')
		if end < 0 {
			return bad("an IPv6 address without its closing bracket", "")
		}
		if end != len(e)-1 {
			return bad("has a port: an allowlist names hosts, and every port of an allowed host is allowed", "list "+e[:end+1])
		}
		in := e[1:end]
		if strings.Contains(in, "%") {
			return bad("an IPv6 zone id is not a host", "")
		}
		if strings.Contains(in, ".") {
			return bad("an IPv6 address with an embedded IPv4 part", "list the IPv4 address itself")
		}
		a, err := netip.ParseAddr(in)
		if err != nil || !a.Is6() {
			return bad("not an IPv6 address", "")
		}
		if a.String() != in {
			return bad("an IPv6 address not in its RFC 5952 form", "write it as ["+a.String()+"]")
		}
		return e, nil
	}
	if n := strings.Count(e, ":"); n == 1 {
		host := e[:strings.IndexByte(e, ':')]
		return bad("has a port: an allowlist names hosts, and every port of an allowed host is allowed", "list "+host)
	} else if n > 1 {
		hint := ""
		if a, err := netip.ParseAddr(e); err == nil && a.Is6() {
			hint = "write it as [" + a.String() + "]"
		}
		return bad("an IPv6 address must be written in brackets, as in a URL", hint)
	}
	if strings.HasSuffix(e, ".") {
		return bad("ends with a dot", "list "+strings.TrimSuffix(e, "."))
	}
	low := strings.ToLower(e)
	if low != e {
		return bad("not in lower case", "list "+low)
	}
	labels := strings.Split(low, ".")
	if last := labels[len(labels)-1]; last != "" && (isDigits(last) || strings.HasPrefix(last, "0x")) {
		a, err := netip.ParseAddr(low)
		if err != nil || !a.Is4() || a.String() != low {
			return bad("looks like an IPv4 address but is not in dotted-quad form (four decimal numbers 0-255 without leading zeros)", "")
		}
		return low, nil
	}
	if len(low) > 253 {
		return bad("longer than 253 characters", "")
	}
	for _, l := range labels {
		switch {
		case l == "":
			return bad("has an empty label", "")
		case len(l) > 63:
			return bad("has a label longer than 63 characters", "")
		case l[0] == '-' || l[len(l)-1] == '-':
			return bad("has a label that starts or ends with a hyphen", "")
		}
		for i := 0; i < len(l); i++ {
			c := l[i]
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
				return bad(fmt.Sprintf("contains %s: a host name has letters, digits, hyphens and dots only", Quote(string(c))), "")
			}
		}
	}
	return low, nil
}

func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// HostOfURL reads the host of an absolute http(s) URL the way every
// generated client does before a request: the text between "//" and the
// next "/", "?" or "#", without the port, in lower case, one trailing dot
// dropped. A URL with user info, another scheme or no host is refused.
func HostOfURL(raw string) (string, error) {
	i := strings.Index(raw, "://")
	if i < 0 {
		return "", fmt.Errorf("%s is not an absolute URL", Quote(raw))
	}
	scheme := strings.ToLower(raw[:i])
	if scheme != "http" && scheme != "https" {
		return "", fmt.Errorf("%s: the scheme must be http or https", Quote(raw))
	}
	rest := raw[i+3:]
	if j := strings.IndexAny(rest, "/?#"); j >= 0 {
		rest = rest[:j]
	}
	if strings.Contains(rest, "@") {
		return "", fmt.Errorf("%s: user info in a URL is refused", Quote(raw))
	}
	host := rest
	if strings.HasPrefix(host, "[") {
		if j := strings.IndexByte(host, ']'); j >= 0 {
			host = host[:j+1]
		}
	} else if j := strings.LastIndexByte(host, ':'); j >= 0 {
		host = host[:j]
	}
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	if host == "" {
		return "", fmt.Errorf("%s has no host", Quote(raw))
	}
	return host, nil
}

// Quote writes s between double quotes, escaping backslashes, quotes and
// control characters (as \u00XX) and nothing else: the one quoting every
// runtime uses in its messages, so that they read the same in each language.
func Quote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, "\\u%04x", r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
