package app

import (
	"context"
	"fmt"
	"strings"

	"github.com/dome-registry/dome/pkg/action"
	"github.com/urfave/cli/v2"
)

func newActionListCommand(env *Env) *cli.Command {
	return &cli.Command{
		Name:  "list",
		Usage: "list the published actions with their versions and latest_version",
		Flags: withGlobal(actionStoreFlag()),
		Action: func(c *cli.Context) error {
			store, err := actionStoreFromFlags(c, env)
			if err != nil {
				return err
			}
			defer store.Close()
			return runActionList(c.Context, env, store, globalBool(c, flagJSON))
		},
		Description: help("action_list"),
	}
}

// actionListing is the --json output of dome action list (GET /actions).
type actionListing struct {
	Items []actionListItem `json:"items"`
}

type actionListItem struct {
	Name          string            `json:"name"`
	LatestVersion string            `json:"latest_version"`
	Versions      []string          `json:"versions"`
	Description   string            `json:"description,omitempty"`
	Deprecated    map[string]string `json:"deprecated,omitempty"` // version -> reason
}

func runActionList(ctx context.Context, env *Env, store action.Store, asJSON bool) error {
	list, err := store.List(ctx)
	if err != nil {
		return fmt.Errorf("list actions: %w", err)
	}
	if asJSON {
		out := actionListing{Items: []actionListItem{}}
		for _, s := range list {
			out.Items = append(out.Items, actionListItem{Name: s.Name, LatestVersion: s.LatestVersion, Versions: s.Versions, Description: s.Description, Deprecated: s.Deprecated})
		}
		return writeJSON(env.Stdout, out)
	}
	if len(list) == 0 {
		fmt.Fprintf(env.Stderr, "no actions published in %s\n", describeStore(store))
		return nil
	}
	w := table(env.Stdout)
	fmt.Fprintln(w, "NAME\tLATEST\tVERSIONS\tDESCRIPTION")
	for _, s := range list {
		vs := make([]string, len(s.Versions))
		for i, v := range s.Versions {
			vs[i] = v
			if _, dep := s.Deprecated[v]; dep {
				vs[i] += " (deprecated)"
			}
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", s.Name, orDash(s.LatestVersion), strings.Join(vs, ","), orDash(s.Description))
	}
	return w.Flush()
}
