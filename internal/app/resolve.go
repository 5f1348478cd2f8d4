package app

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/dome-registry/dome/pkg/registry"
	"github.com/urfave/cli/v2"
)

type resolveOptions struct {
	Tool    string // tool@ref
	Profile string // profile@ref, optional
	Pinned  bool
	Batch   string // file of requests, "-" for stdin
	JSON    bool
}

func newResolveCommand(env *Env) *cli.Command {
	return &cli.Command{
		Name:      "resolve",
		Usage:     "pin tool@ref (and --profile profile@ref) to a full commit SHA and blob ids",
		ArgsUsage: "<tool@ref>",
		Flags: withGlobal(
			&cli.StringFlag{Name: "profile", Usage: "also resolve `PROFILE@REF` of the tool"},
			&cli.BoolFlag{Name: "pinned", Usage: "accept only full SHAs and release tags"},
			&cli.StringFlag{Name: "batch", Usage: "resolve the requests in `FILE` (one per line, - for stdin) and print JSON lines"},
		),
		Action: func(c *cli.Context) error {
			opts := resolveOptions{
				Profile: c.String("profile"), Pinned: c.Bool("pinned"), Batch: c.String("batch"),
				JSON: globalBool(c, flagJSON),
			}
			switch {
			case opts.Batch != "" && c.NArg() > 0:
				return usagef("give either <tool@ref> or --batch FILE, not both")
			case opts.Batch == "" && c.NArg() != 1:
				return usagef("resolve takes exactly one <tool@ref> (or --batch FILE)")
			}
			opts.Tool = c.Args().First()
			reg, err := openRegistry(c.Context, env, c)
			if err != nil {
				return err
			}
			if opts.Batch != "" {
				return runResolveBatch(c.Context, env, reg, opts)
			}
			return runResolve(c.Context, env, reg, opts)
		},
		Description: help("resolve"),
	}
}

// resolution is the output of dome resolve.
type resolution struct {
	Tool    *registry.ToolResolution    `json:"tool"`
	Profile *registry.ProfileResolution `json:"profile,omitempty"`
}

func resolveOne(ctx context.Context, reg *registry.Registry, tool, profile string, pinned bool) (*resolution, error) {
	tref, err := registry.ParseRef("tool", tool)
	if err != nil {
		return nil, err
	}
	var pref registry.Ref
	if profile != "" {
		if pref, err = registry.ParseRef("--profile", profile); err != nil {
			return nil, err
		}
	}
	t, err := reg.ResolveTool(ctx, tref, registry.PinOptions{Pinned: pinned, Source: "tool"})
	if err != nil {
		return nil, err
	}
	out := &resolution{Tool: t}
	if profile != "" {
		p, err := reg.ResolveProfile(ctx, tref.ID, pref, registry.PinOptions{Pinned: pinned, Source: "--profile"})
		if err != nil {
			return nil, err
		}
		out.Profile = p
	}
	return out, nil
}

func runResolve(ctx context.Context, env *Env, reg *registry.Registry, opts resolveOptions) error {
	res, err := resolveOne(ctx, reg, opts.Tool, opts.Profile, opts.Pinned)
	if err != nil {
		return err
	}
	if opts.JSON {
		return writeJSON(env.Stdout, res)
	}
	t := res.Tool
	w := table(env.Stdout)
	fmt.Fprintf(w, "tool\t%s\n", t.ToolID)
	fmt.Fprintf(w, "ref\t%s (%s%s)\n", t.Requested, t.Kind, refSuffix(t.RefName))
	fmt.Fprintf(w, "commit\t%s\n", t.Commit)
	fmt.Fprintf(w, "commit tree\t%s\n", t.Tree)
	fmt.Fprintf(w, "tool tree\t%s  %s\n", t.ToolTree, t.ToolPath)
	if res.Profile != nil {
		p := res.Profile
		fmt.Fprintf(w, "profile\t%s@%s (%s%s)\n", p.ProfileID, p.Requested, p.Kind, refSuffix(p.RefName))
		fmt.Fprintf(w, "profile commit\t%s\n", p.Commit)
		fmt.Fprintf(w, "profile blob\t%s  %s\n", p.Blob, p.Path)
	}
	fmt.Fprintf(w, "files\t%d\n", len(t.Files))
	if err := w.Flush(); err != nil {
		return err
	}
	w = table(env.Stdout)
	for _, f := range t.Files {
		fmt.Fprintf(w, "  %s\t%s\t%s\n", f.Mode, f.Blob, f.Path)
	}
	return w.Flush()
}

func refSuffix(name string) string {
	if name == "" {
		return ""
	}
	return " " + name
}

// batchLine is one JSON line of dome resolve --batch.
type batchLine struct {
	Line    int                         `json:"line"`
	Request string                      `json:"request"`
	Tool    *registry.ToolResolution    `json:"tool,omitempty"`
	Profile *registry.ProfileResolution `json:"profile,omitempty"`
	Error   *batchError                 `json:"error,omitempty"`
}

type batchError struct {
	Code    int    `json:"exit_code"`
	Message string `json:"message"`
	Hint    string `json:"hint,omitempty"`
}

func runResolveBatch(ctx context.Context, env *Env, reg *registry.Registry, opts resolveOptions) error {
	var in io.Reader = env.Stdin
	if opts.Batch != "-" {
		path := opts.Batch
		if !filepath.IsAbs(path) {
			path = filepath.Join(env.WorkDir, path)
		}
		f, err := os.Open(path)
		if err != nil {
			return &errkind.InputError{Source: "--batch", Problem: err.Error(), Hint: "give a file with one tool@ref [profile@ref] per line, or - for stdin"}
		}
		defer f.Close()
		in = f
	}
	out := bufio.NewWriterSize(env.Stdout, 1<<16)
	defer out.Flush()
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	type line struct {
		n      int
		text   string
		reqIdx int // index into reqs, -1 for a malformed line
	}
	var lines []line
	var reqs []registry.Request
	for n := 1; sc.Scan(); n++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		fields := strings.Fields(text)
		switch len(fields) {
		case 1, 2:
			q := registry.Request{Tool: fields[0]}
			if len(fields) == 2 {
				q.Profile = fields[1]
			}
			lines = append(lines, line{n, text, len(reqs)})
			reqs = append(reqs, q)
		default:
			lines = append(lines, line{n, text, -1})
		}
	}
	if err := sc.Err(); err != nil {
		return &errkind.InputError{Source: "--batch", Problem: err.Error()}
	}
	results := reg.ResolveMany(ctx, reqs, registry.PinOptions{Pinned: opts.Pinned})
	worst, failed := ExitOK, 0
	for _, l := range lines {
		bl := batchLine{Line: l.n, Request: l.text}
		var err error
		if l.reqIdx < 0 {
			err = &errkind.InputError{Source: fmt.Sprintf("--batch line %d", l.n), Problem: "expected tool@ref [profile@ref]"}
		} else {
			res := results[l.reqIdx]
			bl.Tool, bl.Profile, err = res.Tool, res.Profile, res.Err
		}
		if err != nil {
			code := exitCode(err)
			worst = max(worst, code)
			failed++
			bl.Error = &batchError{Code: code, Message: err.Error(), Hint: errkind.HintOf(err)}
		}
		if err := writeJSONLine(out, bl); err != nil {
			return err
		}
	}
	total := len(lines)
	if err := out.Flush(); err != nil {
		return err
	}
	if worst != ExitOK {
		fmt.Fprintf(env.Stderr, "dome: %d of %d requests failed (see their \"error\" objects)\n", failed, total)
		return silentError{worst}
	}
	return nil
}
