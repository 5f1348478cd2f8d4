// Command filter benchmarks "dome spec filter" against openapi-format (npm)
// on the Stripe spec (issue 4): the same job, a profile keeping about 10% of
// the operations by tag, filtered and pruned of unused components.
//
// The Stripe spec has no tags, so both tools read a copy in which every
// operation is tagged with the first path segment after /v1/ (added line by
// line; nothing else changes). openapi-format runs with inverseTags +
// unusedComponents and its default sort; dome with --out (which also
// validates the result with kin-openapi and canonicalizes it, RFC 8785).
// Floors: a bare YAML parse of the same file by dome's YAML library
// (go.yaml.in/yaml/v3, into nodes) and by node's "yaml" package (the one
// openapi-format uses).
//
// It prints "workload | dome | peer | ratio | floor" rows: the median wall
// time and the median peak RSS of -runs runs of each.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	yaml "go.yaml.in/yaml/v3"
)

const peerVersion = "openapi-format@1.33.6"

// keepTags is about 10% of the 454 operations.
var keepTags = []string{"charges", "invoices", "payment_intents", "refunds"}

func main() {
	dome := flag.String("dome", os.Getenv("DOME_BIN"), "dome binary")
	spec := flag.String("spec", "../shared/data/stripe-spec3-2023-08.yaml", "the Stripe spec")
	work := flag.String("work", "bench/.work/filter", "work directory")
	runs := flag.Int("runs", 5, "runs of each command (medians reported)")
	floor := flag.String("parse-only", "", "internal: parse this YAML file and exit (the Go floor)")
	flag.Parse()
	if *floor != "" {
		parseOnly(*floor)
		return
	}
	if *dome == "" {
		fail("set -dome or DOME_BIN")
	}
	if _, err := os.Stat(*spec); err != nil {
		fmt.Printf("bench/filter: skipped: %s not found\n", *spec)
		return
	}
	must(os.MkdirAll(*work, 0o755))
	abs := func(p string) string { a, err := filepath.Abs(p); must(err); return a }
	w := abs(*work)
	tagged := filepath.Join(w, "stripe-tagged.yaml")
	counts := tagSpec(*spec, tagged)
	kept, total := 0, 0
	for t, n := range counts {
		total += n
		for _, k := range keepTags {
			if t == k {
				kept += n
			}
		}
	}
	fmt.Printf("input: %s with a tag per operation (%d operations); profile keeps tags %s: %d operations (%.1f%%)\n",
		*spec, total, strings.Join(keepTags, ", "), kept, 100*float64(kept)/float64(total))

	peer := installPeer(w)
	profile := filepath.Join(w, "bench.profile.json")
	var sels []string
	for _, t := range keepTags {
		sels = append(sels, `"tag:`+t+`"`)
	}
	must(os.WriteFile(profile, []byte(`{"schema_version":"dome.profile/v1","id":"bench","allow":{"operations":[`+strings.Join(sels, ",")+`]}}`), 0o644))
	filterFile := filepath.Join(w, "openapi-format.filter.yaml")
	must(os.WriteFile(filterFile, []byte("inverseTags:\n  - "+strings.Join(keepTags, "\n  - ")+
		"\nunusedComponents:\n  - schemas\n  - parameters\n  - examples\n  - headers\n  - requestBodies\n  - responses\n"), 0o644))
	self, err := os.Executable()
	must(err)

	domeOut := filepath.Join(w, "dome.openapi.json")
	peerOut := filepath.Join(w, "openapi-format.json")
	domeRes := measure(*runs, abs(*dome), "spec", "filter", "--spec", tagged, "--profile", profile, "--out", domeOut, "--quiet")
	peerRes := measure(*runs, peer, tagged, "--filterFile", filterFile, "--output", peerOut)
	goFloor := measure(*runs, self, "-parse-only", tagged)
	nodeFloor := measure(*runs, "node", "-e", "require(process.argv[1]).parse(require('fs').readFileSync(process.argv[2],'utf8'))",
		filepath.Join(w, "npm", "node_modules", "yaml"), tagged)
	check(domeOut, peerOut)

	fmt.Println()
	fmt.Println("workload                         | dome      | openapi-format | ratio         | floor (Go yaml.v3 parse / node yaml parse)")
	fmt.Printf("filter Stripe by tag, wall time  | %-9s | %-14s | %5.1fx faster | %s / %s\n",
		ms(domeRes.wall), ms(peerRes.wall), float64(peerRes.wall)/float64(domeRes.wall), ms(goFloor.wall), ms(nodeFloor.wall))
	fmt.Printf("filter Stripe by tag, peak RSS   | %-9s | %-14s | %5.2fx memory | %s / %s\n",
		mb(domeRes.rss), mb(peerRes.rss), float64(domeRes.rss)/float64(peerRes.rss), mb(goFloor.rss), mb(nodeFloor.rss))
	fmt.Printf("(medians of %d runs each; targets: >= 5x faster, <= 0.50x memory)\n", *runs)
}

type result struct {
	wall time.Duration
	rss  int64 // bytes
}

