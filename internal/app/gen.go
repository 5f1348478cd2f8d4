package app

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/dome-registry/dome/pkg/codegen"
	"github.com/dome-registry/dome/pkg/contracttest"
	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/dome-registry/dome/pkg/registry"
	"github.com/dome-registry/dome/pkg/specfilter"
	"github.com/urfave/cli/v2"
)

type genOptions struct {
	Tool       string // tool@ref (single form)
	Profile    string // profile@ref, a profile id (at the tool's commit), or "" (the default profile)
	All        bool
	Ref        string // --all: the commit to generate from
	Langs      []string
	Out        string // absolute
	OutArg     string // as given, for messages
	Check      bool
	Pinned     bool
	NoValidate bool
	MaxSize    int64
	Jobs       int
	JSON       bool
	Quiet      bool
	// NoCompile skips compiling the generated clients before writing them.
	NoCompile bool
}

func newGenCommand(env *Env) *cli.Command {
	return &cli.Command{
		Name:      "gen",
		Usage:     "generate clients from tool@ref + profile@ref with the bundles pinned in generators.lock.json; --check proves drift",
		ArgsUsage: "<tool@ref> | --all | --check",
		Flags: withGlobal(
			&cli.StringFlag{Name: "profile", Usage: "`PROFILE@REF` (or a profile id at the tool's commit)"},
			&cli.BoolFlag{Name: "all", Usage: "generate every tool x profile x language of the registry"},
			&cli.StringFlag{Name: "ref", Value: "HEAD", Usage: "with --all or --check: the registry commit, branch or tag"},
			&cli.StringFlag{Name: "lang", Usage: "comma-separated languages (go, ts, python); default: every target of generators.lock.json"},
			&cli.StringFlag{Name: "out", Aliases: []string{"o"}, Usage: "output `DIR` (required)"},
			&cli.BoolFlag{Name: "check", Usage: "regenerate in memory and compare with DIR; exit 1 on any drift; write nothing"},
			&cli.BoolFlag{Name: "pinned", Usage: "accept only full SHAs and release tags for the tool, the profile and every bundle ref"},
			&cli.IntFlag{Name: "jobs", Usage: "parallel generations (default: one per CPU)"},
			&cli.BoolFlag{Name: "no-validate", Usage: "skip kin-openapi validation of the filtered specs (references are still checked); every manifest.json records spec_validation: skipped"},
			maxSpecSizeFlag(),
			&cli.BoolFlag{Name: "no-compile", Usage: "write the clients without compiling them first (gen says so)"},
		),
		Action: func(c *cli.Context) error {
			opts := genOptions{
				Profile: c.String("profile"), All: c.Bool("all"), Ref: c.String("ref"), Out: c.String("out"),
				Check: c.Bool("check"), Pinned: c.Bool("pinned"), Jobs: c.Int("jobs"), NoCompile: c.Bool("no-compile"),
				NoValidate: c.Bool("no-validate"), MaxSize: c.Int64("max-size"),
				JSON: globalBool(c, flagJSON), Quiet: globalBool(c, flagQuiet),
			}
			if l := c.String("lang"); l != "" {
				for _, x := range strings.Split(l, ",") {
					if x = strings.TrimSpace(x); x != "" {
						opts.Langs = append(opts.Langs, x)
					}
				}
			}
			switch {
			case c.NArg() == 1 && opts.All:
				return usagef("give either <tool@ref> or --all, not both")
			case c.NArg() == 0 && !opts.All && !opts.Check:
				return usagef("gen needs <tool@ref>, --all or --check")
			case opts.Out == "":
				return usagef("gen needs --out DIR")
			case c.NArg() == 0 && opts.Profile != "":
				return usagef("--profile goes with <tool@ref>")
			case c.NArg() == 1 && c.IsSet("ref"):
				return usagef("--ref goes with --all; write the ref into <tool@ref>")
			case opts.MaxSize <= 0:
				return usagef("--max-size must be a positive number of bytes")
			}
			opts.Tool = c.Args().First()
			opts.All = opts.Tool == ""
			for _, l := range opts.Langs {
				if !codegen.ValidLanguage(l) {
					return codegen.UnknownLanguage(l)
				}
			}
			opts.OutArg, opts.Out = opts.Out, absPath(env, opts.Out)
			if err := codegen.CheckOutDir(opts.Out); err != nil {
				return err
			}
			reg, err := openRegistry(c.Context, env, c)
			if err != nil {
				return err
			}
			return runGen(c.Context, env, reg, opts)
		},
		Description: help("gen"),
	}
}

