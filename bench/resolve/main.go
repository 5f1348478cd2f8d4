// Command resolve benchmarks dome's registry reads against the git CLI on a
// synthetic registry of 2,000 tools and 5,000 commits built with
// git fast-import (issue 2):
//
//	(a) one cold "dome registry cat" vs "git show <ref>:<path>"
//	(b) 1,000 lookups: "dome resolve --batch" vs a loop of 1,000 "git show"
//
// Floors: "git cat-file blob <id>" (a) and "git cat-file --batch" (b), and
// the start-up of a Go program that links go-git and exits at once (dome
// cannot start faster). Every command runs interleaved with its peer and
// floors (internal/benchrun); the rows give medians and ranges of wall and
// CPU time, ratios git / dome (above 1: dome is faster) and the load
// average at the start and the end.
package main

import (
	"bufio"
	"bytes"
	_ "embed"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/dome-registry/dome/internal/benchrun"
)

// goGitProbe is the source of a program that links go-git and exits (a .txt
// file: only pkg/gitstore's sub-packages may import go-git in this module,
// and the probe is built in its own folder under bench/.work): the start-up
// floor of dome-full, which links go-git; the front that answers registry
// cat links none, so it is a baseline, not its floor.
//
//go:embed gogitprobe.go.txt
var goGitProbe string

