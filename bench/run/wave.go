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

	"github.com/dome-registry/dome/internal/runtest"
)

// wave runs one wave of n workers end to end, each appending a line to
// its own file of a module: "dome run start" (a grant, a SpawnSpec, a
// scratch tree, the worker under bubblewrap with only the gateway socket,
// dome worker submit, the proposals stacked: plan and apply, the state,
// the ledger) against the script users write today: xargs -P running the
// same edit in a git worktree per worker (git worktree add under flock:
// concurrent adds race in git), dome stack propose there, then
// dome stack submit, plan and apply. Both run conc workers at once; the
// final trees must be equal. Rounds alternate the script and dome, each
// round a run of its own on the same repository.
func wave(dome, work string, n, conc, rounds int) {
	dir := filepath.Join(work, "wave")
	must(os.MkdirAll(dir, 0o755))
	must(os.Chmod(work, 0o755))
	must(os.Chmod(dir, 0o755))
	repo := filepath.Join(dir, "repo")
	files := map[string]string{}
	root := runtest.Root()
	for _, top := range []string{"registry", "policy"} {
		must(filepath.Walk(filepath.Join(root, top), func(p string, fi os.FileInfo, err error) error {
			if err != nil || fi.IsDir() {
				return err
			}
			rel, _ := filepath.Rel(root, p)
			b, err := os.ReadFile(p)
			files[filepath.ToSlash(rel)] = string(b)
			return err
		}))
	}
	// No validation tier before promotion: the wave alone is measured.
	files["policy/stack_policy.json"] = strings.Replace(files["policy/stack_policy.json"],
		`"required_for_promotion": {"low": ["fast"], "medium": ["fast", "full"], "high": ["fast", "full"]}`,
		`"required_for_promotion": {"low": [], "medium": [], "high": []}`, 1)
	files["policy/run_policy.json"] = fmt.Sprintf(`{"schema_version": "dome.run_policy/v1", "scheduling": {"max_concurrency": %d, "max_attempts": 1, "strategy": "continue_on_error"}, "scarce": {}, "risk": {}, "sandbox": {"max_wall_seconds": 120}}`, conc)
	for i := 0; i < n; i++ {
		files[fmt.Sprintf("notes/n%03d.md", i)] = fmt.Sprintf("# Note %d\n\nA note.\n", i)
	}
	base := makeRepo(repo, files)

	tools := filepath.Join(dir, "tools")
	must(os.MkdirAll(tools, 0o755))
	must(os.WriteFile(filepath.Join(tools, "edit.sh"), []byte("printf 'edited by %s\\n' \"$1\" >> \"notes/$1.md\"\n"), 0o755))
	var q bytes.Buffer
	q.WriteString(`{"schema_version": "dome.work.queue/v1", "tasks": [`)
	for i := 0; i < n; i++ {
		if i > 0 {
			q.WriteString(",\n")
		}
		fmt.Fprintf(&q, `{"node_id": "n%03d", "containers": [{"container_ref": "sha256:%064d", "command": ["sh", "-c", "sh \"$DOME_TOOLS/edit.sh\" n%03d && exec dome worker submit --intent docs"]}], "required_capabilities": ["repo.read", "repo.propose"], "required_outputs": [{"kind": "patch_proposal"}]}`, i, 0, i)
	}
	q.WriteString("]}\n")
	queue := filepath.Join(dir, "work.queue.json")
	must(os.WriteFile(queue, q.Bytes(), 0o644))

	env := append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
	timed := func(name string, args ...string) time.Duration {
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Dir, cmd.Env = repo, env
		t0 := time.Now()
		out, err := cmd.CombinedOutput()
		d := time.Since(t0)
		if err != nil {
			fail("%s: %v\n%s", name, err, tail(out))
		}
		return d
	}
	tree := func(run string) string {
		return strings.TrimSpace(git(repo, "rev-parse", "refs/dome/integration/"+run+"^{tree}"))
	}

	// The script users write today (its run named by $RUN).
	script := filepath.Join(dir, "worker.sh")
	must(os.WriteFile(script, []byte(fmt.Sprintf(`set -e
wt=%[1]s/wt/$1
flock %[1]s/wt.lock git worktree add -q --detach "$wt" %[2]s
cd "$wt"
sh %[3]s/edit.sh "$1"
%[4]s stack propose --run "$RUN" --from-worktree . --worker "w-$1" --node "$1" --intent docs --out %[1]s/props/$RUN/$1.json -q
cd %[5]s
flock %[1]s/wt.lock git worktree remove --force "$wt"
`, dir, base, tools, dome, repo)), 0o755))
	var ids []string
	for i := 0; i < n; i++ {
		ids = append(ids, fmt.Sprintf("n%03d", i))
	}
	must(os.WriteFile(filepath.Join(dir, "ids"), []byte(strings.Join(ids, "\n")+"\n"), 0o644))
	sides := []string{"none"}
	if err := exec.Command(dome, "sandbox", "check").Run(); err == nil {
		sides = append([]string{"bwrap"}, sides...)
	} else {
		fmt.Printf("  wave: bubblewrap cannot run here: dome run start --sandbox=none only\n")
	}
	var xargsT, xwT, xsT []time.Duration
	domeT := map[string][]time.Duration{}
	want := ""
	for r := 0; r < rounds; r++ {
		run := fmt.Sprintf("xargs-%d", r)
		must(os.MkdirAll(filepath.Join(dir, "props", run), 0o755))
		xs := timed("dome stack init", dome, "stack", "init", "--run", run, "--base", base, "-q")
		xw := timed("xargs -P", "sh", "-c", fmt.Sprintf("RUN=%s xargs -P %d -n 1 sh %s < %s", run, conc, script, filepath.Join(dir, "ids")))
		xs += timed("dome stack submit", "sh", "-c", fmt.Sprintf("%s stack submit --run %s %s/props/%s/*.json -q", dome, run, dir, run))
		xs += timed("dome stack plan", dome, "stack", "plan", "--run", run, "-q")
		xs += timed("dome stack apply", dome, "stack", "apply", "--run", run, "-q")
		xargsT, xwT, xsT = append(xargsT, xw+xs), append(xwT, xw), append(xsT, xs)
		if want == "" {
			want = tree(run)
		} else if got := tree(run); got != want {
			fail("the script's round %d made tree %s, round 0 %s", r, got, want)
		}
		for _, sb := range sides {
			run := fmt.Sprintf("wave-%s-%d", sb, r)
			d := timed("dome run start --sandbox="+sb, dome, "run", "start", queue, "--run", run, "--sandbox", sb, "--tools", tools, "--no-promote", "-q")
			if got := tree(run); got != want {
				fail("dome run start --sandbox=%s made tree %s, the script %s", sb, got, want)
			}
			var st struct {
				Stopped struct {
					Reason string `json:"reason"`
				} `json:"stopped"`
			}
			b, err := os.ReadFile(filepath.Join(repo, "ops", "runs", run, "run.state.json"))
			must(err)
			must(json.Unmarshal(b, &st))
			if st.Stopped.Reason != "constraints_met" {
				fail("dome run start --sandbox=%s stopped with %q", sb, st.Stopped.Reason)
			}
			domeT[sb] = append(domeT[sb], d)
		}
	}
	for _, sb := range sides {
		peerRow(fmt.Sprintf("%d-node wave, %d at once: dome run start --sandbox=%s (%d rounds)", n, conc, sb, rounds), domeT[sb], xargsT)
	}
	fmt.Printf("  peer: xargs -P %d (git worktree add, the edit, dome stack propose) %s, then dome stack init/submit/plan/apply %s; final trees equal\n",
		conc, spread(xwT), spread(xsT))
}

func tail(b []byte) string {
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return string(b)
}
