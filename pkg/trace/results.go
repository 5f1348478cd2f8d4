package trace

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/dome-registry/dome/pkg/errkind"
)

// ResultsKind is the kind of the header line that starts a results file.
const ResultsKind = "dome.test_results/v1"

// MaxResultsLine bounds one line of a results file.
const MaxResultsLine = 16 << 20

// MaxResultsTests bounds the distinct tests a results file may name (a run
// of this module names a few thousand).
const MaxResultsTests = 200000

// maxTailBytes bounds the output kept for failure reports over all tests.
const maxTailBytes = 64 << 20

// Outcomes of a check in a results file.
const (
	OutcomePass       = "pass"
	OutcomeFail       = "fail"
	OutcomeSkip       = "skip"
	OutcomeIncomplete = "incomplete" // started, never finished: a panic, a timeout, a killed binary
	OutcomeNotRun     = "not_run"
	OutcomeCompiled   = "compiled" // a schema trace compiled itself
)

// isCommitID reports whether s is a full commit id: 40 (SHA-1) or 64
// (SHA-256) lower-case hex digits. (A regular expression compiled at
// package init cost every dome command 29 KB and ~50 µs before main.)
func isCommitID(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// Header is the first line of a results file: the commit the tests ran at.
type Header struct {
	Kind   string `json:"kind"`
	Commit string `json:"commit"`
	// Dirty is true when the worktree had changes that were not committed.
	Dirty bool `json:"dirty,omitempty"`
}

// Results is what one "go test -json" run reported, by package and test.
type Results struct {
	Source string
	Header Header
	Lines  int
	tests  map[testKey]*tally
	pkgs   map[string]*pkgTally
	builds map[string]*tail // build output by package import path
	kept   int              // bytes of output kept in tails
}

type testKey struct{ pkg, test string }

type tally struct {
	started, pass, fail, skip int
	tail                      tail
}

type pkgTally struct {
	pass, fail, skip int
	buildFailed      bool
	tail             tail
}

// tail keeps the last lines a test printed, each cut to tailLineBytes:
// what a failure report shows.
type tail struct {
	lines []string
	next  int
}

const (
	tailLines     = 20
	tailLineBytes = 512
)

// add keeps line and returns how many bytes more the tail holds.
func (t *tail) add(line string) int {
	line = strings.TrimRight(line, "\n")
	if len(line) > tailLineBytes {
		line = truncate(line, tailLineBytes)
	}
	line = strings.Clone(line) // not a window onto a larger buffer
	if len(t.lines) < tailLines {
		t.lines = append(t.lines, line)
		return len(line)
	}
	old := len(t.lines[t.next])
	t.lines[t.next] = line
	t.next = (t.next + 1) % tailLines
	return len(line) - old
}

func (t *tail) get() []string {
	out := make([]string, 0, len(t.lines))
	out = append(out, t.lines[t.next:]...)
	return append(out, t.lines[:t.next]...)
}

// Failure is a test that failed or never finished and none of whose
// subtests did, or a package that failed without such a test (a build
// failure, a panic in TestMain), with the last lines it printed.
type Failure struct {
	Package string   `json:"package"`
	Test    string   `json:"test,omitempty"`
	Output  []string `json:"output"`
}

// event is the part of a test2json event that trace reads; Output, the
// bulk of a log, is checked as JSON but never copied.
type event struct {
	Action      *string `json:"Action"`
	Package     string  `json:"Package"`
	Test        string  `json:"Test"`
	ImportPath  string  `json:"ImportPath"`
	FailedBuild string  `json:"FailedBuild"`
	Output      string  `json:"Output"`
}

// ParseResults reads a results file: a Header line, then the output of
// "go test -json", one event per line. A missing or malformed header, a
// line that is not a test2json event or a line over MaxResultsLine is an
// *errkind.InputError naming source and the line.
func ParseResults(source string, r io.Reader) (*Results, error) {
	res := &Results{Source: source, tests: map[testKey]*tally{}, pkgs: map[string]*pkgTally{}, builds: map[string]*tail{}}
	br := bufio.NewReaderSize(r, 1<<20)
	var long []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			if len(long)+len(chunk) > MaxResultsLine {
				return nil, res.lineErr(res.Lines+1, fmt.Sprintf("longer than %d bytes", MaxResultsLine), "")
			}
			long = append(long, chunk...)
			continue
		}
		if err != nil && err != io.EOF {
			return nil, &errkind.InputError{Source: source, Problem: "cannot read: " + err.Error()}
		}
		line := chunk
		if long != nil {
			line = append(long, chunk...)
			long = nil
		}
		if len(line) > MaxResultsLine {
			return nil, res.lineErr(res.Lines+1, fmt.Sprintf("longer than %d bytes", MaxResultsLine), "")
		}
		if len(line) > 0 {
			res.Lines++
			if err := res.line(bytes.TrimRight(line, "\r\n")); err != nil {
				return nil, err
			}
		}
		if err == io.EOF {
			break
		}
	}
	if res.Lines == 0 {
		return nil, &errkind.InputError{Source: source, Problem: "empty: no header and no test events", Hint: headerHint}
	}
	return res, nil
}

const headerHint = `make it with "make test TESTJSON=FILE": a first line {"kind":"` + ResultsKind + `","commit":"<sha>"} then the output of go test -json`

func (res *Results) lineErr(n int, problem, hint string) error {
	if hint == "" {
		hint = "pass the output of go test -json headed by the commit it ran at (" + headerHint + ")"
	}
	return &errkind.InputError{Source: res.Source, Field: fmt.Sprintf("line %d", n), Problem: problem, Hint: hint}
}

