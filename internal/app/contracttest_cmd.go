package app

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/dome-registry/dome/pkg/codegen"
	"github.com/dome-registry/dome/pkg/contracttest"
	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/dome-registry/dome/pkg/registry"
	"github.com/dome-registry/dome/pkg/release"
	"github.com/urfave/cli/v2"
)

type contractTestOptions struct {
	genOptions
}

func newContractTestCommand(env *Env) *cli.Command {
	return &cli.Command{
		Name:      "contract-test",
		Usage:     "run a tool's golden contract-test cases against a profile and its generated clients",
		ArgsUsage: "<tool@ref>",
		Flags: withGlobal(
			&cli.StringFlag{Name: "profile", Usage: "`PROFILE@REF` (or a profile id at the tool's commit); default: the tool's default_profile"},
			&cli.StringFlag{Name: "lang", Usage: "comma-separated languages to test (default: every target of generators.lock.json)"},
			&cli.BoolFlag{Name: "pinned", Usage: "accept only full SHAs and release tags"},
		),
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return usagef("contract-test takes one <tool@ref>")
			}
			opts := contractTestOptions{genOptions{Tool: c.Args().First(), Profile: c.String("profile"), Pinned: c.Bool("pinned"), JSON: globalBool(c, flagJSON), Quiet: globalBool(c, flagQuiet)}}
			if l := c.String("lang"); l != "" {
				for _, x := range strings.Split(l, ",") {
					if x = strings.TrimSpace(x); x != "" {
						if !codegen.ValidLanguage(x) {
							return codegen.UnknownLanguage(x)
						}
						opts.Langs = append(opts.Langs, x)
					}
				}
			}
			reg, err := openRegistry(c.Context, env, c)
			if err != nil {
				return err
			}
			return runContractTest(c.Context, env, reg, opts)
		},
		Description: help("contract-test"),
	}
}

func runContractTest(ctx context.Context, env *Env, reg *registry.Registry, opts contractTestOptions) error {
	g := &codegen.Generator{Reg: reg, DomeVersion: domeVersion(), Pinned: opts.Pinned}
	jobs, err := planOne(ctx, g, opts.genOptions)
	if err != nil {
		return err
	}
	t, pr := jobs[0].Tool, jobs[0].Profile
	cases, err := contracttest.LoadCases(reg, t)
	if err != nil {
		return err
	}
	if len(cases) == 0 {
		return contracttest.ErrNoCases(t.ToolPath + "@" + t.Commit.Short())
	}
	filtered, err := g.Filter(t, pr)
	if err != nil {
		return err
	}
	clients, err := g.GenerateAll(ctx, jobs, 0, nil)
	if err != nil {
		return err
	}
	rep, err := contracttest.Run(ctx, toolchains(env, reg), t.ToolID, pr.ProfileID, filtered, cases, clients)
	if err != nil {
		return err
	}
	warnSkips(env, rep, opts.Quiet)
	if opts.JSON {
		if err := writeJSON(env.Stdout, rep); err != nil {
			return err
		}
		if !rep.OK() {
			return silentError{ExitCheck}
		}
		return nil
	}
	if !opts.Quiet {
		w := table(env.Stdout)
		for _, c := range rep.Cases {
			fmt.Fprintf(w, "case\t%s\t%s\t%s\n", c.Name, c.OperationID, c.Status)
		}
		for _, c := range rep.Checks {
			fmt.Fprintf(w, "%s\t%s\t\t%s\n", orDash(c.Language), c.Name, c.Status)
		}
		if err := w.Flush(); err != nil {
			return err
		}
	}
	if !rep.OK() {
		return &errkind.CheckError{Problem: fmt.Sprintf("contract tests of %s with profile %s failed:", t.ToolID, pr.ProfileID), Details: release.ReportProblems(rep), Hint: "fix the client, the spec or the golden case named above"}
	}
	return nil
}

// warnSkips says loudly on stderr which checks did not run.
func warnSkips(env *Env, rep *contracttest.Report, quiet bool) {
	for _, c := range rep.Checks {
		if c.Status == contracttest.Skip {
			fmt.Fprintf(env.Stderr, "dome: WARNING: SKIPPED %s check %q: %s\n", c.Language, c.Name, strings.Join(c.Problems, "; "))
		}
	}
}

// toolchains finds go, tsc and python3 for the contract tests.
func toolchains(env *Env, reg *registry.Registry) contracttest.Options {
	find := func(override, name string) string {
		if v := env.Getenv(override); v != "" {
			return contracttest.FindTool(v) // a path or a name; "" when missing
		}
		return contracttest.FindTool(name)
	}
	opts := contracttest.Options{
		Go:     find("DOME_GO", "go"),
		Python: find("DOME_PYTHON", "python3"),
		Node:   find("DOME_NODE", "node"),
		TSC:    find("DOME_TSC", ""),
		CI:     env.Getenv("CI") == "true" || env.Getenv("CI") == "1",
		Env:    os.Environ(),
	}
	if opts.TSC == "" && env.Getenv("DOME_TSC") == "" {
		var roots []string
		if reg != nil && !reg.Repo().IsBare() && reg.Repo().RemoteURL() == "" {
			roots = append(roots, reg.Repo().Path())
		}
		roots = append(roots, env.WorkDir)
		for _, r := range roots {
			p := filepath.Join(r, "contract-tests", "ts", "node_modules", ".bin", "tsc")
			if _, err := os.Stat(p); err == nil {
				opts.TSC = p
				break
			}
		}
		if opts.TSC == "" {
			opts.TSC = contracttest.FindTool("tsc")
		}
	}
	return opts
}

// reproduceFor wires release.Reproducer to this process's toolchains and
// prints skipped contract-test checks as warnings.
func reproduceFor(env *Env, reg *registry.Registry) release.ReproduceFunc {
	return release.Reproducer(reg, domeVersion(), toolchains(env, reg), func(rep *contracttest.Report) { warnSkips(env, rep, false) })
}
