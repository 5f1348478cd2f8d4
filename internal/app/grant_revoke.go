package app

import (
	"context"
	"fmt"
	"time"

	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/dome-registry/dome/pkg/grant"
	"github.com/urfave/cli/v2"
)

// defaultRevokeFor is how long a revocation by id lasts when --until is not
// given: the longest lifetime any policy may give a grant.
const defaultRevokeFor = 24 * time.Hour

type grantRevokeOptions struct {
	Revocation grant.Revocation
	Run, Store string
	JSON       bool
}

func newGrantRevokeCommand(env *Env) *cli.Command {
	return &cli.Command{
		Name:        "revoke",
		Usage:       "revoke a grant (by jti) or every grant of a profile (by profile_id) before it expires",
		ArgsUsage:   "[GRANT]",
		Description: help("grant_revoke"),
		Flags: withGlobal(
			&cli.StringFlag{Name: "jti", Usage: "revoke the grant `ID`"},
			&cli.StringFlag{Name: "profile-id", Usage: "revoke every grant of profile `ID` (tp-...)"},
			&cli.BoolFlag{Name: "profile", Usage: "with GRANT: revoke its profile_id, not just its jti"},
			&cli.StringFlag{Name: "issuer", Usage: "the issuer `ID` the grants come from"},
			&cli.StringFlag{Name: "run", Usage: "the run `ID` (locates the default store)"},
			&cli.StringFlag{Name: "until", Usage: "the revocation lasts until `TIME` (RFC 3339)"},
			&cli.StringFlag{Name: "reason", Usage: "why, in `TEXT`, for the audit trail"},
			&cli.StringFlag{Name: "now", Usage: "revoke at `TIME` (RFC 3339; default SOURCE_DATE_EPOCH, else the clock)"},
			grantStoreFlag(),
		),
		Action: func(c *cli.Context) error {
			if c.NArg() > 1 {
				return usagef("grant revoke takes at most one GRANT file")
			}
			now, err := nowFrom(env, c.String("now"))
			if err != nil {
				return err
			}
			r := grant.Revocation{Issuer: c.String("issuer"), Reason: c.String("reason"), RevokedAt: now}
			o := grantRevokeOptions{Run: c.String("run"), Store: c.String("store"), JSON: globalBool(c, flagJSON)}
			switch {
			case c.NArg() == 1:
				if c.IsSet("jti") || c.IsSet("profile-id") {
					return usagef("give a GRANT file or --jti/--profile-id, not both")
				}
				tok, err := readGrantFile(env, c.Args().First())
				if err != nil {
					return err
				}
				g, err := grant.Parse(tok)
				if err != nil {
					return grantError(err)
				}
				p := g.Payload
				r.Kind, r.Value, r.Issuer = grant.RevokeJTI, p.JTI, p.Issuer
				if c.Bool("profile") {
					r.Kind, r.Value = grant.RevokeProfile, p.ProfileID
				}
				if o.Run == "" {
					o.Run = p.RunID
				}
				if exp, err := time.Parse(time.RFC3339, p.ExpiresAt); err == nil && exp.After(now) {
					r.Until = exp
				}
			case c.IsSet("jti") == c.IsSet("profile-id"):
				return usagef("grant revoke needs a GRANT file, or exactly one of --jti and --profile-id")
			case c.IsSet("jti"):
				r.Kind, r.Value = grant.RevokeJTI, c.String("jti")
			default:
				r.Kind, r.Value = grant.RevokeProfile, c.String("profile-id")
			}
			if r.Issuer == "" {
				return usagef("grant revoke needs --issuer (spent and revoked grants are kept per issuer)")
			}
			if c.IsSet("until") {
				t, err := time.Parse(time.RFC3339, c.String("until"))
				if err != nil {
					return &errkind.InputError{Source: "--until", Problem: err.Error(), Hint: "write an RFC 3339 time"}
				}
				r.Until = t.UTC()
			}
			if r.Until.IsZero() {
				r.Until = now.Add(defaultRevokeFor)
			}
			if o.Store == "" && o.Run == "" {
				return usagef("grant revoke needs --run (the store is ops/runs/<run>/grants) or --store")
			}
			o.Revocation = r
			return runGrantRevoke(c.Context, env, o)
		},
	}
}

func runGrantRevoke(ctx context.Context, env *Env, o grantRevokeOptions) error {
	if err := o.Revocation.Check(); err != nil {
		return &errkind.InputError{Source: "grant revoke", Problem: err.Error()}
	}
	store, name, err := openGrantStore(ctx, env, o.Store, o.Run, true)
	if err != nil {
		return err
	}
	defer store.Close()
	if err := store.Revoke(ctx, o.Revocation); err != nil {
		return fmt.Errorf("revoke: %w", err)
	}
	r := o.Revocation
	if o.JSON {
		return writeJSON(env.Stdout, struct {
			grant.Revocation
			Store string `json:"store"`
		}{r, name})
	}
	fmt.Fprintf(env.Stdout, "revoked %s %s of issuer %s until %s in %s\n", r.Kind, r.Value, r.Issuer, grant.FormatTime(r.Until), name)
	return nil
}