// measure runs a command n times and returns the median wall time and the
// median peak resident set size.
func measure(n int, name string, args ...string) result {
	var walls []time.Duration
	var rsss []int64
	for i := 0; i < n; i++ {
		cmd := exec.Command(name, args...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		start := time.Now()
		if err := cmd.Run(); err != nil {
			fail(fmt.Sprintf("%s %s: %v\n%s", name, strings.Join(args, " "), err, stderr.String()))
		}
		walls = append(walls, time.Since(start))
		ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
		if !ok {
			fail("no rusage on this system")
		}
		rsss = append(rsss, ru.Maxrss*1024) // Linux reports KiB
	}
	sort.Slice(walls, func(i, j int) bool { return walls[i] < walls[j] })
	sort.Slice(rsss, func(i, j int) bool { return rsss[i] < rsss[j] })
	return result{walls[n/2], rsss[n/2]}
}

// installPeer installs openapi-format into work/npm (once) and returns its CLI.
func installPeer(work string) string {
	dir := filepath.Join(work, "npm")
	bin := filepath.Join(dir, "node_modules", ".bin", "openapi-format")
	if _, err := os.Stat(bin); err == nil {
		return bin
	}
	must(os.MkdirAll(dir, 0o755))
	if _, err := os.Stat(filepath.Join(dir, "package.json")); err != nil {
		must(os.WriteFile(filepath.Join(dir, "package.json"), []byte(`{"name":"dome-bench-filter","private":true}`+"\n"), 0o644))
	}
	cmd := exec.Command("npm", "install", "--no-audit", "--no-fund", "--loglevel=error", peerVersion)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		fail("npm install " + peerVersion + ": " + err.Error())
	}
	return bin
}

// tagSpec writes a copy of the spec with "tags: [<segment>]" added to every
// operation, <segment> being the path's part after /v1/ (or the first one).
// It relies on the layout of Stripe's YAML (two-space indents, paths sorted
// under a top-level "paths:") and returns the operations per tag.
func tagSpec(in, out string) map[string]int {
	f, err := os.Open(in)
	must(err)
	defer f.Close()
	var b bytes.Buffer
	counts := map[string]int{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	inPaths, tag := false, ""
	for sc.Scan() {
		line := sc.Text()
		if line != "" && line[0] != ' ' {
			inPaths = line == "paths:"
		}
		b.WriteString(line)
		b.WriteByte('\n')
		if !inPaths {
			continue
		}
		if strings.HasPrefix(line, "  /") && strings.HasSuffix(line, ":") && !strings.HasPrefix(line, "   ") {
			segs := strings.Split(strings.TrimSuffix(strings.TrimSpace(line), ":"), "/")
			tag = segs[1]
			if tag == "v1" && len(segs) > 2 {
				tag = segs[2]
			}
			continue
		}
		switch strings.TrimSpace(line) {
		case "get:", "put:", "post:", "delete:", "patch:", "head:", "options:", "trace:":
			if strings.HasPrefix(line, "    ") && !strings.HasPrefix(line, "     ") {
				b.WriteString("      tags:\n        - " + tag + "\n")
				counts[tag]++
			}
		}
	}
	must(sc.Err())
	must(os.WriteFile(out, b.Bytes(), 0o644))
	return counts
}

// check compares the two outputs: the same operations and schemas.
func check(domeOut, peerOut string) {
	type doc struct {
		Paths      map[string]map[string]json.RawMessage `json:"paths"`
		Components struct {
			Schemas map[string]json.RawMessage `json:"schemas"`
		} `json:"components"`
	}
	read := func(p string) (ops, schemas []string) {
		data, err := os.ReadFile(p)
		must(err)
		var d doc
		must(json.Unmarshal(data, &d))
		for path, item := range d.Paths {
			for m := range item {
				if m != "parameters" && m != "servers" && m != "summary" && m != "description" {
					ops = append(ops, m+" "+path)
				}
			}
		}
		for s := range d.Components.Schemas {
			schemas = append(schemas, s)
		}
		sort.Strings(ops)
		sort.Strings(schemas)
		return
	}
	dOps, dSchemas := read(domeOut)
	pOps, pSchemas := read(peerOut)
	same := strings.Join(dOps, ",") == strings.Join(pOps, ",") && strings.Join(dSchemas, ",") == strings.Join(pSchemas, ",")
	fmt.Printf("outputs: dome %d operations, %d schemas; openapi-format %d operations, %d schemas; same sets: %v\n",
		len(dOps), len(dSchemas), len(pOps), len(pSchemas), same)
	if !same {
		fail("dome and openapi-format kept different operations or schemas")
	}
}

func parseOnly(path string) {
	data, err := os.ReadFile(path)
	must(err)
	var n yaml.Node
	must(yaml.Unmarshal(data, &n))
}

func ms(d time.Duration) string { return fmt.Sprintf("%d ms", d.Milliseconds()) }
func mb(b int64) string         { return fmt.Sprintf("%d MB", b>>20) }

func must(err error) {
	if err != nil {
		fail(err.Error())
	}
}

func fail(msg string) {
	fmt.Fprintln(os.Stderr, "bench/filter:", msg)
	os.Exit(1)
}
