package contracttest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/dome-registry/dome/pkg/codegen"
	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/dome-registry/dome/pkg/specfilter"
)

// Options says which toolchains to use and how to treat missing ones.
type Options struct {
	// Go, TSC, Node and Python are the commands to run ("" skips the
	// checks that need it).
	// The caller finds them (PATH, the repository's contract-tests/ts
	// folder); a check whose command is empty is skipped, or fails when
	// CI is set.
	Go, TSC, Node, Python string
	// CI makes a missing toolchain a failure instead of a skip.
	CI bool
	// Env is the environment of the toolchain commands.
	Env []string
	// TempDir is where build folders go (default: the system's).
	TempDir string
	// Server, when set, answers the golden cases in place of the mock: it
	// is called once per case and client language and returns a handler
	// prepared for that case (a real server in the state the case needs).
	// The request each client sends is still compared with the golden
	// request, and the answer it gets with the golden response.
	Server func(caseName string) (http.Handler, error)
}

// Status of a case or a check.
const (
	Pass     = "pass"
	Fail     = "fail"
	Skip     = "skip"
	Excluded = "excluded" // the profile drops the case's operation
)

// CaseResult is the outcome of one golden case.
type CaseResult struct {
	Name        string   `json:"name"`
	File        string   `json:"file"`
	OperationID string   `json:"operation_id"`
	Status      string   `json:"status"`
	Problems    []string `json:"problems,omitempty"`
}

// CheckResult is the outcome of one check over a client.
type CheckResult struct {
	Name     string   `json:"name"` // e.g. "go build + golden requests", "ts tsc --noEmit"
	Language string   `json:"language,omitempty"`
	Status   string   `json:"status"`
	Problems []string `json:"problems,omitempty"`
}

// Report is the outcome of a contract test of one tool and profile.
type Report struct {
	ToolID    string        `json:"tool_id"`
	ProfileID string        `json:"profile_id"`
	Cases     []CaseResult  `json:"cases"`
	Checks    []CheckResult `json:"checks"`
	// Notes say what could not be tested and why.
	Notes []string `json:"notes,omitempty"`
}

// OK reports whether nothing failed.
func (r *Report) OK() bool {
	for _, c := range r.Cases {
		if c.Status == Fail {
			return false
		}
	}
	for _, c := range r.Checks {
		if c.Status == Fail {
			return false
		}
	}
	return true
}

// Run contract-tests one tool and profile: (a) every case is validated
// against the filtered spec with openapi3filter, request and response; (b)
// cases whose operation the profile excludes are reported as excluded; (c)
// the Go client is built and run against a mock server serving the golden
// responses, its requests compared with the golden requests; (d) the
// TypeScript client is type-checked with tsc --noEmit and the Python client
// byte-compiled; and each client's operations index must equal the
// filtered spec's operation set, each symbol present in its source.
// clients are the generated clients of this tool and profile (any subset of
// languages); filtered is the filtered spec they were generated from.
func Run(ctx context.Context, opts Options, toolID, profileID string, filtered *specfilter.Result, cases []*Case, clients []*codegen.Client) (*Report, error) {
	rep := &Report{ToolID: toolID, ProfileID: profileID, Cases: []CaseResult{}, Checks: []CheckResult{}}
	spec, err := loadSpec(filtered.JSON)
	if err != nil {
		return nil, err
	}
	var kept []*Case
	byName := map[string]*CaseResult{}
	for _, k := range cases {
		cr := CaseResult{Name: k.Name, File: k.File, OperationID: k.OperationID, Status: Pass}
		if spec.ops[k.OperationID] == nil {
			cr.Status = Excluded
			rep.Cases = append(rep.Cases, cr)
			continue
		}
		if p := spec.validateCase(ctx, k); len(p) > 0 {
			cr.Status, cr.Problems = Fail, p
		} else {
			kept = append(kept, k)
		}
		rep.Cases = append(rep.Cases, cr)
	}
	for i := range rep.Cases {
		byName[rep.Cases[i].Name] = &rep.Cases[i]
	}
	for _, c := range clients {
		rep.Checks = append(rep.Checks, equivalence(c, filtered))
	}
	runSDKs(ctx, opts, rep, spec, cases, kept, clients)
	return rep, nil
}

func missing(opts Options, lang, why string) (string, []string) {
	if opts.CI {
		return Fail, []string{why + " (CI is set: a missing toolchain fails the check)"}
	}
	return Skip, []string{why}
}

