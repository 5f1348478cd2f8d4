// Command startup measures what every dome command pays before it does any
// work, beside git doing the same:
//
//	dome --version                                    vs  git --version
//	dome registry cat petstore@HEAD spec/openapi.yaml vs  git show HEAD:registry/tools/petstore/spec/openapi.yaml
//
// on this repository's own history (a cold read: a new process, nothing
// cached but the OS page cache). The floor of the cold read is git cat-file
// blob of the same blob. Every command runs -runs times, all of them
// interleaved so that noise on the machine lands on each alike; it prints the
// median wall time and the median CPU time (user + system, from the
// operating system's accounting of each child), which a busy machine moves
// less. -other LABEL=PATH adds the rows of another dome binary (a build from
// before a change, a go install build) to the same run.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strings"
	"syscall"
	"time"
)

type sample struct{ wall, cpu time.Duration }

type command struct {
	name string
	argv []string
	runs []sample
}

func main() {
	dome := flag.String("dome", os.Getenv("DOME_BIN"), "dome binary")
	var others variants
	flag.Var(&others, "other", "`LABEL=PATH` of another dome binary to measure in the same run (repeatable), e.g. a build from before a change")
	runs := flag.Int("runs", 101, "runs of each command (medians reported)")
	flag.Parse()
	if *dome == "" {
		fail("set -dome or DOME_BIN")
	}
	const tool, path = "petstore", "spec/openapi.yaml"
	gitPath := "HEAD:registry/tools/" + tool + "/" + path
	blob := strings.TrimSpace(string(output("git", "rev-parse", gitPath)))

	cmds := []*command{
		{name: "dome --version", argv: []string{*dome, "--version"}},
		{name: "git --version", argv: []string{"git", "--version"}},
		{name: "dome registry cat (cold)", argv: []string{*dome, "registry", "cat", tool + "@HEAD", path}},
		{name: "git show", argv: []string{"git", "show", gitPath}},
		{name: "git cat-file blob", argv: []string{"git", "cat-file", "blob", blob}},
	}
	for _, o := range others {
		cmds = append(cmds,
			&command{name: o.label + ": dome --version", argv: []string{o.path, "--version"}},
			&command{name: o.label + ": dome registry cat (cold)", argv: []string{o.path, "registry", "cat", tool + "@HEAD", path}})
	}
	// Both read the same bytes, or the comparison means nothing.
	want := output("git", "show", gitPath)
	for _, c := range cmds {
		if strings.Contains(c.name, "cat") && !bytes.Equal(output(c.argv[0], c.argv[1:]...), want) {
			fail(c.name + " and git show disagree")
		}
	}
	for i := 0; i < 3; i++ { // warm the page cache
		for _, c := range cmds {
			measure(c.argv)
		}
	}
	for i := 0; i < *runs; i++ {
		for _, c := range cmds {
			c.runs = append(c.runs, measure(c.argv))
		}
	}
	load, _ := os.ReadFile("/proc/loadavg")
	fmt.Printf("load average: %s", load)
	by := map[string]*command{}
	for _, c := range cmds {
		by[c.name] = c
	}
	fmt.Printf("%-40s | %20s | %20s | %14s | %s\n", "workload", "dome wall / cpu", "git wall / cpu", "dome/git cpu", "floor wall / cpu")
	row := func(label, d, g, floor string) {
		dw, dc := medians(by[d].runs)
		gw, gc := medians(by[g].runs)
		fl := "-"
		if floor != "" {
			fw, fc := medians(by[floor].runs)
			fl = fmt.Sprintf("%s / %s (%s)", ms(fw), ms(fc), floor)
		}
		fmt.Printf("%-40s | %9s / %8s | %9s / %8s | %13.2fx | %s\n", label, ms(dw), ms(dc), ms(gw), ms(gc), float64(dc)/float64(gc), fl)
	}
	row("start-up: --version", "dome --version", "git --version", "")
	row("cold read: registry cat vs show", "dome registry cat (cold)", "git show", "git cat-file blob")
	for _, o := range others {
		row(o.label+": --version", o.label+": dome --version", "git --version", "")
		row(o.label+": cold read", o.label+": dome registry cat (cold)", "git show", "git cat-file blob")
	}
	// git show on this small history is about 2 ms, below what any Go
	// program linking go-git needs to start (bench/resolve's floor row), so
	// the 2x target is bench/resolve's, on a large registry.
	fmt.Println("note: the cold read's 2x-of-git target is bench/resolve's (a 2,000-tool, 5,000-commit registry); these rows track start-up across builds")
}

type variant struct{ label, path string }

type variants []variant

func (v *variants) String() string { return fmt.Sprint(*v) }

func (v *variants) Set(s string) error {
	label, path, ok := strings.Cut(s, "=")
	if !ok || label == "" || path == "" {
		return fmt.Errorf("want LABEL=PATH, got %q", s)
	}
	*v = append(*v, variant{label, path})
	return nil
}

func measure(argv []string) sample {
	cmd := exec.Command(argv[0], argv[1:]...)
	start := time.Now()
	if err := cmd.Run(); err != nil {
		fail(fmt.Sprintf("%s: %v", strings.Join(argv, " "), err))
	}
	wall := time.Since(start)
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	return sample{wall, cpu}
}

func medians(s []sample) (wall, cpu time.Duration) {
	w := make([]time.Duration, len(s))
	c := make([]time.Duration, len(s))
	for i, x := range s {
		w[i], c[i] = x.wall, x.cpu
	}
	sort.Slice(w, func(i, j int) bool { return w[i] < w[j] })
	sort.Slice(c, func(i, j int) bool { return c[i] < c[j] })
	return w[len(w)/2], c[len(c)/2]
}

func output(name string, args ...string) []byte {
	out, err := exec.Command(name, args...).Output()
	if err != nil {
		fail(fmt.Sprintf("%s %s: %v", name, strings.Join(args, " "), err))
	}
	return out
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d.Microseconds())/1000) }

func fail(msg string) {
	fmt.Fprintln(os.Stderr, "bench/startup:", msg)
	os.Exit(1)
}
