// Command stack benchmarks dome's stacking coordinator: small
// non-overlapping patches (each a git diff touching one line of a different
// file) stacked onto a repository of 10,000 files, one checkpoint commit per
// patch.
//
//	dome:     "dome stack apply" after init, propose, submit and plan (only
//	          apply is timed): per layer it applies the proposal, writes the
//	          checkpoint commit (a batch of layers' objects as one pack,
//	          durable before any of their refs moves), moves the integration
//	          ref (compare-and-swap) and writes an ApplyResult and an event,
//	          each durably
//	git:      a clone at the same base, "git apply --index P" and
//	          "git commit" per patch
//	baseline: pkg/patch.Apply onto the object store and
//	          gitstore.WriteCommit per patch, in this process (no ref, no
//	          ledger, nothing made durable): dome's engine without its
//	          bookkeeping, not a floor of the task
//
// The three final trees must be equal. It runs -rounds rounds of -patches
// layers each, dome and git alternating which goes first, from fresh
// repositories, and prints per-layer medians (with ranges over the rounds) of
// wall and CPU time, and git / dome.
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/dome-registry/dome/internal/benchrun"
	"github.com/dome-registry/dome/pkg/gitstore"
	"github.com/dome-registry/dome/pkg/patch"
	"github.com/dome-registry/dome/pkg/stack"
)

func main() {
	dome := flag.String("dome", os.Getenv("DOME_BIN"), "dome binary")
	work := flag.String("work", "bench/.work/stack", "work directory")
	files := flag.Int("files", 10000, "files in the repository")
	dirs := flag.Int("dirs", 100, "directories holding them")
	n := flag.Int("patches", 300, "patches (proposals) stacked per round")
	rounds := flag.Int("rounds", 3, "rounds (fresh repositories each)")
	prepare := flag.Bool("prepare", false, "only prepare a planned run under -work/prepared and print the dome stack apply command (to profile it)")
	flag.Parse()
	if *n > *files {
		fail("more patches than files")
	}
	if *dome == "" {
		fail("set -dome or DOME_BIN")
	}
	d, err := filepath.Abs(*dome)
	must(err)
	l := layout{files: *files, dirs: *dirs, patches: *n}
	must(os.RemoveAll(*work))
	must(os.MkdirAll(*work, 0o755))
	w, err := filepath.Abs(*work)
	must(err)

	src := filepath.Join(w, "src.git")
	git(w, nil, "init", "-q", "--bare", "-b", "main", src)
	git(src, l.fastImport(), "fast-import", "--quiet")
	base := strings.TrimSpace(git(src, nil, "rev-parse", "main"))
	patches, err := l.writePatches(filepath.Join(w, "patches"))
	must(err)
	fmt.Printf("repository: %d files in %d directories, base %s; %d patches per round, each one line of a different file; load average at start: %s\n",
		l.files, l.dirs, base[:12], len(patches), benchrun.Load())

	bl, want := baseline(clone(w, src, "baseline.git", true), base, patches)
	if *prepare {
		pw := filepath.Join(w, "prepared")
		must(os.MkdirAll(pw, 0o755))
		domeStack(d, clone(pw, src, "dome.git", true), pw, base, patches, want)
		fmt.Printf("cd %s && SOURCE_DATE_EPOCH=1767322800 %s stack apply --repo %s --ops %s --run bench\n", pw, d, filepath.Join(pw, "dome.git"), filepath.Join(pw, "ops"))
		return
	}
	var domeS, gitS benchrun.Series
	for r := 0; r < *rounds; r++ {
		rw := filepath.Join(w, fmt.Sprintf("round%d", r))
		must(os.MkdirAll(rw, 0o755))
		domeRun := domeStack(d, clone(rw, src, "dome.git", true), rw, base, patches, want)
		g := clone(rw, src, "git", false)
		if r%2 == 0 {
			domeS = append(domeS, domeRun())
			gitS = append(gitS, gitLoop(g, base, patches, want))
		} else {
			gitS = append(gitS, gitLoop(g, base, patches, want))
			domeS = append(domeS, domeRun())
		}
	}
	per := func(s benchrun.Series) benchrun.Series {
		out := make(benchrun.Series, len(s))
		for i, x := range s {
			out[i] = benchrun.Sample{Wall: x.Wall / time.Duration(len(patches)), CPU: x.CPU / time.Duration(len(patches))}
		}
		return out
	}
	dl, gl, bll := per(domeS), per(gitS), per(bl)
	var t benchrun.Table
	t.Row("workload (per applied layer)", "dome", "git CLI", "git/dome", "baseline: in-process apply + commit")
	t.Row(fmt.Sprintf("%d proposals onto %d files: wall", len(patches), l.files), benchrun.Ms(dl.Wall()), benchrun.Ms(gl.Wall()), benchrun.Ratio(gl.Wall(), dl.Wall()), benchrun.Ms(bll.Wall()))
	t.Row(fmt.Sprintf("%d proposals onto %d files: CPU", len(patches), l.files), benchrun.Ms(dl.CPU()), benchrun.Ms(gl.CPU()), benchrun.Ratio(gl.CPU(), dl.CPU()), benchrun.Ms(bll.CPU()))
	t.Print(os.Stdout)
	fmt.Printf("(medians over %d rounds, ranges across rounds; final trees equal %s; load average at the end: %s)\n", *rounds, short(want), benchrun.Load())
	ok := gl.Wall().Median/dl.Wall().Median >= 15
	fmt.Printf("target: dome at least 15x faster per layer than the git CLI (git/dome >= 15x, wall): %s\n", map[bool]string{true: "met", false: "MISSED"}[ok])
	if !ok {
		fmt.Println("TARGET MISSED")
	}
}

