// Command patch benchmarks dome's patch engine (issue 7): the same series of
// 500 patches (the random-edit simulator's history exported with git
// format-patch) applied, one commit per patch,
//
//	dome:  one "dome patch apply --commit" process, objects written straight
//	       to the object store, no worktree
//	git am: "git am --keep-cr" in a worktree
//	loop:  "git apply --index P && git commit" per patch in a worktree
//
// and checks that the three final trees equal the original history's tree.
// Floor: pkg/patch in this process applying the series to in-memory objects
// over the repository (parsing and applying only, no object writes).
// It prints "workload | dome | peer | ratio | floor" rows.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/dome-registry/dome/internal/patchsim"
	"github.com/dome-registry/dome/pkg/gitstore"
	"github.com/dome-registry/dome/pkg/patch"
)

func main() {
	dome := flag.String("dome", os.Getenv("DOME_BIN"), "dome binary")
	work := flag.String("work", "bench/.work/patch", "work directory")
	n := flag.Int("patches", 500, "patches in the series")
	flag.Parse()
	if *dome == "" {
		fail("set -dome or DOME_BIN")
	}
	abs, _ := filepath.Abs(*dome)
	*dome = abs
	os.RemoveAll(*work)
	if err := os.MkdirAll(*work, 0o755); err != nil {
		fail(err.Error())
	}
	*work, _ = filepath.Abs(*work)
	src := filepath.Join(*work, "sim.git")
	git(*work, nil, "init", "-q", "--bare", src)
	var stream bytes.Buffer
	if err := patchsim.Generate(&stream, 11, *n+20); err != nil {
		fail(err.Error())
	}
	git(src, stream.Bytes(), "fast-import", "--quiet")
	want := strings.TrimSpace(git(src, nil, "rev-parse", "main^{tree}"))
	pdir := filepath.Join(*work, "patches")
	root := strings.TrimSpace(git(src, nil, "rev-list", "--max-parents=0", "main"))
	git(src, nil, "format-patch", "-q", "-M", "-o", pdir, root+"..main")
	ents, _ := os.ReadDir(pdir)
	var patches []string
	for _, e := range ents {
		if fi, err := e.Info(); err == nil && fi.Size() > 0 { // format-patch writes empty files for no-op commits
			patches = append(patches, filepath.Join(pdir, e.Name()))
		}
	}
	sort.Strings(patches)
	if len(patches) < *n {
		fail(fmt.Sprintf("only %d patches", len(patches)))
	}
	patches = patches[len(patches)-*n:]
	first, err := os.ReadFile(patches[0])
	if err != nil {
		fail(err.Error())
	}
	base := strings.TrimSpace(git(src, nil, "rev-parse", string(first[5:45])+"^"))
	fmt.Printf("series: %d patches from the simulator (format-patch -M), base %s\n", len(patches), base[:12])

	// dome: one process, one commit per patch, on a copy of the repository
	domeRepo := clone(*work, src, "dome.git", true)
	args := append([]string{"--repo", domeRepo, "patch", "apply", "--base", base, "--commit", "refs/heads/dome"}, patches...)
	domeT := timeIt(func() { run(*dome, nil, args...) })
	check("dome", strings.TrimSpace(git(domeRepo, nil, "rev-parse", "dome^{tree}")), want)
	if c := strings.TrimSpace(git(domeRepo, nil, "rev-list", "--count", base+"..dome")); c != fmt.Sprint(len(patches)) {
		fail("dome made " + c + " commits")
	}

	// git am
	amWT := clone(*work, src, "am", false)
	git(amWT, nil, "checkout", "-q", "-b", "am", base)
	amT := timeIt(func() { git(amWT, nil, append([]string{"am", "-q", "--keep-cr"}, patches...)...) })
	check("git am", strings.TrimSpace(git(amWT, nil, "rev-parse", "HEAD^{tree}")), want)

	// git apply --index && git commit, per patch
	loopWT := clone(*work, src, "loop", false)
	git(loopWT, nil, "checkout", "-q", "-b", "loop", base)
	loopT := timeIt(func() {
		for i, p := range patches {
			git(loopWT, nil, "apply", "--index", p)
			git(loopWT, nil, "commit", "-q", "--allow-empty", "-m", fmt.Sprintf("patch %d", i+1))
		}
	})
	check("git apply loop", strings.TrimSpace(git(loopWT, nil, "rev-parse", "HEAD^{tree}")), want)

	// floor: the engine alone, in memory over the repository
	floorT := floor(src, base, patches, want)

	fmt.Printf("%-48s | %10s | %10s | %8s | %10s\n", "workload", "dome", "peer", "peer/dome", "floor")
	fmt.Printf("%-48s | %10s | %10s | %7.2fx | %10s  (pkg/patch in memory, no writes)\n", fmt.Sprintf("%d patches, one commit each: vs git am", len(patches)), ms(domeT), ms(amT), float64(amT)/float64(domeT), ms(floorT))
	fmt.Printf("%-48s | %10s | %10s | %7.2fx | %10s\n", fmt.Sprintf("%d patches: vs git apply --index && git commit", len(patches)), ms(domeT), ms(loopT), float64(loopT)/float64(domeT), ms(floorT))
	fmt.Printf("per patch: dome %.2f ms, git am %.2f ms, loop %.2f ms; final trees equal %s\n",
		perPatch(domeT, len(patches)), perPatch(amT, len(patches)), perPatch(loopT, len(patches)), want[:12])
	fmt.Printf("target: dome at least 3x faster than git am (peer/dome >= 3x)\n")
	if float64(amT)/float64(domeT) < 3 {
		fmt.Println("TARGET MISSED")
	}
}

