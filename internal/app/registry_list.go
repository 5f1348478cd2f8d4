package app

import (
	"context"
	"fmt"
	"strings"

	"github.com/dome-registry/dome/pkg/registry"
	"github.com/urfave/cli/v2"
)

type registryListOptions struct {
	Ref  string
	JSON bool
}

func newRegistryListCommand(env *Env) *cli.Command {
	return &cli.Command{
		Name:  "list",
		Usage: "list the tools with their profiles, languages and latest release",
		Flags: withGlobal(
			&cli.StringFlag{Name: "ref", Value: "HEAD", Usage: "list the registry at `REF`"},
		),
		Action: func(c *cli.Context) error {
			reg, err := openRegistry(c.Context, env, c)
			if err != nil {
				return err
			}
			return runRegistryList(c.Context, env, reg, registryListOptions{Ref: c.String("ref"), JSON: globalBool(c, flagJSON)})
		},
		Description: help("registry_list"),
	}
}

// registryListing is the --json output of dome registry list.
type registryListing struct {
	Ref    string                 `json:"requested_ref"`
	Commit string                 `json:"commit"`
	Tools  []registry.ToolSummary `json:"tools"`
}

func runRegistryList(ctx context.Context, env *Env, reg *registry.Registry, opts registryListOptions) error {
	ref, err := registry.ParseRef("--ref", "registry@"+opts.Ref)
	if err != nil {
		return err
	}
	p, err := reg.PinRev(ctx, "", ref.Rev, registry.PinOptions{Source: "--ref"})
	if err != nil {
		return err
	}
	tools, err := reg.List(p)
	if err != nil {
		return err
	}
	if opts.JSON {
		return writeJSON(env.Stdout, registryListing{Ref: opts.Ref, Commit: p.Commit.String(), Tools: tools})
	}
	fmt.Fprintf(env.Stdout, "registry at %s (%s)\n", opts.Ref, p.Commit.Short())
	w := table(env.Stdout)
	fmt.Fprintln(w, "TOOL\tPROFILES\tLANGUAGES\tLATEST\tTITLE")
	for _, t := range tools {
		latest := "-"
		if t.LatestRelease != nil {
			latest = t.LatestRelease.Version
		}
		title := t.Title
		if t.Deprecated != nil {
			title += " (deprecated)"
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", t.ID, orDash(strings.Join(t.Profiles, ",")), orDash(strings.Join(t.Languages, ",")), latest, title)
	}
	return w.Flush()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
