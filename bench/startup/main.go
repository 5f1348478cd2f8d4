// Command startup measures what every dome command pays before it does any
// work, beside a Go program that does nothing (the floor: a hello world
// built the way make build builds dome: CGO_ENABLED=0, -trimpath, the same
// tags and -ldflags '-s -w') and beside git doing the same:
//
//	dome --version                                    vs  git --version
//	dome registry cat petstore@HEAD spec/openapi.yaml vs  git show HEAD:registry/tools/petstore/spec/openapi.yaml
//
// on this repository's own history (a cold read: a new process, nothing
// cached but the OS page cache), with git cat-file blob of the same blob
// beside it. Every command runs -runs times, all interleaved
// (internal/benchrun) so that noise on the machine lands on each alike; the
// rows give the medians and ranges of CPU time (user + system, which a busy
// machine moves less) and wall time, then peak RSS from fewer runs. Ratios:
// git / dome (above 1: dome is faster), and dome / the hello world (how far
// above the floor). -other LABEL=PATH adds the rows of another dome binary (a
// build from before a change, dome-full alone) to the same run.
//
// bin/dome is the front: it runs these two commands itself and hands every
// other one to bin/dome-full (-full, default: beside -dome). The last rows
// measure that hand-over: dome --help (handed over) beside dome-full --help.
package main

import (
	"bytes"
	_ "embed"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/dome-registry/dome/internal/benchrun"
)

// helloSource is the floor program (a .txt file: it is a main package of
// its own, built in the work folder).
//
//go:embed hello.go.txt
var helloSource string

func main() {
	dome := flag.String("dome", os.Getenv("DOME_BIN"), "dome binary")
	work := flag.String("work", "bench/.work/startup", "work directory")
	tags := flag.String("tags", "urfave_cli_no_docs", "build tags of the hello world (make build's)")
	var others benchrun.Binaries
	flag.Var(&others, "other", "`LABEL=PATH` of another dome binary to measure in the same run (repeatable)")
	runs := flag.Int("runs", 301, "measured runs of each command")
	full := flag.String("full", "", "dome-full binary (default: dome-full beside -dome)")
	flag.Parse()
	if *dome == "" {
		fail("set -dome or DOME_BIN")
	}
	if *full == "" {
		*full = filepath.Join(filepath.Dir(*dome), "dome-full")
	}
	must(os.MkdirAll(*work, 0o755))
	hello := buildHello(*work, *tags)
	const tool, path = "petstore", "spec/openapi.yaml"
	gitPath := "HEAD:registry/tools/" + tool + "/" + path
	blob := strings.TrimSpace(string(output("git", "rev-parse", gitPath)))

	bins := append(benchrun.Binaries{{Label: "dome", Path: *dome}}, others...)
	jobs := []benchrun.Job{
		quick("hello world", hello),
		quick("git --version", "git", "--version"),
		quick("git show", "git", "show", gitPath),
		quick("git cat-file blob", "git", "cat-file", "blob", blob),
	}
	jobs = append(jobs, quick("dome --help (handed over)", *dome, "--help"), quick("dome-full --help", *full, "--help"))
	want := output("git", "show", gitPath)
	for _, b := range bins {
		if got := output(b.Path, "registry", "cat", tool+"@HEAD", path); !bytes.Equal(got, want) {
			fail(b.Label + ": registry cat and git show disagree")
		}
		jobs = append(jobs, quick(b.Label+" --version", b.Path, "--version"), quick(b.Label+" registry cat", b.Path, "registry", "cat", tool+"@HEAD", path))
	}
	fmt.Printf("load average at start: %s\n", benchrun.Load())
	res, err := benchrun.Interleave(*runs, 3, jobs...)
	must(err)
	// Peak memory, from fewer runs (GNU time's own start would weigh on the
	// CPU figures above).
	var mem []benchrun.Job
	for _, j := range []struct{ label, bin string }{{"hello world", hello}, {"git --version", "git"}} {
		argv := []string{j.bin}
		if j.bin == "git" {
			argv = append(argv, "--version")
		}
		mem = append(mem, benchrun.Command(j.label, argv...))
	}
	for _, b := range bins {
		mem = append(mem, benchrun.Command(b.Label+" --version", b.Path, "--version"), benchrun.Command(b.Label+" registry cat", b.Path, "registry", "cat", tool+"@HEAD", path))
	}
	rss, err := benchrun.Interleave(11, 1, mem...)
	must(err)
	fmt.Printf("load average at the end: %s\n", benchrun.Load())

	h := res["hello world"]
	var t benchrun.Table
	t.Row("workload", "dome CPU", "git CPU", "git/dome", "floor CPU (hello world)", "dome/floor", "dome wall", "git wall", "dome peak RSS", "git peak RSS")
	for _, b := range bins {
		for _, w := range []struct{ what, dome, git, floor string }{
			{"--version", b.Label + " --version", "git --version", "hello world"},
			{"cold read", b.Label + " registry cat", "git show", "hello world"},
		} {
			d, g := res[w.dome], res[w.git]
			t.Row(b.Label+": "+w.what, benchrun.Ms(d.CPU()), benchrun.Ms(g.CPU()), benchrun.Ratio(g.CPU(), d.CPU()),
				benchrun.Ms(h.CPU()), fmt.Sprintf("%.2fx", d.CPU().Median/h.CPU().Median),
				benchrun.Ms(d.Wall()), benchrun.Ms(g.Wall()), benchrun.MB(rss[w.dome].RSS()), benchrun.MB(rss[strings.Replace(w.git, "git show", "git --version", 1)].RSS()))
		}
	}
	t.Print(os.Stdout)
	c := res["git cat-file blob"]
	fmt.Printf("git cat-file blob of the same blob: CPU %s, wall %s; hello world: wall %s, peak RSS %s\n",
		benchrun.Ms(c.CPU()), benchrun.Ms(c.Wall()), benchrun.Ms(h.Wall()), benchrun.MB(rss["hello world"].RSS()))
	ho, fh := res["dome --help (handed over)"], res["dome-full --help"]
	fmt.Printf("hand-over to dome-full: dome --help CPU %s, wall %s; dome-full --help CPU %s, wall %s: +%.2f ms CPU, +%.2f ms wall\n",
		benchrun.Ms(ho.CPU()), benchrun.Ms(ho.Wall()), benchrun.Ms(fh.CPU()), benchrun.Ms(fh.Wall()),
		ms(ho.CPU().Median-fh.CPU().Median), ms(ho.Wall().Median-fh.Wall().Median))
	d := res["dome --version"]
	r := res["dome registry cat"]
	g := res["git show"]
	fmt.Printf("targets: --version within 2x of the hello world (CPU): %.2fx %s; cold read within 2x of the hello world: %.2fx %s; cold read within 1.5x of git show (git/dome >= 0.67x): %.2fx %s\n",
		d.CPU().Median/h.CPU().Median, met(d.CPU().Median <= 2*h.CPU().Median),
		r.CPU().Median/h.CPU().Median, met(r.CPU().Median <= 2*h.CPU().Median),
		g.CPU().Median/r.CPU().Median, met(r.CPU().Median <= 1.5*g.CPU().Median))
}

