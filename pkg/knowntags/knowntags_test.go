package knowntags

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

func hex40(c byte) string { return strings.Repeat(string(c), 40) }

func TestObserve_RemembersThenRefusesAMove(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state", "known-tags")
	s := Open(path)
	a := Entry{Repo: "github.com/org/reg", Tag: "registry/petstore/v1.0.0", Object: hex40('a'), Commit: hex40('1')}
	b := Entry{Repo: "github.com/org/reg", Tag: "registry/petstore/v1.1.0", Object: hex40('b'), Commit: hex40('2')}
	if err := s.Observe([]Entry{a, b}); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want := header + "github.com/org/reg registry/petstore/v1.0.0 " + hex40('a') + " " + hex40('1') + "\n" +
		"github.com/org/reg registry/petstore/v1.1.0 " + hex40('b') + " " + hex40('2') + "\n"
	if string(data) != want {
		t.Fatalf("file:\n%s\nwant:\n%s", data, want)
	}
	// Seen again, unchanged: no error, no write.
	before, _ := os.Stat(path)
	time.Sleep(10 * time.Millisecond)
	if err := Open(path).Observe([]Entry{a}); err != nil {
		t.Fatal(err)
	}
	if after, _ := os.Stat(path); !after.ModTime().Equal(before.ModTime()) {
		t.Error("an unchanged observation rewrote the file")
	}
	// Moved: refused by a fresh Store (another process), naming both commits.
	moved := a
	moved.Object, moved.Commit = hex40('c'), hex40('3')
	err = Open(path).Observe([]Entry{moved})
	var me *MovedError
	if !errors.As(err, &me) || me.First.Commit != hex40('1') || me.Now.Commit != hex40('3') || me.Path != path {
		t.Fatalf("error %v", err)
	}
	if msg := err.Error(); !strings.Contains(msg, hex40('1')) || !strings.Contains(msg, hex40('3')) {
		t.Fatalf("message %q names not both commits", msg)
	}
	// Rewritten on the same commit: refused too.
	rewritten := a
	rewritten.Object = hex40('d')
	if err := Open(path).Observe([]Entry{rewritten}); !errors.As(err, &me) || !strings.Contains(err.Error(), "rewritten") {
		t.Fatalf("rewritten tag: %v", err)
	}
	// The same tag in another repository is another entry.
	other := moved
	other.Repo = "/srv/other"
	if err := Open(path).Observe([]Entry{other}); err != nil {
		t.Fatal(err)
	}
}

func TestAccept_IsTheWayOutAndIsLogged(t *testing.T) {
	path := filepath.Join(t.TempDir(), "known-tags")
	a := Entry{Repo: "r", Tag: "registry/x/v1.0.0", Object: hex40('a'), Commit: hex40('1')}
	if err := Open(path).Observe([]Entry{a}); err != nil {
		t.Fatal(err)
	}
	moved := a
	moved.Object, moved.Commit = hex40('b'), hex40('2')
	if _, err := Open(path).Accept(moved, "  ", "me", time.Unix(0, 0)); err == nil {
		t.Fatal("accepted without a reason")
	}
	res, err := Open(path).Accept(moved, "the release\nwas re-cut", "Ana <ana@x>", time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	if err != nil || !res.Changed || res.Previous == nil || *res.Previous != a {
		t.Fatalf("%+v %v", res, err)
	}
	if err := Open(path).Observe([]Entry{moved}); err != nil {
		t.Fatalf("after accept: %v", err)
	}
	log, _ := os.ReadFile(path + ".log")
	want := "2026-01-02T03:04:05Z accept r registry/x/v1.0.0 " + hex40('a') + " " + hex40('1') + " -> " + hex40('b') + " " + hex40('2') + " by Ana%20<ana@x>: the release was re-cut\n"
	if string(log) != want {
		t.Fatalf("log %q\nwant %q", log, want)
	}
	// Accepting what is remembered changes nothing and logs nothing.
	if res, err := Open(path).Accept(moved, "again", "me", time.Now()); err != nil || res.Changed {
		t.Fatalf("%+v %v", res, err)
	}
	if log2, _ := os.ReadFile(path + ".log"); string(log2) != want {
		t.Fatal("a no-op accept was logged")
	}
}

// TestObserve_ConcurrentProcessesLoseNothing: many Stores (as many
// processes would) remember different tags at once; every tag is in the
// file afterwards, and no temporary file is left.
func TestObserve_ConcurrentProcessesLoseNothing(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "known-tags")
	var wg sync.WaitGroup
	const n = 40
	errs := make(chan error, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			e := Entry{Repo: "r", Tag: fmt.Sprintf("registry/t/v1.0.%d", i), Object: fmt.Sprintf("%040x", i+1), Commit: fmt.Sprintf("%040x", i+1000)}
			errs <- Open(path).Observe([]Entry{e})
		}(i)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	m, err := readFile(path)
	if err != nil || len(m) != n {
		t.Fatalf("%d entries, %v", len(m), err)
	}
	es, _ := os.ReadDir(dir)
	if len(es) != 1 {
		t.Fatalf("left behind: %v", es)
	}
}

