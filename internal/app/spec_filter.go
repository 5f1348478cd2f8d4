package app

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/dome-registry/dome/pkg/readlimit"
	"github.com/dome-registry/dome/pkg/registry"
	"github.com/dome-registry/dome/pkg/specfilter"
	"github.com/urfave/cli/v2"
)

type specFilterOptions struct {
	Tool    string // tool@ref (registry form)
	Spec    string // a local spec file (local form)
	Root    string // the folder local references may read (default: the spec's folder)
	Profile string // profile@ref, or a profile file
	Out     string
	Explain bool
	Pinned  bool
	JSON    bool
	Quiet   bool
	Filter  specfilter.Options
	Load    specfilter.LoadOptions
	gc      *filterGC
}

// specFilterOffer are the flags of spec filter that error hints may suggest.
var specFilterOffer = specfilter.Flags{"--no-validate", "--allow-empty-selectors", "--max-size"}

// maxSpecSizeFlag is --max-size of the commands that read a spec.
func maxSpecSizeFlag() cli.Flag {
	return &cli.Int64Flag{Name: "max-size", Value: specfilter.DefaultMaxBytes, Usage: "refuse spec files (and files they reference) larger than `BYTES`"}
}

func newSpecCommand(env *Env) *cli.Command {
	return &cli.Command{
		Name:        "spec",
		Usage:       "work with a tool's OpenAPI spec",
		Subcommands: []*cli.Command{newSpecFilterCommand(env), newSpecDiffCommand(env)},
		Description: help("spec"),
	}
}

func newSpecFilterCommand(env *Env) *cli.Command {
	return &cli.Command{
		Name:      "filter",
		Usage:     "apply a profile to a tool's OpenAPI spec and print filtered.openapi.json (RFC 8785 canonical JSON)",
		ArgsUsage: "<tool@ref> | --spec FILE",
		Flags: withGlobal(
			&cli.StringFlag{Name: "profile", Usage: "`PROFILE@REF` of the tool, or a profile file"},
			&cli.StringFlag{Name: "spec", Usage: "filter a local spec `FILE` instead of a registry tool"},
			&cli.StringFlag{Name: "root", Usage: "with --spec: the `DIR` local $refs may read (default: the spec's directory)"},
			&cli.StringFlag{Name: "out", Aliases: []string{"o"}, Usage: "write the filtered spec to `FILE` instead of stdout (a file is replaced atomically; a device or FIFO is written in place)"},
			&cli.BoolFlag{Name: "explain", Usage: "report every operation's and component's fate (stdout with --out, else stderr)"},
			&cli.BoolFlag{Name: "strict", Usage: "a kept operation without an operationId is an error"},
			&cli.BoolFlag{Name: "no-validate", Usage: "skip kin-openapi validation (references are still checked)"},
			&cli.BoolFlag{Name: "validate-input", Usage: "also validate the whole input spec, not only the part the profile keeps"},
			&cli.BoolFlag{Name: "allow-empty-selectors", Usage: "accept selectors that match no operation"},
			&cli.BoolFlag{Name: "pinned", Usage: "registry form: accept only full SHAs and release tags"},
			maxSpecSizeFlag(),
		),
		Action: func(c *cli.Context) error {
			opts := specFilterOptions{
				Spec: c.String("spec"), Root: c.String("root"), Profile: c.String("profile"), Out: c.String("out"),
				Explain: c.Bool("explain"), Pinned: c.Bool("pinned"),
				JSON: globalBool(c, flagJSON), Quiet: globalBool(c, flagQuiet),
				Filter: specfilter.Options{
					Strict: c.Bool("strict"), NoValidate: c.Bool("no-validate"),
					ValidateInput: c.Bool("validate-input"), AllowEmptySelectors: c.Bool("allow-empty-selectors"),
					Offer: specFilterOffer,
				},
				Load: specfilter.LoadOptions{Limits: specfilter.Limits{MaxBytes: c.Int64("max-size")}, Offer: specFilterOffer},
			}
			if opts.Load.Limits.MaxBytes <= 0 {
				return usagef("--max-size must be a positive number of bytes")
			}
			switch {
			case opts.Spec != "" && c.NArg() > 0:
				return usagef("give either <tool@ref> or --spec FILE, not both")
			case opts.Spec == "" && c.NArg() != 1:
				return usagef("spec filter takes one <tool@ref> (or --spec FILE --profile FILE)")
			case opts.Spec != "" && opts.Profile == "":
				return usagef("--spec needs --profile FILE")
			case opts.Spec == "" && opts.Root != "":
				return usagef("--root goes with --spec")
			}
			size := int64(0)
			if opts.Spec != "" {
				if st, err := os.Stat(opts.abs(env, opts.Spec)); err == nil && st.Mode().IsRegular() {
					size = st.Size()
				}
			}
			opts.gc = newFilterGC(env, size)
			defer opts.gc.restore()
			if opts.Spec != "" {
				return runSpecFilterLocal(env, opts)
			}
			opts.Tool = c.Args().First()
			reg, err := openRegistry(c.Context, env, c)
			if err != nil {
				return err
			}
			return runSpecFilterRegistry(c.Context, env, reg, opts)
		},
		Description: help("spec_filter"),
	}
}

