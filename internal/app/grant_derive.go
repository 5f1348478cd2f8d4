package app

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/dome-registry/dome/pkg/grant"
	"github.com/dome-registry/dome/pkg/registry"
	"github.com/urfave/cli/v2"
)

func newGrantDeriveCommand(env *Env) *cli.Command {
	return &cli.Command{
		Name:        "derive",
		Usage:       "compute the ToolProfile a node would get: policy ∩ resolver(capabilities) ∩ card",
		Description: help("grant_derive"),
		Flags:       withGlobal(append(deriveFlags(), &cli.BoolFlag{Name: "explain", Usage: "say why each method is in or out"})...),
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usagef("grant derive takes no arguments (got %q)", c.Args().First())
			}
			o, err := deriveOptionsFrom(c)
			if err != nil {
				return err
			}
			reg, err := openRegistry(c.Context, env, c)
			if err != nil {
				return err
			}
			return runGrantDerive(c.Context, env, reg, o, c.Bool("explain"), globalBool(c, flagJSON))
		},
	}
}

func runGrantDerive(ctx context.Context, env *Env, reg *registry.Registry, o deriveOptions, explain, asJSON bool) error {
	d, err := derive(ctx, reg, o)
	if err != nil {
		return grantError(err)
	}
	if asJSON {
		out := struct {
			*grant.Derivation
			Explain *grant.Explanation `json:"explain,omitempty"`
		}{Derivation: d}
		if explain {
			out.Explain = &d.Explain
		}
		return writeJSON(env.Stdout, out)
	}
	p := d.Profile
	w := table(env.Stdout)
	fmt.Fprintf(w, "profile\t%s\n", p.ProfileID)
	if p.NodeID != "" {
		fmt.Fprintf(w, "node\t%s\n", p.NodeID)
	}
	fmt.Fprintf(w, "audience\t%s\n", p.Audience)
	fmt.Fprintf(w, "contracts\t%s\n", strings.Join(p.Contracts, ", "))
	fmt.Fprintf(w, "capabilities\t%s\n", strings.Join(p.AllowedCapabilities, ", "))
	fmt.Fprintf(w, "ttl\t%ds\n", d.TTLSeconds)
	fmt.Fprintf(w, "single use\t%v\n", p.SingleUse)
	c := p.Constraints
	fmt.Fprintf(w, "read roots\t%s\n", orDash(strings.Join(c.IO.ReadRoots, " ")))
	fmt.Fprintf(w, "write roots\t%s\n", orDash(strings.Join(c.IO.WriteRoots, " ")))
	fmt.Fprintf(w, "deny globs\t%s\n", orDash(strings.Join(c.IO.DenyGlobs, " ")))
	fmt.Fprintf(w, "hosts\t%s\n", orDash(strings.Join(c.Net.AllowHosts, " ")))
	fmt.Fprintf(w, "budgets\tmax_calls %d, max_wall_seconds %d, by capability %s\n", p.Budgets.MaxCalls, p.Budgets.MaxWallSeconds, byCapability(p.Budgets.MaxCallsByCapability))
	fmt.Fprintf(w, "inputs hash\t%s\n", d.InputsHash)
	if err := w.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(env.Stdout, "methods:")
	w = table(env.Stdout)
	for _, m := range p.AllowedMethods {
		fmt.Fprintf(w, "  %s\t%s\t%s\n", m.Method, m.Class, m.Capability)
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if !explain {
		return nil
	}
	fmt.Fprintf(env.Stdout, "explain (role %s):\n", d.Explain.EffectiveRole)
	for _, m := range d.Explain.Granted {
		fmt.Fprintf(env.Stdout, "  + %s: %s\n", m.Method, m.Rule)
	}
	for _, m := range d.Explain.Excluded {
		fmt.Fprintf(env.Stdout, "  - %s (%s): %s\n", m.Method, m.Class, m.Rule)
	}
	for _, k := range d.Explain.Constraints {
		v, _ := json.Marshal(k.Value)
		fmt.Fprintf(env.Stdout, "  = %s %s: %s\n", k.Field, v, k.Rule)
	}
	return nil
}

func byCapability(m map[string]int64) string {
	var parts []string
	for _, k := range sortedKeys(m) {
		parts = append(parts, fmt.Sprintf("%s=%d", k, m[k]))
	}
	return strings.Join(parts, " ")
}

func sortedKeys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}