// compileCheck writes the client (and the bundle's harness files) to a
// temp folder and runs the compiler over it.
func compileCheck(ctx context.Context, opts Options, c *codegen.Client, lang, name, command, why string) CheckResult {
	chk := CheckResult{Name: name, Language: lang}
	if command == "" {
		chk.Status, chk.Problems = missing(opts, lang, why)
		return chk
	}
	dir, err := os.MkdirTemp(opts.TempDir, "dome-contract-"+lang+"-")
	if err != nil {
		chk.Status, chk.Problems = Fail, []string{err.Error()}
		return chk
	}
	defer os.RemoveAll(dir)
	var sources []string
	write := func(rel string, data []byte) error {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		return os.WriteFile(p, data, 0o644)
	}
	for _, f := range c.Files {
		if err := write(f.Path, f.Data); err != nil {
			chk.Status, chk.Problems = Fail, []string{err.Error()}
			return chk
		}
		sources = append(sources, f.Path)
	}
	for _, h := range c.Bundle.Spec.Harness {
		if err := write(path.Base(h), c.Bundle.Files[h]); err != nil {
			chk.Status, chk.Problems = Fail, []string{err.Error()}
			return chk
		}
	}
	var args []string
	switch lang {
	case "ts":
		args = []string{"-p", "tsconfig.json"}
	case "python":
		args = []string{"-m", "py_compile"}
		for _, s := range sources {
			if strings.HasSuffix(s, ".py") {
				args = append(args, s)
			}
		}
	}
	if _, err := runTool(ctx, opts, dir, nil, command, args...); err != nil {
		chk.Status, chk.Problems = Fail, []string{err.Error()}
		return chk
	}
	chk.Status = Pass
	return chk
}

// equivalence checks a client's operations index against the filtered
// spec: the same operations (id, method, path, auth), and every symbol in
// the generated source as the bundle's symbol_pattern says.
func equivalence(c *codegen.Client, filtered *specfilter.Result) CheckResult {
	chk := CheckResult{Name: "operations index = filtered spec", Language: c.Language, Status: Pass}
	type key struct{ id, method, path, auth string }
	want := map[string]key{}
	for _, op := range filtered.Operations {
		if op.Webhook {
			continue
		}
		sec := op.Security
		if sec == nil {
			sec = []map[string][]string{}
		}
		a, _ := json.Marshal(sec)
		want[op.OperationID] = key{op.OperationID, strings.ToUpper(op.Method), op.Path, string(a)}
	}
	got := map[string]key{}
	for _, op := range c.Index.Operations {
		a, _ := json.Marshal(op.Auth)
		got[op.OperationID] = key{op.OperationID, op.Method, op.Path, string(a)}
	}
	var ids []string
	for id := range want {
		ids = append(ids, id)
	}
	for id := range got {
		if _, ok := want[id]; !ok {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	for _, id := range ids {
		w, inW := want[id]
		g, inG := got[id]
		switch {
		case !inG:
			chk.Problems = append(chk.Problems, fmt.Sprintf("%s: in the filtered spec, not in the %s client", id, c.Language))
		case !inW:
			chk.Problems = append(chk.Problems, fmt.Sprintf("%s: in the %s client, not in the filtered spec", id, c.Language))
		case w != g:
			chk.Problems = append(chk.Problems, fmt.Sprintf("%s: spec %s %s auth %s, client %s %s auth %s", id, w.method, w.path, w.auth, g.method, g.path, g.auth))
		}
	}
	var source strings.Builder
	for _, f := range c.Files {
		if f.Path != codegen.OperationsIndexFile {
			source.Write(f.Data)
		}
	}
	for _, op := range c.Index.Operations {
		if s := codegen.Symbol(c.Bundle.Spec.SymbolPattern, op.Symbol); !strings.Contains(source.String(), s) {
			chk.Problems = append(chk.Problems, fmt.Sprintf("%s: %q is not in the generated source", op.OperationID, s))
		}
	}
	if len(chk.Problems) > 0 {
		chk.Status = Fail
	}
	return chk
}

// FindTool returns the path of a command (a name on PATH or a path), or "".
func FindTool(name string) string {
	if name == "" {
		return ""
	}
	p, err := exec.LookPath(name)
	if err != nil {
		return ""
	}
	return p
}

// ErrNoCases reports a tool without golden cases.
func ErrNoCases(toolPath string) error {
	return &errkind.InputError{Source: toolPath, Problem: "no contract-test cases (" + CasesDir + "/*.json)", Hint: "add golden cases keyed by operation_id; see README, Contract tests"}
}