// baseline applies every patch with pkg/patch onto the object store of repo
// and writes one commit per patch, in this process.
func baseline(repoDir, base string, patches []string) (benchrun.Series, string) {
	repo, err := gitstore.Open(repoDir)
	must(err)
	defer repo.Close()
	h, err := repo.ResolveCommit(base)
	must(err)
	t, err := repo.CommitTree(h)
	must(err)
	texts := make([][]byte, len(patches))
	for i, p := range patches {
		texts[i], err = os.ReadFile(p)
		must(err)
	}
	st := patch.NewRepoStore(repo)
	sig := gitstore.Signature{Name: "bench", Email: "bench@dome.invalid", When: time.Unix(1767322800, 0).UTC()}
	cur, parent := patch.OID(t), h
	res, err := benchrun.Interleave(1, 0, benchrun.Func("baseline", func() error {
		for i, b := range texts {
			ps, err := patch.Parse(b, patch.ParseOptions{Strip: 1})
			if err != nil {
				fail(fmt.Sprintf("%s: %v", patches[i], err))
			}
			res, err := patch.Apply(st, cur, ps[0], patch.Options{})
			if err != nil {
				fail(fmt.Sprintf("%s: %v", patches[i], err))
			}
			c, err := repo.WriteCommit(gitstore.CommitSpec{Tree: res.Tree, Parents: []gitstore.Hash{parent}, Author: sig, Committer: sig,
				Message: fmt.Sprintf("layer %d\n", i+1)})
			must(err)
			cur, parent = res.Tree, c
		}
		return nil
	}))
	must(err)
	return res["baseline"], cur.String()
}

// gitLoop is the peer: git apply --index and git commit per patch in a
// worktree at base; its wall time and the CPU time of all its processes.
func gitLoop(wt, base string, patches []string, want string) benchrun.Sample {
	git(wt, nil, "checkout", "-q", "-b", "stack", base)
	var total benchrun.Sample
	env := gitEnv(wt)
	for i, p := range patches {
		for _, args := range [][]string{{"apply", "--index", p}, {"commit", "-q", "-m", fmt.Sprintf("layer %d", i+1)}} {
			s, err := benchrun.Exec(benchrun.Cmd{Argv: append([]string{"git"}, args...), Dir: wt, Env: env, NoMemory: true})
			must(err)
			total.Wall += s.Wall
			total.CPU += s.CPU
		}
	}
	check("git loop", tree(wt, "HEAD"), want)
	return total
}

