package app

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/dome-registry/dome/pkg/action"
	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/dome-registry/dome/pkg/signing"
	"github.com/urfave/cli/v2"
)

type actionShowOptions struct {
	Ref     string
	Trusted string
	JSON    bool
}

func newActionShowCommand(env *Env) *cli.Command {
	return &cli.Command{
		Name:      "show",
		Usage:     "show a published action version with its signature and verification",
		ArgsUsage: "NAME[@VERSION]",
		Flags:     withGlobal(actionStoreFlag(), trustedFlag()),
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return usagef("action show takes exactly one NAME[@VERSION]")
			}
			opts := actionShowOptions{Ref: c.Args().First(), Trusted: c.String("trusted"), JSON: globalBool(c, flagJSON)}
			keys, err := optionalTrustedKeys(env, opts.Trusted)
			if err != nil {
				return err
			}
			store, err := actionStoreFromFlags(c, env)
			if err != nil {
				return err
			}
			defer store.Close()
			return runActionShow(c.Context, env, store, keys, opts)
		},
		Description: help("action_show"),
	}
}

// actionShowResult is dome action show --json.
type actionShowResult struct {
	action.View
	Revision string `json:"revision,omitempty"`
	Code     string `json:"code,omitempty"`
	Reason   string `json:"reason,omitempty"`
}

// getActionRef reads NAME@VERSION, or NAME's latest_version.
func getActionRef(ctx context.Context, store action.Store, ref string) (action.Record, error) {
	name, version, err := action.ParseRef(ref)
	if err != nil {
		return action.Record{}, &errkind.InputError{Source: ref, Problem: err.Error(), Hint: "write NAME or NAME@VERSION, e.g. files.move@1.1.0"}
	}
	if version == "" {
		list, err := store.List(ctx)
		if err != nil {
			return action.Record{}, err
		}
		for _, s := range list {
			if s.Name == name {
				version = s.LatestVersion
			}
		}
		if version == "" {
			return action.Record{}, actionStoreError(ref, fmt.Errorf("action %q: %w", name, action.ErrActionNotFound))
		}
	}
	rec, err := store.Get(ctx, name, version)
	if err != nil {
		return action.Record{}, actionStoreError(ref, err)
	}
	return rec, nil
}

func runActionShow(ctx context.Context, env *Env, store action.Store, keys *signing.TrustedKeys, opts actionShowOptions) error {
	rec, err := getActionRef(ctx, store, opts.Ref)
	if err != nil {
		return err
	}
	var v action.Verification
	if keys != nil {
		v = action.VerifyRecord(rec, keys)
	} else {
		v = action.Verification{Reason: "no trusted keys configured (--trusted, TRUSTED_KEYS_PATH, TRUSTED_KEYS_JSON)"}
	}
	view := action.NewView(rec, v)
	if opts.JSON {
		out := actionShowResult{View: view, Revision: rec.Revision}
		if !v.Verified {
			out.Code, out.Reason = v.Code(), v.Reason
		}
		return writeJSON(env.Stdout, out)
	}
	w := table(env.Stdout)
	fmt.Fprintf(w, "action\t%s@%s\n", rec.Name, rec.Version)
	fmt.Fprintf(w, "hash\t%s\n", view.Hash)
	if view.Signature != nil {
		fmt.Fprintf(w, "signature\t%s by %s\n", view.Signature.Alg, view.Signature.KID)
	} else {
		fmt.Fprintf(w, "signature\tnone\n")
	}
	if rec.Revision != "" {
		fmt.Fprintf(w, "revision\t%s\n", rec.Revision)
	}
	if rec.Deprecation != nil {
		fmt.Fprintf(w, "deprecated\t%s\n", rec.Deprecation.Reason)
	}
	switch {
	case v.Verified:
		fmt.Fprintf(w, "verified\ttrue\n")
	case keys == nil:
		fmt.Fprintf(w, "verified\tnot checked: %s\n", v.Reason)
	default:
		fmt.Fprintf(w, "verified\tfalse: %s: %s\n", v.Code(), v.Reason)
	}
	if err := w.Flush(); err != nil {
		return err
	}
	var pretty bytes.Buffer
	if err := json.Indent(&pretty, view.Schema, "", "  "); err != nil {
		pretty.Reset()
		pretty.Write(rec.Document)
	}
	pretty.WriteByte('\n')
	_, err = env.Stdout.Write(pretty.Bytes())
	return err
}
