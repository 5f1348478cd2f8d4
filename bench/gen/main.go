// Command gen benchmarks dome's client generation.
//
// Row 1: "dome gen --all" over the example registry of this checkout into
// an empty directory (no peer does the whole job); beside it "dome registry
// list" on the same repository, a baseline (process start, git reads), not
// a floor.
//
// Row 2: the Go client of the Stripe spec with a profile keeping about 10% of
// its operations (the charges, invoices, payment_intents and refunds paths).
// dome's whole pipeline - resolve the refs in git, filter, generate with
// oapi-codegen, format, manifest, write - against oapi-codegen's own CLI at
// the same version (upstream's release, built once with "go install", so
// compile time is not counted) generating types and client from the
// filtered spec dome wrote; and "dome spec filter" alone, the pipeline's
// first step, as a baseline.
//
// Every command runs -runs times, all interleaved (internal/benchrun): the
// rows give medians with their ranges of wall and CPU time, the ratio is
// peer / dome (above 1: dome is faster), and the load average is printed at
// the start and the end.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"

	"github.com/dome-registry/dome/internal/benchrun"
	"github.com/dome-registry/dome/pkg/codegen"
)

func main() {
	dome := flag.String("dome", os.Getenv("DOME_BIN"), "dome binary")
	spec := flag.String("spec", "../shared/data/stripe-spec3-2023-08.yaml", "the Stripe spec")
	work := flag.String("work", "bench/.work/gen", "work directory")
	runs := flag.Int("runs", 5, "measured runs of each command, interleaved")
	flag.Parse()
	if *dome == "" {
		fail("set -dome or DOME_BIN")
	}
	abs := func(p string) string { a, err := filepath.Abs(p); must(err); return a }
	d := abs(*dome)
	w := abs(*work)
	must(os.RemoveAll(w))
	must(os.MkdirAll(w, 0o755))
	fmt.Printf("load average at start: %s\n", benchrun.Load())

	// The example registry in a repository of its own.
	ex := filepath.Join(w, "example")
	copyTree("registry/tools", filepath.Join(ex, "registry/tools"))
	copyTree("generators", filepath.Join(ex, "generators"))
	gitInit(ex)
	var n atomic.Int64
	fresh := func(prefix string) string { return filepath.Join(w, fmt.Sprintf("%s-%d", prefix, n.Add(1))) }
	res, err := benchrun.Interleave(*runs, 1,
		job("gen --all", ex, func() []string { return []string{d, "gen", "--all", "--no-compile", "--out", fresh("ex-out")} }),
		job("registry list", ex, func() []string { return []string{d, "registry", "list"} }))
	must(err)
	var t benchrun.Table
	t.Row("workload", "dome wall", "dome CPU", "peer wall", "peer CPU", "peer/dome (wall)", "baseline wall", "baseline CPU")
	t.Row("gen --all, example registry (no peer; baseline dome registry list)", benchrun.Ms(res["gen --all"].Wall()), benchrun.Ms(res["gen --all"].CPU()), "-", "-", "-",
		benchrun.Ms(res["registry list"].Wall()), benchrun.Ms(res["registry list"].CPU()))

	if _, err := os.Stat(*spec); err != nil {
		t.Row("stripe Go client", "skipped: "+*spec+" not found")
		t.Print(os.Stdout)
		return
	}
	st := filepath.Join(w, "stripe")
	tool := filepath.Join(st, "registry/tools/stripe")
	must(os.MkdirAll(filepath.Join(tool, "spec"), 0o755))
	must(os.MkdirAll(filepath.Join(tool, "profiles"), 0o755))
	data, err := os.ReadFile(*spec)
	must(err)
	must(os.WriteFile(filepath.Join(tool, "spec/openapi.yaml"), data, 0o644))
	must(os.WriteFile(filepath.Join(tool, "tool.json"), []byte(`{"schema_version": "dome.tool/v1", "id": "stripe", "title": "Stripe", "owners": ["bench"], "spec": "spec/openapi.yaml", "default_profile": "p10"}`), 0o644))
	must(os.WriteFile(filepath.Join(tool, "profiles/p10.profile.json"), []byte(`{"schema_version": "dome.profile/v1", "id": "p10", "allow": {"operations": ["* /v1/charges/**", "* /v1/invoices/**", "* /v1/payment_intents/**", "* /v1/refunds/**"]}}`), 0o644))
	must(os.WriteFile(filepath.Join(tool, "generators.lock.json"), []byte(`{"schema_version": "dome.generators_lock/v1", "targets": {"go": {"bundle": "go-oapi-codegen"}}}`), 0o644))
	copyTree("generators/go-oapi-codegen", filepath.Join(st, "generators/go-oapi-codegen"))
	gitInit(st)
	filtered := filepath.Join(w, "stripe.filtered.json")
	out := run(st, d, "spec", "filter", "stripe@HEAD", "--profile", "p10@HEAD", "--out", filtered)
	// The peer is upstream's own CLI at the release dome vendors
	// (internal/oapicodegen), built by "go install module@version" so none
	// of dome's module settings apply to it.
	peer := filepath.Join(w, "oapi-codegen")
	install := exec.Command("go", "install", codegen.OapiCodegenModule+"/cmd/oapi-codegen@"+codegen.OapiCodegenVersion())
	install.Env = append(os.Environ(), "GOBIN="+w)
	install.Stderr = os.Stderr
	if err := install.Run(); err != nil {
		fail("build the oapi-codegen CLI: " + err.Error())
	}
	version := strings.TrimSpace(run(".", peer, "-version"))
	domeOut := filepath.Join(w, "st-out")
	peerOut := filepath.Join(w, "peer.go")
	res, err = benchrun.Interleave(*runs, 1,
		job("pipeline", st, func() []string {
			must(os.RemoveAll(domeOut))
			return []string{d, "gen", "stripe@HEAD", "--profile", "p10@HEAD", "--lang", "go", "--no-compile", "--out", domeOut}
		}),
		job("peer", w, func() []string {
			return []string{peer, "-generate", "types,client", "-package", "stripe", "-o", peerOut, filtered}
		}),
		job("filter", st, func() []string {
			return []string{d, "spec", "filter", "stripe@HEAD", "--profile", "p10@HEAD", "--out", fresh("f") + ".json"}
		}))
	must(err)
	p, b, f := res["pipeline"], res["peer"], res["filter"]
	t.Row(fmt.Sprintf("stripe Go client, 10%% profile (%s; peer: oapi-codegen CLI %s on dome's filtered spec; baseline: dome spec filter)",
		strings.TrimSpace(strings.TrimPrefix(out, "wrote "+filtered+": ")), lastField(version)),
		benchrun.Ms(p.Wall()), benchrun.Ms(p.CPU()), benchrun.Ms(b.Wall()), benchrun.Ms(b.CPU()), benchrun.Ratio(b.Wall(), p.Wall()),
		benchrun.Ms(f.Wall()), benchrun.Ms(f.CPU()))
	t.Print(os.Stdout)
	ratio := b.Wall().Median / p.Wall().Median
	fmt.Printf("target: dome's whole pipeline within 1.2x of the oapi-codegen CLI (peer/dome >= 0.83x): %.2fx %s\n", ratio, map[bool]string{true: "met", false: "MISSED"}[ratio >= 1/1.2])
	g1, _ := os.ReadFile(filepath.Join(domeOut, "client/go/stripe/p10/client.gen.go"))
	g2, _ := os.ReadFile(peerOut)
	fmt.Printf("generated Go: dome %d bytes, oapi-codegen CLI %d bytes (dome's header differs: no build-dependent module path)\n", len(g1), len(g2))
	fmt.Printf("(medians of %d interleaved runs, ranges in brackets; load average at the end: %s)\n", *runs, benchrun.Load())
}