func runGen(ctx context.Context, env *Env, reg *registry.Registry, opts genOptions) error {
	g := &codegen.Generator{Reg: reg, DomeVersion: domeVersion(), Pinned: opts.Pinned, NoValidate: opts.NoValidate,
		Limits: specfilter.Limits{MaxBytes: opts.MaxSize}, Offer: specfilter.Flags{"--no-validate", "--max-size"}}
	var jobs []codegen.Job
	var skipped []codegen.Skipped
	var scope *codegen.Scope
	var err error
	if opts.All {
		p, err := reg.PinRev(ctx, "", opts.Ref, registry.PinOptions{Pinned: opts.Pinned, Source: "--ref", Display: opts.Ref})
		if err != nil {
			return err
		}
		if jobs, skipped, err = g.PlanAll(p, opts.Langs); err != nil {
			return err
		}
		scope = &codegen.Scope{}
		if len(opts.Langs) > 0 {
			scope.Languages = map[string]bool{}
			for _, l := range opts.Langs {
				scope.Languages[l] = true
			}
		}
	} else if jobs, err = planOne(ctx, g, opts); err != nil {
		return err
	}
	if len(jobs) == 0 {
		return &errkind.InputError{Source: "registry", Problem: "nothing to generate: no tool has a generators.lock.json with these languages", Hint: "add registry/tools/<tool_id>/generators.lock.json"}
	}
	var progress codegen.Progress
	if env.StderrTTY && !opts.Quiet && !opts.JSON {
		progress = progressBar(env.Stderr)
	}
	clients, err := g.GenerateAll(ctx, jobs, opts.Jobs, progress)
	if progress != nil {
		fmt.Fprint(env.Stderr, "\r\033[K")
	}
	if err != nil {
		return err
	}
	if opts.Check {
		return reportCheck(env, opts, clients, scope)
	}
	compiled, err := compileClients(ctx, env, reg, opts, clients)
	if err != nil {
		return err
	}
	results, err := codegen.Write(opts.Out, clients, scope)
	if err != nil {
		return err
	}
	return reportGen(env, opts, clients, results, skipped, compiled)
}

// compileClients compiles every generated client before anything is
// written (go build, tsc --noEmit, python3 -m compileall + import): a client
// that does not compile is a failed check and nothing is written. A language
// whose toolchain is missing is reported as not checked, on stderr too.
func compileClients(ctx context.Context, env *Env, reg *registry.Registry, opts genOptions, clients []*codegen.Client) ([]contracttest.CompileResult, error) {
	if opts.NoCompile {
		if !opts.Quiet && !opts.JSON {
			fmt.Fprintln(env.Stderr, "dome: WARNING: the clients were not compiled (--no-compile)")
		}
		return []contracttest.CompileResult{}, nil
	}
	// A client folder that already holds these very bytes is not compiled again.
	drifts, err := codegen.Check(opts.Out, clients, nil)
	if err != nil {
		return nil, err
	}
	same := map[string]bool{}
	for _, d := range drifts {
		if d.OK() {
			same[d.Dir] = true
		}
	}
	var changed []*codegen.Client
	for _, c := range clients {
		if !same[c.Dir()] {
			changed = append(changed, c)
		}
	}
	res := contracttest.Compile(ctx, toolchains(env, reg), changed)
	var details []string
	for _, r := range res {
		switch r.Status {
		case contracttest.Fail:
			details = append(details, fmt.Sprintf("%s (%s, %d clients):", r.Language, r.Command, r.Clients))
			for _, p := range r.Problems {
				details = append(details, "  "+strings.ReplaceAll(p, "\n", "\n  "))
			}
		case contracttest.Skip:
			fmt.Fprintf(env.Stderr, "dome: WARNING: NOT CHECKED: the %s clients were not compiled: %s\n", r.Language, strings.Join(r.Problems, "; "))
		}
	}
	if len(details) > 0 {
		return nil, &errkind.CheckError{Problem: "generated clients do not compile; nothing was written:", Details: details, Hint: "the bundle's templates produce invalid code for this spec: fix the template (or report it); --no-compile writes the clients anyway"}
	}
	return res, nil
}

