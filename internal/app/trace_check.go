package app

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/dome-registry/dome/pkg/trace"
	"github.com/urfave/cli/v2"
)

func newTraceCheckCommand(env *Env) *cli.Command {
	return &cli.Command{
		Name:        "check",
		Description: help("trace_check"),
		Usage:       "exit 1 naming each gap: a required, implemented requirement without a check, a check that did not run and pass, a deprecated path in the docs",
		Flags: withGlobal(traceCatalogFlag(), traceResultsFlag(),
			&cli.StringFlag{Name: "report", Usage: "also write the JSON report (covered ids, gaps) to `FILE`, whatever the outcome"},
			&cli.StringFlag{Name: "sources", Usage: "`DIR` holding the documents the catalogue was written from: every quote must be in its document, every id and every line the document's cover expression matches held by an entry"},
		),
		Action: func(c *cli.Context) error {
			in, err := loadTrace(env, c)
			if err != nil {
				return err
			}
			var sources = c.String("sources")
			return runTraceCheck(env, in, traceCheckOptions{Report: c.String("report"), Sources: sources,
				JSON: globalBool(c, flagJSON), Quiet: globalBool(c, flagQuiet)})
		},
	}
}

type traceCheckOptions struct {
	Report, Sources string
	JSON, Quiet     bool
}

func runTraceCheck(env *Env, in *traceInputs, opts traceCheckOptions) error {
	ti := trace.Inputs{Repo: os.DirFS(in.Root), Index: in.Index, Results: in.Results}
	if opts.Sources != "" {
		dir := absPath(env, opts.Sources)
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			return &errkind.InputError{Source: "--sources " + opts.Sources, Problem: "not a directory", Hint: "name the folder that holds the source documents"}
		}
		ti.Sources = os.DirFS(dir)
	}
	rep, err := trace.Verify(in.Catalog, ti)
	if err != nil {
		return err
	}
	if opts.Report != "" {
		var buf bytes.Buffer
		if err := writeJSON(&buf, rep); err != nil {
			return err
		}
		if err := writeOutputFile(env, "--report", absPath(env, opts.Report), buf.Bytes()); err != nil {
			return err
		}
	}
	if opts.JSON {
		if err := writeJSON(env.Stdout, rep); err != nil {
			return err
		}
		if !rep.OK {
			return silentError{ExitCheck}
		}
		return nil
	}
	if !opts.Quiet {
		printTraceReport(env.Stdout, in, rep)
	}
	if rep.OK {
		return nil
	}
	details := make([]string, len(rep.Gaps))
	for i, g := range rep.Gaps {
		details[i] = g.String()
	}
	return &errkind.CheckError{Problem: fmt.Sprintf("trace check: %s:", plural(len(rep.Gaps), "gap", "gaps")), Details: details,
		Hint: "map a check to each requirement named (or mark it partial or planned, with a note), fix what failed, or replace the deprecated paths"}
}

func printTraceReport(w io.Writer, in *traceInputs, rep *trace.Report) {
	s := rep.Summary
	fmt.Fprintf(w, "%s: %s, %d required and implemented, %s\n", rep.Catalog, plural(s.Requirements, "requirement", "requirements"), s.RequiredImplemented, plural(s.Checks, "check", "checks"))
	fmt.Fprintf(w, "  indexed        %s, %s, %s\n", plural(in.Index.TestFiles, "test file", "test files"), plural(len(in.Index.Scripts), "script", "scripts"), plural(len(in.Index.Schemas), "schema", "schemas"))
	if in.Results != nil {
		dirty := ""
		if rep.Dirty {
			dirty = " (with uncommitted changes)"
		}
		fmt.Fprintf(w, "  results        %s: commit %s%s, %d lines\n", rep.Results, short(rep.Commit), dirty, in.Results.Lines)
		fmt.Fprintf(w, "  covered        %d requirements: every check ran and passed\n", s.Covered)
	} else {
		fmt.Fprintf(w, "  results        none: every check exists (pass --results FILE to require that each ran and passed)\n")
	}
	if len(rep.Promotable) > 0 {
		what := "checks that exist"
		if in.Results != nil {
			what = "checks that all passed"
		}
		if len(rep.Promotable) == 1 {
			what = "has " + what
		} else {
			what = "have " + what
		}
		fmt.Fprintf(w, "  promotable     %s %s; review their status:\n", plural(len(rep.Promotable), "planned requirement", "planned requirements"), what)
		for _, p := range rep.Promotable {
			fmt.Fprintf(w, "                 %s (%s, %s)\n", p.ID, p.Status, plural(p.Checks, "check", "checks"))
		}
	}
	var none []string
	tests := 0
	for _, u := range rep.Unmapped {
		tests += len(u.Tests)
		if u.Mapped == 0 {
			none = append(none, fmt.Sprintf("%s (%d)", u.Package, len(u.Tests)))
		}
	}
	if tests > 0 {
		fmt.Fprintf(w, "  unmapped       %s no requirement maps (--json lists them)\n", plural(tests, "test or script", "tests or scripts"))
	}
	if len(none) > 0 {
		fmt.Fprintf(w, "  no test mapped %s\n", strings.Join(none, ", "))
	}
	if len(rep.Failed) > 0 {
		fmt.Fprintf(w, "  failed         %s in the results (mapped or not), with the last lines each printed:\n", plural(len(rep.Failed), "test", "tests"))
		for _, f := range rep.Failed {
			name := f.Package
			if f.Test != "" {
				name += " " + f.Test
			}
			fmt.Fprintf(w, "    %s\n", name)
			lines := f.Output
			if len(lines) > 10 {
				lines = lines[len(lines)-10:]
			}
			for _, l := range lines {
				fmt.Fprintf(w, "      | %s\n", l)
			}
		}
	}
	if rep.OK {
		fmt.Fprintf(w, "ok: no gaps\n")
	}
}
