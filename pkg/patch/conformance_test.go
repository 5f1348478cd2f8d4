package patch_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/dome-registry/dome/internal/gittest"
	"github.com/dome-registry/dome/internal/patchsim"
	"github.com/dome-registry/dome/pkg/gitstore"
	"github.com/dome-registry/dome/pkg/patch"
)

// The conformance test: a history is exported with the real git
// format-patch, every patch is applied by dome onto its parent's tree and
// the resulting tree id must equal the commit's tree id; dome's patch ids
// must equal git patch-id --stable. DOME_CONFORMANCE_COMMITS sets the length
// of the simulated history (60 by default, `make conformance` uses 600);
// DOME_CONFORMANCE_REPO names a real repository whose history (up to
// DOME_CONFORMANCE_MAX commits from HEAD, default 1000) is checked too.

func gitCmd(t testing.TB, dir string, stdin []byte, args ...string) []byte {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = gittest.Env()
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return out
}

func needGit(t testing.TB) { gittest.Need(t) }

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// simRepo builds the simulated history in a new bare repository.
func simRepo(t testing.TB, commits int) string {
	dir := t.TempDir()
	repo := filepath.Join(dir, "sim.git")
	gitCmd(t, dir, nil, "init", "-q", "--bare", repo)
	var stream bytes.Buffer
	if err := patchsim.Generate(&stream, 7, commits); err != nil {
		t.Fatal(err)
	}
	gitCmd(t, repo, stream.Bytes(), "fast-import", "--quiet")
	return repo
}

func TestConformance_Simulator(t *testing.T) {
	needGit(t)
	n := envInt("DOME_CONFORMANCE_COMMITS", 60)
	repo := simRepo(t, n)
	for _, variant := range [][]string{{"-M"}, {"--no-renames"}, {"-C", "-C"}} {
		t.Run(strings.Join(variant, ""), func(t *testing.T) {
			args := append([]string{"format-patch", "--stdout", "--root"}, variant...)
			text := gitCmd(t, repo, nil, append(args, "main")...)
			st := conform(t, repo, text, true)
			t.Logf("simulator %s: %d commits, %d patches, %d applied, %d tree ids equal, %d patch ids equal of %d; renames %d, copies %d, binary %d, mode changes %d",
				strings.Join(variant, " "), n, st.patches, st.applied, st.treesEqual, st.idsEqual, st.ids, st.renames, st.copies, st.binary, st.modes)
			if st.patches < n*95/100 || st.treesEqual != st.patches || st.idsEqual != st.ids || st.ids < st.patches { // (message lines such as "diff -u a b" make git patch-id report extra ids; dome reports the same)
				t.Fatalf("conformance below 100%%: %+v", st)
			}
		})
	}
}

func TestConformance_RealRepo(t *testing.T) {
	repo := os.Getenv("DOME_CONFORMANCE_REPO")
	if repo == "" {
		t.Skip("DOME_CONFORMANCE_REPO not set")
	}
	needGit(t)
	max := envInt("DOME_CONFORMANCE_MAX", 1000)
	text := gitCmd(t, repo, nil, "format-patch", "--stdout", "--root", "-M", "--max-count="+strconv.Itoa(max), "HEAD")
	st := conform(t, repo, text, false)
	t.Logf("real repository %s: %d patches, %d applied, %d tree ids equal, %d refused (%v); %d of %d patch ids equal; renames %d, copies %d, binary %d, mode changes %d",
		repo, st.patches, st.applied, st.treesEqual, len(st.refused), st.refused, st.idsEqual, st.ids, st.renames, st.copies, st.binary, st.modes)
	if st.treesEqual+len(st.refused) != st.patches || st.idsEqual != st.ids {
		t.Fatalf("conformance below 100%%: %+v", st)
	}
}

type confStats struct {
	patches, applied, treesEqual, ids, idsEqual int
	renames, copies, binary, modes              int
	refused                                     []string
}

var fromLine = regexp.MustCompile(`(?m)^From [0-9a-f]{40} Mon Sep 17 00:00:00 2001\n`)

