// Command patch benchmarks dome's patch engine against git on three series,
// each applied with one commit per patch:
//
//   - ordinary: a repository of 2,000 files (40 folders of 50 Go files), 500
//     commits each editing one file (git commit), exported with git
//     format-patch: the kind of series people send;
//   - simulator: the random-edit simulator's 500-patch history
//     (internal/patchsim: renames, deletions, new files, binary files);
//   - real: a public history replayed (-history PATH, a repository such as
//     github.com/urfave/cli): the last -max commits of its first-parent
//     chain, each as a patch against its first parent (merges too), after
//     the last commit whose objects the repository lacks.
//
// For each: one "dome patch apply --commit" process (objects written to the
// object store as one pack, no worktree) against "git am --keep-cr" in a
// worktree, both from a repository holding only the base commit, interleaved
// (internal/benchrun); the final trees must equal the history's. Rows give
// medians and ranges of wall time, CPU time and peak RSS, and ratios git /
// dome. The ordinary series also runs a loop of "git apply --index && git
// commit" once, and pkg/patch applying the series in this process, in memory
// (no object written), as a baseline: dome's engine without its I/O.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	"github.com/dome-registry/dome/internal/benchrun"
	"github.com/dome-registry/dome/internal/patchsim"
	"github.com/dome-registry/dome/pkg/gitstore"
	"github.com/dome-registry/dome/pkg/patch"
)

func main() {
	dome := flag.String("dome", os.Getenv("DOME_BIN"), "dome binary")
	work := flag.String("work", "bench/.work/patch", "work directory")
	runs := flag.Int("runs", 5, "measured runs of each command, interleaved")
	history := flag.String("history", os.Getenv("DOME_BENCH_HISTORY"), "a git repository whose first-parent history to replay (e.g. a clone of github.com/urfave/cli); empty: skip")
	max := flag.Int("max", 300, "at most this many commits of -history")
	loop := flag.Bool("loop", true, "also run the git apply --index && git commit loop on the ordinary series (once)")
	flag.Parse()
	if *dome == "" {
		fail("set -dome or DOME_BIN")
	}
	*dome = abs(*dome)
	must(os.RemoveAll(*work))
	must(os.MkdirAll(*work, 0o755))
	w := abs(*work)
	fmt.Printf("load average at start: %s\n", benchrun.Load())
	ok := true
	ok = run(ordinary(w), *dome, w, *runs, *loop) && ok
	ok = run(simulated(w), *dome, w, *runs, false) && ok
	if *history != "" {
		if s, err := replay(w, abs(*history), *max); err != nil {
			fmt.Printf("\n== real history: skipped: %v\n", err)
		} else {
			ok = run(s, *dome, w, *runs, false) && ok
		}
	} else {
		fmt.Println("\n== real history: skipped (pass -history PATH or set DOME_BENCH_HISTORY, e.g. a clone of github.com/urfave/cli)")
	}
	fmt.Printf("load average at the end: %s\n", benchrun.Load())
	if !ok {
		fmt.Println("TARGET MISSED (see above)")
	}
}

// series is a patch series with the repository to apply it to.
type series struct {
	name    string
	base    string   // a bare repository holding only the base commit
	commit  string   // the base commit
	patches []string // in order
	want    string   // the final tree
	target  float64  // git am / dome target
}