func (res *Results) line(line []byte) error {
	n := res.Lines
	if n == 1 {
		var h Header
		dec := json.NewDecoder(bytes.NewReader(line))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&h); err != nil || h.Kind != ResultsKind {
			return res.lineErr(1, "not a results header: the first line must name the commit the tests ran at", headerHint)
		}
		if !isCommitID(h.Commit) {
			return res.lineErr(1, fmt.Sprintf("header commit %q is not a full commit id", truncate(h.Commit, 80)), headerHint)
		}
		if dec.More() {
			return res.lineErr(1, "trailing data after the header", headerHint)
		}
		res.Header = h
		return nil
	}
	if len(bytes.TrimSpace(line)) == 0 {
		return nil
	}
	var ev event
	if err := json.Unmarshal(line, &ev); err != nil {
		return res.lineErr(n, "not a go test -json event: "+truncate(err.Error(), 200), "")
	}
	if ev.Action == nil || *ev.Action == "" {
		return res.lineErr(n, `not a go test -json event: no "Action"`, "")
	}
	act := *ev.Action
	switch act {
	case "build-output", "build-fail":
		if ev.ImportPath == "" {
			return res.lineErr(n, fmt.Sprintf(`a %q event without "ImportPath"`, act), "")
		}
		if act == "build-output" {
			pkg, _, _ := strings.Cut(ev.ImportPath, " ")
			b := res.builds[pkg]
			if b == nil {
				b = &tail{}
				res.builds[pkg] = b
			}
			res.keep(b, ev.Output)
		}
		return nil
	}
	if ev.Package == "" {
		return res.lineErr(n, fmt.Sprintf(`a %q event without "Package"`, act), "")
	}
	if ev.Test == "" {
		p := res.pkgs[ev.Package]
		if p == nil {
			p = &pkgTally{}
			res.pkgs[ev.Package] = p
		}
		switch act {
		case "pass":
			p.pass++
		case "fail":
			p.fail++
			if ev.FailedBuild != "" {
				p.buildFailed = true
			}
		case "skip":
			p.skip++
		case "output":
			res.keep(&p.tail, ev.Output)
		}
		return nil
	}
	k := testKey{ev.Package, ev.Test}
	t := res.tests[k]
	if t == nil {
		if len(res.tests) >= MaxResultsTests {
			return res.lineErr(n, fmt.Sprintf("more than %d distinct tests", MaxResultsTests), "pass the output of one go test -json run")
		}
		t = &tally{}
		res.tests[k] = t
	}
	switch act {
	case "run":
		t.started++
	case "pass":
		t.pass++
	case "fail":
		t.fail++
	case "skip":
		t.skip++
	case "output":
		res.keep(&t.tail, ev.Output)
	}
	return nil
}

// keep adds a line to a tail while the output kept stays under its bound.
func (res *Results) keep(t *tail, line string) {
	if res.kept > maxTailBytes {
		return
	}
	res.kept += t.add(line)
}

// Failures lists what failed, sorted by package and test.
func (res *Results) Failures() []Failure {
	var out []Failure
	failedTest := map[string]bool{}
	bad := func(t *tally) bool { return t.fail > 0 || t.started > 0 && t.pass+t.skip == 0 }
	for k, t := range res.tests {
		if !bad(t) {
			continue
		}
		failedTest[k.pkg] = true
		leaf := true
		for k2, t2 := range res.tests {
			if k2.pkg == k.pkg && strings.HasPrefix(k2.test, k.test+"/") && bad(t2) {
				leaf = false
				break
			}
		}
		if leaf {
			out = append(out, Failure{Package: k.pkg, Test: k.test, Output: t.tail.get()})
		}
	}
	for pkg, p := range res.pkgs {
		if p.fail > 0 && !failedTest[pkg] {
			lines := p.tail.get()
			if b := res.builds[pkg]; p.buildFailed && b != nil {
				lines = append(b.get(), lines...)
			}
			out = append(out, Failure{Package: pkg, Output: lines})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Package != out[j].Package {
			return out[i].Package < out[j].Package
		}
		return out[i].Test < out[j].Test
	})
	return out
}

// Outcome returns what the results say of the test name (a subtest path
// allowed) of the package with import path pkg, and why when it did not
// pass. Every run counts: one failure fails it.
func (res *Results) Outcome(pkg, name string) (outcome, why string) {
	t := res.tests[testKey{pkg, name}]
	p := res.pkgs[pkg]
	switch {
	case t != nil && t.fail > 0:
		return OutcomeFail, ""
	case t != nil && t.pass > 0:
		return OutcomePass, ""
	case t != nil && t.skip > 0:
		return OutcomeSkip, ""
	case t != nil && t.started > 0:
		return OutcomeIncomplete, "started but reported no result (a panic, a timeout or a killed test binary)"
	case p == nil:
		return OutcomeNotRun, "its package " + pkg + " is not in the results"
	case p.buildFailed:
		return OutcomeNotRun, "its package did not build"
	case p.fail > 0:
		return OutcomeNotRun, "its package failed and this test did not run (a panic or a timeout in another test ends the package: see the failures)"
	case p.pass == 0 && p.skip > 0:
		return OutcomeNotRun, "its package reported no tests (no test files when the results were made?)"
	}
	return OutcomeNotRun, "the package ran, the test did not (a -run or -skip filter, or -short?)"
}

// RequireCommit refuses results that ran at another commit than head.
func (res *Results) RequireCommit(head string) error {
	if res.Header.Commit == head {
		return nil
	}
	return &errkind.InputError{Source: res.Source, Field: "line 1", Problem: fmt.Sprintf("the tests ran at commit %s, but HEAD is %s", short(res.Header.Commit), short(head)),
		Hint: "run the tests again at this commit (make test TESTJSON=FILE), then check"}
}

func short(c string) string {
	if len(c) > 12 {
		return c[:12]
	}
	return c
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
