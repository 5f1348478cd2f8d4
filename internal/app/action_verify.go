package app

import (
	"context"
	"fmt"

	"github.com/dome-registry/dome/pkg/action"
	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/dome-registry/dome/pkg/signing"
	"github.com/urfave/cli/v2"
)

type actionVerifyOptions struct {
	Ref     string
	Trusted string
	JSON    bool
}

func newActionVerifyCommand(env *Env) *cli.Command {
	return &cli.Command{
		Name:      "verify",
		Usage:     "verify a published action version against the trusted keys",
		ArgsUsage: "NAME[@VERSION]",
		Flags:     withGlobal(actionStoreFlag(), trustedFlag()),
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return usagef("action verify takes exactly one NAME[@VERSION]")
			}
			opts := actionVerifyOptions{Ref: c.Args().First(), Trusted: c.String("trusted"), JSON: globalBool(c, flagJSON)}
			keys, _, err := loadTrustedKeys(env, opts.Trusted)
			if err != nil {
				return err
			}
			store, err := actionStoreFromFlags(c, env)
			if err != nil {
				return err
			}
			defer store.Close()
			return runActionVerify(c.Context, env, store, keys, opts)
		},
		Description: help("action_verify"),
	}
}

// actionVerifyResult is dome action verify --json (the HTTP API's verify shape).
type actionVerifyResult struct {
	Name     string `json:"name"`
	Version  string `json:"version"`
	Verified bool   `json:"verified"`
	KID      string `json:"kid,omitempty"`
	Alg      string `json:"alg,omitempty"`
	Hash     string `json:"hash,omitempty"`
	Code     string `json:"code,omitempty"`
	Reason   string `json:"reason,omitempty"`
}

func runActionVerify(ctx context.Context, env *Env, store action.Store, keys *signing.TrustedKeys, opts actionVerifyOptions) error {
	rec, err := getActionRef(ctx, store, opts.Ref)
	if err != nil {
		return err
	}
	v := action.VerifyRecord(rec, keys)
	res := actionVerifyResult{Name: rec.Name, Version: rec.Version, Verified: v.Verified, KID: v.KID, Alg: v.Alg, Hash: v.Hash}
	if !v.Verified {
		res.Code, res.Reason = v.Code(), v.Reason
	}
	if opts.JSON {
		if err := writeJSON(env.Stdout, res); err != nil {
			return err
		}
	} else if v.Verified {
		fmt.Fprintf(env.Stdout, "verified: %s@%s is signed by %s (%s), hash %s\n", rec.Name, rec.Version, v.KID, v.Alg, v.Hash)
	}
	if !v.Verified {
		ce := &errkind.CheckError{Problem: fmt.Sprintf("%s@%s: signature check failed: %s", rec.Name, rec.Version, v.Reason), Details: []string{"code: " + v.Code()}}
		if v.Code() == action.ErrUnknownKeyID.Error() {
			ce.Hint = fmt.Sprintf("the trusted keys are: %v; add the signer's public key or check its kid", keys.KIDs())
		}
		return ce
	}
	return nil
}
