package trace

import (
	"fmt"
	"io/fs"
	"sort"
	"strconv"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/dome-registry/dome/pkg/schemaval"
)

// Problems a gap can have.
const (
	GapNoCheck         = "no_check"          // a required, implemented requirement with no check
	GapNoRunnableCheck = "no_runnable_check" // ... whose only checks are schemas
	GapNotPassed       = "not_passed"        // a mapped check that failed, was skipped or did not run
	GapDeprecatedPath  = "deprecated_path"   // a deprecated path in an active doc
	GapUncovered       = "uncovered_source"  // a source line or id no entry holds (with --sources)
)

// Gap is one reason the check fails.
type Gap struct {
	ID      string `json:"id,omitempty"`
	Problem string `json:"problem"`
	Check   string `json:"check,omitempty"`
	Outcome string `json:"outcome,omitempty"`
	File    string `json:"file,omitempty"`
	Line    int    `json:"line,omitempty"`
	Detail  string `json:"detail"`
}

func (g Gap) String() string {
	var b strings.Builder
	if g.File != "" {
		b.WriteString(g.File)
		if g.Line > 0 {
			b.WriteString(":" + strconv.Itoa(g.Line))
		}
		b.WriteString(": ")
	}
	if g.ID != "" {
		b.WriteString(g.ID + ": ")
	}
	if g.Check != "" {
		b.WriteString(g.Check + ": ")
	}
	b.WriteString(g.Detail)
	return b.String()
}

// CheckResult is one mapped check and what the results say of it.
type CheckResult struct {
	Kind    string `json:"kind"`
	Check   string `json:"check"`
	Outcome string `json:"outcome,omitempty"` // "" without results
	Why     string `json:"why,omitempty"`
}

// Promotion is a planned requirement that has checks (with results: that
// all passed): a candidate for partial or implemented, to review by hand.
type Promotion struct {
	ID     string `json:"id"`
	Status string `json:"status"`
	Checks int    `json:"checks"`
	Note   string `json:"note,omitempty"`
}

// Unmapped is a package's tests (or a script folder's stories) that no
// requirement maps.
type Unmapped struct {
	Package string   `json:"package"`
	Mapped  int      `json:"mapped"`
	Tests   []string `json:"tests"`
}

// Summary counts a report.
type Summary struct {
	Requirements        int `json:"requirements"`
	RequiredImplemented int `json:"required_implemented"`
	Checks              int `json:"checks"`
	Covered             int `json:"covered"`
	Gaps                int `json:"gaps"`
}

// Report is the outcome of Verify.
type Report struct {
	Catalog string  `json:"catalog"`
	Results string  `json:"results,omitempty"`
	Commit  string  `json:"commit,omitempty"`
	Dirty   bool    `json:"dirty,omitempty"`
	OK      bool    `json:"ok"`
	Summary Summary `json:"summary"`
	// Covered lists, with results, the requirements with at least one check
	// go test runs whose checks all passed.
	Covered    []string    `json:"covered"`
	Gaps       []Gap       `json:"gaps"`
	Promotable []Promotion `json:"promotable"`
	Unmapped   []Unmapped  `json:"unmapped"`
	// Failed lists, with results, every test that failed, mapped or not.
	Failed []Failure `json:"failed"`
}

// Inputs are what Verify reads besides the catalogue.
type Inputs struct {
	Repo    fs.FS    // the repository's worktree: the active docs, the schemas
	Index   *Index   // from Scan
	Results *Results // nil: the checks' existence only
	Sources fs.FS    // nil: the source documents are not read
}

