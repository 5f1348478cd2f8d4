package patch_test

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/dome-registry/dome/internal/gittest"
	"github.com/dome-registry/dome/pkg/gitstore"
	"github.com/dome-registry/dome/pkg/patch"
)

// The three-way conformance test: every commit C with one parent P and a
// grandparent G is exported with git format-patch (P..C) and applied onto
// G's tree with --3way, by `git apply --3way --cached` on a scratch index
// and by dome in memory. Both must decide the same: clean with the same
// tree id, conflicted in the same paths, or failed. The simulated history
// runs in `make test`; DOME_CONFORMANCE_REPO's history (the last
// DOME_CONFORMANCE_MAX3 commits, default 300) in `make conformance`.

func TestConformance_ThreeWaySimulator(t *testing.T) {
	needGit(t)
	repo := simRepo(t, envInt("DOME_CONFORMANCE_COMMITS", 60))
	st := conform3(t, repo, envInt("DOME_CONFORMANCE_MAX3", 1000))
	if st.clean == 0 || st.conflict == 0 {
		t.Fatalf("the history does not exercise both outcomes: %+v", st)
	}
}

func TestConformance_ThreeWayRealRepo(t *testing.T) {
	repo := os.Getenv("DOME_CONFORMANCE_REPO")
	if repo == "" {
		t.Skip("DOME_CONFORMANCE_REPO not set")
	}
	needGit(t)
	conform3(t, repo, envInt("DOME_CONFORMANCE_MAX3", 300))
}

type conf3Stats struct{ commits, clean, conflict, failed, mismatches, skipped int }

// outcome is what one side made of a patch.
type outcome struct {
	kind  string // clean, conflict, failed
	tree  string
	paths []string // conflicted
}

func (o outcome) String() string {
	switch o.kind {
	case "clean":
		return "clean " + o.tree
	case "conflict":
		return "conflict in " + strings.Join(o.paths, ", ")
	}
	return o.kind
}

func conform3(t *testing.T, repoDir string, max int) conf3Stats {
	var st conf3Stats
	objects := strings.TrimSpace(string(gitCmd(t, repoDir, nil, "rev-parse", "--path-format=absolute", "--git-path", "objects")))
	scratch := t.TempDir()
	env := append(gittest.Env(), "GIT_INDEX_FILE="+filepath.Join(scratch, "index"),
		"GIT_OBJECT_DIRECTORY="+filepath.Join(scratch, "objects"), "GIT_ALTERNATE_OBJECT_DIRECTORIES="+objects)
	if err := os.MkdirAll(filepath.Join(scratch, "objects"), 0o755); err != nil {
		t.Fatal(err)
	}
	repo, err := gitstore.Open(repoDir)
	if err != nil {
		t.Fatal(err)
	}
	defer repo.Close()
	store := patch.NewMemStore(patch.NewRepoStore(repo))
	lines := strings.Split(strings.TrimSpace(string(gitCmd(t, repoDir, nil, "log", "--no-merges", "--format=%H %P", "--max-count="+strconv.Itoa(max), headOf(t, repoDir)))), "\n")
	for _, l := range lines {
		f := strings.Fields(l)
		if len(f) != 2 {
			continue // the root
		}
		c, parent := f[0], f[1]
		gp := strings.Fields(string(gitCmd(t, repoDir, nil, "rev-list", "--parents", "-n", "1", parent)))
		if len(gp) < 2 {
			continue // the parent is the root
		}
		gTree := strings.TrimSpace(string(gitCmd(t, repoDir, nil, "rev-parse", gp[1]+"^{tree}")))
		cmd := exec.Command("git", "format-patch", "-1", "--stdout", "-M", "--full-index", "--binary", c)
		cmd.Dir, cmd.Env = repoDir, gittest.Env()
		text, err := cmd.Output()
		if err != nil {
			st.skipped++ // (a partial clone may lack old objects)
			continue
		}
		if len(bytes.TrimSpace(text)) == 0 {
			continue // an empty commit
		}
		st.commits++
		g := gitThreeWay(t, repoDir, env, gTree, text)
		d := domeThreeWay(t, store, gTree, text)
		switch g.kind {
		case "clean":
			st.clean++
		case "conflict":
			st.conflict++
		default:
			st.failed++
		}
		if os.Getenv("DOME_CONFORMANCE_VERBOSE") != "" {
			t.Logf("%s %s | %s", c[:12], g, d)
		}
		if g.String() != d.String() {
			st.mismatches++
			t.Errorf("%s onto its grandparent %s: git %s, dome %s", c[:12], gp[1][:12], g, d)
		}
	}
	t.Logf("%s: %d commits onto their grandparents with --3way: %d clean, %d conflicted, %d failed (git's outcomes); %d differ; %d skipped (objects missing)",
		repoDir, st.commits, st.clean, st.conflict, st.failed, st.mismatches, st.skipped)
	return st
}

