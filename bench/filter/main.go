// Command filter benchmarks "dome spec filter" against openapi-format (npm)
// on two real descriptions, filtered to about a tenth of their operations by
// tag and pruned of the components nothing reaches:
//
//   - Stripe's (stripe-spec3-2023-08.yaml, 4 MB of YAML, 454 operations; it
//     has no tags, so both tools read a copy in which every operation is
//     tagged with its path's first segment after /v1/),
//   - GitHub's (api.github.com.json from the npm package @octokit/openapi,
//     13 MB of JSON, 1,223 operations; fetched with npm pack into the work
//     folder).
//
// openapi-format runs with inverseTags + unusedComponents and its default
// sort; dome with --out, which also bundles, canonicalizes (RFC 8785) and
// validates the output with kin-openapi: once per filtered spec and dome
// build (the verdict is remembered, DOME_VERDICT_CACHE), so dome's row is a
// run with the verdict known, and a second row ("validating") runs with
// the cache off. GitHub's description fails kin-openapi's strict validation
// (its examples), so there both sides run without validating (openapi-format
// never validates).
//
// Beside them: a bare parse of the same file in node (the "yaml" package
// openapi-format uses; JSON.parse), the peer's floor; in Go, yaml.v3 into
// its Node tree (the parse dome used to do) and encoding/json, baselines
// rather than floors (dome does less than either); and yaml.v3's event parser
// alone, with no tree, which dome cannot go below on YAML. Every command runs -runs times, interleaved
// (internal/benchrun); the rows give medians with their ranges of wall time,
// CPU time and peak RSS, and ratios peer / dome.
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

	"github.com/dome-registry/dome/internal/benchrun"
	"github.com/dome-registry/dome/internal/yamlevent"
	yaml "go.yaml.in/yaml/v3"
)

const (
	peerVersion   = "openapi-format@1.33.6"
	githubPackage = "@octokit/openapi@23.0.2"
)

// A tenth of each description's operations, by tag.
var (
	stripeTags = []string{"charges", "invoices", "payment_intents", "refunds"}
	githubTags = []string{"issues", "pulls", "git", "checks"}
)

func main() {
	dome := flag.String("dome", os.Getenv("DOME_BIN"), "dome binary")
	spec := flag.String("spec", "../shared/data/stripe-spec3-2023-08.yaml", "Stripe's OpenAPI description (YAML)")
	github := flag.String("github", "", "GitHub's OpenAPI description (api.github.com.json); default: npm pack "+githubPackage+" into the work folder")
	work := flag.String("work", "bench/.work/filter", "work directory")
	runs := flag.Int("runs", 5, "measured runs of each command, interleaved")
	parse := flag.String("parse", "", "internal: yaml-nodes|yaml-events|json:FILE, parse FILE and exit (the Go floors)")
	flag.Parse()
	if *parse != "" {
		parseOnly(*parse)
		return
	}
	if *dome == "" {
		fail("set -dome or DOME_BIN")
	}
	must(os.MkdirAll(*work, 0o755))
	w := abs(*work)
	peer := installPeer(w)
	self, err := os.Executable()
	must(err)
	nodeYAML := filepath.Join(w, "npm", "node_modules", "yaml")
	fmt.Printf("load average at start: %s\n", benchrun.Load())

	failed := false
	if _, err := os.Stat(*spec); err != nil {
		fmt.Printf("Stripe: skipped: %s not found (pass -spec FILE)\n", *spec)
	} else {
		tagged := filepath.Join(w, "stripe-tagged.yaml")
		counts := tagStripe(*spec, tagged)
		in := input{name: "Stripe", file: tagged, tags: stripeTags, counts: counts, validate: true,
			floorGo:   []string{self, "-parse", "yaml-nodes:" + tagged},
			floorNode: []string{"node", "-e", "require(process.argv[1]).parse(require('fs').readFileSync(process.argv[2],'utf8'))", nodeYAML, tagged},
			lowFloor:  []string{self, "-parse", "yaml-events:" + tagged}}
		if !bench(in, abs(*dome), peer, w, *runs) {
			failed = true
		}
	}
	gh := *github
	if gh == "" {
		gh = fetchGitHub(w)
	}
	if gh != "" {
		in := input{name: "GitHub", file: gh, tags: githubTags, counts: countTags(gh),
			floorGo:   []string{self, "-parse", "json:" + gh},
			floorNode: []string{"node", "-e", "JSON.parse(require('fs').readFileSync(process.argv[1],'utf8'))", gh}}
		if !bench(in, abs(*dome), peer, w, *runs) {
			failed = true
		}
	}
	fmt.Printf("load average at the end: %s\n", benchrun.Load())
	if failed {
		fmt.Println("TARGET MISSED (see above)")
	}
}

