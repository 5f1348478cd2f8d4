package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// waveRun makes a real wave run of n nodes with dome run start (workers on
// the host, --sandbox none: the run is the input here, not what is
// measured): the waves example's module, skills, worker card and policies,
// and n tasks in waves of a tenth each (node i depends on node i-n/10),
// each worker writing its own note and proposing it with dome worker
// submit. Every 50th node fails its first attempt and passes its retry;
// two nodes of each wave edit the same file, so one of them is reopened
// and runs again on the next wave's base. The head passes the example's
// validation tier (gofmt, go vet, go test) and is promoted. The run is
// kept under work and reused while its queue is the same (-fresh makes it
// again); it returns the repository and how long the run took.
func waveRun(dome, work string, n int, fresh bool) (string, time.Duration, error) {
	root, err := filepath.Abs(".")
	if err != nil {
		return "", 0, err
	}
	if work, err = filepath.Abs(work); err != nil {
		return "", 0, err
	}
	queue := waveQueue(n)
	dir := filepath.Join(work, fmt.Sprintf("wave-%d", n))
	repo := filepath.Join(dir, "repo")
	stamp := filepath.Join(dir, "done")
	if old, err := os.ReadFile(stamp); err == nil && !fresh && bytes.Equal(old, queue) {
		return repo, 0, nil
	}
	os.RemoveAll(dir)
	tools := filepath.Join(dir, "tools")
	for _, d := range []string{repo, tools, filepath.Join(repo, "registry", "tools"), filepath.Join(repo, "registry", "a2a", "cards", "runtime"), filepath.Join(repo, "policy")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return "", 0, err
		}
	}
	ex := filepath.Join(root, "examples", "waves")
	copies := [][2]string{{filepath.Join(ex, "module") + "/.", repo}, {filepath.Join(ex, "policy") + "/.", filepath.Join(repo, "policy")},
		{filepath.Join(root, "registry", "a2a", "cards", "runtime", "dome-worker.card.json"), filepath.Join(repo, "registry", "a2a", "cards", "runtime")}}
	for _, skill := range []string{"repo-read", "patch-proposal", "repo-admin"} {
		copies = append(copies, [2]string{filepath.Join(root, "registry", "tools", skill), filepath.Join(repo, "registry", "tools")})
	}
	for _, c := range copies {
		if out, err := exec.Command("cp", "-r", c[0], c[1]).CombinedOutput(); err != nil {
			return "", 0, fmt.Errorf("cp %s: %v: %s", c[0], err, out)
		}
	}
	policy := `{"schema_version": "dome.run_policy/v1", "description": "bench/webui: eight workers at once, two attempts per node",
  "scheduling": {"max_concurrency": 8, "max_attempts": 2, "strategy": "continue_on_error"}, "scarce": {}, "risk": {},
  "sandbox": {"max_wall_seconds": 120, "max_processes": 64, "max_memory_bytes": 4294967296, "max_open_files": 256, "max_file_bytes": 16777216, "max_output_bytes": 65536}}
`
	worker := `set -e
if [ "$2" = flaky ] && [ "$DOME_ATTEMPT" = 1 ]; then echo "failing the first attempt on purpose" >&2; exit 3; fi
mkdir -p notes
printf '# Note %s\n\nWritten by its worker.\n' "$1" > "notes/$1.md"
if [ "$2" = shared ]; then printf '%s was here\n' "$1" > notes/shared.md; fi
exec dome worker submit --intent docs
`
	files := map[string]string{filepath.Join(repo, "policy", "run_policy.json"): policy, filepath.Join(tools, "note.sh"): worker,
		filepath.Join(dir, "work.queue.json"): string(queue)}
	for p, s := range files {
		if err := os.WriteFile(p, []byte(s), 0o755); err != nil {
			return "", 0, err
		}
	}
	env := append(os.Environ(), "GIT_AUTHOR_NAME=bench", "GIT_AUTHOR_EMAIL=bench@dome.invalid", "GIT_COMMITTER_NAME=bench",
		"GIT_COMMITTER_EMAIL=bench@dome.invalid", "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
	for _, args := range [][]string{{"git", "init", "-q", "-b", "main"}, {"git", "add", "-A"}, {"git", "commit", "-q", "-m", "the module, the skills, the policies"}} {
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Dir, cmd.Env = repo, env
		if out, err := cmd.CombinedOutput(); err != nil {
			return "", 0, fmt.Errorf("%s: %v: %s", strings.Join(args, " "), err, out)
		}
	}
	cmd := exec.Command(dome, "run", "start", filepath.Join(dir, "work.queue.json"), "--tools", tools, "--sandbox", "none")
	cmd.Dir, cmd.Env = repo, env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err = cmd.Run()
	took := time.Since(start)
	if err != nil || !bytes.Contains(out.Bytes(), []byte("constraints_met")) {
		return "", 0, fmt.Errorf("dome run start: %v\n%s", err, tailOf(out.Bytes(), 3000))
	}
	return repo, took, os.WriteFile(stamp, queue, 0o644)
}

// waveQueue is the bench's work queue of n nodes.
func waveQueue(n int) []byte {
	per := max(n/10, 1)
	var tasks []map[string]any
	for i := 0; i < n; i++ {
		id := fmt.Sprintf("n%04d", i)
		mode := "-"
		switch {
		case i%50 == 7:
			mode = "flaky"
		case i%per == 3 || i%per == 4:
			mode = "shared"
		}
		t := map[string]any{"node_id": id, "title": "note " + id,
			"containers": []any{map[string]any{"container_ref": "example.invalid/dome-worker@sha256:" + strings.Repeat("5", 64), "runtime_card": "dome-worker",
				"command": []string{"sh", "/run/dome/tools/note.sh", id, mode}}},
			"required_capabilities": []string{"repo.read", "repo.propose"}, "required_outputs": []any{map[string]any{"kind": "patch_proposal"}},
			"constraints": map[string]any{"read_roots": []string{"notes"}, "write_roots": []string{"notes"}},
			"action_spec": map[string]any{"intent": "write note " + id}}
		if i >= per {
			t["dependencies"] = []string{fmt.Sprintf("n%04d", i-per)}
		}
		tasks = append(tasks, t)
	}
	b, _ := json.MarshalIndent(map[string]any{"schema_version": "dome.work.queue/v1", "run_id": "wave", "description": "bench/webui: a wave run of " + fmt.Sprint(n) + " nodes", "tasks": tasks}, "", " ")
	return append(b, '\n')
}

func tailOf(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}
