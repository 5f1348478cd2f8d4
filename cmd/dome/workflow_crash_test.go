package main

import (
	"errors"
	"fmt"
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
	"github.com/dome-registry/dome/pkg/agent"
	"github.com/dome-registry/dome/pkg/ledger"
)

// crashModel is a stand-in model for the exec provider: it logs each call
// (agent/step) before it answers, a little later.
const crashModel = `#!/usr/bin/env bash
req=$(cat)
[[ $req =~ \"agent\":\"([a-z0-9-]+)\" ]] && agent=${BASH_REMATCH[1]}
[[ $req =~ \"step\":\"([a-z0-9_-]+)\" ]] && step=${BASH_REMATCH[1]}
echo "$agent/$step" >> "$MODEL_LOG"
sleep 0.05
printf '{"text":"%s/%s done"}\n' "$agent" "$step"
`

// stepOfCall maps a model call of the planner's run to the planner's step
// that made it (directly or through a delegate).
func stepOfCall(call string) string {
	switch {
	case call == "planner/outline":
		return "outline"
	case strings.HasPrefix(call, "writer/"):
		return "draft"
	case strings.HasPrefix(call, "reviewer/"):
		return "review"
	case call == "planner/summarize":
		return "summarize"
	}
	return "?" + call
}

// TestWorkflow_KillNineThenResume kills "dome workflow run" with SIGKILL at
// random moments (DOME_CRASH_RUNS times, default 10; DOME_CRASH_SEED fixes
// them), then resumes: after each kill the run's log validates, and the
// resume never calls the model for a step the log recorded as completed
// before the kill; every run ends succeeded with the output of an
// uninterrupted run.
func TestWorkflow_KillNineThenResume(t *testing.T) {
	gittest.Need(t)
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("the stand-in model is a bash script")
	}
	runs := 10
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
	model := filepath.Join(work, "model.sh")
	if err := os.WriteFile(model, []byte(crashModel), 0o755); err != nil {
		t.Fatal(err)
	}
	tmpl := filepath.Join(work, "template")
	copyDir(t, filepath.Join("..", "..", "registry"), filepath.Join(tmpl, "registry"))
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "-A"}, {"commit", "-q", "-m", "registry"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir, cmd.Env = tmpl, gittest.Env()
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	task := "plan a README change"
	env := func(dir string) []string { return append(crashEnv(dir), "MODEL_LOG="+filepath.Join(dir, "calls.log")) }
	dome := func(dir string, want int, args ...string) string {
		cmd := exec.Command(bin, args...)
		cmd.Dir, cmd.Env = dir, env(dir)
		out, err := cmd.CombinedOutput()
		if code := cmd.ProcessState.ExitCode(); code != want {
			t.Fatalf("dome %s: exit %d (%v), want %d\n%s", strings.Join(args, " "), code, err, want, out)
		}
		return string(out)
	}
	// An uninterrupted run: its length bounds the kill moments.
	ref := filepath.Join(work, "reference")
	copyDir(t, tmpl, ref)
	start := time.Now()
	dome(ref, 0, "workflow", "run", "planner", task, "--exec", model, "--run", "crash")
	full := time.Since(start)
	wantRec, err := agent.LoadRun(filepath.Join(ref, "ops", "runs", "crash"), "crash")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("uninterrupted run: %s", full)

	hit := map[int]int{} // completed steps at the kill -> times
	for i := 0; i < runs; i++ {
		dir := filepath.Join(work, fmt.Sprintf("run%02d", i))
		copyDir(t, tmpl, dir)
		cmd := exec.Command(bin, "workflow", "run", "planner", task, "--exec", model, "--run", "crash")
		cmd.Dir, cmd.Env = dir, env(dir)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		delay := time.Duration(rng.Int63n(int64(full) + 1))
		time.Sleep(delay)
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
		runDir := filepath.Join(dir, "ops", "runs", "crash")
		if _, err := ledger.Validate(runDir, "crash"); err != nil {
			t.Fatalf("run %d (killed after %s): ledger: %v", i, delay, err)
		}
		logData, _ := os.ReadFile(filepath.Join(dir, "calls.log"))
		before := len(strings.Split(strings.TrimSpace(string(logData)), "\n"))
		if len(logData) == 0 {
			before = 0
		}
		rec, err := agent.LoadRun(runDir, "crash")
		completed := map[string]bool{}
		switch {
		case errors.Is(err, agent.ErrNoRun):
			// Killed before the first event: the run starts again.
			os.RemoveAll(runDir)
			dome(dir, 0, "workflow", "run", "planner", task, "--exec", model, "--run", "crash")
		case err != nil:
			t.Fatalf("run %d (killed after %s): %v", i, delay, err)
		case rec.Finished != nil:
			// Killed after the end.
		default:
			for id, s := range rec.Steps {
				if s.Status == "succeeded" {
					completed[id] = true
				}
			}
			dome(dir, 0, "workflow", "resume", "--run", "crash")
		}
		hit[len(completed)]++
		logData, _ = os.ReadFile(filepath.Join(dir, "calls.log"))
		calls := strings.Split(strings.TrimSpace(string(logData)), "\n")
		for _, c := range calls[before:] {
			if completed[stepOfCall(c)] {
				t.Fatalf("run %d (killed after %s with %v completed): the resume called the model for %s again\ncalls: %v", i, delay, completed, c, calls)
			}
		}
		got, err := agent.LoadRun(runDir, "crash")
		if err != nil || got.Finished == nil || got.Finished.Status != agent.StatusSucceeded || string(got.Finished.Output) != string(wantRec.Finished.Output) {
			t.Fatalf("run %d: %v %+v", i, err, got)
		}
		os.RemoveAll(dir)
	}
	t.Logf("steps completed at the kill -> runs: %v", hit)
}