// conform applies every message of a format-patch stream onto its commit's
// first parent. With write, objects go to the repository through gitstore;
// otherwise to memory over it (a real repository is left untouched).
func conform(t *testing.T, repoDir string, text []byte, write bool) confStats {
	var st confStats
	trees := map[string][2]string{} // commit -> tree, first parent's tree
	treeOf := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(string(gitCmd(t, repoDir, nil, "log", "--format=%H %T %P", "--all"))), "\n") {
		f := strings.Fields(l)
		treeOf[f[0]] = f[1]
		if len(f) > 2 {
			trees[f[0]] = [2]string{f[1], f[2]}
		} else {
			trees[f[0]] = [2]string{f[1], ""}
		}
	}
	repo, err := gitstore.Open(repoDir)
	if err != nil {
		t.Fatal(err)
	}
	defer repo.Close()
	var store patch.Store = patch.NewRepoStore(repo)
	if !write {
		store = patch.NewMemStore(store)
	}
	locs := fromLine.FindAllIndex(text, -1)
	for i, loc := range locs {
		end := len(text)
		if i+1 < len(locs) {
			end = locs[i+1][0]
		}
		msg := text[loc[0]:end]
		st.patches++
		commit := string(msg[5:45])
		ps, err := patch.Parse(msg, patch.ParseOptions{Source: commit, Strip: patch.DefaultStrip})
		if err != nil {
			st.refused = append(st.refused, fmt.Sprintf("%s: %v", commit[:12], err))
			continue
		}
		if len(ps) != 1 {
			t.Fatalf("%s: %d patches in one message", commit, len(ps))
		}
		p := ps[0]
		for _, f := range p.Files {
			switch {
			case f.IsRename:
				st.renames++
			case f.IsCopy:
				st.copies++
			}
			if f.Binary != nil {
				st.binary++
			}
			if f.OldMode != 0 && f.NewMode != 0 && f.OldMode != f.NewMode {
				st.modes++
			}
		}
		ct := trees[commit]
		var base patch.OID
		if ct[1] != "" {
			base, _ = patch.ParseOID(treeOf[ct[1]])
		}
		res, err := patch.Apply(store, base, p, patch.Options{})
		if err != nil {
			if write {
				t.Errorf("%s (%s): %v", commit[:12], p.Header.Subject, err)
			} else {
				st.refused = append(st.refused, fmt.Sprintf("%s: %v", commit[:12], err))
			}
			continue
		}
		st.applied++
		if res.Tree.String() == ct[0] || res.Tree.IsZero() && ct[0] == "4b825dc642cb6eb9a060e54bf8d69288fbee4904" {
			st.treesEqual++
		} else {
			t.Errorf("%s (%s): tree %s, git has %s", commit[:12], p.Header.Subject, res.Tree, ct[0])
		}
	}
	// patch ids
	want := strings.Split(strings.TrimSpace(string(gitCmd(t, repoDir, text, "patch-id", "--stable"))), "\n")
	got := patch.PatchIDs(text)
	st.ids = len(want)
	for i, w := range want {
		if i < len(got) && w == got[i].ID.String()+" "+got[i].Commit.String() {
			st.idsEqual++
		} else if i < len(got) {
			t.Errorf("patch id %d: dome %s %s, git %s", i, got[i].ID, got[i].Commit, w)
		}
	}
	if len(got) != len(want) {
		t.Errorf("dome found %d patch ids, git %d", len(got), len(want))
	}
	return st
}

// BenchmarkApplySeries applies a 200-patch simulated series in memory over
// the repository (parse + apply per patch; bench/patch runs the CLI).
func BenchmarkApplySeries(b *testing.B) {
	needGit(b)
	repoDir := simRepo(b, 201)
	text := gitCmd(b, repoDir, nil, "format-patch", "--stdout", "-M", "main~200..main")
	base := strings.TrimSpace(string(gitCmd(b, repoDir, nil, "rev-parse", "main~200^{tree}")))
	want := strings.TrimSpace(string(gitCmd(b, repoDir, nil, "rev-parse", "main^{tree}")))
	repo, err := gitstore.Open(repoDir)
	if err != nil {
		b.Fatal(err)
	}
	defer repo.Close()
	root, _ := patch.ParseOID(base)
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		ps, err := patch.Parse(text, patch.ParseOptions{Strip: 1})
		if err != nil {
			b.Fatal(err)
		}
		st := patch.NewMemStore(patch.NewRepoStore(repo))
		cur := root
		for _, p := range ps {
			res, err := patch.Apply(st, cur, p, patch.Options{})
			if err != nil {
				b.Fatal(err)
			}
			cur = res.Tree
		}
		if cur.String() != want {
			b.Fatalf("tree %s, want %s", cur, want)
		}
	}
}
