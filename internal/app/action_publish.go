package app

import (
	"context"
	"fmt"

	"github.com/dome-registry/dome/pkg/action"
	"github.com/dome-registry/dome/pkg/readlimit"
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
			docs, err := readActionsToPublish(env, opts.Files, keys)
			if err != nil {
				return err
			}
			store, err := openActionStoreFor(c.Context, env, c.String("store"), repoTarget(c, env), true)
			if err != nil {
				return err
			}
			defer store.Close()
			return runActionPublish(c.Context, env, store, keys, docs, opts)
		},
		Description: help("action_publish"),
	}
}

// actionToPublish is one FILE, parsed and verified.
type actionToPublish struct {
	File string
	Doc  *action.Document
}

// readActionsToPublish reads and verifies every file before any is published.
func readActionsToPublish(env *Env, files []string, keys *signing.TrustedKeys) ([]actionToPublish, error) {
	docs := make([]actionToPublish, 0, len(files))
	for _, f := range files {
		data, err := readInputFile(env, f, readlimit.Document)
		if err != nil {
			return nil, err
		}
		d, err := action.ParseSubmitted(data)
		if err != nil {
			return nil, actionDocError(env, f, data, err)
		}
		if v := action.VerifyDocument(d, keys); !v.Verified {
			return nil, actionStoreError(sourceName(f), fmt.Errorf("%s@%s: %w", d.Name, d.Version, v.Err))
		}
		docs = append(docs, actionToPublish{File: sourceName(f), Doc: d})
	}
	return docs, nil
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

func runActionPublish(ctx context.Context, env *Env, store action.Store, keys *signing.TrustedKeys, docs []actionToPublish, opts actionPublishOptions) error {
	for _, doc := range docs {
		res, v, err := action.PublishDocument(ctx, store, doc.Doc, keys)
		if err != nil {
			return actionStoreError(doc.File, err)
		}
		// An unchanged version keeps the signature it was first published
		// with, which may be another trusted key's than this file's.
		kid := v.KID
		if sig := action.StoredSignature(res.Record); sig != nil {
			kid = sig.KID
		}
		out := actionPublishResult{File: doc.File, Name: res.Record.Name, Version: res.Record.Version, Hash: res.Record.Hash, KID: kid, Created: res.Created, Revision: res.Record.Revision}
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
			if !res.Created && v.KID != kid {
				fmt.Fprintf(env.Stderr, "dome: %s: signed by %s, but %s@%s is already published with the same payload signed by %s; the store keeps that signature\n", doc.File, v.KID, out.Name, out.Version, kid)
			}
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
