package netpolicy

import (
	"strings"
	"testing"
)

func TestCheckAllowHost(t *testing.T) {
	for _, tc := range []struct{ in, problem, hint string }{
		{"api.example.com", "", ""},
		{"xn--bcher-kva.example", "", ""},
		{"127.0.0.1", "", ""},
		{"[::1]", "", ""},
		{"[2001:db8::1]", "", ""},
		{"", "an empty host", ""},
		{"api.example.com:443", "has a port", "list api.example.com"},
		{"[::1]:8080", "has a port", "list [::1]"},
		{"bücher.example", "an internationalized name (IDN)", "write it as xn--bcher-kva.example"},
		{"*.example.com", "wildcards are not supported", "list each host"},
		{"api.example.com.", "ends with a dot", "list api.example.com"},
		{"API.example.com", "not in lower case", "list api.example.com"},
		{"https://api.example.com", "a URL, not a host", ""},
		{"127.1", "dotted-quad", ""},
		{"0x7f.0.0.1", "dotted-quad", ""},
		{"010.0.0.1", "dotted-quad", ""},
		{"2130706433", "dotted-quad", ""},
		{"::1", "must be written in brackets", "write it as [::1]"},
		{"[0:0:0:0:0:0:0:1]", "RFC 5952", "write it as [::1]"},
		{"[::ffff:127.0.0.1]", "embedded IPv4", ""},
		{"[fe80::1%eth0]", "zone id", ""},
		{"a..b", "an empty label", ""},
		{"-a.example", "starts or ends with a hyphen", ""},
		{"a_b.example", `contains "_"`, ""},
		{strings.Repeat("a", 64) + ".example", "longer than 63", ""},
	} {
		got, err := CheckAllowHost(tc.in)
		switch {
		case tc.problem == "" && err != nil:
			t.Errorf("%q: %v", tc.in, err)
		case tc.problem == "" && got != tc.in:
			t.Errorf("%q: normalized to %q", tc.in, got)
		case tc.problem != "" && (err == nil || !strings.Contains(err.Problem, tc.problem)):
			t.Errorf("%q: %v, want a problem with %q", tc.in, err, tc.problem)
		case tc.hint != "" && err.Hint != tc.hint:
			t.Errorf("%q: hint %q, want %q", tc.in, err.Hint, tc.hint)
		}
	}
}

func TestHostOfURL(t *testing.T) {
	for _, tc := range []struct{ in, host, err string }{
		{"https://PETSTORE.example.com./v1", "petstore.example.com", ""},
		{"http://[::1]:8080/x", "[::1]", ""},
		{"https://a.example:8443/v1?x=1#f", "a.example", ""},
		{"http://127.1/", "127.1", ""},
		{"ftp://a.example/", "", "the scheme must be http or https"},
		{"https://user@a.example/", "", "user info"},
		{"//a.example/x", "", "not an absolute URL"},
		{"https:///x", "", "has no host"},
	} {
		h, err := HostOfURL(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || h != tc.host {
			t.Errorf("%q: %q %v, want %q", tc.in, h, err, tc.host)
		}
	}
}

func FuzzCheckAllowHost(f *testing.F) {
	for _, s := range []string{"api.example.com", "[::1]", "127.0.0.1", "a:1", "bücher.example", "https://x/"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := CheckAllowHost(s)
		if err != nil {
			return
		}
		// An accepted entry is canonical: checking it again gives itself,
		// and a URL made of it reads back as the same host.
		if again, err := CheckAllowHost(got); err != nil || again != got {
			t.Fatalf("%q -> %q -> %q %v", s, got, again, err)
		}
		if h, err := HostOfURL("https://" + got + "/"); err != nil || h != got {
			t.Fatalf("%q: HostOfURL gives %q %v", got, h, err)
		}
	})
}
