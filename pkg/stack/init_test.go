package stack

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/dome-registry/dome/pkg/gitstore"
)

func TestInit(t *testing.T) {
	f := newFixture(t)
	// Same inputs again: a no-op.
	res, err := Init(f.repo, f.layout, InitOptions{Base: f.base, Policy: f.policy, CreatedAt: ts0, Producer: "test"})
	if err != nil || res.Created {
		t.Fatalf("second init: %+v %v", res, err)
	}
	ref, err := f.repo.Ref(IntegrationRef("run-1"))
	if err != nil || ref.String() != f.base {
		t.Fatalf("integration ref: %v %v", ref, err)
	}
	cases := []struct {
		name, run, base, target, want string
		input                         bool
	}{
		{"short sha", "run-2", f.base[:12], "", "not a full commit SHA", true},
		{"not a commit", "run-2", strings.Repeat("0", 40), "", "not a commit", true},
		{"bad target", "run-2", f.base, "main", "not a full ref name", true},
		{"bad run id", "../x", f.base, "", "run id", true},
		{"other base, same run", "run-1", strings.Repeat("0", 39) + "1", "", "not a commit", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Init(f.repo, NewLayout(t.TempDir(), tc.run), InitOptions{Base: tc.base, TargetRef: tc.target, CreatedAt: ts0})
			if err == nil || !strings.Contains(err.Error(), tc.want) || errkind.IsInput(err) != tc.input {
				t.Fatalf("error %v, want %q (input %v)", err, tc.want, tc.input)
			}
		})
	}
	// A ref left at another commit by an earlier run of the same name.
	h, _ := gitstore.ParseHash(f.base)
	tree, _ := f.repo.CommitTree(h)
	other, err := f.repo.WriteCommit(gitstore.CommitSpec{Tree: tree, Parents: []gitstore.Hash{h}, Author: gitstore.Signature{Name: "x", Email: "x@x", When: ts0},
		Committer: gitstore.Signature{Name: "x", Email: "x@x", When: ts0}, Message: "other\n"})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.repo.UpdateRef(IntegrationRef("run-3"), other, gitstore.ZeroHash); err != nil {
		t.Fatal(err)
	}
	_, err = Init(f.repo, NewLayout(t.TempDir(), "run-3"), InitOptions{Base: f.base, CreatedAt: ts0})
	if err == nil || !errkind.IsCheck(err) || !strings.Contains(err.Error(), "not at the base") {
		t.Fatalf("stale ref: %v", err)
	}
}

// TestInit_StaleRefLock: a writer killed while creating the integration
// ref leaves "<ref>.lock"; the next init of the run (holding the run's
// writer lock) removes it and creates the ref, as a resumed run must.
func TestInit_StaleRefLock(t *testing.T) {
	f := newFixture(t)
	lock := filepath.Join(f.repo.CommonDir(), "refs", "dome", "integration", "run-4.lock")
	if err := os.MkdirAll(filepath.Dir(lock), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(lock, []byte(f.base+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := Init(f.repo, NewLayout(t.TempDir(), "run-4"), InitOptions{Base: f.base, Policy: f.policy, CreatedAt: ts0})
	if err != nil || !res.Created {
		t.Fatalf("init over a stale ref lock: %+v %v", res, err)
	}
	if _, err := os.Stat(lock); !os.IsNotExist(err) {
		t.Fatalf("the lock file is still there: %v", err)
	}
	if ref, err := f.repo.Ref(IntegrationRef("run-4")); err != nil || ref.String() != f.base {
		t.Fatalf("integration ref: %v %v", ref, err)
	}
}
