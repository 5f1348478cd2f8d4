package app

import (
	"context"
	"fmt"
	"strings"

	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/dome-registry/dome/pkg/registry"
	"github.com/urfave/cli/v2"
)

type registryAcceptTagOptions struct {
	Tag    string // tool@vX.Y.Z, registry/<tool>/vX.Y.Z or generators/<bundle>/vX.Y.Z
	Reason string
	JSON   bool
}

func newRegistryAcceptTagCommand(env *Env) *cli.Command {
	return &cli.Command{
		Name:        "accept-tag",
		Usage:       "accept a release tag that was moved on purpose, so dome reads through it again (logged)",
		ArgsUsage:   "<tool@vX.Y.Z | registry/<tool>/vX.Y.Z | generators/<bundle>/vX.Y.Z>",
		Description: help("registry_accept-tag"),
		Flags: withGlobal(
			&cli.StringFlag{Name: "reason", Usage: "why the move is legitimate (`TEXT`, required; it goes into the log)"},
		),
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return usagef("registry accept-tag takes one <tool@vX.Y.Z> or tag name")
			}
			if strings.TrimSpace(c.String("reason")) == "" {
				return usagef("registry accept-tag needs --reason TEXT: accepting a moved release tag is logged with why")
			}
			reg, err := openRegistry(c.Context, env, c)
			if err != nil {
				return err
			}
			return runRegistryAcceptTag(c.Context, env, reg, registryAcceptTagOptions{Tag: c.Args().First(), Reason: c.String("reason"), JSON: globalBool(c, flagJSON)})
		},
	}
}

func runRegistryAcceptTag(_ context.Context, env *Env, reg *registry.Registry, opts registryAcceptTagOptions) error {
	tag := strings.TrimPrefix(opts.Tag, "refs/tags/")
	if id, v, ok := strings.Cut(tag, "@"); ok {
		if !registry.ValidID(id) || !registry.IsReleaseVersion(v) {
			return &errkind.InputError{Source: "tag", Problem: fmt.Sprintf("%q is not <tool>@vX.Y.Z", opts.Tag), Hint: "name a release: petstore@v1.0.0, or a tag: registry/petstore/v1.0.0 or generators/<bundle>/v1.0.0"}
		}
		tag = registry.ReleaseTag(id, v)
	}
	if _, _, _, ok := registry.ReleaseTagName(tag); !ok {
		return &errkind.InputError{Source: "tag", Problem: fmt.Sprintf("%q is not a release tag", opts.Tag), Hint: "name registry/<tool>/vX.Y.Z, generators/<bundle>/vX.Y.Z or <tool>@vX.Y.Z"}
	}
	store := knownTags(env)
	if store == nil {
		return &errkind.InputError{Source: "DOME_KNOWN_TAGS", Problem: "dome has no memory of tags here: no HOME, XDG_STATE_HOME or DOME_KNOWN_TAGS", Hint: "set DOME_KNOWN_TAGS to a file"}
	}
	now, err := reg.CurrentTag(tag)
	if err != nil {
		return err
	}
	when, err := createdAt(env, "")
	if err != nil {
		return err
	}
	who := taggerIdentity(env, reg.Repo())
	res, err := store.Accept(now, opts.Reason, who.Name+" <"+who.Email+">", when)
	if err != nil {
		return err
	}
	if opts.JSON {
		return writeJSON(env.Stdout, res)
	}
	w := table(env.Stdout)
	switch {
	case !res.Changed:
		fmt.Fprintf(w, "unchanged\t%s\t(already known on commit %s)\n", now.Tag, now.Commit)
	default:
		fmt.Fprintf(w, "accepted\t%s\n", now.Tag)
		if res.Previous != nil {
			fmt.Fprintf(w, "was\tcommit %s (tag object %s)\n", res.Previous.Commit, res.Previous.Object)
		} else {
			fmt.Fprintf(w, "was\t(not known)\n")
		}
		fmt.Fprintf(w, "now\tcommit %s (tag object %s)\n", now.Commit, now.Object)
		fmt.Fprintf(w, "logged in\t%s\n", res.Log)
	}
	return w.Flush()
}
