package stack

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dome-registry/dome/internal/gittest"
	"github.com/dome-registry/dome/pkg/gitstore"
)

func TestMaterialize_RegularExecutableSymlink(t *testing.T) {
	r := gittest.New(t)
	r.Write(map[string]string{"README.md": "hello\n", "bin/run.sh": "#!/bin/sh\necho ok\n", "a/b/c.txt": "deep\n"})
	if err := os.Chmod(filepath.Join(r.Dir, "bin/run.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../README.md", filepath.Join(r.Dir, "a/readme")); err != nil {
		t.Fatal(err)
	}
	head := r.Commit("files")
	repo, err := gitstore.Open(r.Dir)
	if err != nil {
		t.Fatal(err)
	}
	defer repo.Close()
	h, _ := gitstore.ParseHash(head)
	dir := filepath.Join(t.TempDir(), "wt")
	st, err := Materialize(repo, h, dir)
	if err != nil {
		t.Fatal(err)
	}
	want := MaterializeStats{Files: 3, Executables: 1, Symlinks: 1, Dirs: 3, Bytes: int64(len("hello\n#!/bin/sh\necho ok\ndeep\n"))}
	if st != want {
		t.Errorf("stats = %+v, want %+v", st, want)
	}
	fi, err := os.Stat(filepath.Join(dir, "bin/run.sh"))
	if err != nil || fi.Mode().Perm() != 0o755 {
		t.Errorf("bin/run.sh: %v %v, want mode 0755", fi.Mode(), err)
	}
	fi, err = os.Stat(filepath.Join(dir, "README.md"))
	if err != nil || fi.Mode().Perm() != 0o644 {
		t.Errorf("README.md: %v %v, want mode 0644", fi.Mode(), err)
	}
	if l, err := os.Readlink(filepath.Join(dir, "a/readme")); err != nil || l != "../README.md" {
		t.Errorf("a/readme -> %q %v", l, err)
	}
	// git agrees on what is there
	out, err := exec.Command("git", "-C", r.Dir, "status", "--porcelain").Output()
	if err != nil || len(out) != 0 {
		t.Fatalf("git status: %s %v", out, err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "a/b/c.txt")); string(b) != "deep\n" {
		t.Errorf("a/b/c.txt = %q", b)
	}

	// the tree id works too; a non-empty target directory is refused
	tree, _ := repo.CommitTree(h)
	if _, err := Materialize(repo, tree, dir); err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Errorf("into a non-empty dir: %v", err)
	}
	if _, err := Materialize(repo, tree, filepath.Join(t.TempDir(), "x")); err != nil {
		t.Errorf("by tree id: %v", err)
	}
}

func TestMaterialize_RefusesEscapes(t *testing.T) {
	r := gittest.NewBare(t)
	repo, err := gitstore.Open(r.Dir)
	if err != nil {
		t.Fatal(err)
	}
	defer repo.Close()
	blob := func(s string) gitstore.Hash {
		h, err := repo.WriteBlob([]byte(s))
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	tree := func(es ...gitstore.TreeEntry) gitstore.Hash {
		h, err := repo.WriteTree(es)
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	// a raw tree with a name WriteTree would refuse, through git itself
	rawTree := func(name string, id gitstore.Hash) gitstore.Hash {
		var b bytes.Buffer
		b.WriteString("100644 " + name + "\x00")
		b.Write(id[:])
		cmd := exec.Command("git", "hash-object", "-w", "-t", "tree", "--literally", "--stdin")
		cmd.Dir, cmd.Env, cmd.Stdin = r.Dir, gittest.Env(), &b
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("hash-object: %v", err)
		}
		h, _ := gitstore.ParseHash(strings.TrimSpace(string(out)))
		return h
	}
	sym := func(name, target string) gitstore.TreeEntry {
		return gitstore.TreeEntry{Name: name, Mode: gitstore.ModeSymlink, Hash: blob(target)}
	}
	file := gitstore.TreeEntry{Name: "f", Mode: gitstore.ModeFile, Hash: blob("x\n")}
	cases := map[string]struct {
		tree gitstore.Hash
		want string
	}{
		"absolute symlink":  {tree(file, sym("l", "/etc/passwd")), "absolute"},
		"climbing symlink":  {tree(file, gitstore.TreeEntry{Name: "d", Mode: gitstore.ModeDir, Hash: tree(sym("l", "../../x"))}), "outside the tree"},
		"symlink into .git": {tree(file, sym("l", ".git/config")), ".git"},
		"symlink chain":     {tree(file, sym("d", "."), sym("e", "d/..")), "resolves outside"},
		"dotdot entry":      {rawTree("..", blob("x")), `path component ".."`},
		".GIT entry":        {rawTree(".GIT", blob("x")), "a .git component"},
		"NTFS .git alias":   {rawTree("git~1", blob("x")), "NTFS"},
		".git. entry":       {rawTree(".git.", blob("x")), "NTFS"},
		"HFS .git alias":    {rawTree(".g\u200cit", blob("x")), "HFS+"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			outside := t.TempDir()
			dir := filepath.Join(outside, "wt")
			_, err := Materialize(repo, c.tree, dir)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want one containing %q", err, c.want)
			}
			ents, _ := os.ReadDir(outside)
			if len(ents) != 1 {
				t.Errorf("something was written beside the target: %v", ents)
			}
		})
	}
}
