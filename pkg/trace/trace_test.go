package trace

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/dome-registry/dome/pkg/schemaval"
)

const commit = "0123456789abcdef0123456789abcdef01234567"

// fixture is a small repository: one package with tests, one script folder,
// one schema, two active docs.
func fixture() fstest.MapFS {
	return fstest.MapFS{
		"go.mod":                        {Data: []byte("module example.com/m\n\ngo 1.26\n")},
		"pkg/a/a.go":                    {Data: []byte("package a\n")},
		"pkg/a/a_test.go":               {Data: []byte("package a\n\nimport \"testing\"\n\nfunc TestOne(t *testing.T) {}\nfunc TestTwo(t *testing.T) { t.Run(\"sub\", func(t *testing.T) {}) }\nfunc FuzzThree(f *testing.F) {}\nfunc TestMain(m *testing.M) {}\nfunc Testlower(t *testing.T) {}\nfunc (x) TestMethod(t *testing.T) {}\nvar s = `\nfunc TestInAString(t *testing.T) {}\n`\n// func TestInAComment(t *testing.T) {}\n")},
		"cmd/x/x_test.go":               {Data: []byte("package main\n\nimport \"testing\"\n\nfunc TestScripts(t *testing.T) {}\n")},
		"cmd/x/testdata/script/a.txtar": {Data: []byte("exec true\n")},
		"cmd/x/testdata/script/b.txtar": {Data: []byte("exec true\n")},
		"pkg/a/testdata/skip_test.go":   {Data: []byte("package x\nfunc TestHidden(t *testing.T) {}\n")},
		"nested/go.mod":                 {Data: []byte("module example.com/nested\n")},
		"nested/n_test.go":              {Data: []byte("package n\nfunc TestNested(t *testing.T) {}\n")},
		"pkg/a/schemas/a.schema.json":   {Data: []byte(`{"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": "https://example.com/a.schema.json", "type": "object"}`)},
		"README.md":                     {Data: []byte("# m\n\nSee docs/usage.md.\n")},
		"docs/usage.md":                 {Data: []byte("Usage.\n\nThe old place was old/place/ and it moved.\n")},
	}
}

// catalog returns a catalogue over fixture() with the given requirements
// (JSON objects, comma separated).
func catalog(reqs string) []byte { return []byte(catalogText(reqs)) }

func catalogText(reqs string) string {
	return `{
  "schema_version": "dome.requirements/v1",
  "seeds": [{"id": "doc-a", "title": "Document A", "file": "doc-a.md", "own_ids": "A-[0-9]+", "cover": "\\bMUST\\b"}],
  "script_dirs": [{"dir": "cmd/x/testdata/script", "package": "cmd/x", "test": "TestScripts"}],
  "active_docs": ["README.md", "docs/**/*.md"],
  "deprecated_paths": [{"path": "old/place/", "use_instead": "new/place/"}],
  "requirements": [` + reqs + `]
}`
}