type input struct {
	name, file string
	tags       []string
	counts     map[string]int
	validate   bool     // dome validates (else --no-validate: the spec is knowingly invalid)
	floorGo    []string // a bare parse in Go
	floorNode  []string // a bare parse in node
	lowFloor   []string // yaml.v3's event parser alone, no tree
}

// bench runs one input and prints its rows; it reports whether the targets
// were met.
func bench(in input, dome, peer, w string, runs int) bool {
	st, err := os.Stat(in.file)
	must(err)
	kept, total := 0, 0
	for t, n := range in.counts {
		total += n
		for _, k := range in.tags {
			if t == k {
				kept += n
			}
		}
	}
	fmt.Printf("\n== %s: %s (%.1f MB), %d operations; the profile keeps tags %s: %d operations (%.1f%%)\n",
		in.name, in.file, float64(st.Size())/1e6, total, strings.Join(in.tags, ", "), kept, 100*float64(kept)/float64(total))
	dir := filepath.Join(w, strings.ToLower(in.name))
	must(os.MkdirAll(dir, 0o755))
	profile := filepath.Join(dir, "bench.profile.json")
	var sels []string
	for _, t := range in.tags {
		sels = append(sels, `"tag:`+t+`"`)
	}
	must(os.WriteFile(profile, []byte(`{"schema_version":"dome.profile/v1","id":"bench","allow":{"operations":[`+strings.Join(sels, ",")+`]}}`), 0o644))
	filterFile := filepath.Join(dir, "openapi-format.filter.yaml")
	must(os.WriteFile(filterFile, []byte("inverseTags:\n  - "+strings.Join(in.tags, "\n  - ")+
		"\nunusedComponents:\n  - schemas\n  - parameters\n  - examples\n  - headers\n  - requestBodies\n  - responses\n"), 0o644))
	domeOut := filepath.Join(dir, "dome.openapi.json")
	peerOut := filepath.Join(dir, "openapi-format.json")
	cache := filepath.Join(dir, "cache") // dome's verdict cache, the benchmark's own
	must(os.RemoveAll(cache))
	domeArgs := []string{dome, "spec", "filter", "--spec", in.file, "--profile", profile, "--out", domeOut, "--quiet"}
	env := []string{"XDG_CACHE_HOME=" + cache}
	jobs := []benchrun.Job{
		benchrun.CommandWith("peer", benchrun.Cmd{Argv: []string{peer, in.file, "--filterFile", filterFile, "--output", peerOut}}),
		benchrun.CommandWith("dome, no validation", benchrun.Cmd{Argv: append(domeArgs, "--no-validate"), Env: env}),
		benchrun.Command("floor go", in.floorGo...),
		benchrun.Command("floor node", in.floorNode...),
	}
	if in.validate {
		jobs = append(jobs,
			benchrun.CommandWith("dome", benchrun.Cmd{Argv: domeArgs, Env: env}),
			benchrun.CommandWith("dome, validating", benchrun.Cmd{Argv: domeArgs, Env: append(env, "DOME_VERDICT_CACHE=off")}))
	}
	if in.lowFloor != nil {
		jobs = append(jobs, benchrun.Command("events", in.lowFloor...))
	}
	res, err := benchrun.Interleave(runs, 1, jobs...)
	must(err)
	check(domeOut, peerOut)

	if !in.validate {
		fmt.Printf("(%s fails kin-openapi's validation (its examples): both sides filter without validating; openapi-format never validates)\n", in.name)
	}
	fmt.Printf("load average after the runs: %s\n", benchrun.Load())
	p, fg, fn := res["peer"], res["floor go"], res["floor node"]
	var t benchrun.Table
	t.Row("workload", "dome", "openapi-format", "peer/dome", "baseline: Go parse", "floor of the peer: node parse")
	variants := []string{"dome", "dome, validating", "dome, no validation"}
	names := map[string]string{"dome": "verdict known", "dome, validating": "validating", "dome, no validation": "no validation"}
	for _, v := range variants {
		d, ok := res[v]
		if !ok {
			continue
		}
		label := in.name + ", " + names[v]
		t.Row(label+": wall", benchrun.Ms(d.Wall()), benchrun.Ms(p.Wall()), benchrun.Ratio(p.Wall(), d.Wall()), benchrun.Ms(fg.Wall()), benchrun.Ms(fn.Wall()))
		t.Row(label+": CPU", benchrun.Ms(d.CPU()), benchrun.Ms(p.CPU()), benchrun.Ratio(p.CPU(), d.CPU()), benchrun.Ms(fg.CPU()), benchrun.Ms(fn.CPU()))
		t.Row(label+": peak RSS", benchrun.MB(d.RSS()), benchrun.MB(p.RSS()), benchrun.Ratio(p.RSS(), d.RSS()), benchrun.MB(fg.RSS()), benchrun.MB(fn.RSS()))
	}
	if e, ok := res["events"]; ok {
		t.Row("floor: yaml.v3's event parser alone (no tree): CPU, peak RSS", benchrun.Ms(e.CPU()), "", "", benchrun.MB(e.RSS()), "")
	}
	t.Print(os.Stdout)
	size := float64(st.Size())
	main := res[variants[0]]
	if !in.validate {
		main = res["dome, no validation"]
	}
	noval := res["dome, no validation"]
	var ratios []string
	for _, v := range variants {
		if d, ok := res[v]; ok {
			ratios = append(ratios, fmt.Sprintf("%.1fx (%s)", d.RSS().Median/size, names[v]))
		}
	}
	fmt.Printf("dome's peak RSS / the input's size: %s\n", strings.Join(ratios, ", "))
	fmt.Printf("without validation, dome takes %.2fx the CPU time of the Go parse baseline (%.2fx its wall time)",
		noval.CPU().Median/fg.CPU().Median, noval.Wall().Median/fg.Wall().Median)
	if e, ok := res["events"]; ok {
		fmt.Printf(", %.2fx that of the event parser alone", noval.CPU().Median/e.CPU().Median)
	}
	fmt.Println()
	ok := true
	target := func(name string, met bool) {
		if !met {
			ok = false
		}
		fmt.Printf("target %s: %s\n", name, map[bool]string{true: "met", false: "MISSED"}[met])
	}
	if in.validate {
		cold := res["dome, validating"]
		cost := cold.CPU().Median - noval.CPU().Median
		fmt.Printf("validation costs %.0f ms of CPU when the verdict is not known yet (%.2fx the Go parse baseline), %.0f ms when it is\n",
			cost*1000, cost/fg.CPU().Median, (main.CPU().Median-noval.CPU().Median)*1000)
	}
	target("peer/dome >= 10x (CPU time)", p.CPU().Median/main.CPU().Median >= 10)
	target("peer/dome >= 10x (wall time)", p.Wall().Median/main.Wall().Median >= 10)
	target("peer/dome >= 4x in peak RSS (0.25x the peer's memory)", p.RSS().Median/main.RSS().Median >= 4)
	target("peak RSS under 10x the input", main.RSS().Median < 10*size)
	target("without validation within 1.5x of the Go parse baseline (CPU time)", noval.CPU().Median <= 1.5*fg.CPU().Median)
	return ok
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
	npm(dir, "install", "--no-audit", "--no-fund", "--loglevel=error", peerVersion)
	return bin
}

