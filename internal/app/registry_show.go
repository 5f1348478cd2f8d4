package app

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/dome-registry/dome/pkg/registry"
	"github.com/urfave/cli/v2"
)

type registryShowOptions struct {
	Tool string
	JSON bool
}

func newRegistryShowCommand(env *Env) *cli.Command {
	return &cli.Command{
		Name:      "show",
		Usage:     "describe one tool at a ref: metadata, profiles, generators, releases, files",
		ArgsUsage: "<tool@ref>",
		Flags:     withGlobal(),
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return usagef("registry show takes exactly one <tool@ref>")
			}
			reg, err := openRegistry(c.Context, env, c)
			if err != nil {
				return err
			}
			return runRegistryShow(c.Context, env, reg, registryShowOptions{Tool: c.Args().First(), JSON: globalBool(c, flagJSON)})
		},
		Description: help("registry_show"),
	}
}

func runRegistryShow(ctx context.Context, env *Env, reg *registry.Registry, opts registryShowOptions) error {
	ref, err := registry.ParseRef("tool", opts.Tool)
	if err != nil {
		return err
	}
	t, err := reg.ResolveTool(ctx, ref, registry.PinOptions{Source: "tool"})
	if err != nil {
		return err
	}
	d, err := reg.Show(t)
	if err != nil {
		return err
	}
	if opts.JSON {
		return writeJSON(env.Stdout, d)
	}
	w := table(env.Stdout)
	fmt.Fprintf(w, "tool\t%s\n", d.ID)
	fmt.Fprintf(w, "title\t%s\n", d.Title)
	if d.Description != "" {
		fmt.Fprintf(w, "description\t%s\n", d.Description)
	}
	if d.Deprecated != nil {
		fmt.Fprintf(w, "deprecated\t%s\n", d.Deprecated.Reason)
	}
	fmt.Fprintf(w, "owners\t%s\n", strings.Join(d.Owners, ", "))
	fmt.Fprintf(w, "at\t%s@%s = %s (%s)\n", d.ID, t.Requested, t.Commit, t.Kind)
	fmt.Fprintf(w, "spec\t%s\n", d.Spec)
	fmt.Fprintf(w, "profiles\t%s (default: %s)\n", orDash(strings.Join(d.Profiles, ", ")), orDash(d.DefaultProfile))
	langs := make([]string, 0, len(d.Generators))
	for l := range d.Generators {
		langs = append(langs, l)
	}
	sort.Strings(langs)
	var gens []string
	for _, l := range langs {
		gens = append(gens, l+"="+d.Generators[l].Bundle)
	}
	fmt.Fprintf(w, "generators\t%s\n", orDash(strings.Join(gens, ", ")))
	var rels []string
	for _, r := range d.AllReleases {
		rels = append(rels, r.Version+" ("+r.Commit.Short()+")")
	}
	fmt.Fprintf(w, "releases\t%s\n", orDash(strings.Join(rels, ", ")))
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