func mustParse(t *testing.T, data []byte) *Catalog {
	t.Helper()
	c, err := ParseCatalog("cat.json", data)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func mustScan(t *testing.T, fsys fs.FS, c *Catalog) *Index {
	t.Helper()
	idx, err := Scan(fsys, c, ScanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return idx
}

const (
	reqOne   = `{"id": "A-1", "seed": "doc-a", "section": "1", "statement": "one", "level": "required", "status": "implemented", "checks": [{"kind": "conformance_test", "package": "pkg/a", "test": "TestOne"}]}`
	reqTwo   = `{"id": "A-2", "seed": "doc-a", "section": "1", "statement": "two", "level": "required", "status": "implemented", "checks": [{"kind": "replay_test", "package": "pkg/a", "test": "TestTwo/sub"}, {"kind": "conformance_test", "script": "cmd/x/testdata/script/a.txtar"}, {"kind": "schema_gate", "schema": "https://example.com/a.schema.json"}]}`
	reqNone  = `{"id": "A-3", "seed": "doc-a", "section": "2", "statement": "three", "level": "required", "status": "implemented", "checks": []}`
	reqGate  = `{"id": "A-4", "seed": "doc-a", "section": "2", "statement": "four", "level": "required", "status": "implemented", "checks": [{"kind": "schema_gate", "schema": "https://example.com/a.schema.json"}]}`
	reqPlan  = `{"id": "A-5", "seed": "doc-a", "section": "3", "statement": "five", "level": "required", "status": "planned", "note": "not yet", "checks": []}`
	reqOpt   = `{"id": "A-6", "seed": "doc-a", "section": "3", "statement": "six", "level": "optional", "status": "implemented", "checks": []}`
	reqReady = `{"id": "A-7", "seed": "doc-a", "section": "3", "statement": "seven", "level": "required", "status": "planned", "note": "tests landed", "checks": [{"kind": "conformance_test", "package": "pkg/a", "test": "FuzzThree"}]}`
)

func TestScan_FindsWhatGoTestRuns(t *testing.T) {
	c := mustParse(t, catalog(reqOne))
	idx := mustScan(t, fixture(), c)
	if idx.Module != "example.com/m" {
		t.Fatalf("module %q", idx.Module)
	}
	var got []string
	for p, tests := range idx.Tests {
		for name := range tests {
			got = append(got, p+" "+name)
		}
	}
	sort.Strings(got)
	want := []string{"cmd/x TestScripts", "pkg/a FuzzThree", "pkg/a TestOne", "pkg/a TestTwo"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("tests %v, want %v (no TestMain, no lower-case, no methods, none in strings, comments, testdata or nested modules)", got, want)
	}
	if !idx.Scripts["cmd/x/testdata/script/a.txtar"] || len(idx.Scripts) != 2 {
		t.Fatalf("scripts %v", idx.Scripts)
	}
	if f := idx.Schemas["https://example.com/a.schema.json"]; len(f) != 1 || f[0] != "pkg/a/schemas/a.schema.json" {
		t.Fatalf("schemas %v", idx.Schemas)
	}
	if !idx.HasTest("pkg/a", "TestTwo/any/sub") || idx.HasTest("pkg/a", "TestThree") {
		t.Fatal("HasTest")
	}
	if idx.ImportPath(".") != "example.com/m" || idx.ImportPath("pkg/a") != "example.com/m/pkg/a" {
		t.Fatal("ImportPath")
	}
}

func TestIsTestName(t *testing.T) {
	for name, want := range map[string]bool{"Test": true, "TestX": true, "Test_x": true, "Test1": true, "TestÄ": true, "Fuzz": true, "FuzzParse": true,
		"TestMain": false, "Testx": false, "Testé": false, "Fuzzy": false, "Benchmark": false, "Example": false, "test": false} {
		if got := isTestName(name); got != want {
			t.Errorf("isTestName(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestParseCatalog_Refusals(t *testing.T) {
	for _, tc := range []struct {
		name, doc, want string
	}{
		{"not JSON", `{"schema_version": `, "cat.json:1:"},
		{"duplicate key", `{"schema_version": "dome.requirements/v1", "schema_version": "x"}`, "duplicate key"},
		{"wrong version", strings.Replace(catalogText(reqOne), "dome.requirements/v1", "dome.requirements/v2", 1), "schema_version"},
		{"unknown field", strings.Replace(catalogText(reqOne), `"statement": "one"`, `"statement": "one", "owner": "me"`, 1), "owner"},
		{"two-line statement", strings.Replace(catalogText(reqOne), `"statement": "one"`, `"statement": "one\ntwo"`, 1), "requirements[0].statement"},
		{"bad status", strings.Replace(catalogText(reqOne), `"implemented"`, `"done"`, 1), "requirements[0].status"},
		{"planned without a note", catalogText(strings.Replace(reqPlan, `"note": "not yet", `, "", 1)), "note"},
		{"check with two references", catalogText(strings.Replace(reqOne, `"test": "TestOne"`, `"test": "TestOne", "script": "cmd/x/testdata/script/a.txtar"`, 1)), "requirements[0].checks[0]"},
		{"check with no reference", catalogText(strings.Replace(reqOne, `, "package": "pkg/a", "test": "TestOne"`, "", 1)), "requirements[0].checks[0]"},
		{"unknown kind", catalogText(strings.Replace(reqOne, "conformance_test", "unit_test", 1)), "kind"},
		{"duplicate id", catalogText(reqOne + "," + reqOne), `duplicate requirement id "A-1" (also at line`},
		{"unknown seed", catalogText(strings.Replace(reqOne, `"seed": "doc-a"`, `"seed": "doc-b"`, 1)), `unknown source document "doc-b"; known: doc-a`},
		{"check listed twice", catalogText(strings.Replace(reqOne, `"checks": [{"kind": "conformance_test", "package": "pkg/a", "test": "TestOne"}]`, `"checks": [{"kind": "conformance_test", "package": "pkg/a", "test": "TestOne"}, {"kind": "conformance_test", "package": "pkg/a", "test": "TestOne"}]`, 1)), "listed twice"},
		{"package escapes", catalogText(strings.Replace(reqOne, `"package": "pkg/a"`, `"package": "../a"`, 1)), "package"},
		{"script outside the script folders", catalogText(strings.Replace(reqTwo, "cmd/x/testdata/script/a.txtar", "cmd/y/a.txtar", 1)), "in no folder listed under script_dirs"},
		{"bad regexp", strings.Replace(catalogText(reqOne), `"A-[0-9]+"`, `"A-[0-9"`, 1), "not a regular expression"},
		{"bad glob", strings.Replace(catalogText(reqOne), `"docs/**/*.md"`, `"../docs/*.md"`, 1), "not a relative glob pattern"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseCatalog("cat.json", []byte(tc.doc))
			if err == nil || !errkind.IsInput(err) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an input error with %q", err, tc.want)
			}
		})
	}
}

func TestParseCatalog_ReportsEveryProblemWithItsLine(t *testing.T) {
	_, err := ParseCatalog("cat.json", catalog(reqOne+","+reqOne+","+strings.Replace(reqTwo, `"seed": "doc-a"`, `"seed": "nope"`, 1)))
	var ie *schemaval.InvalidError
	if !errors.As(err, &ie) || len(ie.Diags) != 2 {
		t.Fatalf("got %v", err)
	}
	for _, d := range ie.Diags {
		if d.Line == 0 || d.Field == "" {
			t.Errorf("diagnostic without a line or a field: %+v", d)
		}
	}
}

func TestVerify_MissingChecksAreBadInput(t *testing.T) {
	for _, tc := range []struct{ name, req, want string }{
		{"test", strings.Replace(reqOne, "TestOne", "TestGone", 1), "package pkg/a has no test TestGone"},
		{"subtest of a missing test", strings.Replace(reqOne, "TestOne", "TestGone/sub", 1), "has no test TestGone"},
		{"package", strings.Replace(reqOne, `"pkg/a"`, `"pkg/b"`, 1), "package pkg/b has no tests"},
		{"script", strings.Replace(reqTwo, "a.txtar", "c.txtar", 1), "cmd/x/testdata/script/c.txtar: no such script"},
		{"schema", strings.Replace(reqGate, "a.schema.json", "b.schema.json", 1), `has the $id "https://example.com/b.schema.json"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fsys := fixture()
			c := mustParse(t, catalog(tc.req))
			_, err := Verify(c, Inputs{Repo: fsys, Index: mustScan(t, fsys, c)})
			if err == nil || !errkind.IsInput(err) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an input error with %q", err, tc.want)
			}
		})
	}
	t.Run("schema that does not compile", func(t *testing.T) {
		fsys := fixture()
		fsys["pkg/a/schemas/a.schema.json"] = &fstest.MapFile{Data: []byte(`{"$id": "https://example.com/a.schema.json", "type": 3}`)}
		c := mustParse(t, catalog(reqGate))
		_, err := Verify(c, Inputs{Repo: fsys, Index: mustScan(t, fsys, c)})
		if err == nil || !strings.Contains(err.Error(), "does not compile") {
			t.Fatalf("got %v", err)
		}
	})
}

func gapsOf(rep *Report) []string {
	var out []string
	for _, g := range rep.Gaps {
		out = append(out, g.Problem+" "+g.ID+g.File)
	}
	sort.Strings(out)
	return out
}

func TestVerify_Gaps(t *testing.T) {
	fsys := fixture()
	fsys["docs/usage.md"] = &fstest.MapFile{Data: []byte("Usage.\n")}
	c := mustParse(t, catalog(strings.Join([]string{reqOne, reqTwo, reqNone, reqGate, reqPlan, reqOpt, reqReady}, ",")))
	rep, err := Verify(c, Inputs{Repo: fsys, Index: mustScan(t, fsys, c)})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"no_check A-3", "no_runnable_check A-4"}
	if got := gapsOf(rep); !reflect.DeepEqual(got, want) || rep.OK {
		t.Fatalf("gaps %v, want %v", got, want)
	}
	if len(rep.Promotable) != 1 || rep.Promotable[0].ID != "A-7" {
		t.Fatalf("promotable %+v: a planned requirement with checks", rep.Promotable)
	}
	if rep.Summary.Requirements != 7 || rep.Summary.RequiredImplemented != 4 || len(rep.Covered) != 0 {
		t.Fatalf("summary %+v covered %v", rep.Summary, rep.Covered)
	}
	if len(rep.Unmapped) != 1 || rep.Unmapped[0].Package != "cmd/x/testdata/script" || !reflect.DeepEqual(rep.Unmapped[0].Tests, []string{"b.txtar"}) {
		t.Fatalf("unmapped %+v", rep.Unmapped)
	}
	// Mapped, the catalogue passes.
	c = mustParse(t, catalog(strings.Join([]string{reqOne, reqTwo, reqPlan, reqOpt}, ",")))
	rep, err = Verify(c, Inputs{Repo: fsys, Index: mustScan(t, fsys, c)})
	if err != nil || !rep.OK {
		t.Fatalf("%v %+v", err, rep.Gaps)
	}
}

func TestVerify_DeprecatedPaths(t *testing.T) {
	fsys := fixture()
	fsys["docs/deep/more.md"] = &fstest.MapFile{Data: []byte("one old/place/\ntwo\nthree old/place/ and old/place/ again\n")}
	fsys["notes/old.md"] = &fstest.MapFile{Data: []byte("old/place/ is fine outside the active docs\n")}
	c := mustParse(t, catalog(reqOne))
	rep, err := Verify(c, Inputs{Repo: fsys, Index: mustScan(t, fsys, c)})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, g := range rep.Gaps {
		if g.Problem != GapDeprecatedPath || !strings.Contains(g.Detail, "use new/place/") {
			t.Fatalf("gap %+v", g)
		}
		got = append(got, g.File+":"+string(rune('0'+g.Line)))
	}
	want := []string{"docs/deep/more.md:1", "docs/deep/more.md:3", "docs/deep/more.md:3", "docs/usage.md:3"}
	if !reflect.DeepEqual(got, want) || rep.OK {
		t.Fatalf("got %v, want %v", got, want)
	}
}

func results(lines ...string) string {
	return `{"kind":"dome.test_results/v1","commit":"` + commit + `"}` + "\n" + strings.Join(lines, "\n") + "\n"
}

func ev(action, pkg, test string) string {
	s := `{"Time":"2026-01-02T03:04:05Z","Action":"` + action + `","Package":"example.com/m/` + pkg + `"`
	if test != "" {
		s += `,"Test":"` + test + `"`
	}
	return s + "}"
}

func out(pkg, test, text string) string {
	return `{"Action":"output","Package":"example.com/m/` + pkg + `","Test":"` + test + `","Output":"` + text + `\n"}`
}

func TestVerify_Results(t *testing.T) {
	fsys := fixture()
	fsys["docs/usage.md"] = &fstest.MapFile{Data: []byte("Usage.\n")}
	c := mustParse(t, catalog(strings.Join([]string{reqOne, reqTwo, reqReady}, ",")))
	idx := mustScan(t, fsys, c)
	pass := results(
		ev("start", "pkg/a", ""), ev("run", "pkg/a", "TestOne"), ev("pass", "pkg/a", "TestOne"),
		ev("run", "pkg/a", "TestTwo"), ev("run", "pkg/a", "TestTwo/sub"), ev("pass", "pkg/a", "TestTwo/sub"), ev("pass", "pkg/a", "TestTwo"),
		ev("run", "pkg/a", "FuzzThree"), ev("pass", "pkg/a", "FuzzThree"), ev("pass", "pkg/a", ""),
		ev("run", "cmd/x", "TestScripts"), ev("run", "cmd/x", "TestScripts/a"), ev("pass", "cmd/x", "TestScripts/a"), ev("pass", "cmd/x", "TestScripts"), ev("pass", "cmd/x", ""),
	)
	res, err := ParseResults("test.json", strings.NewReader(pass))
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Verify(c, Inputs{Repo: fsys, Index: idx, Results: res})
	if err != nil || !rep.OK {
		t.Fatalf("%v %+v", err, rep.Gaps)
	}
	if !reflect.DeepEqual(rep.Covered, []string{"A-1", "A-2", "A-7"}) || rep.Commit != commit || len(rep.Failed) != 0 {
		t.Fatalf("covered %v commit %s failed %v", rep.Covered, rep.Commit, rep.Failed)
	}
	if len(rep.Promotable) != 1 || rep.Promotable[0].ID != "A-7" {
		t.Fatalf("promotable %+v", rep.Promotable)
	}

	// The script failed, TestTwo/sub was skipped, FuzzThree never ran.
	bad := results(
		ev("run", "pkg/a", "TestOne"), ev("pass", "pkg/a", "TestOne"),
		ev("run", "pkg/a", "TestTwo"), ev("run", "pkg/a", "TestTwo/sub"), ev("skip", "pkg/a", "TestTwo/sub"), ev("pass", "pkg/a", "TestTwo"), ev("pass", "pkg/a", ""),
		ev("run", "cmd/x", "TestScripts"), ev("run", "cmd/x", "TestScripts/a"), out("cmd/x", "TestScripts/a", "FAIL: a.txtar:1: unexpected command failure"),
		ev("fail", "cmd/x", "TestScripts/a"), ev("fail", "cmd/x", "TestScripts"), ev("fail", "cmd/x", ""),
	)
	res, err = ParseResults("test.json", strings.NewReader(bad))
	if err != nil {
		t.Fatal(err)
	}
	rep, err = Verify(c, Inputs{Repo: fsys, Index: idx, Results: res})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, g := range rep.Gaps {
		got = append(got, g.ID+" "+g.Check+" "+g.Outcome)
	}
	want := []string{"A-2 test pkg/a TestTwo/sub skip", "A-2 script cmd/x/testdata/script/a.txtar fail", "A-7 test pkg/a FuzzThree not_run"}
	if !reflect.DeepEqual(got, want) || rep.OK || !reflect.DeepEqual(rep.Covered, []string{"A-1"}) {
		t.Fatalf("gaps %v, want %v; covered %v", got, want, rep.Covered)
	}
	if len(rep.Failed) != 1 || rep.Failed[0].Test != "TestScripts/a" || rep.Failed[0].Output[0] != "FAIL: a.txtar:1: unexpected command failure" {
		t.Fatalf("failed %+v: the leaf failure with its output", rep.Failed)
	}
}

func TestParseResults_Refusals(t *testing.T) {
	for _, tc := range []struct{ name, text, want string }{
		{"empty", "", "empty"},
		{"no header", ev("run", "pkg/a", "TestOne") + "\n", "line 1: not a results header"},
		{"header of another kind", `{"kind":"dome.test_results/v2","commit":"` + commit + `"}` + "\n", "line 1: not a results header"},
		{"header with a short commit", `{"kind":"dome.test_results/v1","commit":"0123456"}` + "\n", "is not a full commit id"},
		{"header with unknown fields", `{"kind":"dome.test_results/v1","commit":"` + commit + `","branch":"main"}` + "\n", "line 1"},
		{"not JSON", results("PASS"), "line 2: not a go test -json event"},
		{"truncated line", results(`{"Action":"pass","Package":"x"`), "line 2: not a go test -json event"},
		{"no action", results(`{"Package":"x","Test":"TestX"}`), `line 2: not a go test -json event: no "Action"`},
		{"no package", results(`{"Action":"pass","Test":"TestX"}`), `line 2: a "pass" event without "Package"`},
		{"build output without import path", results(`{"Action":"build-output","Output":"x"}`), `without "ImportPath"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseResults("test.json", strings.NewReader(tc.text))
			if err == nil || !errkind.IsInput(err) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an input error with %q", err, tc.want)
			}
		})
	}
	t.Run("too many tests", func(t *testing.T) {
		var b strings.Builder
		b.WriteString(results())
		for i := 0; i <= MaxResultsTests; i++ {
			fmt.Fprintf(&b, `{"Action":"run","Package":"p","Test":"Test%d"}`+"\n", i)
		}
		_, err := ParseResults("test.json", strings.NewReader(b.String()))
		if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("more than %d distinct tests", MaxResultsTests)) {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("line over the limit", func(t *testing.T) {
		long := results(`{"Action":"output","Package":"x","Output":"` + strings.Repeat("a", MaxResultsLine) + `"}`)
		_, err := ParseResults("test.json", strings.NewReader(long))
		if err == nil || !strings.Contains(err.Error(), "line 2: longer than") {
			t.Fatalf("got %v", err)
		}
	})
}

func TestResults_OutcomesAndCommit(t *testing.T) {
	text := results(
		`{"ImportPath":"example.com/m/pkg/b [example.com/m/pkg/b.test]","Action":"build-output","Output":"b_test.go:3:1: syntax error\n"}`,
		`{"ImportPath":"example.com/m/pkg/b [example.com/m/pkg/b.test]","Action":"build-fail"}`,
		`{"Action":"fail","Package":"example.com/m/pkg/b","FailedBuild":"example.com/m/pkg/b [example.com/m/pkg/b.test]"}`,
		ev("run", "pkg/a", "TestHang"), ev("fail", "pkg/a", ""),
		ev("run", "pkg/c", "TestX"), ev("pass", "pkg/c", "TestX"), ev("run", "pkg/c", "TestX"), ev("fail", "pkg/c", "TestX"),
		ev("pass", "pkg/d", ""), ev("skip", "pkg/f", ""),
		`{"Action":"some-future-action","Package":"example.com/m/pkg/d"}`,
		"",
	)
	res, err := ParseResults("test.json", strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ pkg, test, want, why string }{
		{"pkg/a", "TestHang", OutcomeIncomplete, "started"},
		{"pkg/b", "TestAny", OutcomeNotRun, "did not build"},
		{"pkg/c", "TestX", OutcomeFail, ""},
		{"pkg/d", "TestY", OutcomeNotRun, "the test did not"},
		{"pkg/e", "TestZ", OutcomeNotRun, "not in the results"},
		{"pkg/f", "TestZ", OutcomeNotRun, "reported no tests"},
	} {
		got, why := res.Outcome("example.com/m/"+tc.pkg, tc.test)
		if got != tc.want || !strings.Contains(why, tc.why) {
			t.Errorf("%s %s: %s (%s), want %s (%s)", tc.pkg, tc.test, got, why, tc.want, tc.why)
		}
	}
	f := res.Failures()
	if len(f) != 3 || f[0].Test != "TestHang" || f[1].Package != "example.com/m/pkg/b" || f[1].Output[0] != "b_test.go:3:1: syntax error" || f[2].Test != "TestX" {
		t.Fatalf("failures %+v", f)
	}
	if err := res.RequireCommit(commit); err != nil {
		t.Fatal(err)
	}
	err = res.RequireCommit(strings.Repeat("f", 40))
	if err == nil || !errkind.IsInput(err) || !strings.Contains(err.Error(), "the tests ran at commit 0123456789ab, but HEAD is ffffffffffff") {
		t.Fatalf("got %v", err)
	}
}

func TestTail_KeepsTheLastLines(t *testing.T) {
	var tl tail
	for i := 0; i < 45; i++ {
		tl.add(strings.Repeat("x", i) + "\n")
	}
	got := tl.get()
	if len(got) != tailLines || len(got[0]) != 25 || len(got[tailLines-1]) != 44 {
		t.Fatalf("tail %d lines, first %d, last %d", len(got), len(got[0]), len(got[len(got)-1]))
	}
	tl = tail{}
	tl.add(strings.Repeat("y", 2000))
	if len(tl.get()[0]) > tailLineBytes+3 {
		t.Fatal("a long line is not cut")
	}
}

func TestMatrix(t *testing.T) {
	fsys := fixture()
	c := mustParse(t, catalog(strings.Join([]string{reqOne, reqTwo, reqPlan, reqOpt}, ",")))
	idx := mustScan(t, fsys, c)
	m := BuildMatrix(c, idx, nil)
	if len(m.Seeds) != 1 || m.Seeds[0] != (SeedSummary{Seed: "doc-a", Title: "Document A", Total: 4, Required: 3, Implemented: 3, Planned: 1}) {
		t.Fatalf("summary %+v", m.Seeds)
	}
	md := string(m.Markdown())
	for _, want := range []string{
		"| Document A (`doc-a`) | 4 | 3 | 3 | 0 | 1 | - |",
		"| A-2 | 1 | two | required | implemented | replay_test: `test pkg/a TestTwo/sub`<br>conformance_test: `script cmd/x/testdata/script/a.txtar`<br>schema_gate: `schema https://example.com/a.schema.json` | - |",
		"| A-5 | 3 | five | required | planned | - | - |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
	res, err := ParseResults("test.json", strings.NewReader(results(ev("run", "pkg/a", "TestOne"), ev("pass", "pkg/a", "TestOne"), ev("run", "pkg/a", "TestTwo/sub"), ev("fail", "pkg/a", "TestTwo/sub"))))
	if err != nil {
		t.Fatal(err)
	}
	m = BuildMatrix(c, idx, res)
	results := map[string]string{}
	for _, r := range m.Rows {
		results[r.ID] = r.Result
	}
	if want := map[string]string{"A-1": "pass", "A-2": "fail", "A-5": "none", "A-6": "none"}; !reflect.DeepEqual(results, want) || m.Seeds[0].Covered != 1 {
		t.Fatalf("results %v covered %d", results, m.Seeds[0].Covered)
	}
	if !strings.Contains(string(m.Markdown()), "| A-1 | 1 | one | required | implemented | conformance_test: `test pkg/a TestOne` (pass) | pass |") {
		t.Fatalf("markdown with results:\n%s", m.Markdown())
	}
	if cell("a|b\nc") != `a\|b c` || cell("") != "-" {
		t.Fatal("cell")
	}
}

func TestVerify_Sources(t *testing.T) {
	fsys := fixture()
	fsys["docs/usage.md"] = &fstest.MapFile{Data: []byte("Usage.\n")}
	sources := fstest.MapFS{"doc-a.md": {Data: []byte("# A\n\nA-1: the thing **MUST** be\n   wrapped `nicely`.\nA-9 is new.\nThe other thing MUST hold.\n")}}
	quoted := strings.Replace(reqOne, `"checks"`, `"quotes": ["the thing MUST be wrapped nicely."], "checks"`, 1)
	c := mustParse(t, catalog(quoted))
	rep, err := Verify(c, Inputs{Repo: fsys, Index: mustScan(t, fsys, c), Sources: sources})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, g := range rep.Gaps {
		got = append(got, g.Problem+" "+g.ID+" "+g.File+":"+string(rune('0'+g.Line)))
	}
	want := []string{"uncovered_source A-9 doc-a.md:5", "uncovered_source  doc-a.md:6"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("gaps %v, want %v", got, want)
	}
	c = mustParse(t, catalog(strings.Replace(quoted, "wrapped nicely", "wrapped badly", 1)))
	if _, err := Verify(c, Inputs{Repo: fsys, Index: mustScan(t, fsys, c), Sources: sources}); err == nil || !strings.Contains(err.Error(), "A-1: quote not found in doc-a.md") {
		t.Fatalf("got %v", err)
	}
	if _, err := Verify(c, Inputs{Repo: fsys, Index: mustScan(t, fsys, c), Sources: fstest.MapFS{}}); err == nil || !strings.Contains(err.Error(), "cannot read doc-a.md") {
		t.Fatalf("got %v", err)
	}
}

// TestRepositoryCatalogue holds this repository to its own catalogue: it
// parses, every check it names exists, no required and implemented
// requirement lacks a check, no active doc names a deprecated path, and,
// where the documents it was written from are beside the clone, every
// quote is in its document and every requirement line is held.
func TestRepositoryCatalogue(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(root, CatalogPath))
	if err != nil {
		t.Fatal(err)
	}
	c, err := ParseCatalog(CatalogPath, data)
	if err != nil {
		t.Fatal(err)
	}
	fsys := os.DirFS(root)
	in := Inputs{Repo: fsys, Index: mustScan(t, fsys, c)}
	if dir := filepath.Join(root, "..", "shared", "seeds"); isDir(dir) {
		in.Sources = os.DirFS(dir)
	} else {
		t.Logf("%s not found: quotes and coverage of the source documents not checked", dir)
	}
	rep, err := Verify(c, in)
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range rep.Gaps {
		t.Errorf("gap: %s", g)
	}
	seeds := map[string]bool{}
	for _, r := range c.Requirements {
		seeds[r.Seed] = true
	}
	if len(c.Requirements) < 250 || len(seeds) != 5 {
		t.Fatalf("%d requirements from %d documents", len(c.Requirements), len(seeds))
	}
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

// TestVerify_SameBytesTwice: the report and the matrix of the same inputs
// are the same bytes, run after run (maps inside are never iterated into
// the output unsorted).
func TestVerify_SameBytesTwice(t *testing.T) {
	fsys := fixture()
	text := results(
		ev("run", "pkg/a", "TestOne"), out("pkg/a", "TestOne", "one"), ev("fail", "pkg/a", "TestOne"),
		ev("run", "pkg/a", "TestTwo/sub"), out("pkg/a", "TestTwo/sub", "two"), ev("fail", "pkg/a", "TestTwo/sub"),
		ev("run", "cmd/x", "TestScripts/a"), ev("fail", "cmd/x", "TestScripts/a"), ev("fail", "cmd/x", ""), ev("fail", "pkg/a", ""),
	)
	var first []byte
	for i := 0; i < 20; i++ {
		c := mustParse(t, catalog(strings.Join([]string{reqOne, reqTwo, reqNone, reqGate, reqPlan, reqOpt, reqReady}, ",")))
		idx := mustScan(t, fsys, c)
		res, err := ParseResults("test.json", strings.NewReader(text))
		if err != nil {
			t.Fatal(err)
		}
		rep, err := Verify(c, Inputs{Repo: fsys, Index: idx, Results: res})
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(struct {
			R *Report
			M *Matrix
		}{rep, BuildMatrix(c, idx, res)})
		if err != nil {
			t.Fatal(err)
		}
		if first == nil {
			first = b
		} else if !bytes.Equal(first, b) {
			t.Fatalf("run %d differs:\n%s\n%s", i, first, b)
		}
	}
}
