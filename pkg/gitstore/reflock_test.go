package gitstore

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestRemoveRefLock_UnblocksUpdates(t *testing.T) {
	dir := t.TempDir()
	r, err := Init(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	blob, _ := r.WriteBlob([]byte("x"))
	tree, _ := r.WriteTree([]TreeEntry{{Name: "x", Mode: ModeFile, Hash: blob}})
	c, _ := r.WriteCommit(CommitSpec{Tree: tree, Message: "c\n"})
	const ref = "refs/dome/integration/r1"
	if had, err := r.RemoveRefLock(ref); had || err != nil {
		t.Fatalf("no lock: %v %v", had, err)
	}
	// what a writer killed inside UpdateRef leaves
	lock := filepath.Join(dir, "refs", "dome", "integration", "r1.lock")
	os.MkdirAll(filepath.Dir(lock), 0o755)
	os.WriteFile(lock, []byte(c.String()+"\n"), 0o644)
	if err := r.UpdateRef(ref, c, ZeroHash); !errors.Is(err, ErrRefChanged) {
		t.Fatalf("update with a stale lock: %v", err)
	}
	if had, err := r.RemoveRefLock(ref); !had || err != nil {
		t.Fatalf("remove: %v %v", had, err)
	}
	if err := r.UpdateRef(ref, c, ZeroHash); err != nil {
		t.Fatalf("update after removal: %v", err)
	}
	if _, err := r.RemoveRefLock("HEAD"); err == nil {
		t.Error("a non-refs/ name was accepted")
	}
}
