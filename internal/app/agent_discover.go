package app

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/dome-registry/dome/pkg/agentlock"
	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/urfave/cli/v2"
)

type agentDiscoverOptions struct {
	In       agentInputs
	Category string
	JSON     bool
}

func newAgentDiscoverCommand(env *Env) *cli.Command {
	return &cli.Command{
		Name:  "discover",
		Usage: "list the MCP servers of the index grouped by category",
		Flags: withGlobal(append(agentInputFlags(),
			&cli.StringFlag{Name: "category", Usage: "list only `CATEGORY`"},
		)...),
		Action: func(c *cli.Context) error {
			in, err := readAgentInputs(c)
			if err != nil {
				return err
			}
			return runAgentDiscover(c.Context, env, c, agentDiscoverOptions{In: in, Category: c.String("category"), JSON: globalBool(c, flagJSON)})
		},
		Description: help("agent_discover"),
	}
}

func runAgentDiscover(ctx context.Context, env *Env, c *cli.Context, opts agentDiscoverOptions) error {
	idx, origin, name, _, err := loadAgentIndex(ctx, env, c, opts.In, false)
	if err != nil {
		return err
	}
	cats := agentlock.Discover(idx)
	if opts.Category != "" {
		var all []string
		var keep []agentlock.Category
		for _, cat := range cats {
			all = append(all, cat.Category)
			if cat.Category == opts.Category {
				keep = append(keep, cat)
			}
		}
		if keep == nil {
			return &errkind.InputError{Source: "--category", Problem: fmt.Sprintf("no server in %s has category %q", name, opts.Category), Hint: "categories: " + strings.Join(all, ", ")}
		}
		cats = keep
	}
	if opts.JSON {
		if cats == nil {
			cats = []agentlock.Category{}
		}
		return writeJSON(env.Stdout, map[string]any{"index": origin, "categories": cats})
	}
	if len(cats) == 0 {
		fmt.Fprintf(env.Stdout, "%s lists no servers\n", name)
		return nil
	}
	tw := table(env.Stdout)
	for i, cat := range cats {
		if i > 0 {
			fmt.Fprintln(tw)
		}
		fmt.Fprintf(tw, "%s\n", cat.Category)
		for _, s := range cat.Servers {
			trust := "unsigned"
			if s.Trust.Signed {
				trust = "signed"
			}
			scopes := append([]string(nil), s.Scopes...)
			sort.Strings(scopes)
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%s\n", s.Key(), trust, s.Trust.Publisher, s.Data.Residency, s.Data.MaxSensitivity, strings.Join(scopes, ","))
		}
	}
	return tw.Flush()
}
