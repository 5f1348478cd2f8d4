// Command trace benchmarks dome trace on this repository: the
// whole requirements catalogue held against a full "go test -json" log must
// be checked in under 2 seconds.
//
//	index:   finding every test of the module: pkg/trace's scan of the
//	         _test.go files (tokens, no function bodies) against
//	         "go test -list . ./..." with a warm build cache (the peer, which
//	         links a test binary per package); floor: reading the files.
//	results: parsing a full go test -json log: pkg/trace.ParseResults against
//	         jq tallying the same events (the peer); floor: reading the file.
//	check:   "dome trace check --results" end to end over the catalogue and
//	         the log, then over a log ten times as long; floor: "dome --version"
//	         (process start).
//
// The log is -results FILE, else reports/test.json when present (make test
// TESTJSON=reports/test.json writes it), else one synthesized from the
// module's tests and scripts with the size and shape of a real run. Its
// header is rewritten to HEAD (dome trace refuses another commit's results).
// It prints "workload | dome | peer | peer/dome | floor" rows, medians of
// interleaved runs with their ranges, and the load average.
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"go/build"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/dome-registry/dome/pkg/trace"
)

func main() {
	dome := flag.String("dome", os.Getenv("DOME_BIN"), "dome binary")
	work := flag.String("work", "bench/.work/trace", "work directory")
	resultsFlag := flag.String("results", "", "a go test -json log headed by a results line (default: reports/test.json, else synthesized)")
	runs := flag.Int("runs", 7, "repetitions of each measurement (median reported)")
	flag.Parse()
	if *dome == "" {
		fail("set -dome or DOME_BIN")
	}
	d, err := filepath.Abs(*dome)
	must(err)
	must(os.RemoveAll(*work))
	must(os.MkdirAll(*work, 0o755))
	root, err := os.Getwd()
	must(err)
	head := strings.TrimSpace(run("git", "rev-parse", "HEAD"))
	fmt.Printf("load average at start: %s\n", loadAvg())

	cat, err := trace.ParseCatalog(trace.CatalogPath, readFile(trace.CatalogPath))
	must(err)
	fsys := os.DirFS(root)
	bc := build.Default
	idx, err := trace.Scan(fsys, cat, trace.ScanOptions{Build: &bc})
	must(err)

	src, how := *resultsFlag, "given"
	if src == "" {
		if _, err := os.Stat("reports/test.json"); err == nil {
			src, how = "reports/test.json", "from make test TESTJSON=reports/test.json"
		}
	}
	var body []byte
	if src != "" {
		data := readFile(src)
		_, rest, _ := bytes.Cut(data, []byte("\n"))
		body = rest
	} else {
		how = "synthesized"
		body = synthesize(idx)
	}
	header := fmt.Sprintf(`{"kind":"%s","commit":"%s"}`+"\n", trace.ResultsKind, head)
	log1 := filepath.Join(*work, "test.json")
	must(os.WriteFile(log1, append([]byte(header), body...), 0o644))
	log10 := filepath.Join(*work, "test10.json")
	big := bytes.NewBufferString(header)
	for i := 0; i < 10; i++ {
		big.Write(body)
	}
	must(os.WriteFile(log10, big.Bytes(), 0o644))
	lines := bytes.Count(body, []byte("\n"))
	fmt.Printf("catalogue: %d requirements; log %s: %d lines, %.1f MB (x10: %.1f MB); %d test files\n",
		len(cat.Requirements), how, lines, float64(len(body))/1e6, float64(big.Len())/1e6, idx.TestFiles)
	fmt.Printf("%-64s | %-28s | %-28s | %-10s | %s\n", "workload", "dome", "peer", "peer/dome", "floor")

	// index
	var testFiles []string
	must(filepath.WalkDir(".", func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if e.IsDir() && p != "." && (strings.HasPrefix(e.Name(), ".") || e.Name() == "node_modules" || e.Name() == "testdata") {
			return filepath.SkipDir
		}
		if strings.HasSuffix(p, "_test.go") {
			testFiles = append(testFiles, p)
		}
		return nil
	}))
	run("go", "test", "-list", ".", "./...") // warm the build cache
	t := medians(*runs,
		func() { _, err := trace.Scan(fsys, cat, trace.ScanOptions{Build: &bc}); must(err) },
		func() { run("go", "test", "-list", ".", "./...") },
		func() {
			for _, f := range testFiles {
				readFile(f)
			}
		})
	row("index: every test of the module (go test -list . ./..., warm)", t[0], t[1], t[2])

	// results
	jqFilter := `select(.Test != null and (.Action == "pass" or .Action == "fail" or .Action == "skip")) | .Action`
	if _, err := exec.LookPath("jq"); err != nil {
		fmt.Println("jq not found: the results row has no peer")
		jqFilter = ""
	}
	t = medians(*runs,
		func() { parse(log1) },
		func() {
			if jqFilter != "" {
				run("jq", "-r", jqFilter, log1)
			}
		},
		func() { readAll(log1) })
	if jqFilter == "" {
		t[1] = nil
	}
	row(fmt.Sprintf("results: parse the go test -json log (%.1f MB, jq tally)", float64(len(body))/1e6), t[0], t[1], t[2])

	// check, end to end
	t = medians(*runs,
		func() { check(d, log1) },
		func() {},
		func() { run(d, "--version") })
	row("dome trace check --results: the catalogue, the log", t[0], nil, t[2])
	t = medians(*runs,
		func() { check(d, log10) },
		func() {},
		func() { run(d, "--version") })
	row(fmt.Sprintf("dome trace check --results: the catalogue, the log x10 (%.0f MB)", float64(big.Len())/1e6), t[0], nil, t[2])
	fmt.Printf("(medians of %d interleaved runs, ranges in brackets; floors: reading the files, dome --version; load average at the end: %s)\n", *runs, loadAvg())
}

