package main

import (
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/rogpeppe/go-internal/testscript"
	"go.yaml.in/yaml/v3"
)

// ciScript is the testscript command
//
//	ciscript github|gitlab|action FILE JOB OUT
//
// It writes to OUT a bash script holding the commands that job of the CI
// template FILE runs (a GitHub Actions workflow, a GitLab CI file, or a
// composite action.yml, whose JOB is "-"), so that ci_templates.txtar runs
// exactly what users copy. Steps named "Install dome" and GitLab's
// before_script install a released dome; the test's dome is already on
// PATH, so they are left out, as are steps that use other actions. Plain
// env/variables values are exported; values the CI system computes
// (${{ ... }}) are for the script to set.
func ciScript(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 4 {
		ts.Fatalf("usage: ciscript github|gitlab|action FILE JOB OUT")
	}
	kind, file, job, out := args[0], args[1], args[2], args[3]
	var doc map[string]any
	if err := yaml.Unmarshal([]byte(ts.ReadFile(file)), &doc); err != nil {
		ts.Fatalf("%s: %v", file, err)
	}
	env := map[string]string{}
	addEnv := func(v any) {
		m, _ := v.(map[string]any)
		for k, val := range m {
			s := fmt.Sprint(val)
			if !strings.Contains(s, "${{") && !strings.Contains(s, "$") {
				env[k] = s
			}
		}
	}
	var runs []string
	steps := func(v any) {
		list, _ := v.([]any)
		for _, s := range list {
			step, _ := s.(map[string]any)
			name, _ := step["name"].(string)
			run, ok := step["run"].(string)
			if !ok || strings.HasPrefix(name, "Install dome") {
				continue
			}
			addEnv(step["env"])
			runs = append(runs, run)
		}
	}
	switch kind {
	case "github":
		addEnv(doc["env"])
		jobs, _ := doc["jobs"].(map[string]any)
		j, ok := jobs[job].(map[string]any)
		if !ok {
			ts.Fatalf("%s: no job %q", file, job)
		}
		addEnv(j["env"])
		steps(j["steps"])
	case "action":
		r, _ := doc["runs"].(map[string]any)
		steps(r["steps"])
	case "gitlab":
		addEnv(doc["variables"])
		j, ok := doc[job].(map[string]any)
		if !ok {
			ts.Fatalf("%s: no job %q", file, job)
		}
		addEnv(j["variables"])
		list, _ := j["script"].([]any)
		for _, l := range list {
			runs = append(runs, fmt.Sprint(l))
		}
	default:
		ts.Fatalf("ciscript: unknown kind %q", kind)
	}
	if len(runs) == 0 {
		ts.Fatalf("%s: job %q runs no command", file, job)
	}
	var b strings.Builder
	b.WriteString("set -euo pipefail\n")
	keys := make([]string, 0, len(env))
	for k := range env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if ts.Getenv(k) == "" { // the script's own setting wins
			fmt.Fprintf(&b, "export %s=%q\n", k, env[k])
		}
	}
	for _, r := range runs {
		b.WriteString(r)
		if !strings.HasSuffix(r, "\n") {
			b.WriteString("\n")
		}
	}
	if err := os.WriteFile(ts.MkAbs(out), []byte(b.String()), 0o644); err != nil {
		ts.Fatalf("%v", err)
	}
}
