package gitstore

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dome-registry/dome/internal/gittest"
)

// listConfig prints entries the way `git config --list -z` does.
func listConfig(c *gitConfig) string {
	var b strings.Builder
	for _, e := range c.entries {
		if e.section != "" || e.hasSub {
			b.WriteString(e.section + ".")
			if e.hasSub {
				b.WriteString(e.subsection + ".")
			}
		}
		b.WriteString(e.key)
		if !e.noValue {
			b.WriteString("\n" + e.value)
		}
		b.WriteByte(0)
	}
	return b.String()
}

// gitListConfig asks the git binary to parse data: its listing, or ok
// false when git refuses the file. Tabs and carriage returns read as
// spaces in both listings: git before 2.45 turns white space inside a
// value into spaces, later versions keep it, and the tests run with
// whatever git is installed.
func gitListConfig(t testing.TB, data []byte) (string, bool) {
	t.Helper()
	// A file, not stdin: git refuses relative includes read from stdin.
	path := filepath.Join(t.TempDir(), "config")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("git", "config", "--file", path, "--list", "-z")
	cmd.Env = gittest.Env()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		if !strings.Contains(stderr.String(), "bad config") {
			t.Fatalf("git config: %v: %s", err, stderr.String())
		}
		return "", false
	}
	return sameSpaces(string(out)), true
}

func sameSpaces(s string) string { return strings.NewReplacer("\t", " ", "\r", " ").Replace(s) }

// configCases are config files, valid and not, that dome must read as git
// reads them.
var configCases = []string{
	"[user]\n\tname = Ann Example\n\temail = ann@example.com\n",
	"[remote \"origin\"]\n\turl = https://example.com/r.git\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n",
	"[Remote \"Origin\"]\n\tURL = a\n[remote.Origin]\n\turl = b\n",
	"[a.B.c]\nk = v\n",
	"[a \"x.Y\"]\nk = v\n",
	"[a \"s\\\\q\\\"r\\x\"]\nk = v\n",
	"[a \"\"]\nk = v\n[a.]\nk = w\n",
	"[a] k = v\n",
	"[a]k=v\n",
	"[a]\nk\n",
	"[a]\nk # comment\n",
	"[a]\nk = v # comment\nl = v ; comment\n",
	"[a]\nk = \"v # not a comment\"\n",
	"[a]\nk = \"  spaced  \" tail  \n",
	"[a]\n   k   =    x   y   \n",
	"[a]\nk = x\\\n  y\n",
	"[a]\nk = \"x\\ty\\nz\\bw\\\\\\\"\"\n",
	"[a]\nk = bad\\q\n",
	"[a]\nk = \"unterminated\n",
	"[a]\nk = \"\"\n",
	"[a]\nk =\n",
	"[a]\nk = 1\n[A]\nK = 2\n",
	"[a]\n1k = v\n",
	"[a]\nk_x = v\n",
	"[a]\nk-x = v\n",
	"key = v\n[a]\nk = v\n",
	"; comment\n# comment\n\n[a]\n\n  # indented\nk = v\n",
	"\xef\xbb\xbf[a]\nk = v\n",
	"[a]\r\nk = v\r\n",
	"[a]\nk = v\r",
	"[a]\nk = v",
	"[a",
	"[a\n]\n",
	"[]\nk = v\n",
	"[a b]\n",
	"[a \"b\" ]\n",
	"[a \"b\nc\"]\n",
	"[a_b]\nk = v\n",
	"[a]\nk = \"a\"\"b\"\n",
	"[a]\nk = é ü\n",
	"[a]\nk = v\v\n",
	"[include]\npath = other\n[a]\nk = v\n",
	"",
	"\n\n",
	"[a]\n\tk\t=\tv\t\n",
}

func TestParseConfig_MatchesGit(t *testing.T) {
	gittest.Need(t)
	for _, data := range configCases {
		c, err := parseConfig([]byte(data))
		want, ok := gitListConfig(t, []byte(data))
		if (err == nil) != ok {
			t.Errorf("%q: dome: %v; git accepts it: %v", data, err, ok)
			continue
		}
		if ok && sameSpaces(listConfig(c)) != want {
			t.Errorf("%q:\ndome %q\ngit  %q", data, listConfig(c), want)
		}
	}
}

