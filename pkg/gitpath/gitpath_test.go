package gitpath

import (
	"bytes"
	"errors"
	"os/exec"
	"strings"
	"testing"

	"github.com/dome-registry/dome/internal/gittest"
)

const (
	modeFile = 0o100644
	modeLink = ModeSymlink
)

// hostile is the table every test here runs: paths git refuses (with
// core.protectNTFS and core.protectHFS on), paths it accepts that look
// close to refused ones, and the two rules dome adds (extra: true).
var hostile = []struct {
	path  string
	mode  uint32
	ok    bool
	extra bool // refused by dome only
}{
	{"a.txt", modeFile, true, false},
	{"dir/sub/file.go", modeFile, true, false},
	{".gitignore", modeFile, true, false},
	{".gitmodules", modeFile, true, false},
	{".github/workflows/ci.yml", modeFile, true, false},
	{".gitx/config", modeFile, true, false},
	{"x.git/config", modeFile, true, false},
	{"git~2/config", modeFile, true, false},
	{"git~1x/config", modeFile, true, false},
	{".git-foo", modeFile, true, false},
	{"...", modeFile, true, false},
	{".../x", modeFile, true, false},
	{"a/.git.d/x", modeFile, true, false},
	{"\\.git/config", modeFile, true, false}, // a first byte "\" is not a separator to git
	{"foo:bar", modeFile, true, false},
	{"caf\u00e9/menu", modeFile, true, false},
	{".g\u00eft/config", modeFile, true, false},
	{"link", modeLink, true, false},
	{"dir/.gitmodules.bak", modeLink, true, false},

	{"", modeFile, false, false},
	{"/etc/evil", modeFile, false, false},
	{"//etc/evil", modeFile, false, false},
	{"a//b", modeFile, false, false},
	{"a/", modeFile, false, false},
	{".", modeFile, false, false},
	{"..", modeFile, false, false},
	{"../outside", modeFile, false, false},
	{"a/../b", modeFile, false, false},
	{"a/./b", modeFile, false, false},
	{".git", modeFile, false, false},
	{".git/config", modeFile, false, false},
	{".GIT/config", modeFile, false, false},
	{".Git/hooks/pre-commit", modeFile, false, false},
	{"sub/.git/config", modeFile, false, false},
	{".git./config", modeFile, false, false},
	{".git../config", modeFile, false, false},
	{".git /config", modeFile, false, false},
	{".git . ./config", modeFile, false, false},
	{"GIT~1/config", modeFile, false, false},
	{"git~1/config", modeFile, false, false},
	{"sub/GiT~1/hooks/x", modeFile, false, false},
	{"git~1", modeFile, false, false},
	{".git::$INDEX_ALLOCATION/config", modeFile, false, false},
	{".git:stream", modeFile, false, false},
	{"git~1::$INDEX_ALLOCATION/config", modeFile, false, false},
	{"a\\.git\\config", modeFile, false, false},
	{"a\\git~1\\config", modeFile, false, false},
	{".g\u200cit/config", modeFile, false, false},
	{".gi\u200dt/config", modeFile, false, false},
	{"\u200e.git/config", modeFile, false, false},
	{".git\u200f/config", modeFile, false, false},
	{".\u202aGIT\u206f/config", modeFile, false, false},
	{".git\ufeff", modeFile, false, false},
	{".git\xff", modeFile, false, false}, // invalid UTF-8 ends the HFS name
	{".gitmodules", modeLink, false, false},
	{".GITMODULES", modeLink, false, false},
	{"sub/.gitmodules", modeLink, false, false},
	{".gitmodules.", modeLink, false, false},
	{".gitmodules ", modeLink, false, false},
	{".gitmodules:$DATA", modeLink, false, false},
	{"gitmod~1", modeLink, false, false},
	{"GITMOD~4", modeLink, false, false},
	{"gi7eba~1", modeLink, false, false},
	{"gi7eba~9", modeLink, false, false},
	{".gitmodul\u200ces", modeLink, false, false},
	{".gitmodules/x", modeLink, false, false},
	{"a\\.gitmodules", modeLink, false, false},

	{".gitattributes", modeLink, false, true},
	{"sub/.gitignore", modeLink, false, true},
	{".mailmap", modeLink, false, true},
	{".mailmap.", modeLink, false, true},
	{"gitatt~1", modeLink, false, true},
	{"gi250a~1", modeLink, false, true},
	{"new\nline", modeFile, false, true},
	{"tab\there", modeFile, false, true},
	{"esc\x1b[31m", modeFile, false, true},
	{"del\x7f", modeFile, false, true},
}

func TestVerify(t *testing.T) {
	for _, c := range hostile {
		err := Verify(c.path, c.mode)
		if (err == nil) != c.ok {
			t.Errorf("Verify(%q, %o) = %v, want ok=%v", c.path, c.mode, err, c.ok)
			continue
		}
		var ge *Error
		if err != nil && (!errors.As(err, &ge) || ge.Path != c.path || ge.Reason == "") {
			t.Errorf("Verify(%q): error %#v does not name the path and a reason", c.path, err)
		}
	}
}

