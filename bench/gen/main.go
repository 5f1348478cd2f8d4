// Command gen benchmarks dome's client generation (issue 5).
//
// Row 1: "dome gen --all" over the example registry of this checkout (4
// tools x 3 profiles x 3 languages) into an empty directory; the floor is
// "dome registry list" on the same repository (process start, git reads).
//
// Row 2: the Go client of the Stripe spec (../shared/data) with a profile
// keeping about 10% of its operations (the charges, invoices,
// payment_intents and refunds paths). dome's whole pipeline - resolve the
// refs in git, filter, generate with oapi-codegen, format, manifest, write -
// against oapi-codegen's own CLI at the same version (upstream's release,
// built once with "go install", so compile time is not counted)
// generating types and client from the filtered spec dome wrote. The floor
// is "dome spec filter" alone: the pipeline's first step.
//
// It prints "workload | dome | peer | ratio | floor" rows: medians of -runs.
package main

import (
	"flag"
	"fmt"
	"github.com/dome-registry/dome/pkg/codegen"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

func main() {
	dome := flag.String("dome", os.Getenv("DOME_BIN"), "dome binary")
	spec := flag.String("spec", "../shared/data/stripe-spec3-2023-08.yaml", "the Stripe spec")
	work := flag.String("work", "bench/.work/gen", "work directory")
	runs := flag.Int("runs", 5, "runs of each command (medians reported)")
	flag.Parse()
	if *dome == "" {
		fail("set -dome or DOME_BIN")
	}
	abs := func(p string) string { a, err := filepath.Abs(p); must(err); return a }
	d := abs(*dome)
	w := abs(*work)
	must(os.RemoveAll(w))
	must(os.MkdirAll(w, 0o755))

	// The example registry in a repository of its own.
	ex := filepath.Join(w, "example")
	copyTree("registry/tools", filepath.Join(ex, "registry/tools"))
	copyTree("generators", filepath.Join(ex, "generators"))
	gitInit(ex)
	genAll := median(*runs, func(i int) {
		run(ex, d, "gen", "--all", "--no-compile", "--out", filepath.Join(w, fmt.Sprintf("ex-out-%d", i)))
	})
	list := median(*runs, func(int) { run(ex, d, "registry", "list") })

	fmt.Println("workload | dome | peer | ratio | floor")
	fmt.Printf("gen --all, example registry (36 clients) | %s | - | - | %s (dome registry list)\n", ms(genAll), ms(list))

	if _, err := os.Stat(*spec); err != nil {
		fmt.Printf("stripe Go client | skipped: %s not found | - | - | -\n", *spec)
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

	pipeline := median(*runs, func(i int) {
		run(st, d, "gen", "stripe@HEAD", "--profile", "p10@HEAD", "--lang", "go", "--no-compile", "--out", filepath.Join(w, fmt.Sprintf("st-out-%d", i)))
	})
	bare := median(*runs, func(i int) {
		run(w, peer, "-generate", "types,client", "-package", "stripe", "-o", filepath.Join(w, fmt.Sprintf("peer-%d.go", i)), filtered)
	})
	filter := median(*runs, func(i int) {
		run(st, d, "spec", "filter", "stripe@HEAD", "--profile", "p10@HEAD", "--out", filepath.Join(w, fmt.Sprintf("f-%d.json", i)))
	})
	fmt.Printf("stripe Go client, 10%% profile (%s) | %s | %s (oapi-codegen CLI %s) | %.2fx | %s (dome spec filter)\n",
		strings.TrimSpace(strings.TrimPrefix(out, "wrote "+filtered+": ")), ms(pipeline), ms(bare), strings.Fields(version + " ?")[len(strings.Fields(version+" ?"))-2], float64(pipeline)/float64(bare), ms(filter))
	g1, _ := os.ReadFile(filepath.Join(w, "st-out-0/client/go/stripe/p10/client.gen.go"))
	g2, _ := os.ReadFile(filepath.Join(w, "peer-0.go"))
	fmt.Printf("# generated Go: dome %d bytes, oapi-codegen CLI %d bytes (dome's header differs: no build-dependent module path)\n", len(g1), len(g2))
}

func median(n int, f func(int)) time.Duration {
	var ds []time.Duration
	for i := 0; i < n; i++ {
		t := time.Now()
		f(i)
		ds = append(ds, time.Since(t))
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	return ds[len(ds)/2]
}

func ms(d time.Duration) string { return fmt.Sprintf("%.0f ms", float64(d.Microseconds())/1000) }

func run(dir, name string, args ...string) string {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=bench", "GIT_AUTHOR_EMAIL=bench@dome.invalid", "GIT_COMMITTER_NAME=bench", "GIT_COMMITTER_EMAIL=bench@dome.invalid")
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
