package outfile

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func read(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestWrite_RegularAndAbsent(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "out.json")
	if r, err := Write(p, []byte("one"), Options{}); err != nil || r.Mode != Created {
		t.Fatalf("%v %v", r, err)
	}
	if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o644 {
		t.Fatalf("perm %v", fi.Mode().Perm())
	}
	os.Chmod(p, 0o600)
	if r, err := Write(p, []byte("two"), Options{}); err != nil || r.Mode != Replaced {
		t.Fatalf("%v %v", r, err)
	}
	if got := read(t, p); got != "two" {
		t.Fatalf("%q", got)
	}
	if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o600 {
		t.Fatalf("a replaced file lost its mode: %v", fi.Mode().Perm())
	}
	// No temporary file is left behind.
	es, _ := os.ReadDir(dir)
	if len(es) != 1 {
		t.Fatalf("left behind: %v", es)
	}
}

func refused(t *testing.T, err error, want string) {
	t.Helper()
	var re *RefusedError
	if !errors.As(err, &re) || !strings.Contains(re.Problem, want) {
		t.Fatalf("error %v, want a refusal saying %q", err, want)
	}
}

func TestWrite_Refusals(t *testing.T) {
	dir := t.TempDir()
	_, err := Write(filepath.Join(dir, "no", "such", "out.json"), []byte("x"), Options{})
	refused(t, err, "does not exist")
	if _, serr := os.Stat(filepath.Join(dir, "no")); !errors.Is(serr, fs.ErrNotExist) {
		t.Fatal("a missing folder was created")
	}
	// Asked to, Write makes the folders and lists them.
	r, err := Write(filepath.Join(dir, "no", "such", "out.json"), []byte("x"), Options{MakeDirs: true})
	if err != nil || r.Mode != Created || len(r.CreatedDirs) != 2 || r.CreatedDirs[0] != filepath.Join(dir, "no") {
		t.Fatalf("%+v %v", r, err)
	}
	f := filepath.Join(dir, "file")
	os.WriteFile(f, nil, 0o644)
	_, err = Write(filepath.Join(f, "out.json"), []byte("x"), Options{MakeDirs: true})
	refused(t, err, "is not a folder")
	_, err = Write(dir, []byte("x"), Options{})
	refused(t, err, "is a directory")
	_, err = Write(f, []byte("x"), Options{Exclusive: true})
	refused(t, err, "already exists")
	if r, err := Write(filepath.Join(dir, "new.key"), []byte("k"), Options{Exclusive: true, Perm: 0o600}); err != nil || r.Mode != Created {
		t.Fatalf("%v %v", r, err)
	}
	if fi, _ := os.Stat(filepath.Join(dir, "new.key")); fi.Mode().Perm() != 0o600 {
		t.Fatalf("perm %v", fi.Mode().Perm())
	}
}

func TestWrite_Symlinks(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "real.json")
	os.WriteFile(real, []byte("old"), 0o640)
	link := filepath.Join(dir, "link.json")
	if err := os.Symlink("real.json", link); err != nil {
		t.Skip("no symlinks here")
	}
	if r, err := Write(link, []byte("new"), Options{}); err != nil || r.Mode != Replaced {
		t.Fatalf("%v %v", r, err)
	}
	if fi, _ := os.Lstat(link); fi.Mode()&fs.ModeSymlink == 0 {
		t.Fatal("the symlink was replaced by a file")
	}
	if got := read(t, real); got != "new" {
		t.Fatalf("target %q", got)
	}
	dangling := filepath.Join(dir, "dangling.json")
	os.Symlink("nowhere/x.json", dangling)
	_, err := Write(dangling, []byte("x"), Options{})
	refused(t, err, "does not exist")
	_, err = Write(link, []byte("x"), Options{Exclusive: true})
	refused(t, err, "already exists")
}

func TestWrite_FIFOIsStreamedNotReplaced(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "pipe")
	if err := mkfifo(fifo); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	got := make(chan string)
	go func() {
		r, err := os.Open(fifo)
		if err != nil {
			got <- err.Error()
			return
		}
		b, _ := io.ReadAll(r)
		r.Close()
		got <- string(b)
	}()
	if r, err := Write(fifo, []byte("through the pipe"), Options{}); err != nil || r.Mode != Streamed {
		t.Fatalf("%v %v", r, err)
	}
	if s := <-got; s != "through the pipe" {
		t.Fatalf("reader got %q", s)
	}
	if fi, _ := os.Lstat(fifo); fi.Mode()&fs.ModeNamedPipe == 0 {
		t.Fatalf("the FIFO became %v", fi.Mode())
	}
}

func TestWrite_CharDeviceIsStreamedNotReplaced(t *testing.T) {
	dir := t.TempDir()
	null := filepath.Join(dir, "mynull")
	if err := mknodNull(null); err != nil {
		t.Skip("cannot make a device node here (needs root):", err)
	}
	if r, err := Write(null, []byte("discarded"), Options{}); err != nil || r.Mode != Streamed {
		t.Fatalf("%v %v", r, err)
	}
	fi, err := os.Lstat(null)
	if err != nil || fi.Mode()&fs.ModeCharDevice == 0 {
		t.Fatalf("the device became %v (%v)", fi.Mode(), err)
	}
}