// filterGC tunes the collector for a filter of an input of size bytes (0:
// unknown), in two phases. dome's default GOGC=400 (app.go) would let the
// heap grow to five times what is live. While the input's tree is held
// (parse and filter): GOGC=100 and a soft memory limit of 10x the input, less
// the ~18 MiB that the binary's mapped code and the runtime take, which keeps
// the whole process under ten times the input (bench/filter); the limit never
// goes below 3.5x the input plus 8 MiB, above the tree of an ordinary spec
// (2-3x its size), so that the collector does not run constantly on an
// unusually dense one. While validating (the tree dropped): kin-openapi's
// load of the output makes about 50 times the output's size in garbage for a
// model of about 11 times its size, so GOGC=25 under the same limit, raised
// to 16 times the output plus 8 MiB when that is more (a filter that keeps
// most of a big spec: a limit below the live model would make the collector
// run constantly). The memory freed by the first phase (collected at the
// switch) is reused instead of returned and faulted in again; on Stripe's
// filter the limit keeps a first run's peak within 1 MB of the filter's own,
// where GOGC=25 alone peaked 3 MB above it. GOGC or GOMEMLIMIT in the
// environment wins.
type filterGC struct {
	percent, limit bool
	oldPercent     int
	oldLimit       int64
	limit1         int64 // the first phase's limit
}

func newFilterGC(env *Env, size int64) *filterGC {
	g := &filterGC{}
	if env.Getenv("GOGC") == "" {
		g.percent, g.oldPercent = true, debug.SetGCPercent(100)
	}
	if env.Getenv("GOMEMLIMIT") == "" && size > 0 {
		g.limit, g.limit1 = true, max(10*size-18<<20, size*7/2+8<<20)
		g.oldLimit = debug.SetMemoryLimit(g.limit1)
	}
	return g
}

// validating switches to the second phase, for an output of out bytes.
func (g *filterGC) validating(out int) {
	if g == nil {
		return
	}
	if g.percent {
		debug.SetGCPercent(25)
	}
	if g.limit {
		debug.SetMemoryLimit(max(g.limit1, 16*int64(out)+8<<20))
	}
	if g.percent || g.limit {
		// The input's tree is garbage now: collect it before validation
		// allocates, else the first collection waits for the heap to pass
		// what the tree took and validation's pages come on top of its. Only
		// the output is live, so this costs a millisecond or two.
		runtime.GC()
	}
}

func (g *filterGC) restore() {
	if g.percent {
		debug.SetGCPercent(g.oldPercent)
	}
	if g.limit {
		debug.SetMemoryLimit(g.oldLimit)
	}
}

func (o specFilterOptions) abs(env *Env, p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(env.WorkDir, p)
}