func TestVerifyName(t *testing.T) {
	for _, c := range []struct {
		name string
		mode uint32
		ok   bool
	}{
		{"a.txt", modeFile, true},
		{".github", 0o040000, true},
		{"a/b", modeFile, false},
		{"", modeFile, false},
		{"..", 0o040000, false},
		{".git", 0o040000, false},
		{"GIT~1", 0o040000, false},
		{".gitmodules", modeLink, false},
		{".gitmodules", modeFile, true},
	} {
		if err := VerifyName(c.name, c.mode); (err == nil) != c.ok {
			t.Errorf("VerifyName(%q, %o) = %v, want ok=%v", c.name, c.mode, err, c.ok)
		}
	}
}

func TestIsDotGit(t *testing.T) {
	for name, want := range map[string]bool{
		".git": true, ".GiT": true, ".git.": true, ".git ": true, "git~1": true, "GIT~1": true,
		".git::$INDEX_ALLOCATION": true, ".g\u200cit": true, ".git\ufeff": true,
		".gitx": false, "git": false, "git~2": false, ".github": false, "x.git": false, "": false,
	} {
		if got := IsDotGit(name); got != want {
			t.Errorf("IsDotGit(%q) = %v, want %v", name, got, want)
		}
	}
}

// gitOracle asks the git binary whether it accepts path for an index entry
// of mode, with both protections on: `git update-index --cacheinfo` runs
// verify_path on the path as given (no -p stripping, no slash squashing).
type gitOracle struct {
	dir  string
	blob string
}

func newGitOracle(t testing.TB) *gitOracle {
	r := gittest.New(t)
	blob := r.Git("hash-object", "-w", "--stdin")
	return &gitOracle{dir: r.Dir, blob: blob}
}

func (o *gitOracle) accepts(t testing.TB, path string, mode uint32) bool {
	if strings.IndexByte(path, 0) >= 0 {
		return false // argv cannot carry NUL; git paths cannot either
	}
	mo := "100644"
	if mode == modeLink {
		mo = "120000"
	}
	cmd := exec.Command("git", "-c", "core.protectNTFS=true", "-c", "core.protectHFS=true",
		"update-index", "--add", "--cacheinfo", mo+","+o.blob+","+path)
	cmd.Dir = o.dir
	cmd.Env = gittest.Env()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	if err == nil {
		exec.Command("git", "-C", o.dir, "rm", "-q", "--cached", "--", path).Run()
		return true
	}
	if !strings.Contains(strings.ToLower(stderr.String()), "invalid path") {
		t.Fatalf("git update-index %q: %v: %s", path, err, stderr.String())
	}
	return false
}

// TestVerifyMatchesGit is the differential test: over the hostile table,
// dome refuses exactly what git refuses, plus the documented extras.
func TestVerifyMatchesGit(t *testing.T) {
	o := newGitOracle(t)
	for _, c := range hostile {
		git := o.accepts(t, c.path, c.mode)
		dome := Verify(c.path, c.mode) == nil
		switch {
		case c.extra && git && !dome:
			var ge *Error
			if !errors.As(Verify(c.path, c.mode), &ge) || !ge.Beyond {
				t.Errorf("%q: refused by dome's own rule, but the error does not say Beyond", c.path)
			}
		case c.extra:
			t.Errorf("%q (%o): marked dome-only, but git accepts=%v, dome accepts=%v", c.path, c.mode, git, dome)
		case git != dome:
			t.Errorf("%q (%o): git accepts=%v, dome accepts=%v (%v)", c.path, c.mode, git, dome, Verify(c.path, c.mode))
		}
	}
}

// FuzzVerify checks properties of Verify: deterministic, and a path it
// accepts has no component git's basic rules refuse.
func FuzzVerify(f *testing.F) {
	for _, c := range hostile {
		f.Add(c.path, c.mode == modeLink)
	}
	f.Fuzz(func(t *testing.T, path string, link bool) {
		mode := uint32(modeFile)
		if link {
			mode = modeLink
		}
		err := Verify(path, mode)
		if (err == nil) != (Verify(path, mode) == nil) {
			t.Fatal("not deterministic")
		}
		if err != nil {
			return
		}
		parts := strings.Split(path, "/")
		for i, c := range parts {
			m := uint32(0o040000)
			if i == len(parts)-1 {
				m = mode
			}
			if VerifyName(c, m) != nil {
				t.Fatalf("Verify(%q) accepts, VerifyName(%q) refuses", path, c)
			}
			if c == "" || c == "." || c == ".." || strings.EqualFold(c, ".git") {
				t.Fatalf("Verify(%q) accepts the component %q", path, c)
			}
		}
	})
}

// FuzzVerifyGit compares Verify with the git binary on every input (slow:
// one git process per input; skipped without git).
func FuzzVerifyGit(f *testing.F) {
	for _, c := range hostile {
		f.Add(c.path, c.mode == modeLink)
	}
	if _, err := exec.LookPath("git"); err != nil {
		f.Skip("git binary not found")
	}
	o := newGitOracle(f)
	f.Fuzz(func(t *testing.T, path string, link bool) {
		if strings.IndexByte(path, 0) >= 0 || len(path) > 255 {
			return
		}
		mode := uint32(modeFile)
		if link {
			mode = modeLink
		}
		err := Verify(path, mode)
		git := o.accepts(t, path, mode)
		var ge *Error
		switch {
		case err == nil && !git:
			t.Fatalf("dome accepts %q (%o), git refuses it", path, mode)
		case err != nil && git && !(errors.As(err, &ge) && ge.Beyond):
			t.Fatalf("git accepts %q (%o), dome refuses it: %v", path, mode, err)
		}
	})
}