func floor(repoDir, base string, patches []string, want string) time.Duration {
	repo, err := gitstore.Open(repoDir)
	if err != nil {
		fail(err.Error())
	}
	defer repo.Close()
	h, err := repo.ResolveCommit(base)
	if err != nil {
		fail(err.Error())
	}
	t, _ := repo.CommitTree(h)
	var texts [][]byte
	for _, p := range patches {
		b, err := os.ReadFile(p)
		if err != nil {
			fail(err.Error())
		}
		texts = append(texts, b)
	}
	st := patch.NewMemStore(patch.NewRepoStore(repo))
	var cur patch.OID
	d := timeIt(func() {
		cur = patch.OID(t)
		for i, b := range texts {
			ps, err := patch.Parse(b, patch.ParseOptions{Strip: 1})
			if err != nil {
				fail(fmt.Sprintf("%s: %v", patches[i], err))
			}
			res, err := patch.Apply(st, cur, ps[0], patch.Options{})
			if err != nil {
				fail(fmt.Sprintf("%s: %v", patches[i], err))
			}
			cur = res.Tree
		}
	})
	check("floor", cur.String(), want)
	return d
}

func clone(work, src, name string, bare bool) string {
	dst := filepath.Join(work, name)
	args := []string{"clone", "-q", "--no-local", src, dst}
	if bare {
		args = []string{"clone", "-q", "--bare", "--no-local", src, dst}
	}
	git(work, nil, args...)
	return dst
}

func check(who, got, want string) {
	if got != want {
		fail(fmt.Sprintf("%s: final tree %s, the history has %s", who, got, want))
	}
}

func gitEnv(dir string) []string {
	return append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir, "GIT_AUTHOR_NAME=bench", "GIT_AUTHOR_EMAIL=bench@dome.invalid",
		"GIT_COMMITTER_NAME=bench", "GIT_COMMITTER_EMAIL=bench@dome.invalid", "LC_ALL=C")
}

func git(dir string, stdin []byte, args ...string) string {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = gitEnv(dir)
	return exe(cmd, stdin)
}

func run(bin string, stdin []byte, args ...string) string {
	cmd := exec.Command(bin, args...)
	cmd.Env = gitEnv(os.TempDir())
	return exe(cmd, stdin)
}

func exe(cmd *exec.Cmd, stdin []byte) string {
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		fail(fmt.Sprintf("%s: %v\n%s", strings.Join(cmd.Args, " ")[:min(200, len(strings.Join(cmd.Args, " ")))], err, errb.String()))
	}
	return out.String()
}

func timeIt(f func()) time.Duration {
	start := time.Now()
	f()
	return time.Since(start)
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d.Microseconds())/1000) }

func perPatch(d time.Duration, n int) float64 { return float64(d.Microseconds()) / 1000 / float64(n) }

func fail(msg string) {
	fmt.Fprintln(os.Stderr, "bench/patch:", msg)
	os.Exit(1)
}