// synthesize makes a log of the shape of a real run: every test run and
// passed with a few output lines, every script with the log testscript
// prints in verbose mode.
func synthesize(idx *trace.Index) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	ev := func(action, pkg, test, output string) {
		e := map[string]any{"Time": "2026-01-02T03:04:05.000000000Z", "Action": action, "Package": pkg}
		if test != "" {
			e["Test"] = test
		}
		if output != "" {
			e["Output"] = output
		}
		must(enc.Encode(e))
	}
	for _, dir := range idx.Packages() {
		pkg := idx.ImportPath(dir)
		ev("start", pkg, "", "")
		names := make([]string, 0, len(idx.Tests[dir]))
		for n := range idx.Tests[dir] {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			ev("run", pkg, n, "")
			ev("output", pkg, n, "=== RUN   "+n+"\n")
			for i := 0; i < 20; i++ {
				ev("output", pkg, n, fmt.Sprintf("    %s_test.go:%d: step %d of the test did what it should\n", strings.ToLower(n), 100+i, i))
			}
			ev("output", pkg, n, "--- PASS: "+n+" (0.01s)\n")
			ev("pass", pkg, n, "")
		}
		ev("pass", pkg, "", "")
	}
	for s := range idx.Scripts {
		name := "TestScripts/" + strings.TrimSuffix(filepath.Base(s), ".txtar")
		pkg := idx.ImportPath("cmd/dome")
		ev("run", pkg, name, "")
		for i := 0; i < 400; i++ {
			ev("output", pkg, name, fmt.Sprintf("        > exec dome command number %d --json\n", i))
		}
		ev("pass", pkg, name, "")
	}
	return b.Bytes()
}

// check runs dome trace check --results log: exit 0 (no gaps) or 1 (gaps,
// as a log of another commit or a run with failures has) are both a check
// done; exit 2 is bad input and ends the benchmark.
func check(dome, log string) {
	cmd := exec.Command(dome, "trace", "check", "--results", log, "--quiet")
	var errb bytes.Buffer
	cmd.Stderr = &errb
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() == 1 {
		return
	}
	if err != nil {
		fail("dome trace check --results %s: %v\n%s", log, err, errb.String())
	}
}

func parse(path string) {
	f, err := os.Open(path)
	must(err)
	defer f.Close()
	_, err = trace.ParseResults(path, f)
	must(err)
}

func readAll(path string) {
	f, err := os.Open(path)
	must(err)
	defer f.Close()
	_, err = io.Copy(io.Discard, f)
	must(err)
}

func readFile(path string) []byte {
	b, err := os.ReadFile(path)
	must(err)
	return b
}

// medians runs the functions interleaved, runs times, so that a burst of
// noise on the machine lands on all of them, and returns each one's times.
func medians(runs int, fns ...func()) [][]time.Duration {
	d := make([][]time.Duration, len(fns))
	for r := 0; r < runs; r++ {
		for i, fn := range fns {
			start := time.Now()
			fn()
			d[i] = append(d[i], time.Since(start))
		}
	}
	return d
}

func median(ds []time.Duration) time.Duration {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(a, b int) bool { return s[a] < s[b] })
	return s[len(s)/2]
}

// spread is the median with its range.
func spread(ds []time.Duration) string {
	if len(ds) == 0 {
		return "-"
	}
	return fmt.Sprintf("%s [%s-%s]", round(median(ds)), round(slices.Min(ds)), round(slices.Max(ds)))
}

// row prints dome beside its peer (nil: none) and floor; the ratio is peer
// time / dome time (above 1: dome is faster).
func row(name string, dome, peer, floor []time.Duration) {
	ratio := "-"
	if len(peer) > 0 {
		ratio = fmt.Sprintf("%.3gx", float64(median(peer))/float64(median(dome)))
	}
	fmt.Printf("%-64s | %-28s | %-28s | %-10s | %s\n", name, spread(dome), spread(peer), ratio, spread(floor))
}

func round(d time.Duration) string {
	switch {
	case d >= time.Second:
		return d.Round(time.Millisecond).String()
	case d >= time.Millisecond:
		return d.Round(100 * time.Microsecond).String()
	}
	return d.Round(time.Microsecond).String()
}

// run runs a command and returns its stdout; it exits on failure.
func run(name string, args ...string) string {
	cmd := exec.Command(name, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		fail("%s %s: %v\n%s", name, strings.Join(args, " "), err, errb.String())
	}
	return out.String()
}

func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

func must(err error) {
	if err != nil {
		fail("%v", err)
	}
}

func fail(format string, a ...any) {
	fmt.Fprintf(os.Stderr, "bench/trace: "+format+"\n", a...)
	os.Exit(1)
}