// planOne lists the jobs of the single form: one tool, one profile, its languages.
func planOne(ctx context.Context, g *codegen.Generator, opts genOptions) ([]codegen.Job, error) {
	tref, err := registry.ParseRef("tool", opts.Tool)
	if err != nil {
		return nil, err
	}
	t, err := g.Reg.ResolveTool(ctx, tref, registry.PinOptions{Pinned: opts.Pinned, Source: "tool"})
	if err != nil {
		return nil, err
	}
	var pr *registry.ProfileResolution
	switch {
	case opts.Profile == "":
		if t.Tool.DefaultProfile == "" {
			return nil, usagef("%s has no default_profile in tool.json: pass --profile PROFILE@REF", tref.ID)
		}
		pr, err = g.Reg.ProfileAt(tref.ID, t.Tool.DefaultProfile, t.Pin)
	case !strings.Contains(opts.Profile, "@"):
		if !registry.ValidID(opts.Profile) {
			return nil, &errkind.InputError{Source: "--profile", Problem: fmt.Sprintf("%q is not a profile id", opts.Profile), Hint: "write <profile_id>@<ref> or a profile id"}
		}
		pr, err = g.Reg.ProfileAt(tref.ID, opts.Profile, t.Pin)
	default:
		var pref registry.Ref
		if pref, err = registry.ParseRef("--profile", opts.Profile); err != nil {
			return nil, err
		}
		pr, err = g.Reg.ResolveProfile(ctx, tref.ID, pref, registry.PinOptions{Pinned: opts.Pinned, Source: "--profile"})
	}
	if err != nil {
		return nil, err
	}
	langs := opts.Langs
	if len(langs) == 0 {
		if langs, err = g.LockLanguages(t); err != nil {
			return nil, err
		}
		if len(langs) == 0 {
			_, err := g.Target(t, "go") // the error names the missing lock file
			return nil, err
		}
	}
	var jobs []codegen.Job
	for _, l := range langs {
		if _, err := g.Target(t, l); err != nil {
			return nil, err
		}
		jobs = append(jobs, codegen.Job{Tool: t, Profile: pr, Language: l})
	}
	return jobs, nil
}

// progressBar draws "[#####.....] 12/27 ts/petstore/readonly" on a terminal.
func progressBar(w io.Writer) codegen.Progress {
	return func(done, total int, key string) {
		const width = 30
		n := done * width / total
		fmt.Fprintf(w, "\r\033[K[%s%s] %d/%d %s", strings.Repeat("#", n), strings.Repeat(".", width-n), done, total, key)
	}
}

type genResult struct {
	Client             string   `json:"client"`
	Dir                string   `json:"dir"`
	Status             string   `json:"status"`
	Files              int      `json:"files"`
	Bytes              int      `json:"bytes"`
	ClientArtifactHash string   `json:"client_artifact_hash"`
	Removed            []string `json:"removed_files,omitempty"`
	Kept               []string `json:"kept_files,omitempty"`
}