func runSpecFilterLocal(env *Env, opts specFilterOptions) error {
	spec := opts.abs(env, opts.Spec)
	root := filepath.Dir(spec)
	if opts.Root != "" {
		root = opts.abs(env, opts.Root)
	}
	rel, err := filepath.Rel(root, spec)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return &errkind.InputError{Source: "--spec", Problem: fmt.Sprintf("%s is not inside --root %s", opts.Spec, opts.Root), Hint: "give a --root that contains the spec"}
	}
	fr, err := specfilter.OpenDir(root)
	if err != nil {
		return &errkind.InputError{Source: "--root", Problem: err.Error(), Err: err}
	}
	defer fr.Close()
	prefix := filepath.ToSlash(relTo(env.WorkDir, root))
	describe := func(name string) string {
		if prefix == "." {
			return name
		}
		return prefix + "/" + name
	}
	lo := opts.Load
	lo.Describe = describe
	load := func() (*specfilter.Document, error) { return specfilter.Load(fr, filepath.ToSlash(rel), lo) }
	doc, err := load()
	if err != nil {
		return err
	}
	p, err := readProfileFile(env, opts.Profile)
	if err != nil {
		return err
	}
	return filterAndReport(env, opts, doc, load, p)
}

func relTo(base, p string) string {
	if r, err := filepath.Rel(base, p); err == nil && !strings.HasPrefix(r, "..") {
		return r
	}
	return p
}

func readProfileFile(env *Env, name string) (*specfilter.Profile, error) {
	data, err := readlimit.ReadFile(specFilterOptions{}.abs(env, name), readlimit.Profile)
	if err != nil {
		return nil, &errkind.InputError{Source: "--profile", Problem: err.Error(), Err: err, Hint: "give a profile file (<id>.profile.json) or, with a tool, profile@ref"}
	}
	return specfilter.ParseProfile(name, data)
}

func runSpecFilterRegistry(ctx context.Context, env *Env, reg *registry.Registry, opts specFilterOptions) error {
	tref, err := registry.ParseRef("tool", opts.Tool)
	if err != nil {
		return err
	}
	t, err := reg.ResolveTool(ctx, tref, registry.PinOptions{Pinned: opts.Pinned, Source: "tool"})
	if err != nil {
		return err
	}
	var p *specfilter.Profile
	switch {
	case opts.Profile == "":
		if t.Tool.DefaultProfile == "" {
			return usagef("%s has no default_profile in tool.json: pass --profile PROFILE@REF", tref.ID)
		}
		pr, err := reg.ProfileAt(tref.ID, t.Tool.DefaultProfile, t.Pin)
		if err != nil {
			return err
		}
		if p, err = specfilter.ParseProfile(pr.Path+"@"+pr.Commit.Short(), pr.Data); err != nil {
			return err
		}
	case !strings.Contains(opts.Profile, "@") && strings.HasSuffix(opts.Profile, ".json"):
		if p, err = readProfileFile(env, opts.Profile); err != nil {
			return err
		}
	default:
		pref, err := registry.ParseRef("--profile", opts.Profile)
		if err != nil {
			return err
		}
		pr, err := reg.ResolveProfile(ctx, tref.ID, pref, registry.PinOptions{Pinned: opts.Pinned, Source: "--profile"})
		if err != nil {
			return err
		}
		if p, err = specfilter.ParseProfile(pr.Path+"@"+pr.Commit.Short(), pr.Data); err != nil {
			return err
		}
	}
	files := reg.Files(t)
	lo := opts.Load
	lo.Describe = files.Describe
	load := func() (*specfilter.Document, error) { return specfilter.Load(files, t.Tool.Spec, lo) }
	doc, err := load()
	if err != nil {
		return err
	}
	return filterAndReport(env, opts, doc, load, p)
}

// specFilterResult is the --json output when the spec goes to --out.
type specFilterResult struct {
	Out        string                 `json:"out"`
	Digest     string                 `json:"digest"`
	Bytes      int                    `json:"bytes"`
	Operations []specfilter.Operation `json:"operations"`
	Warnings   []string               `json:"warnings"`
	Explain    *specfilter.Explain    `json:"explain,omitempty"`
}