// Verify reports the catalogue's gaps. A check naming a test, script or
// schema the repository does not have, a schema that does not compile, a
// quote not found in its source document or an active doc that cannot be
// read makes the catalogue bad input: the error is a
// *schemaval.InvalidError (exit 2) listing each, and no report.
func Verify(cat *Catalog, in Inputs) (*Report, error) {
	rep := &Report{Catalog: cat.source, Covered: []string{}, Gaps: []Gap{}, Promotable: []Promotion{}, Unmapped: []Unmapped{}, Failed: []Failure{}}
	if in.Results != nil {
		rep.Results, rep.Commit, rep.Dirty = in.Results.Source, in.Results.Header.Commit, in.Results.Header.Dirty
		if f := in.Results.Failures(); f != nil {
			rep.Failed = f
		}
	}
	if diags := missingChecks(cat, in); len(diags) > 0 {
		return nil, schemaval.Invalid(cat.source, diags)
	}
	rows := evaluate(cat, in.Index, in.Results)
	for i, r := range cat.Requirements {
		rep.Summary.Requirements++
		rep.Summary.Checks += len(r.Checks)
		results := rows[i]
		requiredImpl := r.Level == LevelRequired && r.Status == StatusImplemented
		if requiredImpl {
			rep.Summary.RequiredImplemented++
		}
		runs := 0
		for _, c := range r.Checks {
			if c.Runs() {
				runs++
			}
		}
		switch {
		case requiredImpl && len(r.Checks) == 0:
			rep.Gaps = append(rep.Gaps, Gap{ID: r.ID, Problem: GapNoCheck, Detail: "required and implemented, but no check holds it: map a test, a script or a schema gate"})
		case requiredImpl && runs == 0:
			rep.Gaps = append(rep.Gaps, Gap{ID: r.ID, Problem: GapNoRunnableCheck, Detail: "only schemas hold it: a schema shows that the gate exists, not that it is applied; map a test that feeds the gate bad input"})
		}
		if in.Results == nil {
			if r.Status == StatusPlanned && runs > 0 {
				rep.Promotable = append(rep.Promotable, Promotion{ID: r.ID, Status: r.Status, Checks: len(r.Checks), Note: r.Note})
			}
			continue
		}
		passed := 0
		for _, cr := range results {
			switch cr.Outcome {
			case OutcomePass, OutcomeCompiled:
				passed++
			default:
				detail := cr.Outcome
				if cr.Why != "" {
					detail += ": " + cr.Why
				}
				rep.Gaps = append(rep.Gaps, Gap{ID: r.ID, Problem: GapNotPassed, Check: cr.Check, Outcome: cr.Outcome, Detail: detail})
			}
		}
		if runs > 0 && passed == len(results) {
			rep.Covered = append(rep.Covered, r.ID)
			if r.Status == StatusPlanned {
				rep.Promotable = append(rep.Promotable, Promotion{ID: r.ID, Status: r.Status, Checks: len(r.Checks), Note: r.Note})
			}
		}
	}
	dep, err := deprecatedRefs(cat, in.Repo)
	if err != nil {
		return nil, err
	}
	rep.Gaps = append(rep.Gaps, dep...)
	if in.Sources != nil {
		gaps, diags := checkSources(cat, in.Sources)
		if len(diags) > 0 {
			return nil, schemaval.Invalid(cat.source, diags)
		}
		rep.Gaps = append(rep.Gaps, gaps...)
	}
	rep.Unmapped = unmapped(cat, in.Index)
	sort.Strings(rep.Covered)
	rep.Summary.Covered = len(rep.Covered)
	rep.Summary.Gaps = len(rep.Gaps)
	rep.OK = len(rep.Gaps) == 0
	return rep, nil
}

// missingChecks lists every check that names what the repository does not
// have, and every referenced schema that does not compile.
func missingChecks(cat *Catalog, in Inputs) []schemaval.Diagnostic {
	var diags []schemaval.Diagnostic
	compiled := map[string]error{}
	for i, r := range cat.Requirements {
		for k, c := range r.Checks {
			ptr := pointer("requirements", i, "checks", k)
			switch {
			case c.Script != "":
				if !in.Index.Scripts[c.Script] {
					diags = append(diags, cat.diag(pointer(ptr, "script"), fmt.Sprintf("%s: no such script", c.Script), "name an existing story; list them with ls "+pathDir(c.Script)))
				}
			case c.Schema != "":
				files := in.Index.Schemas[c.Schema]
				if len(files) == 0 {
					diags = append(diags, cat.diag(pointer(ptr, "schema"), fmt.Sprintf("no *.schema.json in the repository has the $id %q", c.Schema), "name a schema by its $id"))
					continue
				}
				for _, f := range files {
					err, done := compiled[f]
					if !done {
						err = compileFile(in.Repo, f)
						compiled[f] = err
					}
					if err != nil {
						diags = append(diags, cat.diag(pointer(ptr, "schema"), fmt.Sprintf("%s (%s) does not compile: %v", c.Schema, f, err), "fix the schema"))
					}
				}
			default:
				if _, ok := in.Index.Tests[c.Package]; !ok {
					diags = append(diags, cat.diag(pointer(ptr, "package"), fmt.Sprintf("package %s has no tests (or is not a package of module %s)", c.Package, in.Index.Module), "name the package by its folder relative to the module root, e.g. pkg/trace"))
				} else if !in.Index.HasTest(c.Package, c.Test) {
					top, _, _ := strings.Cut(c.Test, "/")
					diags = append(diags, cat.diag(pointer(ptr, "test"), fmt.Sprintf("package %s has no test %s", c.Package, top), "name an existing test; list them with go test -list . ./"+c.Package))
				}
			}
		}
	}
	return diags
}

func pathDir(p string) string {
	if i := strings.LastIndexByte(p, '/'); i > 0 {
		return p[:i]
	}
	return "."
}

func compileFile(fsys fs.FS, name string) error {
	data, err := readBounded(fsys, name)
	if err != nil {
		return err
	}
	_, err = schemaval.Compile(name, data)
	return err
}