func reportGen(env *Env, opts genOptions, clients []*codegen.Client, results []codegen.WriteResult, skipped []codegen.Skipped, compiled []contracttest.CompileResult) error {
	byDir := map[string]*codegen.Client{}
	for _, c := range clients {
		byDir[c.Dir()] = c
	}
	var rows []genResult
	for _, r := range results {
		row := genResult{Dir: r.Dir, Status: string(r.Status), Removed: r.Removed, Kept: r.Kept}
		if c := byDir[r.Dir]; c != nil {
			row.Client, row.Files, row.ClientArtifactHash = c.Key(), len(c.Files)+1, c.Manifest.ClientArtifactHash
			for _, f := range c.Files {
				row.Bytes += len(f.Data)
			}
		} else {
			row.Client = strings.TrimPrefix(r.Dir, "client/")
		}
		rows = append(rows, row)
	}
	if opts.JSON {
		if skipped == nil {
			skipped = []codegen.Skipped{}
		}
		return writeJSON(env.Stdout, struct {
			Out      string                       `json:"out"`
			Clients  []genResult                  `json:"clients"`
			Skipped  []codegen.Skipped            `json:"skipped"`
			Compiled []contracttest.CompileResult `json:"compiled"`
		}{opts.OutArg, rows, skipped, compiled})
	}
	if opts.Quiet {
		return nil
	}
	w := table(env.Stdout)
	fmt.Fprintln(w, "CLIENT\tSTATUS\tFILES\tBYTES\tCLIENT ARTIFACT HASH")
	written, unchanged, removed := 0, 0, 0
	for _, r := range rows {
		hash := r.ClientArtifactHash
		if len(hash) > 19 {
			hash = hash[:19]
		}
		fmt.Fprintf(w, "%s\t%s\t%d\t%d\t%s\n", r.Client, r.Status, r.Files, r.Bytes, orDash(hash))
		switch codegen.WriteStatus(r.Status) {
		case codegen.StatusWritten:
			written++
		case codegen.StatusUnchanged:
			unchanged++
		case codegen.StatusRemoved:
			removed++
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	for _, r := range rows {
		for _, f := range r.Removed {
			fmt.Fprintf(env.Stdout, "removed stale %s/%s\n", r.Dir, f)
		}
	}
	for _, s := range skipped {
		fmt.Fprintf(env.Stdout, "skipped %s: %s\n", s.ToolID, s.Reason)
	}
	fmt.Fprintf(env.Stdout, "%d written, %d unchanged, %d removed in %s\n", written, unchanged, removed, opts.OutArg)
	var ok, not []string
	for _, r := range compiled {
		if r.Status == contracttest.Pass {
			ok = append(ok, fmt.Sprintf("%s %d", r.Language, r.Clients))
		} else {
			not = append(not, r.Language)
		}
	}
	switch {
	case opts.NoCompile:
		fmt.Fprintln(env.Stdout, "not compiled (--no-compile)")
	case len(compiled) == 0:
		fmt.Fprintln(env.Stdout, "compiled: no client changed")
	case len(not) > 0:
		fmt.Fprintf(env.Stdout, "compiled: %s; NOT CHECKED: %s (toolchain missing, see above)\n", orDash(strings.Join(ok, ", ")), strings.Join(not, ", "))
	default:
		fmt.Fprintf(env.Stdout, "compiled: %s\n", strings.Join(ok, ", "))
	}
	return nil
}

func reportCheck(env *Env, opts genOptions, clients []*codegen.Client, scope *codegen.Scope) error {
	drifts, err := codegen.Check(opts.Out, clients, scope)
	if err != nil {
		return err
	}
	bad := 0
	for _, d := range drifts {
		if !d.OK() {
			bad++
		}
	}
	if opts.JSON {
		if err := writeJSON(env.Stdout, struct {
			OK      bool                   `json:"ok"`
			Clients []*codegen.ClientDrift `json:"clients"`
		}{bad == 0, drifts}); err != nil {
			return err
		}
		if bad > 0 {
			return silentError{ExitCheck}
		}
		return nil
	}
	var details []string
	for _, d := range drifts {
		if d.OK() {
			continue
		}
		details = append(details, fmt.Sprintf("%s: %s", d.Dir, d.Status))
		for _, c := range d.Causes {
			details = append(details, "  cause: "+c)
		}
		for _, f := range d.Files {
			details = append(details, fmt.Sprintf("  %s %s", f.Kind, f.Path))
			if f.Diff != "" && !opts.Quiet {
				fmt.Fprint(env.Stdout, f.Diff)
			}
		}
	}
	if bad > 0 {
		return &errkind.CheckError{
			Problem: fmt.Sprintf("%d of %d clients drifted from their inputs in %s:", bad, len(drifts), opts.OutArg),
			Details: details,
			Hint:    "regenerate with the same command without --check and commit the result",
		}
	}
	if !opts.Quiet {
		fmt.Fprintf(env.Stdout, "%d clients up to date in %s\n", len(drifts), opts.OutArg)
	}
	return nil
}