func TestParse_RefusesWhatItCannotRead(t *testing.T) {
	good := "r registry/x/v1.0.0 " + hex40('a') + " " + hex40('1') + "\n"
	for _, tc := range []struct{ name, in, msg string }{
		{"fields", "r registry/x/v1.0.0 " + hex40('a') + "\n", "line 1"},
		{"short id", "r registry/x/v1.0.0 abc " + hex40('1') + "\n", "not an object id"},
		{"upper hex", "r registry/x/v1.0.0 " + strings.ToUpper(hex40('a')) + " " + hex40('1') + "\n", "not an object id"},
		{"conflict", good + "r registry/x/v1.0.0 " + hex40('b') + " " + hex40('1') + "\n", "line 2"},
		{"bad escape", "r%zz registry/x/v1.0.0 " + hex40('a') + " " + hex40('1') + "\n", "repository"},
	} {
		if _, err := Parse("f", []byte(tc.in)); err == nil || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.msg)
		}
	}
	m, err := Parse("f", []byte("# c\n\n"+good+good))
	if err != nil || len(m) != 1 {
		t.Fatalf("%v %v", m, err)
	}
	// A path with spaces round-trips.
	e := Entry{Repo: "/home/a b/100%/reg", Tag: "registry/x/v1.0.0", Object: hex40('a'), Commit: hex40('1')}
	m2, err := Parse("f", format(map[key]Entry{{e.Repo, e.Tag}: e}))
	if err != nil || m2[key{e.Repo, e.Tag}] != e {
		t.Fatalf("%v %v", m2, err)
	}
}

func TestRepoKey(t *testing.T) {
	for in, want := range map[string]string{
		"https://github.com/Org/reg.git":       "github.com/Org/reg",
		"https://GitHub.com/Org/reg/":          "github.com/Org/reg",
		"ssh://git@github.com:22/Org/reg.git":  "github.com/Org/reg",
		"git@github.com:Org/reg.git":           "github.com/Org/reg",
		"git://github.com/Org/reg":             "github.com/Org/reg",
		"https://user:pw@example.com/a/b.git/": "example.com/a/b",
		"file:///srv/git/reg.git":              "/srv/git/reg.git",
		"/srv/git/reg/../reg.git":              "/srv/git/reg.git",
		"/home/a/reg/.git":                     "/home/a/reg",
	} {
		if got := RepoKey(in); got != want {
			t.Errorf("RepoKey(%q) = %q, want %q", in, got, want)
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(header + "r registry/x/v1.0.0 " + hex40('a') + " " + hex40('1') + "\n"))
	f.Add([]byte("a%20b t " + hex40('a') + " " + hex40('1')))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := Parse("f", data)
		if err != nil {
			return
		}
		// What parses, formats and parses back the same.
		m2, err := Parse("f", format(m))
		if err != nil || len(m2) != len(m) {
			t.Fatalf("round trip: %v (%d vs %d)", err, len(m2), len(m))
		}
		for k, e := range m {
			if m2[k] != e {
				t.Fatalf("round trip changed %v to %v", e, m2[k])
			}
		}
	})
}

func TestFormat_RepositoryLikeAComment(t *testing.T) {
	e := Entry{Repo: "#not-a-comment", Tag: "registry/x/v1.0.0", Object: hex40('a'), Commit: hex40('1')}
	m, err := Parse("f", format(map[key]Entry{{e.Repo, e.Tag}: e}))
	if err != nil || m[key{e.Repo, e.Tag}] != e {
		t.Fatalf("%v %v", m, err)
	}
}

func TestObserve_UnwritableMemoryStillReads(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "a-file")
	os.WriteFile(file, nil, 0o644)
	path := filepath.Join(file, "known-tags") // its folder cannot be made
	b := Entry{Repo: "r", Tag: "registry/x/v1.1.0", Object: hex40('b'), Commit: hex40('2')}
	var we *WriteError
	if err := Open(path).Observe([]Entry{b}); !errors.As(err, &we) {
		t.Fatalf("without OnWriteError: %v", err)
	}
	s := Open(path)
	var told error
	s.OnWriteError = func(err error) { told = err }
	if err := s.Observe([]Entry{b}); err != nil || told == nil {
		t.Fatalf("with OnWriteError: %v, told %v", err, told)
	}
}

func TestObserve_ReadOnlyMemoryStillRefusesAMove(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root writes into read-only folders")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "known-tags")
	a := Entry{Repo: "r", Tag: "registry/x/v1.0.0", Object: hex40('a'), Commit: hex40('1')}
	if err := Open(path).Observe([]Entry{a}); err != nil {
		t.Fatal(err)
	}
	os.Chmod(dir, 0o555)
	defer os.Chmod(dir, 0o755)
	s := Open(path)
	s.OnWriteError = func(error) {}
	moved := a
	moved.Commit = hex40('9')
	var me *MovedError
	if err := s.Observe([]Entry{moved, {Repo: "r", Tag: "registry/x/v2.0.0", Object: hex40('c'), Commit: hex40('3')}}); !errors.As(err, &me) {
		t.Fatalf("a moved tag in a read-only memory: %v", err)
	}
}
