package main

import (
	"bytes"
	"fmt"
	"io/fs"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dome-registry/dome/internal/gittest"
	"github.com/dome-registry/dome/pkg/gitstore"
	"github.com/dome-registry/dome/pkg/ledger"
	"github.com/dome-registry/dome/pkg/stack"
)

// TestStackApply_KillNine kills "dome stack apply" with SIGKILL at random
// moments (DOME_CRASH_RUNS times, default 20; DOME_CRASH_SEED fixes the
// moments) and checks after each kill that the ledger validates and folds,
// that the integration ref points at the base or at a checkpoint of the run
// whose first-parent history down to the base is all checkpoints, and that
// running apply again finishes with the final tree of an uninterrupted run
// and a state.json that replays byte for byte.
func TestStackApply_KillNine(t *testing.T) {
	gittest.Need(t)
	runs := 20
	if s := os.Getenv("DOME_CRASH_RUNS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			t.Fatalf("DOME_CRASH_RUNS=%q: want a positive number", s)
		}
		runs = n
	}
	seed := time.Now().UnixNano()
	if s := os.Getenv("DOME_CRASH_SEED"); s != "" {
		seed, _ = strconv.ParseInt(s, 10, 64)
	}
	t.Logf("DOME_CRASH_SEED=%d", seed)
	rng := rand.New(rand.NewSource(seed))

	work := t.TempDir()
	bin := filepath.Join(work, "dome")
	if out, err := exec.Command("go", "build", "-o", bin, "../dome-full").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	tmpl := filepath.Join(work, "template")
	base := crashTemplate(t, bin, tmpl)

	// an uninterrupted run: the tree every crashed run must end with
	ref := filepath.Join(work, "reference")
	copyDir(t, tmpl, ref)
	start := time.Now()
	domeRun(t, bin, ref, 0, "stack", "apply", "--run", "crash")
	full := time.Since(start)
	want := crashTree(t, ref)
	wantState, _, err := stack.LoadState(stack.NewLayout(filepath.Join(ref, "ops", "runs"), "crash"))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("uninterrupted apply: %s, %d layers, tree %s", full, len(wantState.Applied), want)

	hit := map[string]int{}
	for i := 0; i < runs; i++ {
		dir := filepath.Join(work, fmt.Sprintf("run%02d", i))
		copyDir(t, tmpl, dir)
		cmd := exec.Command(bin, "stack", "apply", "--run", "crash")
		cmd.Dir, cmd.Env = dir, crashEnv(dir)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		delay := time.Duration(rng.Int63n(int64(full) + 1))
		time.Sleep(delay)
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
		l := stack.NewLayout(filepath.Join(dir, "ops", "runs"), "crash")
		if _, err := ledger.Validate(l.Root, "crash"); err != nil {
			t.Fatalf("run %d (killed after %s): ledger: %v", i, delay, err)
		}
		st, _, err := stack.LoadState(l)
		if err != nil {
			t.Fatalf("run %d (killed after %s): state: %v", i, delay, err)
		}
		head := crashCheckRef(t, dir, base)
		switch {
		case head == base:
			hit["at base"]++
		case head == st.IntegrationHead:
			hit["ref = ledger head"]++
		default:
			hit["ref ahead of the ledger"]++
		}
		domeRun(t, bin, dir, 0, "stack", "apply", "--run", "crash")
		if got := crashTree(t, dir); got != want {
			t.Fatalf("run %d (killed after %s): final tree %s, want %s", i, delay, got, want)
		}
		crashCheckRef(t, dir, base)
		domeRun(t, bin, dir, 0, "stack", "replay", "--run", "crash")
		st, _, err = stack.LoadState(l)
		if err != nil {
			t.Fatal(err)
		}
		if len(st.Applied) != len(wantState.Applied) || len(st.Rejections) != len(wantState.Rejections) {
			t.Fatalf("run %d: %d layers and %d rejections, the uninterrupted run has %d and %d", i, len(st.Applied), len(st.Rejections),
				len(wantState.Applied), len(wantState.Rejections))
		}
		os.RemoveAll(dir)
	}
	t.Logf("kill points: %v", hit)
}

