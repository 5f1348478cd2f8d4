package app

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/dome-registry/dome/pkg/aicontract"
	"github.com/urfave/cli/v2"
)

type contractListOptions struct {
	JSON bool
}

func newContractListCommand(env *Env) *cli.Command {
	return &cli.Command{
		Name:  "list",
		Usage: "list the catalog's commands, rules, stack presets, constraint keys and projects (and validate them all)",
		Flags: withGlobal(contractSourceFlags()...),
		Action: func(c *cli.Context) error {
			src, ref, err := contractSource(c.Context, env, c)
			if err != nil {
				return err
			}
			return runContractList(c.Context, env, src, ref, contractListOptions{JSON: globalBool(c, flagJSON)})
		},
		Description: help("contract_list"),
	}
}

type contractListing struct {
	Catalog     *aicontract.CatalogRef     `json:"catalog,omitempty"`
	Digest      string                     `json:"digest"`
	Commands    []aicontract.Command       `json:"commands"`
	Rules       []aicontract.Rule          `json:"rules"`
	Presets     []aicontract.Preset        `json:"presets"`
	Constraints []aicontract.ConstraintDef `json:"constraints"`
	Projects    []aicontract.Project       `json:"projects"`
}

func runContractList(_ context.Context, env *Env, src aicontract.Source, ref *aicontract.CatalogRef, opts contractListOptions) error {
	cat, err := aicontract.LoadCatalog(src)
	if err != nil {
		return err
	}
	ids, err := aicontract.ListProjects(src)
	if err != nil {
		return err
	}
	l := contractListing{Catalog: ref, Digest: cat.Digest, Commands: cat.Commands, Rules: cat.Rules, Presets: cat.Presets, Constraints: cat.Constraints, Projects: []aicontract.Project{}}
	for _, id := range ids {
		p, _, err := aicontract.LoadProject(src, id)
		if err != nil {
			return err
		}
		l.Projects = append(l.Projects, *p)
	}
	if opts.JSON {
		return writeJSON(env.Stdout, l)
	}
	tw := table(env.Stdout)
	fmt.Fprintln(tw, "COMMANDS")
	for _, c := range l.Commands {
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", c.ID, c.IntentID, c.TemplateID, c.DisplayName)
	}
	fmt.Fprintln(tw, "\nRULES")
	for _, r := range l.Rules {
		def := "off"
		if r.DefaultEnabled {
			def = "on"
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\tconflicts: %s\tsets: %s\n", r.ID, r.Severity, def, strings.Join(r.AppliesToIntents, ","), joinIDs(r.ConflictsWith), joinIDs(sortedMapKeys(r.ContributesConstraints)))
	}
	fmt.Fprintln(tw, "\nPRESETS")
	for _, p := range l.Presets {
		fmt.Fprintf(tw, "  %s\t%s\tsets: %s\n", p.ID, p.DisplayName, joinIDs(sortedMapKeys(p.Constraints)))
	}
	fmt.Fprintln(tw, "\nCONSTRAINTS")
	for _, c := range l.Constraints {
		fmt.Fprintf(tw, "  %s\t%s\t%s\n", c.Key, c.Type, c.Description)
	}
	fmt.Fprintln(tw, "\nPROJECTS")
	for _, p := range l.Projects {
		var toggles []string
		for _, k := range sortedMapKeys(p.Toggles) {
			sign := "-"
			if p.Toggles[k] {
				sign = "+"
			}
			toggles = append(toggles, sign+k)
		}
		fmt.Fprintf(tw, "  %s\t%s\ttoggles: %s\toverrides: %s\n", p.ID, p.StackPresetID, joinIDs(toggles), joinIDs(sortedMapKeys(p.ConstraintOverrides)))
	}
	return tw.Flush()
}

func sortedMapKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