func main() {
	dome := flag.String("dome", os.Getenv("DOME_BIN"), "dome binary")
	work := flag.String("work", "bench/.work/resolve", "work directory (the repository is cached here)")
	tools := flag.Int("tools", 2000, "tools in the synthetic registry")
	commits := flag.Int("commits", 5000, "commits in the synthetic registry")
	runs := flag.Int("runs", 21, "measured runs of the cold single lookup, interleaved")
	batchRuns := flag.Int("batch-runs", 3, "measured runs of the 1,000 lookups, interleaved")
	var others benchrun.Binaries
	flag.Var(&others, "other", "`LABEL=PATH` of another dome binary whose cold lookup (a) runs in the same loop (repeatable): a build from before a change")
	flag.Parse()
	if *dome == "" {
		fail("set -dome or DOME_BIN")
	}
	// "-r": release tags carry records (a cache built before is not reused).
	repo := filepath.Join(*work, fmt.Sprintf("registry-%d-%d-r.git", *tools, *commits))
	if _, err := os.Stat(filepath.Join(repo, "HEAD")); err != nil {
		start := time.Now()
		build(repo, *tools, *commits)
		fmt.Printf("built %s with git fast-import in %s\n", repo, time.Since(start).Round(time.Millisecond))
	}
	// dome remembers the release tags it reads (known tags): a file of the
	// benchmark's own, so that runs measure the same state.
	memory, _ := filepath.Abs(filepath.Join(*work, "known-tags"))
	os.Remove(memory)
	os.Setenv("DOME_KNOWN_TAGS", memory)
	rng := rand.New(rand.NewPCG(1, 2))
	// Requests: a mix of release tags and full SHAs of random tools.
	tags := lines(git(repo, "tag", "-l", "registry/*"))
	shas := lines(git(repo, "rev-list", "--all"))
	type req struct{ tool, ref, path string }
	var reqs []req
	for i := 0; i < 1000; i++ {
		if i%2 == 0 {
			t := tags[rng.IntN(len(tags))] // registry/<tool>/vX.Y.Z
			parts := strings.Split(t, "/")
			reqs = append(reqs, req{parts[1], parts[2], "registry/tools/" + parts[1] + "/spec/openapi.yaml"})
		} else {
			id := fmt.Sprintf("tool-%04d", rng.IntN(*tools))
			reqs = append(reqs, req{id, shas[rng.IntN(len(shas))], "registry/tools/" + id + "/spec/openapi.yaml"})
		}
	}
	gitRef := func(r req) string {
		if strings.HasPrefix(r.ref, "v") {
			return "registry/" + r.tool + "/" + r.ref
		}
		return r.ref
	}

	// The start-up floor of any Go program that links go-git (the design's
	// git library): dome-full's, and what a cold lookup cost while dome
	// linked go-git on its read path.
	probe := filepath.Join(*work, "gogit-startup")
	if _, err := os.Stat(probe); err != nil {
		src := filepath.Join(*work, "gogitprobe")
		must(os.MkdirAll(src, 0o755))
		must(os.WriteFile(filepath.Join(src, "main.go"), []byte(goGitProbe), 0o644))
		abs, _ := filepath.Abs(probe)
		cmd := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w", "-o", abs, ".")
		cmd.Dir = src // -work may be absolute
		cmd.Stderr = os.Stderr
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		must(cmd.Run())
	}
	fmt.Printf("load average at start: %s\n", benchrun.Load())

	// (a) cold single lookup: a new process each, the page cache warm
	// (Interleave's warm-up round), all four interleaved.
	one := reqs[0]
	blob := strings.TrimSpace(git(repo, "rev-parse", gitRef(one)+":"+one.path))
	if a, b := output(*dome, "--repo", repo, "registry", "cat", one.tool+"@"+one.ref, "spec/openapi.yaml"), output("git", "-C", repo, "show", gitRef(one)+":"+one.path); !bytes.Equal(a, b) {
		fail("dome and git disagree on " + one.tool + "@" + one.ref)
	}
	singleJobs := []benchrun.Job{
		quick("dome", *dome, "--repo", repo, "registry", "cat", one.tool+"@"+one.ref, "spec/openapi.yaml"),
		quick("git show", "git", "-C", repo, "show", gitRef(one)+":"+one.path),
		quick("cat-file", "git", "-C", repo, "cat-file", "blob", blob),
		quick("go-git start-up", probe)}
	for _, o := range others {
		singleJobs = append(singleJobs, quick("other "+o.Label, o.Path, "--repo", repo, "registry", "cat", one.tool+"@"+one.ref, "spec/openapi.yaml"))
	}
	single, err := benchrun.Interleave(*runs, 1, singleJobs...)
	must(err)

	// (b) 1,000 lookups
	var batch, catBatch strings.Builder
	for _, r := range reqs {
		fmt.Fprintf(&batch, "%s@%s\n", r.tool, r.ref)
		fmt.Fprintf(&catBatch, "%s:%s\n", gitRef(r), r.path)
	}
	batchFile := filepath.Join(*work, "batch.txt")
	must(os.WriteFile(batchFile, []byte(batch.String()), 0o644))
	out := output(*dome, "--repo", repo, "resolve", "--batch", batchFile)
	if n := bytes.Count(out, []byte("\n")); n != len(reqs) || bytes.Contains(out, []byte(`"error"`)) {
		fail(fmt.Sprintf("dome resolve --batch: %d lines or errors", n))
	}
	// The first batch checks the release tags against their records and
	// remembers them (one write); later batches check them against the
	// memory. "first" forgets them before each of its runs.
	must(removeIfThere(memory))
	output(*dome, "--repo", repo, "resolve", "--batch", batchFile)
	remembered := countLines(memory)
	batchArgv := []string{*dome, "--repo", repo, "resolve", "--batch", batchFile}
	gitLoop := benchrun.Job{Label: "git loop", Run: func() (benchrun.Sample, error) {
		var total benchrun.Sample
		for _, r := range reqs {
			s, err := benchrun.Exec(benchrun.Cmd{Argv: []string{"git", "-C", repo, "show", gitRef(r) + ":" + r.path}, NoMemory: true})
			if err != nil {
				return total, err
			}
			total.Wall += s.Wall
			total.CPU += s.CPU
		}
		return total, nil
	}}
	batches, err := benchrun.Interleave(*batchRuns, 1,
		benchrun.CommandWith("batch", benchrun.Cmd{Argv: batchArgv}),
		benchrun.CommandWith("first", benchrun.Cmd{Argv: batchArgv, Before: func() error { return removeIfThere(memory) }}),
		gitLoop,
		benchrun.CommandWith("cat-file --batch", benchrun.Cmd{Argv: []string{"git", "-C", repo, "cat-file", "--batch"},
			Stdin: func() io.Reader { return strings.NewReader(catBatch.String()) }}))
	must(err)

	var t benchrun.Table
	t.Row("workload", "dome wall", "git wall", "git/dome (wall)", "dome CPU", "git CPU", "git/dome (CPU)", "floor wall", "floor CPU", "floor")
	row := func(name string, d, g, f benchrun.Series, floor string) {
		t.Row(name, benchrun.Ms(d.Wall()), benchrun.Ms(g.Wall()), benchrun.Ratio(g.Wall(), d.Wall()), benchrun.Ms(d.CPU()), benchrun.Ms(g.CPU()), benchrun.Ratio(g.CPU(), d.CPU()),
			benchrun.Ms(f.Wall()), benchrun.Ms(f.CPU()), floor)
	}
	row("(a) cold registry cat vs git show", single["dome"], single["git show"], single["cat-file"], "git cat-file blob")
	for _, o := range others {
		row("(a) the same, "+o.Label, single["other "+o.Label], single["git show"], single["cat-file"], "git cat-file blob")
	}
	t.Row("    a Go program linking go-git that exits at once", "", "", "", "", "", "", benchrun.Ms(single["go-git start-up"].Wall()), benchrun.Ms(single["go-git start-up"].CPU()), "baseline: dome-full's start-up floor")
	row("(b) 1,000 lookups: resolve --batch vs a loop of git show", batches["batch"], batches["git loop"], batches["cat-file --batch"], "git cat-file --batch")
	row(fmt.Sprintf("(b') the same, %d release tags first checked against their records", remembered), batches["first"], batches["git loop"], batches["cat-file --batch"], "git cat-file --batch")
	t.Print(os.Stdout)
	ra := single["git show"].Wall().Median / single["dome"].Wall().Median
	rb := batches["git loop"].Wall().Median / batches["batch"].Wall().Median
	fmt.Printf("targets: (a) dome within 2x of git show (git/dome >= 0.50x): %.2fx %s; (b) dome at least 10x faster than the loop (git/dome >= 10x): %.2fx %s\n",
		ra, met(ra >= 0.5), rb, met(rb >= 10))
	fmt.Printf("(medians of %d (a) and %d (b) interleaved runs, ranges in brackets; load average at the end: %s)\n", *runs, *batchRuns, benchrun.Load())
}