// crashTemplate builds a repository with a run ready to apply: 40
// proposals, two of which conflict with earlier ones.
func crashTemplate(t *testing.T, bin, dir string) string {
	t.Helper()
	git := func(args ...string) string {
		cmd := exec.Command("git", args...)
		cmd.Dir, cmd.Env = dir, gittest.Env()
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	os.MkdirAll(dir, 0o755)
	git("init", "-q", "-b", "main")
	content := func(i int, edit string) string {
		var b strings.Builder
		for n := 1; n <= 20; n++ {
			if n == 10 && edit != "" {
				b.WriteString(edit + "\n")
				continue
			}
			fmt.Fprintf(&b, "file %d line %d\n", i, n)
		}
		return b.String()
	}
	for i := 0; i < 40; i++ {
		p := filepath.Join(dir, "src", fmt.Sprintf("f%02d.txt", i))
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(content(i, "")), 0o644)
	}
	git("add", "-A")
	git("commit", "-q", "-m", "base")
	base := git("rev-parse", "HEAD")
	domeRun(t, bin, dir, 0, "stack", "init", "--run", "crash", "--base", base)
	var props []string
	for i := 0; i < 40; i++ {
		file, edit := i, fmt.Sprintf("edit %d", i)
		if i >= 38 { // conflicts with proposals 0 and 1
			file, edit = i-38, fmt.Sprintf("conflicting edit %d", i)
		}
		p := filepath.Join(dir, "src", fmt.Sprintf("f%02d.txt", file))
		os.WriteFile(p, []byte(content(file, edit)), 0o644)
		diff := git("diff", "--full-index") + "\n"
		git("checkout", "-q", "--", ".")
		df := filepath.Join(dir, fmt.Sprintf("p%02d.diff", i))
		os.WriteFile(df, []byte(diff), 0o644)
		out := filepath.Join(dir, fmt.Sprintf("p%02d.json", i))
		domeRun(t, bin, dir, 0, "stack", "propose", "--run", "crash", "--worker", fmt.Sprintf("w%02d", i), "--id", fmt.Sprintf("p%02d", i), "--out", out, df)
		props = append(props, out)
	}
	domeRun(t, bin, dir, 0, append([]string{"stack", "submit", "--run", "crash"}, props...)...)
	domeRun(t, bin, dir, 0, "stack", "plan", "--run", "crash")
	return base
}

func crashEnv(dir string) []string {
	return append(gittest.Env(), "HOME="+dir, "SOURCE_DATE_EPOCH=1767322800")
}

func domeRun(t *testing.T, bin, dir string, want int, args ...string) string {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir, cmd.Env = dir, crashEnv(dir)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if code := cmd.ProcessState.ExitCode(); code != want {
		t.Fatalf("dome %s: exit %d (%v), want %d\n%s%s", strings.Join(args, " "), code, err, want, out.String(), errb.String())
	}
	return out.String()
}

func crashTree(t *testing.T, dir string) string {
	t.Helper()
	repo, err := gitstore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer repo.Close()
	h, err := repo.Ref(stack.IntegrationRef("crash"))
	if err != nil {
		t.Fatal(err)
	}
	tree, err := repo.CommitTree(h)
	if err != nil {
		t.Fatal(err)
	}
	return tree.String()
}

// crashCheckRef checks that the integration ref is the base or a checkpoint
// of the run with only checkpoints down to the base, and returns it.
func crashCheckRef(t *testing.T, dir, base string) string {
	t.Helper()
	repo, err := gitstore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer repo.Close()
	h, err := repo.Ref(stack.IntegrationRef("crash"))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := gitstore.ParseHash(base)
	chain, err := stack.Chain(repo, b, h, 1000)
	if err != nil {
		t.Fatalf("the integration ref %s does not descend from the base: %v", h, err)
	}
	for _, c := range chain {
		if !c.IsDome || c.Checkpoint.RunID != "crash" {
			t.Fatalf("the integration ref's history holds %s, not a checkpoint of the run", c.Commit)
		}
	}
	return h.String()
}

func copyDir(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			return os.MkdirAll(target, info.Mode().Perm()|0o700)
		case info.Mode()&fs.ModeSymlink != 0:
			l, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(l, target)
		case d.Name() == ".lock": // the ledger's flock file: a fresh one
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, info.Mode().Perm())
	})
	if err != nil {
		t.Fatal(err)
	}
}
