package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dome-registry/dome/internal/gittest"
	"github.com/dome-registry/dome/pkg/canonical"
	"github.com/dome-registry/dome/pkg/gitstore"
	"github.com/dome-registry/dome/pkg/ledger"
	"github.com/dome-registry/dome/pkg/orchestrate"
	"github.com/dome-registry/dome/pkg/stack"
)

// crashQueue: docs and tests, a dependent changelog, two conflicting
// version bumps (one is reopened onto the next wave's base).
const crashQueue = `{"schema_version": "dome.work.queue/v1", "tasks": [
 {"node_id": "docs", "containers": [{"container_ref": "sha256:%[1]s", "command": ["sh", "/run/dome/tools/docs.sh"]}], "required_capabilities": ["repo.read", "repo.propose"], "required_outputs": [{"kind": "patch_proposal"}]},
 {"node_id": "tests", "containers": [{"container_ref": "sha256:%[1]s", "command": ["sh", "/run/dome/tools/tests.sh"]}], "required_capabilities": ["repo.read", "repo.propose"], "required_outputs": [{"kind": "patch_proposal"}]},
 {"node_id": "bump-a", "containers": [{"container_ref": "sha256:%[1]s", "command": ["sh", "/run/dome/tools/bump-a.sh"]}], "required_capabilities": ["repo.read", "repo.propose"], "required_outputs": [{"kind": "patch_proposal"}]},
 {"node_id": "bump-b", "containers": [{"container_ref": "sha256:%[1]s", "command": ["sh", "/run/dome/tools/bump-b.sh"]}], "required_capabilities": ["repo.read", "repo.propose"], "required_outputs": [{"kind": "patch_proposal"}]},
 {"node_id": "changelog", "dependencies": ["docs", "tests"], "containers": [{"container_ref": "sha256:%[1]s", "command": ["sh", "/run/dome/tools/changelog.sh"]}], "required_capabilities": ["repo.read", "repo.propose"], "required_outputs": [{"kind": "patch_proposal"}]}
]}`

var crashTools = map[string]string{
	"docs.sh":      "sleep 0.$(($$ % 3))\nprintf '# greet\\n\\nA tiny module that greets.\\n' > README.md\nexec dome worker submit --intent docs\n",
	"tests.sh":     "mkdir -p greet\nprintf 'package greet\\n' > greet/greet_test.go\nexec dome worker submit --intent tests\n",
	"bump-a.sh":    "echo 0.2.0 > VERSION\nexec dome worker submit --intent chore\n",
	"bump-b.sh":    "sleep 0.$(($$ % 2))\necho 0.3.0 > VERSION\nexec dome worker submit --intent chore\n",
	"changelog.sh": "grep -q greets README.md || exit 7\ntest -f greet/greet_test.go || exit 8\nprintf 'v0.1.0\\n' > CHANGELOG.md\nexec dome worker submit --intent docs\n",
}

const crashRunPolicy = `{"schema_version": "dome.run_policy/v1", "scheduling": {"max_concurrency": 3, "max_attempts": 2, "strategy": "continue_on_error"},
 "scarce": {}, "risk": {}, "sandbox": {"max_wall_seconds": 60}}`

// domeCmd runs this test binary as dome (testscript's TestMain runs dome
// when its argv[0] is "dome").
func domeCmd(t *testing.T, dir string, args ...string) *exec.Cmd {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := &exec.Cmd{Path: exe, Args: append([]string{"dome"}, args...), Dir: dir, Env: append(gittest.Env(), "HOME="+dir)}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	return cmd
}