// filterAndReport filters doc, drops it, then validates the output (doc,
// the input's tree, is most of the memory; validation needs only the
// output, and load reads the input again to place its problems).
func filterAndReport(env *Env, opts specFilterOptions, doc *specfilter.Document, load func() (*specfilter.Document, error), p *specfilter.Profile) error {
	fo := opts.Filter
	fo.DeferValidation = true
	fo.Verdicts = verdictCache(env)
	res, err := specfilter.Apply(doc, p, fo)
	if err != nil {
		return err
	}
	// doc is not used past Apply: the collector can free the input's tree
	// before kin-openapi loads the output.
	opts.gc.validating(len(res.JSON))
	if err := res.Validate(load); err != nil {
		return err
	}
	if opts.Out == "" {
		if _, err := env.Stdout.Write(res.JSON); err != nil {
			return err
		}
		if opts.Explain {
			return writeExplain(env.Stderr, res.Explain, opts.JSON)
		}
		if !opts.Quiet {
			for _, w := range res.Explain.Warnings {
				fmt.Fprintf(env.Stderr, "dome: warning: %s\n", w)
			}
		}
		return nil
	}
	if err := writeOutputFile(env, "--out", opts.abs(env, opts.Out), res.JSON); err != nil {
		return err
	}
	if opts.JSON {
		out := specFilterResult{Out: opts.Out, Digest: res.Digest, Bytes: len(res.JSON), Operations: res.Operations, Warnings: res.Explain.Warnings}
		if opts.Explain {
			out.Explain = res.Explain
		}
		return writeJSON(env.Stdout, out)
	}
	if opts.Explain {
		if err := writeExplain(env.Stdout, res.Explain, false); err != nil {
			return err
		}
	} else if !opts.Quiet {
		for _, w := range res.Explain.Warnings {
			fmt.Fprintf(env.Stderr, "dome: warning: %s\n", w)
		}
	}
	if !opts.Quiet {
		c := res.Explain.Counts
		fmt.Fprintf(env.Stdout, "wrote %s: %d of %d operations, %d of %d components, %d bytes, %s\n",
			opts.Out, c.KeptOperations, c.Operations, c.KeptComponents, c.Components, len(res.JSON), res.Digest)
	}
	return nil
}

// writeExplain renders the explain report: JSON, or aligned text.
func writeExplain(w io.Writer, ex *specfilter.Explain, asJSON bool) error {
	if asJSON {
		return writeJSON(w, ex)
	}
	fmt.Fprintf(w, "profile %s on %s (OpenAPI %s)\n", ex.Profile, ex.Spec, ex.OpenAPI)
	fmt.Fprintf(w, "operations: %d of %d kept\n", ex.Counts.KeptOperations, ex.Counts.Operations)
	t := table(w)
	for _, d := range append(append([]specfilter.OperationDecision{}, ex.Operations...), ex.Webhooks...) {
		fmt.Fprintf(t, "  %s\t%s %s\t%s\t%s\n", mark(d.Kept), d.Method, d.Path, orDash(d.OperationID), strings.TrimSpace(d.Decision+" "+d.Selector))
	}
	if err := t.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w, "selectors:")
	t = table(w)
	for _, s := range ex.Selectors {
		fmt.Fprintf(t, "  %s\t%s\t%d match(es)\n", s.List, s.Selector, s.Matches)
	}
	if err := t.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "components: %d of %d kept\n", ex.Counts.KeptComponents, ex.Counts.Components)
	t = table(w)
	for _, c := range ex.Components {
		origin := ""
		if c.Origin != "" {
			origin = "from " + c.Origin
		}
		fmt.Fprintf(t, "  %s\t%s/%s\t%s\n", mark(c.Kept), c.Section, c.Name, origin)
	}
	if err := t.Flush(); err != nil {
		return err
	}
	if len(ex.Tags) > 0 {
		fmt.Fprintln(w, "tags:")
		for _, tg := range ex.Tags {
			fmt.Fprintf(w, "  %s %s\n", mark(tg.Kept), tg.Name)
		}
	}
	for _, r := range ex.Removed {
		fmt.Fprintf(w, "removed: %s\n", r)
	}
	if ex.Stripped > 0 {
		fmt.Fprintf(w, "stripped extensions: %d\n", ex.Stripped)
	}
	for _, wr := range ex.Warnings {
		fmt.Fprintf(w, "warning: %s\n", wr)
	}
	return nil
}

func mark(kept bool) string {
	if kept {
		return "keep"
	}
	return "drop"
}
