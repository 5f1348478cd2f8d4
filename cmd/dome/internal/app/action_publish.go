package app

import (
	"context"
	"fmt"

	"github.com/dome-registry/dome/pkg/action"
	"github.com/dome-registry/dome/pkg/signing"
	"github.com/urfave/cli/v2"
)

type actionPublishOptions struct {
	Files   []string
	Trusted string
	JSON    bool
	Quiet   bool
}

func newActionPublishCommand(env *Env) *cli.Command {
	return &cli.Command{
		Name:      "publish",
		Usage:     "verify signed action documents and store them immutably",
		ArgsUsage: "FILE...",
		Flags:     withGlobal(actionStoreFlag(), trustedFlag()),
		Action: func(c *cli.Context) error {
			if c.NArg() == 0 {
				return usagef("action publish needs at least one FILE")
			}
			opts := actionPublishOptions{Files: c.Args().Slice(), Trusted: c.String("trusted"), JSON: globalBool(c, flagJSON), Quiet: globalBool(c, flagQuiet)}
			keys, _, err := loadTrustedKeys(env, opts.Trusted)
			if err != nil {
				return err
			}
			store, err := openActionStoreFor(c.Context, env, c.String("store"), globalString(c, flagRepo), true)
			if err != nil {
				return err
			}
			defer store.Close()
			return runActionPublish(c.Context, env, store, keys, opts)
		},
		Description: help("action_publish"),
	}
}

// actionPublishResult is one JSON line of dome action publish --json.
type actionPublishResult struct {
	File     string `json:"file"`
	Name     string `json:"name"`
	Version  string `json:"version"`
	Hash     string `json:"hash"`
	KID      string `json:"kid"`
	Created  bool   `json:"created"`
	Revision string `json:"revision,omitempty"`
}

func runActionPublish(ctx context.Context, env *Env, store action.Store, keys *signing.TrustedKeys, opts actionPublishOptions) error {
	for _, f := range opts.Files {
		data, err := readInputFile(env, f)
		if err != nil {
			return err
		}
		if _, err := action.ParseDocument(data); err != nil {
			return actionDocError(env, f, data, err)
		}
		res, v, err := action.Publish(ctx, store, data, keys)
		if err != nil {
			return actionStoreError(sourceName(f), err)
		}
		out := actionPublishResult{File: sourceName(f), Name: res.Record.Name, Version: res.Record.Version, Hash: res.Record.Hash, KID: v.KID, Created: res.Created, Revision: res.Record.Revision}
		switch {
		case opts.JSON:
			if err := writeJSONLine(env.Stdout, out); err != nil {
				return err
			}
		case !opts.Quiet:
			verb := "published"
			if !res.Created {
				verb = "unchanged"
			}
			rev := ""
			if out.Revision != "" {
				rev = " commit " + short(out.Revision)
			}
			fmt.Fprintf(env.Stdout, "%s %s@%s %s kid %s%s\n", verb, out.Name, out.Version, out.Hash, out.KID, rev)
		}
	}
	return nil
}

func short(rev string) string {
	if len(rev) > 7 {
		return rev[:7]
	}
	return rev
}
