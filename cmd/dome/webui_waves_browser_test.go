package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/chromedp/chromedp"
)

// agentTask is the task of the browser test's agent run: markup a model's
// user could type, which the page must show as text.
const agentTask = `plan a README section on <script>window.__domePwned='agent task'</script><b>agents</b>`

// needPython skips the browser test without python3 (the waves example's
// workers are Python), failing when CI=true (.ci/run installs it).
func needPython(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("python3"); err == nil {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("python3 is needed for the waves example's workers (CI=true): apt-get install python3")
	}
	t.Skip("python3 not installed: the waves example's workers are Python")
}

// wavesRun runs make demo's wave run, examples/waves/run.sh, in a folder
// the sandbox's user can reach, and returns that folder (the example's
// repository is repo/ under it, its run ops/runs/waves).
func wavesRun(t *testing.T, root string) string {
	t.Helper()
	dir, err := os.MkdirTemp("/tmp", "dome-webui-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	dome, err := exec.LookPath("dome")
	if err != nil {
		t.Fatal(err)
	}
	w := filepath.Join(dir, "w")
	cmd := exec.Command(filepath.Join(root, "examples/waves/run.sh"), dome, w)
	cmd.Dir = root
	out, err := cmd.CombinedOutput()
	if err != nil || !bytes.Contains(out, []byte("run waves: constraints_unmet")) {
		t.Fatalf("examples/waves/run.sh: %v\n%s", err, out)
	}
	return w
}

// checkWavePages loads the wave run's pages and the agent run's in the
// browser and returns how many it loaded.
func checkWavePages(t *testing.T, b *browser, base, waves, shots string) int {
	t.Helper()
	var st struct {
		Sequence int64 `json:"sequence"`
	}
	data, err := os.ReadFile(filepath.Join(waves, "repo/ops/runs/waves/run.state.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &st); err != nil || st.Sequence == 0 {
		t.Fatalf("run.state.json: %v %s", err, data)
	}
	seq := strconv.FormatInt(st.Sequence, 10)
	at := "/ui/runs/waves/at/" + seq + "/"
	type check struct {
		path string
		want []string
	}
	pages := []check{
		{"/ui/runs/", []string{"waves", "plan-demo", "wave", "agent"}},
		{"/ui/runs/waves/", []string{"stopped: constraints_unmet", "5 of 12 nodes did not pass", "refactor-format", "call_flood", "timeout", "Still needed", "wave-3", "plan-", "applied at"}},
		{at, []string{"event " + seq, "stopped: constraints_unmet", "sandbox", "signed by"}},
		{at + "tasks/", []string{"changelog.1", "version-b.2", "retry", "exit_nonzero", "call_flood"}},
		{at + "nodes/chatty/", []string{"BUDGET_EXHAUSTED", "call_flood", "flooded: cut off", "jti", "at most 5 calls", "task.result.json"}},
		{at + "nodes/peek-git/", []string{"PATH_DENIED", ".git/config", "exit_nonzero"}},
		{at + "nodes/sneaky-docs/", []string{"PATH_OUTSIDE_ROOTS", "writes only docs"}},
		{at + "nodes/sleeper/", []string{"timeout", "killed at its wall time"}},
		{at + "nodes/docs-guide/", []string{"evidence link-check", "link-check.json", "digest matches the ledger's"}},
		{at + "nodes/version-b/", []string{"version-b.1", "version-b.2", "reopened", "conflict", "resource:version-file"}},
		{at + "waves/wave-1/", []string{"Plans", "reopened", "version-b", "applied", "refactor-format"}},
		{at + "waves/wave-3/", []string{"changelog"}},
		{at + "checkpoints/", []string{"apply changelog.", "apply version-b.2", "The ref points at this head."}},
		{at + "events/", []string{"run.started", "run.stopped", "gateway.calls"}},
		{"/ui/runs/plan-demo/", []string{"agent run", "planner", "<script>window.__domePwned='agent task'</script><b>agents</b>", "writer", "reviewer",
			"house-style", "succeeded", "checkpoint after step 3"}},
		{"/ui/runs/plan-demo/at/3/", []string{"incomplete", "outline"}},
		{"/ui/runs/scout-demo/", []string{"repo-scout", "Tool grants", "repo-read/get_base_ref: succeeded", "repo-read/list_tree: succeeded", "repo-read/grep: succeeded",
			"3 tool calls", "runtime/dome-worker"}},
	}
	for _, pg := range pages {
		b.check(t, base+pg.path, shots, pg.want, nil)
	}
	// The graph: the Mermaid text dome run graph printed for the example,
	// drawn with a box per node, classed by status and linking its page.
	resp, err := http.Get(base + at + "graph.mmd")
	if err != nil {
		t.Fatal(err)
	}
	mmd, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	want, err := os.ReadFile(filepath.Join(waves, "graph.mmd"))
	if err != nil || !bytes.Equal(mmd, want) {
		t.Errorf("graph.mmd is not what dome run graph printed (%v):\n%s\n---\n%s", err, mmd, want)
	}
	for expr, n := range map[string]float64{
		`document.querySelectorAll(".graph svg rect.box").length`:        12,
		`document.querySelectorAll(".graph svg rect.box.failed").length`: 5,
		`document.querySelectorAll(".graph svg a rect.box").length`:      12,
		`document.scripts.length`:                                        0, // a stopped run's page is static
	} {
		if v := b.eval(t, base+"/ui/runs/waves/", expr); v != n {
			t.Errorf("the wave run's page: %s = %v, want %v", expr, v, n)
		}
	}
	// The plan of wave 1 (linked from the wave's page): version-b.1 lost
	// the conflict with version-a.1.
	b.open(t, base+at+"waves/wave-1/")
	plan, err := chromedp.Run(b.ctx, chromedp.Evaluate[string](`Array.from(document.querySelectorAll("main a")).find(a => a.textContent.startsWith("the plan with")).href`))
	if err != nil || plan == "" {
		t.Fatalf("wave-1's plan link: %v", err)
	}
	b.check(t, plan, shots, []string{"version-b.1", "conflict", "Graph", "Selection scores"}, nil)
	// The agent run's task ran nowhere.
	if v := b.eval(t, base+"/ui/runs/plan-demo/", `String(window.__domePwned)`); v != "undefined" {
		t.Errorf("the agent run's task ran: window.__domePwned = %v", v)
	}
	return len(pages) + 1
}