func run(s series, dome, w string, runs int, loop bool) bool {
	fmt.Printf("\n== %s: %d patches\n", s.name, len(s.patches))
	dir := filepath.Join(w, strings.Fields(s.name)[0])
	must(os.MkdirAll(dir, 0o755))
	domeRepo := filepath.Join(dir, "dome.git")
	amRepo := filepath.Join(dir, "am")
	env := append(gitEnv(dir), "GOMAXPROCS=2")
	domeJob := benchrun.CommandWith("dome", benchrun.Cmd{
		Argv:   append([]string{dome, "--repo", domeRepo, "patch", "apply", "--base", s.commit, "--commit", "refs/heads/dome"}, s.patches...),
		Env:    env,
		Before: func() error { return fresh(s.base, domeRepo, true) },
	})
	amJob := benchrun.CommandWith("git am", benchrun.Cmd{
		Argv: append([]string{"git", "-C", amRepo, "am", "-q", "--keep-cr"}, s.patches...),
		Env:  env,
		Before: func() error {
			return fresh(s.base, amRepo, false)
		},
	})
	res, err := benchrun.Interleave(runs, 1, domeJob, amJob)
	must(err)
	check(s.name+": dome", git(domeRepo, nil, "rev-parse", "dome^{tree}"), s.want)
	check(s.name+": git am", git(amRepo, nil, "rev-parse", "HEAD^{tree}"), s.want)
	if c := git(domeRepo, nil, "rev-list", "--count", s.commit+"..dome"); c != fmt.Sprint(len(s.patches)) {
		fail(fmt.Sprintf("%s: dome made %s commits", s.name, c))
	}
	d, g := res["dome"], res["git am"]
	var t benchrun.Table
	t.Row("workload", "dome", "git am", "git am/dome")
	t.Row(s.name+": wall", benchrun.Ms(d.Wall()), benchrun.Ms(g.Wall()), benchrun.Ratio(g.Wall(), d.Wall()))
	t.Row(s.name+": CPU", benchrun.Ms(d.CPU()), benchrun.Ms(g.CPU()), benchrun.Ratio(g.CPU(), d.CPU()))
	t.Row(s.name+": peak RSS", benchrun.MB(d.RSS()), benchrun.MB(g.RSS()), benchrun.Ratio(g.RSS(), d.RSS()))
	if loop {
		l := applyLoop(s, dir)
		t.Row(s.name+": git apply --index && git commit loop (wall, one run)", "", benchrun.Ms(l.Wall()), benchrun.Ratio(l.Wall(), d.Wall()))
		b := baseline(s)
		t.Row(s.name+": baseline: pkg/patch in memory, no writes (wall, CPU)", benchrun.Ms(b.Wall()), benchrun.Ms(b.CPU()), "")
	}
	t.Print(os.Stdout)
	fmt.Printf("per patch: dome %.2f ms, git am %.2f ms (CPU); load average after: %s\n",
		d.CPU().Median*1000/float64(len(s.patches)), g.CPU().Median*1000/float64(len(s.patches)), benchrun.Load())
	okTime := g.Wall().Median/d.Wall().Median >= s.target && g.CPU().Median/d.CPU().Median >= s.target
	okMem := d.RSS().Median <= 2*g.RSS().Median
	fmt.Printf("target git am/dome >= %.0fx in wall and CPU time: %s; peak RSS within 2x of git am's: %.2fx %s\n",
		s.target, met(okTime), d.RSS().Median/g.RSS().Median, met(okMem))
	return okTime && okMem
}

func met(ok bool) string {
	if ok {
		return "met"
	}
	return "MISSED"
}

// fresh makes dst a copy of the base repository: bare for dome, a worktree
// on the base commit for git am.
func fresh(base, dst string, bare bool) error {
	if err := os.RemoveAll(dst); err != nil {
		return err
	}
	args := []string{"clone", "-q", "--no-local", base, dst}
	if bare {
		args = []string{"clone", "-q", "--bare", "--no-local", base, dst}
	}
	cmd := exec.Command("git", args...)
	cmd.Env = gitEnv(filepath.Dir(dst))
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return nil
}

// ordinary builds the 2,000-file repository and its 500 single-file commits.
func ordinary(w string) series {
	dir := filepath.Join(w, "ordinary-src")
	git("", nil, "init", "-q", "-b", "main", dir)
	rng := rand.New(rand.NewPCG(1, 2))
	files := make([][]string, 0, 2000)
	for d := 0; d < 40; d++ {
		must(os.MkdirAll(filepath.Join(dir, fmt.Sprintf("pkg%02d", d)), 0o755))
		for f := 0; f < 50; f++ {
			lines := []string{fmt.Sprintf("package pkg%02d", d), ""}
			for i := 0; i < 40; i++ {
				lines = append(lines, fmt.Sprintf("// line %d of file %d in package %d: %d", i, f, d, rng.Uint32()), fmt.Sprintf("func F%d_%d() int { return %d }", f, i, i))
			}
			files = append(files, lines)
			write(filepath.Join(dir, path(d, f)), lines)
		}
	}
	git(dir, nil, "add", "-A")
	git(dir, nil, "commit", "-q", "-m", "base")
	base := git(dir, nil, "rev-parse", "HEAD")
	for c := 0; c < 500; c++ {
		d, f := rng.IntN(40), rng.IntN(50)
		lines := files[d*50+f]
		i := 2 + rng.IntN(len(lines)-3)
		lines[i] += fmt.Sprintf(" // edit %d", c)
		if rng.IntN(10) < 3 {
			lines = append(lines[:i+1], append([]string{fmt.Sprintf("// added in commit %d", c)}, lines[i+1:]...)...)
		}
		files[d*50+f] = lines
		write(filepath.Join(dir, path(d, f)), lines)
		git(dir, nil, "commit", "-q", "-am", fmt.Sprintf("pkg%02d: edit file%02d (%d)\n\nBody of commit %d.", d, f, c, c))
	}
	pdir := filepath.Join(w, "ordinary-patches")
	git(dir, nil, "format-patch", "-q", "-M", "-o", pdir, base+"..HEAD")
	return series{name: "ordinary series (2,000 files, 500 single-file commits)", base: baseRepo(w, "ordinary", dir, base),
		commit: base, patches: patchFiles(pdir), want: git(dir, nil, "rev-parse", "HEAD^{tree}"), target: 5}
}

