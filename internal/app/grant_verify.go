package app

import (
	"context"
	"fmt"
	"time"

	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/dome-registry/dome/pkg/grant"
	"github.com/dome-registry/dome/pkg/signing"
	"github.com/urfave/cli/v2"
)

type grantVerifyOptions struct {
	File      string
	Spend     bool
	Request   grant.Request
	Skew      time.Duration
	Store     string
	NoStore   bool
	JSON      bool
	Trusted   *signing.TrustedKeys
	Meter     bool
	capCalls  int64
	hasCounts bool
}

func bindingFlags() []cli.Flag {
	return []cli.Flag{
		trustedFlag(),
		&cli.StringFlag{Name: "audience", Usage: "the verifier's `AUDIENCE` (required)"},
		&cli.StringFlag{Name: "run", Usage: "the run `ID` the verifier serves (required)"},
		&cli.StringFlag{Name: "wave", Usage: "the wave `ID` (required)"},
		&cli.StringFlag{Name: "worker", Usage: "the caller's worker `ID` (checked when the grant binds one)"},
		&cli.StringFlag{Name: "node-execution", Usage: "the caller's node execution `ID` (checked when the grant binds one)"},
		&cli.StringFlag{Name: "now", Usage: "verify at `TIME` (RFC 3339; default SOURCE_DATE_EPOCH, else the clock)"},
		&cli.DurationFlag{Name: "clock-skew", Value: grant.DefaultClockSkewSeconds * time.Second, Usage: "tolerated clock `SKEW` (at most 5m)"},
		&cli.StringFlag{Name: "method", Usage: "the call's `METHOD` (<tool>/<operationId>)"},
		&cli.StringSliceFlag{Name: "read", Usage: "a `PATH` the call reads (repeat)"},
		&cli.StringSliceFlag{Name: "write", Usage: "a `PATH` the call writes (repeat)"},
		&cli.StringSliceFlag{Name: "host", Usage: "a `HOST` the call reaches (repeat)"},
		&cli.Int64Flag{Name: "calls", Usage: "calls already made under the grant (`N`), for the budgets"},
		&cli.Int64Flag{Name: "capability-calls", Usage: "calls already made of the method's capability (`N`)"},
		&cli.StringFlag{Name: "started", Usage: "`TIME` of the grant's first call, for max_wall_seconds"},
		grantStoreFlag(),
		&cli.BoolFlag{Name: "no-store", Usage: "check only the grant itself: no revocation or replay lookup"},
	}
}

func newGrantVerifyCommand(env *Env, spend bool) *cli.Command {
	name, usage, desc := "verify", "check a grant as a verifier would, spending nothing", help("grant_verify")
	if spend {
		name, usage, desc = "spend", "verify a single-use grant and spend it (exactly once)", help("grant_spend")
	}
	return &cli.Command{
		Name: name, Usage: usage, Description: desc, ArgsUsage: "GRANT",
		Flags: withGlobal(bindingFlags()...),
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return usagef("grant %s takes exactly one GRANT file (- for stdin)", name)
			}
			o := grantVerifyOptions{File: c.Args().First(), Spend: spend, Skew: c.Duration("clock-skew"), Store: c.String("store"), NoStore: c.Bool("no-store"), JSON: globalBool(c, flagJSON)}
			for _, f := range []string{"audience", "run", "wave"} {
				if c.String(f) == "" {
					return usagef("grant %s needs --%s: a verifier checks the grant against its own audience, run and wave", name, f)
				}
			}
			if spend && o.NoStore {
				return usagef("grant spend needs a store: drop --no-store")
			}
			now, err := nowFrom(env, c.String("now"))
			if err != nil {
				return err
			}
			o.Request = grant.Request{Audience: c.String("audience"), RunID: c.String("run"), WaveID: c.String("wave"), WorkerID: c.String("worker"), NodeExecutionID: c.String("node-execution"), Now: now}
			if c.IsSet("method") || c.IsSet("read") || c.IsSet("write") || c.IsSet("host") || c.IsSet("calls") || c.IsSet("started") {
				call := &grant.Call{Method: c.String("method"), ReadPaths: c.StringSlice("read"), WritePaths: c.StringSlice("write"), Hosts: c.StringSlice("host")}
				if c.IsSet("calls") || c.IsSet("capability-calls") || c.IsSet("started") {
					u := &grant.Usage{Calls: c.Int64("calls")}
					if c.IsSet("started") {
						t, err := time.Parse(time.RFC3339, c.String("started"))
						if err != nil {
							return &errkind.InputError{Source: "--started", Problem: err.Error(), Hint: "write an RFC 3339 time"}
						}
						u.Started = t
					}
					o.capCalls, o.hasCounts = c.Int64("capability-calls"), true
					call.Usage = u
				}
				o.Request.Call = call
			}
			if o.Trusted, _, err = loadTrustedKeys(env, c.String("trusted")); err != nil {
				return err
			}
			return runGrantVerify(c.Context, env, o)
		},
	}
}

// grantVerifyResult is the --json output of verify and spend.
type grantVerifyResult struct {
	Verified bool          `json:"verified"`
	Spent    bool          `json:"spent"`
	Code     string        `json:"code,omitempty"`
	Reason   string        `json:"reason,omitempty"`
	Store    string        `json:"store,omitempty"`
	Grant    *grantSummary `json:"grant,omitempty"`
}

func runGrantVerify(ctx context.Context, env *Env, o grantVerifyOptions) error {
	tok, err := readGrantFile(env, o.File)
	if err != nil {
		return err
	}
	var store grant.Store
	storeName := "none (--no-store)"
	if !o.NoStore {
		store, storeName, err = openGrantStore(ctx, env, o.Store, o.Request.RunID, o.Spend)
		if err != nil {
			return err
		}
		if store != nil {
			defer store.Close()
		}
	}
	v, err := grant.NewVerifier(o.Trusted, grant.Options{ClockSkew: o.Skew, Store: store})
	if err != nil {
		return &errkind.InputError{Source: "--clock-skew", Problem: err.Error()}
	}
	if o.hasCounts && o.Request.Call != nil && o.Request.Call.Method != "" {
		if g, perr := grant.Parse(tok); perr == nil {
			if m, ok := g.Method(o.Request.Call.Method); ok {
				o.Request.Call.Usage.CallsByCapability = map[string]int64{m.Capability: o.capCalls}
			}
		}
	}
	var g *grant.Grant
	if o.Spend {
		g, err = v.Spend(ctx, tok, o.Request)
	} else {
		g, err = v.Verify(ctx, tok, o.Request)
	}
	res := grantVerifyResult{Verified: err == nil, Spent: o.Spend && err == nil, Store: storeName}
	if g != nil {
		s := summarize(g, o.File)
		res.Grant = &s
	}
	if err != nil {
		res.Code = string(grant.CodeOf(err))
		res.Reason = err.Error()
	}
	if o.JSON {
		if werr := writeJSON(env.Stdout, res); werr != nil {
			return werr
		}
	} else if err == nil {
		what := "verified"
		if o.Spend {
			what = "spent"
		}
		p := g.Payload
		fmt.Fprintf(env.Stdout, "%s: grant %s (profile %s) by %s for %s, run %s wave %s, valid until %s; store %s\n", what, p.JTI, p.ProfileID, g.Header.KID, p.Audience, p.RunID, p.WaveID, p.ExpiresAt, storeName)
	}
	if err != nil {
		return grantError(err)
	}
	return nil
}
