package app

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/dome-registry/dome/pkg/gitstore"
	"github.com/dome-registry/dome/pkg/registry"
	"github.com/urfave/cli/v2"
)

func newRegistryCardsCommand(env *Env) *cli.Command {
	return &cli.Command{
		Name:        "cards",
		Usage:       "list the A2A cards (runtime, tool) and A2A profiles, validated",
		Description: help("registry_cards"),
		Flags:       withGlobal(&cli.StringFlag{Name: "ref", Value: "HEAD", Usage: "list the registry at `REF`"}),
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usagef("registry cards takes no arguments (use --ref REF)")
			}
			reg, err := openRegistry(c.Context, env, c)
			if err != nil {
				return err
			}
			return runRegistryCards(c.Context, env, reg, c.String("ref"), globalBool(c, flagJSON))
		},
	}
}

type registryCardsListing struct {
	Ref      string               `json:"requested_ref"`
	Commit   string               `json:"commit"`
	Cards    []*registry.A2AEntry `json:"cards"`
	Profiles []*registry.A2AEntry `json:"profiles"`
}

func runRegistryCards(ctx context.Context, env *Env, reg *registry.Registry, ref string, asJSON bool) error {
	p, err := reg.PinRev(ctx, "", ref, registry.PinOptions{Source: "--ref", Display: ref})
	if err != nil {
		return err
	}
	es, err := reg.A2AList(p)
	if err != nil {
		return err
	}
	out := registryCardsListing{Ref: ref, Commit: p.Commit.String(), Cards: []*registry.A2AEntry{}, Profiles: []*registry.A2AEntry{}}
	for _, e := range es {
		if e.Kind == registry.A2AProfile {
			out.Profiles = append(out.Profiles, e)
		} else {
			out.Cards = append(out.Cards, e)
		}
	}
	if asJSON {
		return writeJSON(env.Stdout, out)
	}
	fmt.Fprintf(env.Stdout, "a2a at %s (%s)\n", ref, p.Commit.Short())
	w := table(env.Stdout)
	fmt.Fprintln(w, "CARD\tVERSION\tCLASSES\tCAPABILITIES\tSKILLS")
	for _, e := range out.Cards {
		fmt.Fprintf(w, "%s/%s\t%s\t%s\t%s\t%s\n", e.Kind, e.ID, e.Version, strings.Join(e.MaxClasses, ","), strings.Join(e.Capabilities, ","), strings.Join(e.Skills, ","))
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if len(out.Profiles) == 0 {
		return nil
	}
	fmt.Fprintln(env.Stdout)
	w = table(env.Stdout)
	fmt.Fprintln(w, "PROFILE\tCARD\tAUDIENCE\tCAPABILITIES")
	for _, e := range out.Profiles {
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", e.ID, e.Card, e.Audience, strings.Join(e.Capabilities, ","))
	}
	return w.Flush()
}

func newRegistryCardCommand(env *Env) *cli.Command {
	return &cli.Command{
		Name:        "card",
		Usage:       "show one A2A card or profile at a ref, pinned to its commit and blob",
		ArgsUsage:   "<runtime|tool|profile>/<id>@<ref>",
		Description: help("registry_card"),
		Flags:       withGlobal(&cli.BoolFlag{Name: "pinned", Usage: "accept only a full commit SHA"}),
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return usagef("registry card takes exactly one <kind>/<id>@<ref>")
			}
			reg, err := openRegistry(c.Context, env, c)
			if err != nil {
				return err
			}
			return runRegistryCard(c.Context, env, reg, c.Args().First(), c.Bool("pinned"), globalBool(c, flagJSON))
		},
	}
}

func runRegistryCard(ctx context.Context, env *Env, reg *registry.Registry, arg string, pinned, asJSON bool) error {
	ref, err := registry.ParseA2ARef("card", arg, "")
	if err != nil {
		return err
	}
	p, err := reg.PinRev(ctx, "", ref.Rev, registry.PinOptions{Source: "card", Display: ref.String()})
	if err != nil {
		return err
	}
	if pinned && p.Kind != gitstore.KindFullSHA {
		return &errkind.InputError{Source: "card", Problem: fmt.Sprintf("%s is not pinned: %s refs can move", ref, p.Kind), Hint: fmt.Sprintf("use %s@%s", ref.Name(), p.Commit)}
	}
	e, err := reg.A2AAt(ref.Kind, ref.ID, p)
	if err != nil {
		return err
	}
	if asJSON {
		return writeJSON(env.Stdout, struct {
			*registry.A2AEntry
			Requested string          `json:"requested_ref"`
			Commit    string          `json:"commit"`
			Document  json.RawMessage `json:"document"`
		}{e, ref.String(), p.Commit.String(), e.Data})
	}
	w := table(env.Stdout)
	fmt.Fprintf(w, "%s\t%s\n", ref.Kind, ref.ID)
	fmt.Fprintf(w, "at\t%s = %s (%s)\n", ref, p.Commit, p.Kind)
	fmt.Fprintf(w, "file\t%s (blob %s)\n", e.Path, e.Blob)
	fmt.Fprintf(w, "digest\t%s\n", e.Digest)
	if e.Name != "" {
		fmt.Fprintf(w, "name\t%s %s\n", e.Name, e.Version)
	}
	if e.Description != "" {
		fmt.Fprintf(w, "description\t%s\n", e.Description)
	}
	if e.Kind == registry.A2AProfile {
		fmt.Fprintf(w, "card\t%s\n", e.Card)
		fmt.Fprintf(w, "audience\t%s\n", e.Audience)
	} else {
		fmt.Fprintf(w, "interface\t%s (%s %s)\n", e.Interface, e.Parsed.SupportedInterfaces[0].ProtocolBinding, e.Parsed.SupportedInterfaces[0].ProtocolVersion)
		fmt.Fprintf(w, "max classes\t%s\n", strings.Join(e.MaxClasses, ", "))
		fmt.Fprintf(w, "skills\t%s\n", strings.Join(e.Skills, ", "))
	}
	fmt.Fprintf(w, "capabilities\t%s\n", strings.Join(e.Capabilities, ", "))
	return w.Flush()
}