// domeStack runs the coordinator: init, propose (in this process, as
// workers would, with pkg/stack.Propose), submit and plan untimed, then
// "dome stack apply" timed; the returned function runs the apply and
// checks its result.
func domeStack(dome, repoDir, work, base string, patches []string, want string) func() benchrun.Sample {
	ops := filepath.Join(work, "ops")
	common := []string{"--repo", repoDir, "--ops", ops, "--run", "bench"}
	stackCmd := func(verb string, args ...string) string {
		return run(work, dome, nil, append(append([]string{"stack", verb}, common...), args...)...)
	}
	stackCmd("init", "--base", base)
	repo, err := gitstore.Open(repoDir)
	must(err)
	pdir := filepath.Join(work, "proposals")
	must(os.MkdirAll(pdir, 0o755))
	var props []string
	at := time.Unix(1767322800, 0).UTC()
	for i, p := range patches {
		diff, err := os.ReadFile(p)
		must(err)
		res, err := stack.Propose(repo, stack.ProposeOptions{RunID: "bench", WaveID: stack.WaveIDFor(1), BaseRef: base, Diff: diff, DiffSource: p,
			ProposalID: fmt.Sprintf("p%04d", i), Worker: stack.WorkerRunMeta{WorkerID: fmt.Sprintf("w%04d", i)}, CreatedAt: at, Producer: "bench/stack"})
		must(err)
		out := filepath.Join(pdir, fmt.Sprintf("p%04d.json", i))
		must(os.WriteFile(out, res.Doc, 0o644))
		props = append(props, out)
	}
	repo.Close()
	stackCmd("submit", props...)
	stackCmd("plan")
	return func() benchrun.Sample {
		var buf bytes.Buffer
		smp, err := benchrun.Exec(benchrun.Cmd{Argv: append([]string{dome, "stack", "apply"}, append(common, "--json")...), Dir: work,
			Env: append(gitEnv(work), "SOURCE_DATE_EPOCH=1767322800"), Stdout: &buf, NoMemory: true})
		must(err)
		checkDome(dome, repoDir, work, base, patches, want, buf.String(), stackCmd)
		return smp
	}
}

func checkDome(dome, repoDir, work, base string, patches []string, want, out string, stackCmd func(string, ...string) string) {
	var rep struct {
		Applied  []json.RawMessage `json:"applied"`
		Rejected []json.RawMessage `json:"rejected"`
		Tree     string            `json:"tree"`
	}
	must(json.Unmarshal([]byte(out), &rep))
	if len(rep.Applied) != len(patches) || len(rep.Rejected) != 0 {
		fail(fmt.Sprintf("dome applied %d and rejected %d of %d", len(rep.Applied), len(rep.Rejected), len(patches)))
	}
	if want != "" {
		check("dome", rep.Tree, want)
	}
	check("dome ref", tree(repoDir, stack.IntegrationRef("bench")), rep.Tree)
	if c := strings.TrimSpace(git(repoDir, nil, "rev-list", "--count", base+".."+stack.IntegrationRef("bench"))); c != fmt.Sprint(len(patches)) {
		fail("dome made " + c + " checkpoint commits")
	}
	stackCmd("replay")
}

func tree(dir, rev string) string {
	return strings.TrimSpace(git(dir, nil, "rev-parse", rev+"^{tree}"))
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
		fail(fmt.Sprintf("%s: final tree %s, expected %s", who, got, want))
	}
}

func gitEnv(dir string) []string {
	return append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "HOME="+dir,
		"GIT_AUTHOR_NAME=bench", "GIT_AUTHOR_EMAIL=bench@dome.invalid",
		"GIT_COMMITTER_NAME=bench", "GIT_COMMITTER_EMAIL=bench@dome.invalid", "LC_ALL=C")
}

func git(dir string, stdin []byte, args ...string) string {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = gitEnv(dir)
	return exe(cmd, stdin)
}

func run(dir, bin string, stdin []byte, args ...string) string {
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Env = append(gitEnv(dir), "SOURCE_DATE_EPOCH=1767322800")
	return exe(cmd, stdin)
}

func exe(cmd *exec.Cmd, stdin []byte) string {
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		line := strings.Join(cmd.Args, " ")
		fail(fmt.Sprintf("%s: %v\n%s", line[:min(200, len(line))], err, errb.String()))
	}
	return out.String()
}

func short(s string) string {
	if len(s) > 12 {
		return s[:12]
	}
	return s
}

func must(err error) {
	if err != nil {
		fail(err.Error())
	}
}

func fail(msg string) {
	fmt.Fprintln(os.Stderr, "bench/stack:", msg)
	os.Exit(1)
}