// evaluate returns, per requirement, each check with its outcome (none
// without results).
func evaluate(cat *Catalog, idx *Index, res *Results) [][]CheckResult {
	out := make([][]CheckResult, len(cat.Requirements))
	for i, r := range cat.Requirements {
		rows := make([]CheckResult, 0, len(r.Checks))
		for _, c := range r.Checks {
			cr := CheckResult{Kind: c.Kind, Check: c.String()}
			if res != nil {
				cr.Outcome, cr.Why = outcome(cat, idx, res, c)
			}
			rows = append(rows, cr)
		}
		out[i] = rows
	}
	return out
}

func outcome(cat *Catalog, idx *Index, res *Results, c Check) (string, string) {
	switch {
	case c.Schema != "":
		return OutcomeCompiled, ""
	case c.Script != "":
		d, _ := cat.ScriptDirOf(c.Script)
		name := strings.TrimSuffix(c.Script[len(d.Dir)+1:], ".txtar")
		return res.Outcome(idx.ImportPath(d.Package), d.Test+"/"+name)
	}
	return res.Outcome(idx.ImportPath(c.Package), c.Test)
}

// deprecatedRefs finds every deprecated path in the active docs.
func deprecatedRefs(cat *Catalog, repo fs.FS) ([]Gap, error) {
	if len(cat.DeprecatedPaths) == 0 {
		return nil, nil
	}
	files := map[string]bool{}
	for _, g := range cat.ActiveDocs {
		m, err := doublestar.Glob(repo, g, doublestar.WithFilesOnly())
		if err != nil {
			return nil, &errkind.InputError{Source: cat.source, Field: "active_docs", Problem: fmt.Sprintf("%q: %v", g, err)}
		}
		for _, f := range m {
			files[f] = true
		}
	}
	names := make([]string, 0, len(files))
	for f := range files {
		names = append(names, f)
	}
	sort.Strings(names)
	var gaps []Gap
	for _, f := range names {
		data, err := readBounded(repo, f)
		if err != nil {
			return nil, &errkind.InputError{Source: f, Problem: "cannot read this active doc: " + err.Error(), Hint: "active_docs globs must match readable pages"}
		}
		text := string(data)
		for _, d := range cat.DeprecatedPaths {
			for off := 0; ; {
				i := strings.Index(text[off:], d.Path)
				if i < 0 {
					break
				}
				at := off + i
				gaps = append(gaps, Gap{Problem: GapDeprecatedPath, File: f, Line: 1 + strings.Count(text[:at], "\n"),
					Detail: fmt.Sprintf("deprecated path %q: use %s", d.Path, d.UseInstead)})
				off = at + len(d.Path)
			}
		}
	}
	return gaps, nil
}

// unmapped lists, per package, the top-level tests no check names.
func unmapped(cat *Catalog, idx *Index) []Unmapped {
	mapped := map[string]map[string]bool{}
	mark := func(pkg, test string) {
		if mapped[pkg] == nil {
			mapped[pkg] = map[string]bool{}
		}
		mapped[pkg][test] = true
	}
	scriptTests := map[string]bool{}
	for _, d := range cat.ScriptDirs {
		scriptTests[d.Package+"\x00"+d.Test] = true
	}
	for _, r := range cat.Requirements {
		for _, c := range r.Checks {
			switch {
			case c.Script != "":
				mark(pathDir(c.Script), c.Script[strings.LastIndexByte(c.Script, '/')+1:])
			case c.Test != "":
				top, _, _ := strings.Cut(c.Test, "/")
				mark(c.Package, top)
			}
		}
	}
	var out []Unmapped
	for _, p := range idx.Packages() {
		u := Unmapped{Package: p, Tests: []string{}}
		for t := range idx.Tests[p] {
			if scriptTests[p+"\x00"+t] {
				continue // its stories are counted with their folder
			}
			if mapped[p][t] {
				u.Mapped++
			} else {
				u.Tests = append(u.Tests, t)
			}
		}
		if len(u.Tests) > 0 {
			sort.Strings(u.Tests)
			out = append(out, u)
		}
	}
	dirs := map[string]bool{}
	for s := range idx.Scripts {
		dirs[pathDir(s)] = true
	}
	for _, d := range sortedKeys(dirs) {
		u := Unmapped{Package: d, Tests: []string{}}
		for s := range idx.Scripts {
			name := s[strings.LastIndexByte(s, '/')+1:]
			if pathDir(s) != d {
				continue
			}
			if mapped[d][name] {
				u.Mapped++
			} else {
				u.Tests = append(u.Tests, name)
			}
		}
		if len(u.Tests) > 0 {
			sort.Strings(u.Tests)
			out = append(out, u)
		}
	}
	return out
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