func path(d, f int) string { return fmt.Sprintf("pkg%02d/file%02d.go", d, f) }

func write(p string, lines []string) {
	must(os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o644))
}

// simulated exports the simulator's history.
func simulated(w string) series {
	src := filepath.Join(w, "sim-src.git")
	git("", nil, "init", "-q", "--bare", src)
	var stream bytes.Buffer
	must(patchsim.Generate(&stream, 11, 520))
	git(src, stream.Bytes(), "fast-import", "--quiet")
	pdir := filepath.Join(w, "sim-patches")
	root := git(src, nil, "rev-list", "--max-parents=0", "main")
	git(src, nil, "format-patch", "-q", "-M", "-o", pdir, root+"..main")
	ps := patchFiles(pdir)
	ps = ps[len(ps)-500:]
	first, err := os.ReadFile(ps[0])
	must(err)
	base := git(src, nil, "rev-parse", string(first[5:45])+"^")
	return series{name: "simulator series (renames, deletions, binary files)", base: baseRepo(w, "sim", src, base),
		commit: base, patches: ps, want: git(src, nil, "rev-parse", "main^{tree}"), target: 5}
}

// replay makes a series of the last commits of repo's first-parent chain.
func replay(w, repo string, max int) (series, error) {
	head, err := gitErr(repo, nil, "rev-parse", "HEAD")
	if err != nil {
		return series{}, err
	}
	chain := strings.Fields(git(repo, nil, "rev-list", "--first-parent", "-n", fmt.Sprint(max+1), head))
	// From the newest back: stop at a commit whose diff cannot be made (a
	// root, or objects missing from a partial clone).
	var commits []string
	for _, c := range chain {
		if _, err := gitErr(repo, nil, "diff-tree", "-r", "-p", "--binary", "-M", c+"^1", c); err != nil {
			break
		}
		commits = append(commits, c)
		if len(commits) == max {
			break
		}
	}
	if len(commits) < 10 {
		return series{}, fmt.Errorf("%s: only %d commits can be replayed", repo, len(commits))
	}
	for i, j := 0, len(commits)-1; i < j; i, j = i+1, j-1 { // oldest first
		commits[i], commits[j] = commits[j], commits[i]
	}
	pdir := filepath.Join(w, "real-patches")
	must(os.MkdirAll(pdir, 0o755))
	var ps []string
	for i, c := range commits {
		p := filepath.Join(pdir, fmt.Sprintf("%04d.patch", i+1))
		cmd := exec.Command("git", "log", "-1", "--first-parent", "-m", "-p", "--binary", "-M", "--pretty=email", "--stat", c)
		cmd.Dir, cmd.Env = repo, gitEnv(repo)
		out, err := cmd.Output() // as git writes it: a trailing blank context line is part of the patch
		must(err)
		must(os.WriteFile(p, out, 0o644))
		ps = append(ps, p)
	}
	base := git(repo, nil, "rev-parse", commits[0]+"^1")
	// A repository of the base tree alone, with a commit of its own (the
	// history before it may be incomplete).
	dir := filepath.Join(w, "real-base-src.git")
	git("", nil, "init", "-q", "--bare", "-b", "main", dir)
	tree := git(repo, nil, "rev-parse", base+"^{tree}")
	objs := git(repo, nil, "rev-list", "--objects", tree)
	git(repo, []byte(objs+"\n"), "pack-objects", "-q", filepath.Join(dir, "objects", "pack", "pack"))
	c := git(dir, nil, "commit-tree", tree, "-m", "base")
	git(dir, nil, "update-ref", "refs/heads/main", c)
	name := fmt.Sprintf("real history (%s: the last %d first-parent commits)", filepath.Base(strings.TrimSuffix(repo, "/.git")), len(ps))
	return series{name: name, base: dir, commit: c, patches: ps, want: git(repo, nil, "rev-parse", commits[len(commits)-1]+"^{tree}"), target: 3}, nil
}

