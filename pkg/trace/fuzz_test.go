package trace

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/dome-registry/dome/pkg/errkind"
)

// FuzzParseCatalog: any bytes give a catalogue or an input error, never a
// panic; a catalogue that parses has unique ids, known sources and checks
// that name exactly one thing, and verifies against a repository without a
// panic.
func FuzzParseCatalog(f *testing.F) {
	// Small seeds: the fuzzer minimizes every input that finds new
	// coverage, which takes long for a large one.
	f.Add(catalog(reqTwo))
	f.Add(catalog(reqPlan))
	f.Add([]byte(`{"schema_version": "dome.requirements/v1"}`))
	f.Add([]byte(`[]`))
	fsys := fixture()
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := ParseCatalog("cat.json", data)
		if err != nil {
			if !errkind.IsInput(err) {
				t.Fatalf("not an input error: %v", err)
			}
			return
		}
		ids := map[string]bool{}
		for _, r := range c.Requirements {
			if ids[r.ID] {
				t.Fatalf("duplicate id %s accepted", r.ID)
			}
			ids[r.ID] = true
			if _, ok := c.Seed(r.Seed); !ok {
				t.Fatalf("unknown seed %s accepted", r.Seed)
			}
			for _, ch := range r.Checks {
				n := 0
				for _, s := range []string{ch.Test, ch.Script, ch.Schema} {
					if s != "" {
						n++
					}
				}
				if n != 1 {
					t.Fatalf("check %+v names %d things", ch, n)
				}
			}
		}
		idx, err := Scan(fsys, c, ScanOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if rep, err := Verify(c, Inputs{Repo: fsys, Index: idx}); err == nil {
			BuildMatrix(c, idx, nil).Markdown()
			if _, err := json.Marshal(rep); err != nil {
				t.Fatal(err)
			}
		} else if !errkind.IsInput(err) {
			t.Fatalf("not an input error: %v", err)
		}
	})
}

// FuzzParseResults: any bytes give results or an input error naming a
// line, never a panic; what parses answers every question about it.
func FuzzParseResults(f *testing.F) {
	f.Add([]byte(results(ev("run", "pkg/a", "TestOne"), ev("pass", "pkg/a", "TestOne"), ev("pass", "pkg/a", ""))))
	f.Add([]byte(results(ev("run", "pkg/a", "TestTwo/sub"), out("pkg/a", "TestTwo/sub", "boom"), ev("fail", "pkg/a", "TestTwo/sub"), ev("fail", "pkg/a", "TestTwo"))))
	f.Add([]byte(results(`{"ImportPath":"example.com/m/pkg/b [example.com/m/pkg/b.test]","Action":"build-output","Output":"x\n"}`, `{"Action":"fail","Package":"example.com/m/pkg/b","FailedBuild":"example.com/m/pkg/b"}`)))
	f.Add([]byte(results("PASS")))
	f.Add([]byte(`{"kind":"dome.test_results/v1"}`))
	f.Add([]byte("\n\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		res, err := ParseResults("test.json", bytes.NewReader(data))
		if err != nil {
			if !errkind.IsInput(err) {
				t.Fatalf("not an input error: %v", err)
			}
			return
		}
		if !isCommitID(res.Header.Commit) {
			t.Fatalf("header commit %q accepted", res.Header.Commit)
		}
		for k := range res.tests {
			if o, _ := res.Outcome(k.pkg, k.test); o == "" {
				t.Fatal("no outcome")
			}
		}
		for _, fl := range res.Failures() {
			if len(fl.Output) > 2*tailLines {
				t.Fatalf("failure output of %d lines", len(fl.Output))
			}
		}
	})
}