// ms is a difference of two medians (seconds) in milliseconds.
func ms(seconds float64) float64 { return seconds * 1000 }

func quick(label string, argv ...string) benchrun.Job {
	return benchrun.CommandWith(label, benchrun.Cmd{Argv: argv, NoMemory: true})
}

func met(ok bool) string {
	if ok {
		return "met"
	}
	return "MISSED"
}

// buildHello builds the floor program as make build builds dome.
func buildHello(work, tags string) string {
	dir := filepath.Join(work, "hello")
	must(os.MkdirAll(dir, 0o755))
	must(os.WriteFile(filepath.Join(dir, "main.go"), []byte(helloSource), 0o644))
	if _, err := os.Stat(filepath.Join(dir, "go.mod")); err != nil {
		must(os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module hello\n\ngo 1.22\n"), 0o644))
	}
	bin, err := filepath.Abs(filepath.Join(dir, "hello"))
	must(err)
	cmd := exec.Command("go", "build", "-trimpath", "-tags", tags, "-ldflags", "-s -w", "-o", bin, ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOWORK=off")
	cmd.Stderr = os.Stderr
	must(cmd.Run())
	return bin
}

func output(name string, args ...string) []byte {
	out, err := exec.Command(name, args...).Output()
	if err != nil {
		fail(fmt.Sprintf("%s %s: %v", name, strings.Join(args, " "), err))
	}
	return out
}

func must(err error) {
	if err != nil {
		fail(err.Error())
	}
}

func fail(msg string) {
	fmt.Fprintln(os.Stderr, "bench/startup:", msg)
	os.Exit(1)
}