// TestRun_KilledAtRandomPointsThenResumed kills the coordinator (kill -9)
// at random points of runs of the same queue, resumes each, and checks the
// runs against one that ran through: the same final tree, no layer applied
// twice, no acknowledged result lost, every ledger replaying.
// DOME_CRASH_RUNS sets how many runs (default 10, two kills each).
func TestRun_KilledAtRandomPointsThenResumed(t *testing.T) {
	gittest.Need(t)
	root, _ := filepath.Abs("../..")
	repo := gittest.New(t)
	files := map[string]string{"README.md": "# greet\n\nA tiny module.\n", "VERSION": "0.1.0\n", "policy/run_policy.json": crashRunPolicy}
	for _, top := range []string{"registry", "policy"} {
		filepath.Walk(filepath.Join(root, top), func(p string, fi os.FileInfo, err error) error {
			if err != nil || fi.IsDir() {
				return err
			}
			rel, _ := filepath.Rel(root, p)
			if _, set := files[rel]; !set {
				b, err := os.ReadFile(p)
				files[filepath.ToSlash(rel)] = string(b)
				return err
			}
			return nil
		})
	}
	files["policy/stack_policy.json"] = strings.Replace(string(must(os.ReadFile(filepath.Join(root, "policy/stack_policy.json")))),
		`"required_for_promotion": {"low": ["fast"], "medium": ["fast", "full"], "high": ["fast", "full"]}`,
		`"required_for_promotion": {"low": [], "medium": [], "high": []}`, 1)
	repo.Write(files)
	repo.Commit("module and registry")
	tools := t.TempDir()
	for k, v := range crashTools {
		os.WriteFile(filepath.Join(tools, k), []byte(v), 0o755)
	}
	queue := filepath.Join(t.TempDir(), "queue.json")
	os.WriteFile(queue, []byte(fmt.Sprintf(crashQueue, strings.Repeat("a", 64))), 0o644)
	start := func(run string) *exec.Cmd {
		return domeCmd(t, repo.Dir, "run", "start", queue, "--run", run, "--sandbox", "none", "--tools", tools, "--no-promote", "--json")
	}

	// The run that goes through.
	began := time.Now()
	out, err := start("ref").Output()
	if err != nil {
		t.Fatalf("reference run: %v\n%s", err, out)
	}
	took := time.Since(began)
	refTree := integrationTree(t, repo.Dir, "ref")

	runs := 10
	if v, err := strconv.Atoi(os.Getenv("DOME_CRASH_RUNS")); err == nil && v > 0 {
		runs = v
	}
	workParent := os.TempDir()
	if os.Geteuid() == 0 {
		workParent = "/tmp"
	}
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d, reference run %v", seed, took)
	rng := rand.New(rand.NewPCG(seed, 0))
	kills := 0
	for k := 1; k <= runs; k++ {
		run := fmt.Sprintf("crash-%d-%d", os.Getpid(), k) // also unique among test processes sharing /tmp
		acked := map[string]string{}                      // task -> result digest acknowledged before a kill
		for i := 0; i < 2; i++ {
			cmd := start(run)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			at := time.Duration(rng.Int64N(int64(took)))
			time.Sleep(at)
			syscall.Kill(cmd.Process.Pid, syscall.SIGKILL)
			cmd.Wait()
			kills++
			for task, d := range ackedResults(t, filepath.Join(repo.Dir, "ops", "runs", run)) {
				acked[task] = d
			}
		}
		cmd := start(run)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s: the resumed run: %v\n%s", run, err, out)
		}
		runDir := filepath.Join(repo.Dir, "ops", "runs", run)
		// Nothing left in the scratch parent by the killed coordinators.
		left, _ := filepath.Glob(filepath.Join(workParent, "dome-run-"+run+"-*"))
		checkouts, _ := filepath.Glob(filepath.Join(workParent, "dome-validate-"+run+"-*")) // validation checkouts go in the session's folder
		if left = append(left, checkouts...); len(left) > 0 {
			for _, d := range left {
				var in []string
				filepath.WalkDir(d, func(p string, e os.DirEntry, err error) error {
					if err == nil {
						fi, _ := e.Info()
						in = append(in, fmt.Sprintf("%s %v", p, fi.Mode()))
					}
					return nil
				})
				b, _ := os.ReadFile(filepath.Join(runDir, orchestrate.WorkDirFile))
				t.Errorf("%s: work folder left behind: %s (work_dir names %q), holding:\n%s", run, d, b, strings.Join(in, "\n"))
			}
		}
		// The same final tree.
		if got := integrationTree(t, repo.Dir, run); got != refTree {
			t.Errorf("%s: final tree %s, the run that went through made %s", run, got, refTree)
		}
		// No acknowledged result lost: every result acknowledged before a
		// kill is still there, the same bytes.
		now := ackedResults(t, runDir)
		for task, d := range acked {
			if now[task] != d {
				t.Errorf("%s: task %s was acknowledged with %s, now %q", run, task, d, now[task])
			}
		}
		// No layer applied twice.
		st, _, err := stack.LoadState(stack.NewLayout(filepath.Join(repo.Dir, "ops", "runs"), run))
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]string{}
		for _, l := range st.Applied {
			node := l.ProposalID[:strings.LastIndexByte(l.ProposalID, '.')]
			if prev, dup := seen[node]; dup {
				t.Errorf("%s: node %s applied twice (%s and %s)", run, node, prev, l.ProposalID)
			}
			seen[node] = l.ProposalID
		}
		if len(seen) != 5 {
			t.Errorf("%s: %d nodes applied, want 5: %v", run, len(seen), seen)
		}
		// The ledger replays, decisions and states byte for byte.
		rr, err := orchestrate.Replay(stack.NewLayout(filepath.Join(repo.Dir, "ops", "runs"), run))
		if err != nil {
			t.Fatalf("%s: %v", run, err)
		}
		if !rr.Matches || !rr.Stack.Equal || rr.Unrecorded != 0 || rr.State.Stopped == nil || rr.State.Stopped.Reason != orchestrate.StopConstraintsMet {
			t.Errorf("%s: replay %+v (stopped %+v)", run, rr, rr.State.Stopped)
		}
	}
	t.Logf("%d runs, %d kills", runs, kills)
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// integrationTree is the tree of a run's integration head.
func integrationTree(t *testing.T, dir, run string) string {
	t.Helper()
	repo, err := gitstore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer repo.Close()
	h, err := repo.Ref(stack.IntegrationRef(run))
	if err != nil {
		t.Fatal(err)
	}
	tree, err := repo.CommitTree(h)
	if err != nil {
		t.Fatal(err)
	}
	return tree.String()
}

// ackedResults maps each acknowledged task of a run to the digest of its
// task.result.json, checking the file against the ledger.
func ackedResults(t *testing.T, runDir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	evs, err := ledger.Read(runDir, filepath.Base(runDir))
	if err != nil {
		return out // not started yet
	}
	for _, e := range evs {
		if e.Topic != stack.TopicTaskAck {
			continue
		}
		var p stack.TaskPayload
		var d orchestrate.AckData
		json.Unmarshal(e.Payload, &p)
		json.Unmarshal(p.Data, &d)
		b, err := os.ReadFile(filepath.Join(runDir, d.Result))
		if err != nil {
			t.Errorf("%s: acknowledged result %s: %v", runDir, d.Result, err)
			continue
		}
		if canonical.Digest(b) != d.Digest {
			t.Errorf("%s: %s does not match its acknowledgement", runDir, d.Result)
		}
		out[p.TaskID] = d.Digest
	}
	keys := make([]string, 0, len(out))
	for k := range out {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return out
}