func quick(label string, argv ...string) benchrun.Job {
	return benchrun.CommandWith(label, benchrun.Cmd{Argv: argv, NoMemory: true})
}

func met(ok bool) string {
	if ok {
		return "met"
	}
	return "MISSED"
}

func removeIfThere(path string) error {
	if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
		return err
	}
	return nil
}

// build writes a synthetic registry with git fast-import: one commit adding
// every tool, then commits that each change one tool's spec; every 10th
// commit is released with an annotated tag registry/<tool>/vX.Y.Z.
func build(repo string, tools, commits int) {
	must(os.MkdirAll(filepath.Dir(repo), 0o755))
	tmp := repo + ".tmp"
	os.RemoveAll(tmp)
	git("", "init", "-q", "--bare", "-b", "main", tmp)
	marksFile, _ := filepath.Abs(tmp + ".marks")
	defer os.Remove(marksFile)
	cmd := exec.Command("git", "-C", tmp, "fast-import", "--quiet", "--export-marks="+marksFile)
	stdin, err := cmd.StdinPipe()
	must(err)
	cmd.Stderr = os.Stderr
	must(cmd.Start())
	w := bufio.NewWriterSize(stdin, 1<<20)
	data := func(s string) { fmt.Fprintf(w, "data %d\n%s\n", len(s), s) }
	rng := rand.New(rand.NewPCG(7, 7))
	when := int64(1767323045)
	versions := make([]int, tools)
	type benchTag struct {
		tool, version string
		mark          int
		when          int64
	}
	var tags []benchTag
	spec := func(i, rev int) string {
		return fmt.Sprintf("openapi: 3.0.3\ninfo: {title: Tool %04d, version: 1.0.%d}\npaths:\n  /things/{id}:\n    get:\n      operationId: getThing%d\n      parameters: [{name: id, in: path, required: true, schema: {type: string}}]\n      responses: {'200': {description: ok, content: {application/json: {schema: {type: object, properties: {rev: {type: integer, enum: [%d]}}}}}}}\n", i, rev, i, rev)
	}
	mark := 0
	for c := 0; c < commits; c++ {
		mark++
		fmt.Fprintf(w, "commit refs/heads/main\nmark :%d\ncommitter Bench <bench@dome.invalid> %d +0000\n", mark, when+int64(c))
		if c == 0 {
			data("add all tools")
			for i := 0; i < tools; i++ {
				id := fmt.Sprintf("tool-%04d", i)
				p := "registry/tools/" + id + "/"
				for name, body := range map[string]string{
					"tool.json":                     fmt.Sprintf(`{"schema_version": "dome.tool/v1", "id": %q, "title": "Tool %04d", "owners": ["team-%d"], "spec": "spec/openapi.yaml", "default_profile": "default"}`+"\n", id, i, i%50),
					"spec/openapi.yaml":             spec(i, 0),
					"profiles/default.profile.json": fmt.Sprintf(`{"schema_version": "dome.profile/v1", "id": "default"}` + "\n"),
				} {
					fmt.Fprintf(w, "M 100644 inline %s%s\n", p, name)
					data(body)
				}
			}
		} else {
			i := rng.IntN(tools)
			versions[i]++
			data(fmt.Sprintf("tool-%04d: revision %d", i, versions[i]))
			fmt.Fprintf(w, "from :%d\n", mark-1)
			fmt.Fprintf(w, "M 100644 inline registry/tools/tool-%04d/spec/openapi.yaml\n", i)
			data(spec(i, versions[i]))
			if c%10 == 0 {
				tags = append(tags, benchTag{tool: fmt.Sprintf("tool-%04d", i), version: fmt.Sprintf("v1.%d.0", versions[i]), mark: mark, when: when + int64(c)})
			}
		}
	}
	must(w.Flush())
	must(stdin.Close())
	must(cmd.Wait())
	// The release tags carry the release record dome release writes (the
	// commit and tool tree they are of), as dome reads a release tag only
	// when it matches its record: a second fast-import, now that the
	// commit ids are known.
	marks := map[string]string{}
	for _, l := range strings.Split(string(must1(os.ReadFile(marksFile))), "\n") {
		if m, sha, ok := strings.Cut(l, " "); ok {
			marks[m] = sha
		}
	}
	var query strings.Builder
	for _, t := range tags {
		fmt.Fprintf(&query, "%s:registry/tools/%s\n", marks[fmt.Sprintf(":%d", t.mark)], t.tool)
	}
	check := exec.Command("git", "-C", tmp, "cat-file", "--batch-check=%(objectname)")
	check.Stdin = strings.NewReader(query.String())
	trees := lines(string(must1(check.Output())))
	var ti strings.Builder
	for k, t := range tags {
		commit := marks[fmt.Sprintf(":%d", t.mark)]
		rec := fmt.Sprintf(`{"breaking_changes":[],"canonicalization":"jcs-rfc8785","commit":%q,"manifests":{},"profiles":{},"schema_version":"dome.release_record/v1","tool_id":%q,"tool_tree":%q,"version":%q}`+"\n", commit, t.tool, trees[k], t.version)
		fmt.Fprintf(&ti, "tag registry/%s/%s\nfrom %s\ntagger Bench <bench@dome.invalid> %d +0000\ndata %d\n%s\n", t.tool, t.version, commit, t.when, len(rec), rec)
	}
	tagImport := exec.Command("git", "-C", tmp, "fast-import", "--quiet")
	tagImport.Stdin = strings.NewReader(ti.String())
	tagImport.Stderr = os.Stderr
	must(tagImport.Run())
	// Recompute deltas as a server does when it packs a clone (fast-import
	// deltifies each object against its predecessor, the opposite direction).
	git(tmp, "repack", "-adfq")
	must(os.Rename(tmp, repo))
}

func git(dir string, args ...string) string {
	if dir != "" {
		args = append([]string{"-C", dir}, args...)
	}
	return string(output("git", args...))
}

func output(name string, args ...string) []byte {
	cmd := exec.Command(name, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		fail(fmt.Sprintf("%s %s: %v\n%s", name, strings.Join(args, " "), err, stderr.String()))
	}
	return out
}

func lines(s string) []string { return strings.Fields(s) }

// countLines counts the non-comment lines of a file (0 when it is absent).
func countLines(path string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	n := 0
	for _, l := range strings.Split(string(b), "\n") {
		if l != "" && !strings.HasPrefix(l, "#") {
			n++
		}
	}
	return n
}

func must1[T any](v T, err error) T {
	must(err)
	return v
}

func must(err error) {
	if err != nil {
		fail(err.Error())
	}
}

func fail(msg string) {
	fmt.Fprintln(os.Stderr, "bench/resolve:", msg)
	os.Exit(1)
}
