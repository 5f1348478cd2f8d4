package worker_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dome-registry/dome/internal/runtest"
	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/dome-registry/dome/pkg/gateway"
	"github.com/dome-registry/dome/pkg/gitstore"
	"github.com/dome-registry/dome/pkg/stack"
	"github.com/dome-registry/dome/pkg/worker"
)

// scratch materializes the fixture's base as a worker's scratch tree.
func scratch(t *testing.T, f *runtest.Fixture) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "work")
	base, _ := gitstore.ParseHash(f.Base)
	if _, err := stack.Materialize(f.Repo, base, dir); err != nil {
		t.Fatal(err)
	}
	return dir
}

func options(dir string, a gateway.Attempt) worker.Options {
	return worker.Options{Dir: dir, Attempt: worker.Attempt{RunID: a.RunID, WaveID: a.WaveID, NodeID: a.NodeID, NodeExecutionID: a.NodeExecutionID,
		WorkerID: a.WorkerID}, IntentTags: []string{"docs"}, Constraints: stack.DeclaredConstraints{Atomicity: stack.AtomicProposal}, Now: runtest.T0}
}

func TestSubmit_DiffsTheTreeThroughTheGateway(t *testing.T) {
	f := runtest.New(t, runtest.Options{})
	a := f.Attempt("docs", 1)
	_, c := f.Serve(a, f.Issue(a, runtest.IssueOptions{}), nil)
	dir := scratch(t, f)
	// The scratch tree has no .pem: the grant may not read it.
	os.Remove(filepath.Join(dir, "deploy/prod.pem"))
	os.WriteFile(filepath.Join(dir, "README.md"), []byte("# greet\n\nA tiny module that greets.\n"), 0o644)
	os.Remove(filepath.Join(dir, "docs/guide.md"))
	os.WriteFile(filepath.Join(dir, "greet/greet_test.go"), []byte("package greet\n"), 0o644)
	os.Chmod(filepath.Join(dir, "greet/greet.go"), 0o755)
	os.Symlink("greet/greet.go", filepath.Join(dir, "main.go"))
	res, err := worker.Submit(context.Background(), c, options(dir, a))
	if err != nil {
		t.Fatal(err)
	}
	if res.Submit == nil || res.Submit.Status != gateway.StatusSubmitted || res.Submit.ProposalID != "docs.1" {
		t.Fatalf("%+v %+v", res, res.Submit)
	}
	if got := strings.Join(res.Touched, " "); got != "README.md docs/guide.md greet/greet.go greet/greet_test.go main.go" {
		t.Fatalf("touched %s", got)
	}
	// get_base_ref, list_tree, and a read of each changed or deleted file
	// (README.md, docs/guide.md, greet/greet.go), then submit_patch.
	if res.Calls != 6 {
		t.Fatalf("%d calls", res.Calls)
	}
	lp, err := stack.LoadProposal(f.Repo, f.Layout, &f.Run.State, "docs.1")
	if err != nil {
		t.Fatal(err)
	}
	d := lp.Proposal.DiffUnified
	for _, want := range []string{"+A tiny module that greets.", "deleted file mode 100644", "old mode 100644\nnew mode 100755", "new file mode 120000"} {
		if !strings.Contains(d, want) {
			t.Errorf("the diff lacks %q:\n%s", want, d)
		}
	}
	// The single-use grant wrote once: nothing more is answered.
	_, err = worker.Submit(context.Background(), c, options(dir, a))
	var ce *gateway.CallError
	if !errors.As(err, &ce) || ce.Info.Details["reason"] != "REPLAYED" {
		t.Fatalf("resubmit: %v", err)
	}
}

func TestSubmit_NoChange(t *testing.T) {
	f := runtest.New(t, runtest.Options{})
	a := f.Attempt("docs", 1)
	_, c := f.Serve(a, f.Issue(a, runtest.IssueOptions{}), nil)
	dir := scratch(t, f)
	os.Remove(filepath.Join(dir, "deploy/prod.pem"))
	res, err := worker.Submit(context.Background(), c, options(dir, a))
	if err != nil || !res.NoChange || res.Submit != nil {
		t.Fatalf("%+v %v", res, err)
	}
}

func TestSubmit_RefusesWhatGitRefuses(t *testing.T) {
	f := runtest.New(t, runtest.Options{})
	a := f.Attempt("docs", 1)
	_, c := f.Serve(a, f.Issue(a, runtest.IssueOptions{}), nil)
	for name, edit := range map[string]func(dir string){
		"a .git folder": func(d string) {
			os.MkdirAll(filepath.Join(d, ".git"), 0o755)
			os.WriteFile(filepath.Join(d, ".git/config"), []byte("x"), 0o644)
		},
		"a .GIT folder": func(d string) {
			os.MkdirAll(filepath.Join(d, "sub/.GIT"), 0o755)
			os.WriteFile(filepath.Join(d, "sub/.GIT/x"), []byte("x"), 0o644)
		},
		"a symlink out":             func(d string) { os.Symlink("/etc/passwd", filepath.Join(d, "passwd")) },
		"a symlink up":              func(d string) { os.Symlink("../../outside", filepath.Join(d, "docs/up")) },
		"a .gitmodules symlink":     func(d string) { os.Symlink("README.md", filepath.Join(d, ".gitmodules")) },
		"a FIFO":                    func(d string) { mkfifo(t, filepath.Join(d, "pipe")) },
		"a git~1 short name (NTFS)": func(d string) { os.WriteFile(filepath.Join(d, "GIT~1"), []byte("x"), 0o644) },
	} {
		t.Run(name, func(t *testing.T) {
			dir := scratch(t, f)
			edit(dir)
			_, err := worker.Submit(context.Background(), c, options(dir, a))
			if !errkind.IsInput(err) {
				t.Fatalf("got %v, want a refusal of the tree", err)
			}
		})
	}
	// Nothing was submitted: the grant is not spent.
	dir := scratch(t, f)
	os.Remove(filepath.Join(dir, "deploy/prod.pem"))
	os.WriteFile(filepath.Join(dir, "README.md"), []byte("changed\n"), 0o644)
	if res, err := worker.Submit(context.Background(), c, options(dir, a)); err != nil || res.Submit.Status != gateway.StatusSubmitted {
		t.Fatalf("%+v %v", res, err)
	}
}

func TestReadTree_Bounds(t *testing.T) {
	dir := t.TempDir()
	for i := 0; i < 5; i++ {
		os.WriteFile(filepath.Join(dir, "f"+string(rune('0'+i))), []byte("12345"), 0o644)
	}
	if _, err := worker.ReadTree(dir, nil, 4, 1<<20); !errkind.IsInput(err) {
		t.Fatalf("files bound: %v", err)
	}
	if _, err := worker.ReadTree(dir, nil, 100, 20); !errkind.IsInput(err) {
		t.Fatalf("bytes bound: %v", err)
	}
	files, err := worker.ReadTree(dir, []string{"f[0-2]"}, 100, 1<<20)
	if err != nil || len(files) != 2 {
		t.Fatalf("exclude: %v %v", files, err)
	}
}

func mkfifo(t *testing.T, p string) {
	t.Helper()
	if err := syscallMkfifo(p); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
}
