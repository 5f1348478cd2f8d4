package contracttest_test

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dome-registry/dome/internal/gittest"
	"github.com/dome-registry/dome/pkg/codegen"
	"github.com/dome-registry/dome/pkg/contracttest"
	"github.com/dome-registry/dome/pkg/gitstore"
	"github.com/dome-registry/dome/pkg/registry"

	// The runtime the generated Go clients import (generators/go-oapi-codegen/
	// harness/go.mod): listed here so that dome's go.mod pins it and the
	// module cache has it for the contract tests' go build, offline too.
	_ "github.com/oapi-codegen/nullable"
	_ "github.com/oapi-codegen/runtime"
	_ "github.com/oapi-codegen/runtime/types"
)

func root(t testing.TB) string {
	r, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// setup commits the example registry and bundles into a fresh repository
// (with the files of over in place of theirs) and generates tool/profile in
// every language.
func setup(t *testing.T, tool, profile string, over map[string]string) (*registry.Registry, *registry.ToolResolution, []*codegen.Client, *codegen.Generator) {
	t.Helper()
	r := gittest.New(t)
	files := map[string]string{}
	for _, top := range []string{"registry/tools", "generators"} {
		base := filepath.Join(root(t), filepath.FromSlash(top))
		filepath.WalkDir(base, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			rel, _ := filepath.Rel(base, p)
			b, err := os.ReadFile(p)
			files[top+"/"+filepath.ToSlash(rel)] = string(b)
			return err
		})
	}
	for p, c := range over {
		files[p] = c
	}
	r.Write(files)
	r.Commit("example")
	repo, err := gitstore.Open(r.Dir)
	if err != nil {
		t.Fatal(err)
	}
	reg := registry.New(repo)
	g := &codegen.Generator{Reg: reg, DomeVersion: "test"}
	ctx := context.Background()
	tr, err := reg.ResolveTool(ctx, registry.Ref{ID: tool, Rev: "HEAD"}, registry.PinOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pr, err := reg.ProfileAt(tool, profile, tr.Pin)
	if err != nil {
		t.Fatal(err)
	}
	var jobs []codegen.Job
	for _, l := range codegen.Languages {
		jobs = append(jobs, codegen.Job{Tool: tr, Profile: pr, Language: l})
	}
	clients, err := g.GenerateAll(ctx, jobs, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	return reg, tr, clients, g
}

// toolchains finds go, python3 and the repository's tsc. In CI (CI=true)
// a missing one fails the test instead of skipping its check.
func toolchains(t *testing.T) contracttest.Options {
	look := func(n string) string { p, _ := exec.LookPath(n); return p }
	o := contracttest.Options{Go: look("go"), Python: look("python3"), Node: look("node"), CI: os.Getenv("CI") == "true", Env: os.Environ()}
	if p := filepath.Join(root(t), "contract-tests", "ts", "node_modules", ".bin", "tsc"); fileExists(p) {
		o.TSC = p
	} else if p := os.Getenv("DOME_TSC"); p != "" {
		o.TSC = p
	}
	if o.TSC == "" && !o.CI {
		t.Log("WARNING: tsc not installed (npm ci --prefix contract-tests/ts): the TypeScript check is skipped")
	}
	return o
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

func run(t *testing.T, opts contracttest.Options, tool, profile string, edit func([]*codegen.Client, []*contracttest.Case) []*contracttest.Case) *contracttest.Report {
	t.Helper()
	return runWith(t, opts, tool, profile, nil, edit)
}

// runWith is run over the example registry with the files of over.
func runWith(t *testing.T, opts contracttest.Options, tool, profile string, over map[string]string, edit func([]*codegen.Client, []*contracttest.Case) []*contracttest.Case) *contracttest.Report {
	t.Helper()
	reg, tr, clients, g := setup(t, tool, profile, over)
	cases, err := contracttest.LoadCases(reg, tr)
	if err != nil {
		t.Fatal(err)
	}
	pr, _ := reg.ProfileAt(tool, profile, tr.Pin)
	filtered, err := g.Filter(tr, pr)
	if err != nil {
		t.Fatal(err)
	}
	if edit != nil {
		cases = edit(clients, cases)
	}
	rep, err := contracttest.Run(context.Background(), opts, tool, profile, filtered, cases, clients)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func status(rep *contracttest.Report) string {
	var b strings.Builder
	for _, c := range rep.Cases {
		b.WriteString(c.Name + "=" + c.Status + " ")
	}
	for _, c := range rep.Checks {
		b.WriteString(c.Language + ":" + c.Name + "=" + c.Status + " ")
	}
	return b.String()
}

func TestRun_ExampleTools_Pass(t *testing.T) {
	opts := toolchains(t)
	for _, tc := range [][2]string{{"petstore", "default"}, {"ticketing", "default"}, {"inventory", "default"}, {"action-registry", "default"}} {
		t.Run(tc[0], func(t *testing.T) {
			rep := run(t, opts, tc[0], tc[1], nil)
			if !rep.OK() {
				t.Fatalf("%s\n%+v", status(rep), rep)
			}
			for _, c := range rep.Cases {
				if c.Status != contracttest.Pass && !(c.Status == contracttest.Excluded && strings.Contains(strings.Join(c.Problems, ";"), "auth.mode")) {
					t.Errorf("case %s: %s", c.Name, c.Status)
				}
			}
			if opts.Go != "" && opts.TSC != "" && opts.Node != "" && opts.Python != "" && !strings.Contains(status(rep), ":same outcomes in go, ts, python=pass") {
				t.Errorf("want the three languages compared: %s", status(rep))
			}
			if opts.TSC != "" && opts.Node != "" && !strings.Contains(status(rep), "ts:timeouts: undici dispatchers under node, AbortSignals elsewhere=pass") {
				t.Errorf("want the TypeScript client's two transports checked: %s", status(rep))
			}
		})
	}
}

// TestRun_AuthModeRefusesCase: the petstore default profile's auth.mode
// (apiKey) allows none of deletePet's alternatives (apiKey+adminToken):
// its golden case is excluded, and every client refuses the call.
func TestRun_AuthModeRefusesCase(t *testing.T) {
	opts := toolchains(t)
	rep := run(t, opts, "petstore", "default", nil)
	for _, c := range rep.Cases {
		if c.Name == "delete-pet" && (c.Status != contracttest.Excluded || !strings.Contains(strings.Join(c.Problems, ";"), `auth.mode "apiKey"`)) {
			t.Errorf("delete-pet: %s %v", c.Status, c.Problems)
		}
	}
}

func TestRun_ExcludedCasesAreReported(t *testing.T) {
	rep := run(t, contracttest.Options{}, "petstore", "readonly", nil)
	got := status(rep)
	for _, want := range []string{"create-pet=excluded", "delete-pet=excluded", "place-order=excluded", "list-pets=pass", "show-pet=pass"} {
		if !strings.Contains(got, want) {
			t.Errorf("want %s in %s", want, got)
		}
	}
}

func TestRun_GoldenCaseThatBreaksTheSpecFails(t *testing.T) {
	rep := run(t, contracttest.Options{}, "petstore", "default", func(_ []*codegen.Client, cs []*contracttest.Case) []*contracttest.Case {
		for _, c := range cs {
			switch c.Name {
			case "list-pets":
				c.Request.Query["limit"] = 500 // maximum 100
			case "show-pet":
				c.Response.Body = []byte(`{"id": "seven", "name": "Kitty"}`)
			case "delete-pet":
				delete(c.Request.Headers, "Authorization") // adminToken is required too
			}
		}
		return cs
	})
	if rep.OK() {
		t.Fatal("want a failure")
	}
	probs := map[string]string{}
	for _, c := range rep.Cases {
		probs[c.Name] = strings.Join(c.Problems, "; ")
	}
	for name, want := range map[string]string{"list-pets": "parameter \"limit\" in query has an error: number must be at most 100", "show-pet": "value must be an integer", "delete-pet": "Authorization: bearer"} {
		if !strings.Contains(probs[name], want) {
			t.Errorf("%s: %q does not say %q", name, probs[name], want)
		}
	}
}

func TestRun_GoClientThatSendsTheWrongRequestFails(t *testing.T) {
	opts := toolchains(t)
	if opts.Go == "" {
		t.Skip("no go toolchain")
	}
	rep := run(t, contracttest.Options{Go: opts.Go, Env: opts.Env}, "petstore", "default", func(cs []*codegen.Client, cases []*contracttest.Case) []*contracttest.Case {
		for _, c := range cs {
			for i, f := range c.Files {
				if f.Path == "client.gen.go" {
					// The client now asks for /pet/{id} and drops the limit query parameter.
					d := bytes.Replace(f.Data, []byte(`operationPath := fmt.Sprintf("/pets/%s", pathParam0)`), []byte(`operationPath := fmt.Sprintf("/pet/%s", pathParam0)`), -1)
					d = bytes.Replace(d, []byte(`runtime.StyleParamWithOptions("form", true, "limit", *params.Limit`), []byte(`runtime.StyleParamWithOptions("form", true, "max", *params.Limit`), 1)
					if bytes.Equal(d, f.Data) {
						t.Fatal("the tampering did not apply: the generated code changed shape")
					}
					c.Files[i].Data = d
					reseal(t, c)
				}
			}
		}
		return cases
	})
	probs := map[string]string{}
	for _, c := range rep.Cases {
		probs[c.Name] = strings.Join(c.Problems, "; ")
	}
	// A path no operation has never leaves the client: the layer matches
	// every request to an operation of the policy first.
	if !strings.Contains(probs["show-pet"], "go client: step 0: error unknown_operation: GET /v1/pet/7: no operation of this client matches the request") {
		t.Errorf("show-pet: %q", probs["show-pet"])
	}
	if !strings.Contains(probs["list-pets"], "go client: query map[max:[2] status:[available]], golden map[limit:[2] status:[available]]") {
		t.Errorf("list-pets: %q", probs["list-pets"])
	}
	if probs["create-pet"] != "" {
		t.Errorf("create-pet: %q", probs["create-pet"])
	}
}

// TestRun_Timeout: with a short client.timeout_ms the plan has an
// errors:timeout scenario (the mock answers each attempt a second late);
// every client gives up after the timeout with the timeout code, retried
// max_retries times. A Go client whose attempts wait an hour fails it.
func TestRun_Timeout(t *testing.T) {
	opts := toolchains(t)
	over := map[string]string{"registry/tools/petstore/profiles/default.profile.json": `{"schema_version": "dome.profile/v1", "id": "default", "auth": {"mode": "apiKey"}, "net": {"allow_hosts": ["petstore.example.com"]}, "budgets": {"max_wall_seconds": 300}, "client": {"timeout_ms": 300, "max_retries": 1, "retry_backoff_ms": 10}}`}
	rep := runWith(t, opts, "petstore", "default", over, nil)
	if !rep.OK() {
		t.Fatalf("%s\n%+v", status(rep), rep)
	}
	if opts.Go == "" {
		t.Skip("no go toolchain")
	}
	rep = runWith(t, contracttest.Options{Go: opts.Go, Env: opts.Env}, "petstore", "default", over, func(cs []*codegen.Client, cases []*contracttest.Case) []*contracttest.Case {
		for _, c := range cs {
			for i, f := range c.Files {
				if f.Path == "dome.gen.go" {
					d := bytes.Replace(f.Data, []byte("time.Now().Add(timeout)"), []byte("time.Now().Add(time.Hour)"), 1)
					if bytes.Equal(d, f.Data) {
						t.Fatal("the tampering did not apply: the generated code changed shape")
					}
					c.Files[i].Data = d
					reseal(t, c)
				}
			}
		}
		return cases
	})
	var probs []string
	for _, c := range rep.Checks {
		probs = append(probs, c.Problems...)
	}
	if got := strings.Join(probs, "; "); !strings.Contains(got, "errors:timeout") || !strings.Contains(got, "want error timeout") {
		t.Errorf("want the Go client that does not time out to fail errors:timeout: %s", got)
	}
}

func TestRun_IndexThatDiffersFromTheSpecFails(t *testing.T) {
	rep := run(t, contracttest.Options{}, "petstore", "default", func(cs []*codegen.Client, cases []*contracttest.Case) []*contracttest.Case {
		for _, c := range cs {
			if c.Language == "ts" {
				c.Index.Operations = c.Index.Operations[1:]
				c.Index.Operations[0].Method = "PUT"
				c.Index.Operations[1].Symbol = "noSuchFunction"
			}
		}
		return cases
	})
	var ts string
	for _, c := range rep.Checks {
		if c.Language == "ts" && c.Name == "operations index = filtered spec" {
			ts = strings.Join(c.Problems, "; ")
		}
	}
	for _, want := range []string{"createPet: in the filtered spec, not in the ts client", "deletePet: spec DELETE /pets/{petId}", `"export function noSuchFunction(" is not in the generated source`} {
		if !strings.Contains(ts, want) {
			t.Errorf("%q does not say %q", ts, want)
		}
	}
}

func TestRun_MissingToolchain_SkipOrFailInCI(t *testing.T) {
	rep := run(t, contracttest.Options{}, "petstore", "readonly", nil)
	if !rep.OK() {
		t.Fatalf("skips must not fail: %s", status(rep))
	}
	if !strings.Contains(status(rep), "go:go build + driver=skip") {
		t.Errorf("%s", status(rep))
	}
	rep = run(t, contracttest.Options{CI: true}, "petstore", "readonly", nil)
	if rep.OK() || !strings.Contains(status(rep), "ts:tsc + driver under node=fail") {
		t.Errorf("in CI a missing toolchain fails: %s", status(rep))
	}
}

func TestParseCase_BadInput(t *testing.T) {
	for name, in := range map[string]string{
		"not json":      `{`,
		"no operation":  `{"request": {}, "response": {"status": 200}}`,
		"unknown field": `{"operation_id": "x", "request": {"cookies": {}}, "response": {"status": 200}}`,
		"bad status":    `{"operation_id": "x", "request": {}, "response": {"status": 99}}`,
		"duplicate key": `{"operation_id": "x", "operation_id": "y", "request": {}, "response": {"status": 200}}`,
	} {
		if _, err := contracttest.ParseCase("c.json", "c", []byte(in)); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func FuzzParseCase(f *testing.F) {
	f.Add([]byte(`{"operation_id": "x", "request": {"query": {"a": [1, "b"]}, "body": {"k": null}}, "response": {"status": 200, "body": [1]}}`))
	f.Add([]byte(`{"operation_id": "x"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := contracttest.ParseCase("c.json", "c", data)
		if err == nil && (c.OperationID == "" || c.Response.Status < 100) {
			t.Fatalf("accepted an invalid case: %+v", c)
		}
	})
}

// reseal brings a tampered client's manifest up to date, as someone who
// edits a generated client and its manifest would: the loader's digests
// then pass, and the contract test is what catches the wrong request.
func reseal(t *testing.T, c *codegen.Client) {
	t.Helper()
	for i, o := range c.Manifest.Outputs {
		for _, f := range c.Files {
			if f.Path == o.Path {
				c.Manifest.Outputs[i].SHA256, c.Manifest.Outputs[i].Size = codegen.FileDigest(f.Data), int64(len(f.Data))
			}
		}
	}
	h, err := codegen.ArtifactHash(c.Manifest.Outputs)
	if err != nil {
		t.Fatal(err)
	}
	c.Manifest.ClientArtifactHash = h
	if c.Encoded, err = c.Manifest.Encode(); err != nil {
		t.Fatal(err)
	}
}

// TestTSRuntime_Timeouts runs testdata/ts_timeouts.mjs under node over the
// petstore TypeScript client with a 300 ms timeout: under Node's own fetch
// the client's attempts go without an AbortSignal after its first, and a
// timeout still ends a request that is waiting for its answer, one waiting
// for its connection, and one whose connection comes after the deadline
// (never written).
func TestTSRuntime_Timeouts(t *testing.T) {
	opts := toolchains(t)
	if opts.TSC == "" || opts.Node == "" {
		if opts.CI {
			t.Fatal("tsc and node are needed in CI")
		}
		t.Skip("tsc or node is missing")
	}
	over := map[string]string{"registry/tools/petstore/profiles/default.profile.json": `{"schema_version": "dome.profile/v1", "id": "default", "auth": {"mode": "apiKey"}, "net": {"allow_hosts": ["petstore.example.com"]}, "budgets": {"max_wall_seconds": 300}, "client": {"timeout_ms": 300, "max_retries": 0}}`}
	_, _, clients, _ := setup(t, "petstore", "default", over)
	dir := t.TempDir()
	for _, c := range clients {
		if c.Language != "ts" {
			continue
		}
		for _, f := range c.Files {
			if err := os.WriteFile(filepath.Join(dir, f.Path), f.Data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	cfg, err := os.ReadFile(filepath.Join(root(t), "generators", "ts-fetch", "harness", "tsconfig.json"))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "tsconfig.json"), cfg, 0o644)
	os.WriteFile(filepath.Join(dir, "package.json"), []byte(`{"type": "module"}`), 0o644)
	tsc := exec.Command(opts.TSC, "-p", "tsconfig.json", "--noEmit", "false")
	tsc.Dir = dir
	if out, err := tsc.CombinedOutput(); err != nil {
		t.Fatalf("tsc: %v\n%s", err, out)
	}
	script, err := filepath.Abs(filepath.Join("testdata", "ts_timeouts.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	// A call that never ends (a timeout that does not fire) fails the test
	// here, not at the test binary's deadline.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, opts.Node, script, dir).CombinedOutput()
	if err != nil || string(out) != "ok" {
		t.Fatalf("node ts_timeouts.mjs: %v\n%s", err, out)
	}
}
