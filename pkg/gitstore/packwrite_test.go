package gitstore_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dome-registry/dome/pkg/gitstore"
)

// Objects written through a PackWriter are git's: the same ids as the
// direct writes, readable by dome and git once flushed, in a pack git's fsck
// and verify-pack accept.
func TestPackWriter(t *testing.T) {
	g, ids := fixture(t)
	r, err := gitstore.Open(g.Dir)
	if err != nil {
		t.Fatal(err)
	}
	w := r.NewPackWriter()
	big := bytes.Repeat([]byte("a line of a larger file\n"), 4000) // a size header of several bytes
	blob, err := w.WriteBlob(big)
	if err != nil {
		t.Fatal(err)
	}
	small, _ := w.WriteBlob([]byte("small\n"))
	base, _ := r.CommitTree(mustHash(t, ids["c2"]))
	entries, err := r.ReadTree(base)
	if err != nil {
		t.Fatal(err)
	}
	entries = append(entries, gitstore.TreeEntry{Name: "big.txt", Mode: gitstore.ModeFile, Hash: blob}, gitstore.TreeEntry{Name: "small.txt", Mode: gitstore.ModeExec, Hash: small})
	tree, err := w.WriteTree(entries)
	if err != nil {
		t.Fatal(err)
	}
	sig := gitstore.Signature{Name: "Dome Test", Email: "test@dome.invalid", When: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	spec := gitstore.CommitSpec{Tree: tree, Parents: []gitstore.Hash{mustHash(t, ids["c2"])}, Author: sig, Committer: sig, Message: "packed\n"}
	commit, err := w.WriteCommit(spec)
	if err != nil {
		t.Fatal(err)
	}
	if want, _ := gitstore.HashCommit(spec); commit != want {
		t.Errorf("commit id %s, want %s", commit, want)
	}
	// Pending objects are readable from the writer only.
	if typ, data, ok := w.Read(tree); !ok || typ != gitstore.TypeTree || len(data) == 0 {
		t.Fatal("the pending tree is not readable from the writer")
	}
	if r.HasObject(commit) {
		t.Fatal("the commit is in the repository before Flush")
	}
	// An object the repository has is not written again.
	if _, err := w.WriteTree(entries[:len(entries)-2]); err != nil {
		t.Fatal(err)
	}
	// Pending counts compressed bytes: the big blob compresses well.
	if n := w.Pending(); n <= 0 || n > len(big)/10 {
		t.Errorf("pending %d bytes", n)
	}
	if !bytes.Equal(mustRead(t, w, blob), big) {
		t.Error("a pending blob reads back changed")
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if w.Pending() != 0 {
		t.Error("Flush left objects pending")
	}
	if got, err := r.ReadBlob(blob); err != nil || !bytes.Equal(got, big) {
		t.Errorf("read back the blob: %v", err)
	}
	if c, err := r.Commit(commit); err != nil || c.Tree != tree {
		t.Errorf("read back the commit: %v", err)
	}
	g.Git("update-ref", "refs/heads/packed", commit.String())
	g.Git("fsck", "--strict")
	if got := g.Git("cat-file", "-p", blob.String()); got != strings.TrimSuffix(string(big), "\n") {
		t.Error("git reads another blob")
	}
	if out := g.Git("count-objects", "-v"); !strings.Contains(out, "packs: 1") {
		t.Errorf("count-objects:\n%s", out)
	}
	idx, _ := filepath.Glob(filepath.Join(g.Dir, ".git", "objects", "pack", "pack-*.idx"))
	if len(idx) != 1 {
		t.Fatalf("packs: %v", idx)
	}
	g.Git("verify-pack", "-v", idx[0])
	// Nothing to flush: no pack.
	if err := r.NewPackWriter().Flush(); err != nil {
		t.Fatal(err)
	}
}

func mustRead(t *testing.T, w *gitstore.PackWriter, h gitstore.Hash) []byte {
	t.Helper()
	_, data, ok := w.Read(h)
	if !ok {
		t.Fatalf("%s not pending", h)
	}
	return data
}

// A pack bigger than the writer keeps in memory goes on to its temporary
// file as it grows: pending objects still read back (from memory, from the
// file, and past the writer's cache of recent objects), trees too, and the
// flushed pack is one git verifies, with no temporary file left.
func TestPackWriterSpills(t *testing.T) {
	g, _ := fixture(t)
	r, err := gitstore.Open(g.Dir)
	if err != nil {
		t.Fatal(err)
	}
	w := r.NewPackWriter()
	rng := rand.New(rand.NewPCG(1, 2))
	var ids []gitstore.Hash
	var blobs [][]byte
	for i := range 200 { // 200 x 8 KB that do not compress: 1.6 MB
		b := make([]byte, 8<<10)
		for j := range b {
			b[j] = byte(rng.Uint32())
		}
		b = append(b, fmt.Sprint(i)...)
		id, err := w.WriteBlob(b)
		if err != nil {
			t.Fatal(err)
		}
		ids, blobs = append(ids, id), append(blobs, b)
	}
	tree, err := w.WriteTree([]gitstore.TreeEntry{{Name: "first", Mode: gitstore.ModeFile, Hash: ids[0]}, {Name: "last", Mode: gitstore.ModeFile, Hash: ids[199]}})
	if err != nil {
		t.Fatal(err)
	}
	tmp, _ := filepath.Glob(filepath.Join(g.Dir, ".git", "objects", "pack", "tmp_pack_*"))
	if len(tmp) != 1 {
		t.Fatalf("temporary packs while writing: %v", tmp)
	}
	for _, i := range []int{0, 1, 100, 198, 199} {
		if !bytes.Equal(mustRead(t, w, ids[i]), blobs[i]) {
			t.Errorf("pending blob %d reads back changed", i)
		}
	}
	if es, err := w.ReadTree(tree); err != nil || len(es) != 2 || es[1].Hash != ids[199] {
		t.Errorf("pending tree: %v %v", es, err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if tmp, _ := filepath.Glob(filepath.Join(g.Dir, ".git", "objects", "pack", "tmp_*")); len(tmp) != 0 {
		t.Errorf("left behind: %v", tmp)
	}
	for _, i := range []int{0, 150, 199} {
		if got, err := r.ReadBlob(ids[i]); err != nil || !bytes.Equal(got, blobs[i]) {
			t.Errorf("blob %d after Flush: %v", i, err)
		}
	}
	idx, _ := filepath.Glob(filepath.Join(g.Dir, ".git", "objects", "pack", "pack-*.idx"))
	if len(idx) != 1 {
		t.Fatalf("packs: %v", idx)
	}
	g.Git("verify-pack", idx[0])
	if got := g.Git("cat-file", "-s", ids[100].String()); got != fmt.Sprint(len(blobs[100])) {
		t.Errorf("git reads blob 100 as %s bytes", got)
	}
	// A second batch through the same writer starts a new file.
	if _, err := w.WriteBlob([]byte("after\n")); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	g.Git("fsck", "--strict")
}