func TestParseConfig_Lookups(t *testing.T) {
	c, err := parseConfig([]byte("[user]\n\tname = First\n[User]\n\tNAME = \"Last  One\"\n" +
		"[remote \"origin\"]\n\turl = u1\n\turl = u2\n[remote \"Origin\"]\n\turl = other\n[a]\n\tflag\n"))
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := c.get("USER", "", "Name"); !ok || v != "Last  One" {
		t.Errorf("user.name = %q, %v; want the last value", v, ok)
	}
	if v := c.getAll("remote", "origin", "url"); len(v) != 2 || v[0] != "u1" || v[1] != "u2" {
		t.Errorf("remote.origin.url = %q; subsections are case-sensitive", v)
	}
	if v, ok := c.get("a", "", "flag"); !ok || v != "" {
		t.Errorf("a.flag = %q, %v; a key without a value reads as an empty string", v, ok)
	}
	if _, ok := c.get("user", "x", "name"); ok {
		t.Error("user.x.name found")
	}
	if _, err := parseConfig([]byte("[a]\nk = v\n[b\n")); err == nil || err.Error() != "bad config line 3" {
		t.Errorf("error = %v, want bad config line 3", err)
	}
}

func TestInsteadOf(t *testing.T) {
	c, err := parseConfig([]byte(`
[url "https://github.com/"]
	insteadOf = gh:
	insteadOf = github:
[url "ssh://git@github.com/"]
	insteadOf = gh:org/
[url "https://mirror/"]
	pushInsteadOf = https://
[url "https://a/"]
	insteadOf = same:
[url "https://b/"]
	insteadOf = same:
`))
	if err != nil {
		t.Fatal(err)
	}
	for in, want := range map[string]string{
		"gh:x/y":              "https://github.com/x/y",
		"github:x/y":          "https://github.com/x/y",
		"gh:org/repo":         "ssh://git@github.com/repo", // the longest match
		"https://example.com": "https://example.com",       // pushInsteadOf is not for fetch URLs
		"same:r":              "https://a/r",               // the first of equal matches
	} {
		if got := c.insteadOf(in); got != want {
			t.Errorf("insteadOf(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestOriginURLAndIdentity(t *testing.T) {
	g := gittest.New(t)
	g.Git("config", "remote.origin.url", "gh:org/registry.git")
	g.Git("config", "--add", "remote.origin.url", "https://second.example/r.git")
	g.Git("config", "url.https://github.com/.insteadOf", "gh:")
	g.Git("config", "user.name", "Repo User")
	home, xdg := t.TempDir(), t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", "")
	r, err := Open(g.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if got := r.OriginURL(); got != "https://github.com/org/registry.git" {
		t.Errorf("OriginURL = %q", got)
	}
	write := func(path, data string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	identity := func() string { n, e := r.Identity(); return n + " <" + e + ">" }
	if got := identity(); got != "Repo User <>" {
		t.Errorf("without a global config: %s", got)
	}
	// ~/.config/git/config is read only when there is no ~/.gitconfig, and
	// $XDG_CONFIG_HOME/git/config comes first: the first file found is the
	// global config (go-git's order), the repository's values win.
	write(filepath.Join(home, ".config", "git", "config"), "[user]\nname = Dot Config\nemail = dot@config\n")
	if got := identity(); got != "Repo User <dot@config>" {
		t.Errorf("with ~/.config/git/config: %s", got)
	}
	write(filepath.Join(home, ".gitconfig"), "[user]\nemail = home@gitconfig\n")
	if got := identity(); got != "Repo User <home@gitconfig>" {
		t.Errorf("with ~/.gitconfig: %s", got)
	}
	t.Setenv("XDG_CONFIG_HOME", xdg)
	write(filepath.Join(xdg, "git", "config"), "[user]\nname = XDG\nemail = xdg@config\n")
	if got := identity(); got != "Repo User <xdg@config>" {
		t.Errorf("with $XDG_CONFIG_HOME/git/config: %s", got)
	}
	write(filepath.Join(xdg, "git", "config"), "[user\nname = broken\n")
	if got := identity(); got != " <>" {
		t.Errorf("with a global config that does not parse: %s", got)
	}
	t.Setenv("HOME", "")
	t.Setenv("XDG_CONFIG_HOME", "")
	if got := identity(); got != " <>" {
		t.Errorf("without a home folder: %s", got)
	}
}

// FuzzParseConfig: dome reads any config file as the git binary does, the
// same verdict and the same entries (go-git's reader, gcfg, differs from
// git in places; git is the reference).
func FuzzParseConfig(f *testing.F) {
	if _, err := exec.LookPath("git"); err != nil {
		f.Skip("git binary not found")
	}
	for _, c := range configCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := parseConfig(data)
		if bytes.IndexByte(data, 0) >= 0 || len(data) > 4096 {
			return // git's -z listing cannot show NUL bytes; long inputs add nothing
		}
		want, ok := gitListConfig(t, data)
		if (err == nil) != ok {
			t.Fatalf("%q: dome: %v; git accepts it: %v", data, err, ok)
		}
		if ok && sameSpaces(listConfig(c)) != want {
			t.Fatalf("%q:\ndome %q\ngit  %q", data, listConfig(c), want)
		}
	})
}
