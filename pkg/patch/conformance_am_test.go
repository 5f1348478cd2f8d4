package patch_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dome-registry/dome/internal/gittest"
	"github.com/dome-registry/dome/pkg/gitstore"
	"github.com/dome-registry/dome/pkg/patch"
)

// The git am conformance test: every commit with one parent is exported
// with git format-patch and committed onto its parent twice, by `git am
// --keep-cr` and by dome (Parse, Apply, Patch.Commit with the same
// committer); the commit ids must be equal: same tree, author, date, time
// zone and message, byte for byte. The simulated history (whose messages and
// authors have the shapes git am treats specially) runs in `make test`;
// DOME_CONFORMANCE_REPO's last DOME_CONFORMANCE_MAX_AM commits (default
// 300) in `make conformance`.

func TestConformance_AmSimulator(t *testing.T) {
	needGit(t)
	repo := simRepo(t, envInt("DOME_CONFORMANCE_COMMITS", 60))
	conformAm(t, repo, 1000)
}

func TestConformance_AmRealRepo(t *testing.T) {
	repo := os.Getenv("DOME_CONFORMANCE_REPO")
	if repo == "" {
		t.Skip("DOME_CONFORMANCE_REPO not set")
	}
	needGit(t)
	conformAm(t, repo, envInt("DOME_CONFORMANCE_MAX_AM", 300))
}

var amCommitter = gitstore.Signature{Name: "Am Committer", Email: "am@dome.invalid", When: time.Unix(1767225600, 0).UTC()}

func conformAm(t *testing.T, repoDir string, max int) {
	objects := strings.TrimSpace(string(gitCmd(t, repoDir, nil, "rev-parse", "--path-format=absolute", "--git-path", "objects")))
	wt := gittest.New(t) // a worktree borrowing the repository's objects
	if err := os.WriteFile(filepath.Join(wt.Dir, ".git", "objects", "info", "alternates"), []byte(objects+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := append(gittest.Env(), "GIT_COMMITTER_NAME="+amCommitter.Name, "GIT_COMMITTER_EMAIL="+amCommitter.Email,
		"GIT_COMMITTER_DATE=@"+strconv.FormatInt(amCommitter.When.Unix(), 10)+" +0000")
	git := func(stdin []byte, args ...string) (string, error) {
		cmd := exec.Command("git", args...)
		cmd.Dir, cmd.Env = wt.Dir, env
		if stdin != nil {
			cmd.Stdin = bytes.NewReader(stdin)
		}
		var out, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &stderr
		err := cmd.Run()
		if err != nil {
			return stderr.String(), err
		}
		return strings.TrimSpace(out.String()), nil
	}
	repo, err := gitstore.Open(repoDir)
	if err != nil {
		t.Fatal(err)
	}
	defer repo.Close()
	store := patch.NewMemStore(patch.NewRepoStore(repo))
	var commits, equal, amFailed, skipped int
	lines := strings.Split(strings.TrimSpace(string(gitCmd(t, repoDir, nil, "log", "--no-merges", "--format=%H %P", "--max-count="+strconv.Itoa(max), headOf(t, repoDir)))), "\n")
	for _, l := range lines {
		f := strings.Fields(l)
		if len(f) != 2 {
			continue // the root
		}
		c, parent := f[0], f[1]
		cmd := exec.Command("git", "format-patch", "-1", "--stdout", "-M", c)
		cmd.Dir, cmd.Env = repoDir, gittest.Env()
		text, err := cmd.Output()
		if err != nil {
			skipped++ // (a partial clone may lack old objects)
			continue
		}
		if len(bytes.TrimSpace(text)) == 0 {
			continue // an empty commit
		}
		commits++
		git(nil, "am", "--abort")
		if _, err := git(nil, "checkout", "-q", "--detach", "--force", parent); err != nil {
			skipped++ // (objects missing)
			commits--
			continue
		}
		want := ""
		if out, err := git(text, "am", "-q", "--keep-cr"); err != nil {
			amFailed++
			t.Logf("%s: git am fails: %s", c[:12], strings.TrimSpace(out))
		} else {
			want, _ = git(nil, "rev-parse", "HEAD")
		}
		got := domeAm(t, repo, store, text, parent)
		switch {
		case want == "" && got == "":
		case got == want:
			equal++
		default:
			subject, _ := git(nil, "log", "-1", "--format=%s", c)
			t.Errorf("%s (%s): dome commits %s, git am %s", c[:12], subject, got, want)
		}
	}
	t.Logf("%s: %d commits through git am and dome: %d commit ids equal, %d that git am refuses (%d skipped: objects missing)",
		repoDir, commits, equal, amFailed, skipped)
	if equal == 0 {
		t.Fatal("no commit compared")
	}
}

// domeAm is dome patch apply --commit in memory: the commit id it makes.
func domeAm(t *testing.T, repo *gitstore.Repo, store *patch.MemStore, text []byte, parent string) string {
	ps, err := patch.Parse(text, patch.ParseOptions{Strip: patch.DefaultStrip})
	if err != nil || len(ps) != 1 {
		t.Logf("dome parse: %v", err)
		return ""
	}
	p, _ := gitstore.ParseHash(parent)
	parentTree, err := repo.CommitTree(p)
	if err != nil {
		t.Fatal(err)
	}
	res, err := patch.Apply(store, patch.OID(parentTree), ps[0], patch.Options{})
	if err != nil {
		t.Logf("dome apply: %v", err)
		return ""
	}
	id := res.Tree
	if id.IsZero() {
		id, _ = store.WriteTree(nil)
	}
	spec, err := ps[0].Commit(id, p, gitstore.Signature{Name: "dome"}, amCommitter)
	if err != nil {
		t.Logf("dome commit: %v", err)
		return ""
	}
	h, err := gitstore.HashCommit(spec)
	if err != nil {
		t.Fatal(err)
	}
	return h.String()
}