// baseRepo is a bare repository holding the history up to base only.
func baseRepo(w, name, src, base string) string {
	dir := filepath.Join(w, name+"-base.git")
	git("", nil, "init", "-q", "--bare", "-b", "main", dir)
	git(src, nil, "push", "-q", dir, base+":refs/heads/main")
	return dir
}

func patchFiles(dir string) []string {
	ents, err := os.ReadDir(dir)
	must(err)
	var out []string
	for _, e := range ents {
		if fi, err := e.Info(); err == nil && fi.Size() > 0 && strings.HasSuffix(e.Name(), ".patch") { // format-patch writes empty files for no-op commits
			out = append(out, filepath.Join(dir, e.Name()))
		}
	}
	sort.Strings(out)
	return out
}

// applyLoop runs git apply --index && git commit per patch, once.
func applyLoop(s series, dir string) benchrun.Series {
	wt := filepath.Join(dir, "loop")
	must(fresh(s.base, wt, false))
	job := benchrun.Func("loop", func() error {
		for i, p := range s.patches {
			if _, err := gitErr(wt, nil, "apply", "--index", p); err != nil {
				return err
			}
			if _, err := gitErr(wt, nil, "commit", "-q", "--allow-empty", "-m", fmt.Sprintf("patch %d", i+1)); err != nil {
				return err
			}
		}
		return nil
	})
	r, err := benchrun.Interleave(1, 0, job)
	must(err)
	check(s.name+": git apply loop", git(wt, nil, "rev-parse", "HEAD^{tree}"), s.want)
	return r["loop"]
}

// baseline applies the series with pkg/patch in this process, in memory.
func baseline(s series) benchrun.Series {
	repo, err := gitstore.Open(s.base)
	must(err)
	defer repo.Close()
	h, err := repo.ResolveCommit(s.commit)
	must(err)
	t, err := repo.CommitTree(h)
	must(err)
	var texts [][]byte
	for _, p := range s.patches {
		b, err := os.ReadFile(p)
		must(err)
		texts = append(texts, b)
	}
	var cur patch.OID
	job := benchrun.Func("baseline", func() error {
		st := patch.NewMemStore(patch.NewRepoStore(repo))
		cur = patch.OID(t)
		for i, b := range texts {
			ps, err := patch.Parse(b, patch.ParseOptions{Strip: 1})
			if err != nil {
				return fmt.Errorf("%s: %v", s.patches[i], err)
			}
			res, err := patch.Apply(st, cur, ps[0], patch.Options{})
			if err != nil {
				return fmt.Errorf("%s: %v", s.patches[i], err)
			}
			cur = res.Tree
		}
		return nil
	})
	r, err := benchrun.Interleave(3, 1, job)
	must(err)
	check("baseline", cur.String(), s.want)
	return r["baseline"]
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

func gitErr(dir string, stdin []byte, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = gitEnv(dir)
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		a := strings.Join(cmd.Args, " ")
		return "", fmt.Errorf("%s: %v\n%s", a[:min(200, len(a))], err, errb.String())
	}
	return strings.TrimSpace(out.String()), nil
}

func git(dir string, stdin []byte, args ...string) string {
	out, err := gitErr(dir, stdin, args...)
	must(err)
	return out
}

func abs(p string) string {
	a, err := filepath.Abs(p)
	must(err)
	return a
}

func must(err error) {
	if err != nil {
		fail(err.Error())
	}
}

func fail(msg string) {
	fmt.Fprintln(os.Stderr, "bench/patch:", msg)
	os.Exit(1)
}