// job runs the command argv returns (called before each run, untimed) in dir.
func job(label, dir string, argv func() []string) benchrun.Job {
	return benchrun.Job{Label: label, Run: func() (benchrun.Sample, error) {
		return benchrun.Exec(benchrun.Cmd{Argv: argv(), Dir: dir, Env: gitIdentity})
	}}
}

var gitIdentity = []string{"GIT_AUTHOR_NAME=bench", "GIT_AUTHOR_EMAIL=bench@dome.invalid", "GIT_COMMITTER_NAME=bench", "GIT_COMMITTER_EMAIL=bench@dome.invalid"}

func lastField(s string) string {
	f := strings.Fields(s)
	if len(f) == 0 {
		return "?"
	}
	return f[len(f)-1]
}

func run(dir, name string, args ...string) string {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), gitIdentity...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		fail(fmt.Sprintf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out))
	}
	return string(out)
}

func gitInit(dir string) {
	run(dir, "git", "init", "-q", "-b", "main")
	run(dir, "git", "add", "-A")
	run(dir, "git", "commit", "-q", "-m", "bench")
}

func copyTree(src, dst string) {
	must(filepath.Walk(src, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		t := filepath.Join(dst, rel)
		if fi.IsDir() {
			return os.MkdirAll(t, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(t, b, 0o644)
	}))
}

func must(err error) {
	if err != nil {
		fail(err.Error())
	}
}

func fail(msg string) {
	fmt.Fprintln(os.Stderr, "bench/gen:", msg)
	os.Exit(1)
}
