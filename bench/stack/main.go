// Command stack benchmarks dome's stacking coordinator (issue 8): 1,000 small
// non-overlapping patches (each a git diff touching a different file) stacked
// onto a repository of 10,000 files, one checkpoint commit per patch.
//
//	dome:  "dome stack apply" after init, propose, submit and plan (only
//	       apply is timed): per layer it applies the proposal, writes the
//	       checkpoint commit, moves the integration ref (compare-and-swap)
//	       and appends an ApplyResult event to the run's ledger
//	git:   a clone at the same base, "git apply --index P" and
//	       "git commit" per patch, each layer timed on its own
//	floor: pkg/patch.Apply onto the object store and gitstore.WriteCommit
//	       per patch, in this process (no ref, no ledger, no process start)
//
// The final trees of the three must be equal. It prints
// "workload | dome | peer | ratio | floor" rows with per-layer times.
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/dome-registry/dome/pkg/gitstore"
	"github.com/dome-registry/dome/pkg/patch"
	"github.com/dome-registry/dome/pkg/stack"
)

func main() {
	dome := flag.String("dome", os.Getenv("DOME_BIN"), "dome binary")
	work := flag.String("work", "bench/.work/stack", "work directory")
	files := flag.Int("files", 10000, "files in the repository")
	dirs := flag.Int("dirs", 100, "directories holding them")
	n := flag.Int("patches", 1000, "patches (proposals) to stack")
	only := flag.String("only", "", "run only one side: dome, git or floor")
	flag.Parse()
	if *n > *files {
		fail("more patches than files")
	}
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
	fmt.Printf("repository: %d files in %d directories, base %s; %d patches, each one line of a different file\n",
		l.files, l.dirs, base[:12], len(patches))

	var floorT, gitT, domeT time.Duration
	var gitLayers []time.Duration
	var want string
	if *only == "" || *only == "floor" {
		floorT, want = floor(clone(w, src, "floor.git", true), base, patches)
	}
	if *only == "" || *only == "git" {
		gitT, gitLayers = gitLoop(clone(w, src, "git", false), base, patches, want)
		if want == "" {
			want = tree(filepath.Join(w, "git"), "HEAD")
		}
	}
	if *only == "" || *only == "dome" {
		if *dome == "" {
			fail("set -dome or DOME_BIN")
		}
		d, err := filepath.Abs(*dome)
		must(err)
		var ok bool
		domeT, ok = domeStack(d, clone(w, src, "dome.git", true), w, base, patches, want)
		if !ok {
			domeT = 0
		}
	}

	per := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 / float64(len(patches)) }
	row := func(d time.Duration) string {
		if d == 0 {
			return "-"
		}
		return fmt.Sprintf("%.2f ms", per(d))
	}
	ratio := "-"
	if domeT > 0 && gitT > 0 {
		ratio = fmt.Sprintf("%.1fx", float64(gitT)/float64(domeT))
	}
	fmt.Printf("%-58s | %10s | %10s | %8s | %10s\n", "workload (time per applied layer)", "dome", "git CLI", "git/dome", "floor")
	fmt.Printf("%-58s | %10s | %10s | %8s | %10s\n",
		fmt.Sprintf("%d proposals onto %d files, checkpoint commit each", len(patches), l.files), row(domeT), row(gitT), ratio, row(floorT))
	if len(gitLayers) > 0 {
		med := pct(gitLayers, 50)
		fmt.Printf("git CLI layers: median %s, p95 %s (git apply --index + git commit)", msf(med), msf(pct(gitLayers, 95)))
		if domeT > 0 {
			fmt.Printf("; git median / dome mean: %.1fx", float64(med)*float64(len(patches))/float64(domeT))
		}
		fmt.Println()
	}
	fmt.Printf("totals: dome apply %s, git loop %s, floor %s; final trees equal %s\n", msf(domeT), msf(gitT), msf(floorT), short(want))
	fmt.Println("floor: pkg/patch.Apply + gitstore.WriteCommit one layer after the other in one goroutine; dome writes a layer's objects")
	fmt.Println("while the previous layer's ref move, ApplyResult and event are made durable, so it can come in under it")
	fmt.Println("target: dome at least 5x faster per layer than the git CLI loop (git/dome >= 5x)")
	if domeT > 0 && gitT > 0 && float64(gitT)/float64(domeT) < 5 {
		fmt.Println("TARGET MISSED")
	}
}

// floor applies every patch with pkg/patch onto the object store of repo and
// writes one commit per patch: the work dome cannot avoid.
func floor(repoDir, base string, patches []string) (time.Duration, string) {
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
	d := timeIt(func() {
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
	})
	return d, cur.String()
}

// gitLoop is the peer: git apply --index and git commit per patch in a
// worktree at base.
func gitLoop(wt, base string, patches []string, want string) (time.Duration, []time.Duration) {
	git(wt, nil, "checkout", "-q", "-b", "stack", base)
	layers := make([]time.Duration, len(patches))
	var total time.Duration
	for i, p := range patches {
		layers[i] = timeIt(func() {
			git(wt, nil, "apply", "--index", p)
			git(wt, nil, "commit", "-q", "-m", fmt.Sprintf("layer %d", i+1))
		})
		total += layers[i]
	}
	if want != "" {
		check("git loop", tree(wt, "HEAD"), want)
	}
	return total, layers
}

// domeStack runs the coordinator: init, propose (in this process, as
// workers would, with pkg/stack.Propose), submit and plan untimed, then
// "dome stack apply" timed. It returns false (and says why) when this dome
// has no "stack apply" yet.
func domeStack(dome, repoDir, work, base string, patches []string, want string) (time.Duration, bool) {
	if err := exec.Command(dome, "stack", "apply", "--help").Run(); err != nil {
		fmt.Println("dome: skipped (this dome has no \"stack apply\")")
		return 0, false
	}
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
	prep := timeIt(func() {
		stackCmd("submit", props...)
		stackCmd("plan")
	})
	fmt.Printf("dome: %d proposals submitted and planned in %s (not timed below)\n", len(props), msf(prep))
	var out string
	d := timeIt(func() { out = stackCmd("apply", "--json") })
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
	return d, true
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

func timeIt(f func()) time.Duration {
	start := time.Now()
	f()
	return time.Since(start)
}

func pct(ds []time.Duration, p int) time.Duration {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[(len(s)-1)*p/100]
}

func msf(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d.Microseconds())/1000) }

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
