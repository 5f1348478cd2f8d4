package codegen_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dome-registry/dome/pkg/codegen"
)

func TestWrite_StaleFilesRemovedUntrackedKept_UnchangedNotRewritten(t *testing.T) {
	r := exampleRepo(t)
	clients := generateAll(t, openGen(t, r.Dir))
	out := t.TempDir()
	if _, err := codegen.Write(out, clients, &codegen.Scope{}); err != nil {
		t.Fatal(err)
	}
	ts := filepath.Join(out, "client", "ts", "petstore", "default")
	// A file the previous manifest listed that the next generation does not
	// write is stale; a file no manifest lists is the user's.
	m, _ := os.ReadFile(filepath.Join(ts, "manifest.json"))
	stale := strings.Replace(string(m), `"path": "client.ts"`, `"path": "a-old.ts"`, 1)
	os.WriteFile(filepath.Join(ts, "manifest.json"), []byte(stale), 0o644)
	os.WriteFile(filepath.Join(ts, "a-old.ts"), []byte("old"), 0o644)
	os.WriteFile(filepath.Join(ts, "README.md"), []byte("mine"), 0o644)
	// A client folder of a profile that no longer exists is stale as a whole.
	gone := filepath.Join(out, "client", "go", "petstore", "retired")
	os.MkdirAll(gone, 0o755)
	gm, _ := os.ReadFile(filepath.Join(out, "client", "go", "petstore", "default", "manifest.json"))
	os.WriteFile(filepath.Join(gone, "manifest.json"), gm, 0o644)
	for _, f := range []string{"client.gen.go", "operations.json"} {
		b, _ := os.ReadFile(filepath.Join(out, "client", "go", "petstore", "default", f))
		os.WriteFile(filepath.Join(gone, f), b, 0o644)
	}
	before, _ := os.Stat(filepath.Join(out, "client", "python", "inventory", "default", "client.py"))
	res, err := codegen.Write(out, clients, &codegen.Scope{})
	if err != nil {
		t.Fatal(err)
	}
	status := map[string]codegen.WriteResult{}
	for _, x := range res {
		status[x.Dir] = x
	}
	if s := status["client/ts/petstore/default"]; s.Status != codegen.StatusWritten || strings.Join(s.Removed, ",") != "a-old.ts" || strings.Join(s.Kept, ",") != "README.md" {
		t.Errorf("ts/petstore/default: %+v", s)
	}
	if _, err := os.Stat(filepath.Join(ts, "a-old.ts")); !os.IsNotExist(err) {
		t.Errorf("stale a-old.ts still there")
	}
	if b, _ := os.ReadFile(filepath.Join(ts, "README.md")); string(b) != "mine" {
		t.Errorf("the user's README.md was not kept")
	}
	if s := status["client/go/petstore/retired"]; s.Status != codegen.StatusRemoved {
		t.Errorf("retired: %+v", s)
	}
	if _, err := os.Stat(gone); !os.IsNotExist(err) {
		t.Errorf("the stale client folder is still there")
	}
	if s := status["client/python/inventory/default"]; s.Status != codegen.StatusUnchanged {
		t.Errorf("python/inventory/default: %+v", s)
	}
	after, _ := os.Stat(filepath.Join(out, "client", "python", "inventory", "default", "client.py"))
	if !os.SameFile(before, after) {
		t.Errorf("an unchanged client was rewritten")
	}
	drifts, err := codegen.Check(out, clients, &codegen.Scope{})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range drifts {
		if !d.OK() {
			t.Errorf("after writing, %s is %s: %v", d.Dir, d.Status, d.Causes)
		}
	}
	if vs, err := codegen.VerifyDir(out); err != nil || len(vs) != 45 {
		t.Fatalf("verify: %v, %d manifests", err, len(vs))
	}
}

func TestWrite_FileInTheWay_NothingWritten(t *testing.T) {
	r := exampleRepo(t)
	clients := generateAll(t, openGen(t, r.Dir))
	out := t.TempDir()
	os.MkdirAll(filepath.Join(out, "client", "ts"), 0o755)
	os.WriteFile(filepath.Join(out, "client", "ts", "ticketing"), []byte("x"), 0o644)
	_, err := codegen.Write(out, clients, &codegen.Scope{})
	if err == nil || !strings.Contains(err.Error(), "in the way") {
		t.Fatalf("want a file-in-the-way error, got %v", err)
	}
	es, _ := os.ReadDir(filepath.Join(out, "client"))
	if len(es) != 1 {
		t.Errorf("something was written: %v", es)
	}
	left, _ := filepath.Glob(filepath.Join(out, ".dome-gen-*"))
	if len(left) != 0 {
		t.Errorf("staging folders left behind: %v", left)
	}
}