func gitThreeWay(t *testing.T, dir string, env []string, tree string, text []byte) outcome {
	// git apply --3way reads and writes the worktree even with --cached
	// (a created file that already exists is checked out to merge into):
	// a fresh empty worktree for every patch keeps it out of the
	// repository and the outcome independent of the patches before.
	wt := t.TempDir()
	gitDir := strings.TrimSpace(string(gitCmd(t, dir, nil, "rev-parse", "--absolute-git-dir")))
	env = append(env[:len(env):len(env)], "GIT_DIR="+gitDir, "GIT_WORK_TREE="+wt)
	git := func(stdin []byte, args ...string) (string, error) {
		cmd := exec.Command("git", args...)
		cmd.Dir, cmd.Env = wt, env
		if stdin != nil {
			cmd.Stdin = bytes.NewReader(stdin)
		}
		var out, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &stderr
		err := cmd.Run()
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			t.Fatalf("git %s: %v", strings.Join(args, " "), err)
		}
		return out.String(), err
	}
	if _, err := git(nil, "read-tree", tree); err != nil {
		t.Fatalf("git read-tree %s: %v", tree, err)
	}
	_, applyErr := git(text, "apply", "--3way", "--cached", "-")
	unmerged, _ := git(nil, "ls-files", "-u", "-z")
	var paths []string
	seen := map[string]bool{}
	for _, e := range strings.Split(strings.TrimRight(unmerged, "\x00"), "\x00") {
		if _, p, ok := strings.Cut(e, "\t"); ok && !seen[p] {
			seen[p] = true
			paths = append(paths, p)
		}
	}
	sort.Strings(paths)
	switch {
	case len(paths) > 0:
		return outcome{kind: "conflict", paths: paths}
	case applyErr != nil:
		return outcome{kind: "failed"}
	}
	id, err := git(nil, "write-tree")
	if err != nil {
		t.Fatalf("git write-tree: %v", err)
	}
	return outcome{kind: "clean", tree: strings.TrimSpace(id)}
}

func domeThreeWay(t *testing.T, store *patch.MemStore, tree string, text []byte) outcome {
	ps, err := patch.Parse(text, patch.ParseOptions{Strip: patch.DefaultStrip})
	if err != nil || len(ps) != 1 {
		return outcome{kind: "failed"}
	}
	base, _ := patch.ParseOID(tree)
	res, err := patch.Apply(store, base, ps[0], patch.Options{ThreeWay: true})
	var ce *patch.ConflictError
	switch {
	case err == nil:
		id := res.Tree
		if id.IsZero() {
			id, _ = store.WriteTree(nil)
		}
		return outcome{kind: "clean", tree: id.String()}
	case errors.As(err, &ce):
		var paths []string
		seen := map[string]bool{}
		for _, c := range ce.Conflicts {
			if c.Reason != "three-way merge conflict" {
				return outcome{kind: "failed"}
			}
			if !seen[c.Path] {
				seen[c.Path] = true
				paths = append(paths, c.Path)
			}
		}
		sort.Strings(paths)
		return outcome{kind: "conflict", paths: paths}
	}
	return outcome{kind: "failed"}
}

// headOf is HEAD, or main in a repository whose HEAD names no commit (the
// simulator's).
func headOf(t *testing.T, dir string) string {
	cmd := exec.Command("git", "rev-parse", "--verify", "-q", "HEAD")
	cmd.Dir, cmd.Env = dir, gittest.Env()
	if err := cmd.Run(); err != nil {
		return "main"
	}
	return "HEAD"
}