// fetchGitHub unpacks GitHub's description from the npm registry (npm pack)
// into work/github, once; "" when npm cannot fetch it.
func fetchGitHub(work string) string {
	dir := filepath.Join(work, "github")
	file := filepath.Join(dir, "api.github.com.json")
	if _, err := os.Stat(file); err == nil {
		return file
	}
	must(os.MkdirAll(dir, 0o755))
	cmd := exec.Command("npm", "pack", "--silent", "--pack-destination", dir, githubPackage)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		fmt.Printf("GitHub: skipped: npm pack %s: %v (pass -github FILE)\n", githubPackage, err)
		return ""
	}
	tgz := filepath.Join(dir, strings.TrimSpace(string(out)))
	tar := exec.Command("tar", "-xzf", tgz, "-C", dir, "--strip-components=2", "package/generated/api.github.com.json")
	tar.Stderr = os.Stderr
	must(tar.Run())
	os.Remove(tgz)
	return file
}

func npm(dir string, args ...string) {
	cmd := exec.Command("npm", args...)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		fail("npm " + strings.Join(args, " ") + ": " + err.Error())
	}
}

// tagStripe writes a copy of the Stripe spec with "tags: [<segment>]" added
// to every operation, <segment> being the path's part after /v1/ (or the
// first one). It relies on the layout of Stripe's YAML (two-space indents,
// paths under a top-level "paths:") and returns the operations per tag.
func tagStripe(in, out string) map[string]int {
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

// countTags counts a JSON description's operations by their first tag.
func countTags(file string) map[string]int {
	data, err := os.ReadFile(file)
	must(err)
	var d struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	must(json.Unmarshal(data, &d))
	counts := map[string]int{}
	for _, item := range d.Paths {
		for m, raw := range item {
			switch m {
			case "get", "put", "post", "delete", "patch", "head", "options", "trace":
				var op struct{ Tags []string }
				must(json.Unmarshal(raw, &op))
				t := ""
				if len(op.Tags) > 0 {
					t = op.Tags[0]
				}
				counts[t]++
			}
		}
	}
	return counts
}

// check compares the two outputs: the same operations under paths, and the
// same schemas reached from them ($refs followed through the components).
// openapi-format filters paths only: it keeps every x-webhooks entry (and
// what it reaches), which dome drops unless the profile selects webhooks.
func check(domeOut, peerOut string) {
	type doc struct {
		Paths      map[string]map[string]any `json:"paths"`
		Components map[string]map[string]any `json:"components"`
	}
	read := func(p string) (ops, reached []string, schemas int) {
		data, err := os.ReadFile(p)
		must(err)
		var d doc
		must(json.Unmarshal(data, &d))
		seen := map[string]bool{}
		var follow func(v any)
		follow = func(v any) {
			switch x := v.(type) {
			case map[string]any:
				if r, ok := x["$ref"].(string); ok && strings.HasPrefix(r, "#/components/") && !seen[r] {
					seen[r] = true
					parts := strings.SplitN(strings.TrimPrefix(r, "#/components/"), "/", 2)
					if len(parts) == 2 {
						name := strings.ReplaceAll(strings.ReplaceAll(parts[1], "~1", "/"), "~0", "~")
						follow(d.Components[parts[0]][name])
					}
				}
				for _, y := range x {
					follow(y)
				}
			case []any:
				for _, y := range x {
					follow(y)
				}
			}
		}
		for path, item := range d.Paths {
			for m, op := range item {
				switch m {
				case "get", "put", "post", "delete", "patch", "head", "options", "trace":
					ops = append(ops, m+" "+path)
				}
				follow(op)
			}
		}
		for r := range seen {
			if s, ok := strings.CutPrefix(r, "#/components/schemas/"); ok {
				reached = append(reached, s)
			}
		}
		sort.Strings(ops)
		sort.Strings(reached)
		return ops, reached, len(d.Components["schemas"])
	}
	dOps, dReached, dAll := read(domeOut)
	pOps, pReached, pAll := read(peerOut)
	same := strings.Join(dOps, ",") == strings.Join(pOps, ",") && strings.Join(dReached, ",") == strings.Join(pReached, ",")
	fmt.Printf("outputs: dome %d operations, %d schemas reached from them (%d in all); openapi-format %d operations, %d schemas reached (%d in all); same sets: %v\n",
		len(dOps), len(dReached), dAll, len(pOps), len(pReached), pAll, same)
	if !same {
		fail("dome and openapi-format kept different operations, or schemas that the operations reach")
	}
}

// parseOnly is the Go floors: a bare parse of a file.
func parseOnly(spec string) {
	kind, file, _ := strings.Cut(spec, ":")
	data, err := os.ReadFile(file)
	must(err)
	switch kind {
	case "yaml-nodes":
		var n yaml.Node
		must(yaml.Unmarshal(data, &n))
	case "yaml-events":
		p := yamlevent.NewParser(data)
		var ev yamlevent.Event
		for ev.Kind != yamlevent.StreamEnd {
			must(p.Next(&ev))
		}
	case "json":
		var v any
		must(json.Unmarshal(data, &v))
	default:
		fail("unknown -parse " + kind)
	}
}

func abs(p string) string {
	a, err := filepath.Abs(p)
	must(err)
	return a
}

func must(err error) {
	if err != nil {
		fail(err.Error())
	}
}

func fail(msg string) {
	fmt.Fprintln(os.Stderr, "bench/filter:", msg)
	os.Exit(1)
}
