package app

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/dome-registry/dome/pkg/grant"
	"github.com/dome-registry/dome/pkg/grant/grantfile"
	"github.com/dome-registry/dome/pkg/grant/grantpg"
	"github.com/dome-registry/dome/pkg/registry"
	"github.com/dome-registry/dome/pkg/skill"
	"github.com/urfave/cli/v2"
)

func newGrantCommand(env *Env) *cli.Command {
	return &cli.Command{
		Name:  "grant",
		Usage: "derive, issue, verify, spend, revoke and inspect ToolProfile grants",
		Description: `A grant is the signed, short-lived credential a worker presents on every tool
call: ToolProfile = policy ∩ resolver(required capabilities) ∩ card, bound to one
run, wave, worker and node execution, signed with Ed25519 as a
dome.tool_profile/v0.1 artifact. See docs/grants.md.`,
		Subcommands: []*cli.Command{
			newGrantDeriveCommand(env),
			newGrantIssueCommand(env),
			newGrantVerifyCommand(env, false),
			newGrantVerifyCommand(env, true),
			newGrantRevokeCommand(env),
			newGrantInspectCommand(env),
		},
	}
}

// deriveFlags are the inputs of a derivation, shared by derive and issue.
func deriveFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "ref", Value: "HEAD", Usage: "read policy/policy_spec.json, policy/resolver_spec.json and the tools at `REF`"},
		&cli.StringFlag{Name: "card", Usage: "the A2A card of what runs the node: `KIND/ID[@REF]` (runtime/<id> or tool/<id>; REF defaults to --ref)"},
		&cli.StringFlag{Name: "profile", Usage: "narrow by the A2A profile `ID[@REF]` (registry/a2a/profiles/<id>.profile.json)"},
		&cli.StringSliceFlag{Name: "capability", Aliases: []string{"c"}, Usage: "a capability the node requires, `CAP` (repeat, or separate with commas)"},
		&cli.StringFlag{Name: "node", Usage: "the TaskSpec node `ID`"},
		&cli.StringFlag{Name: "role", Value: grant.RoleWorker, Usage: "who holds the grant: worker, coordinator or `planner`"},
		&cli.BoolFlag{Name: "as-coordinator", Usage: "a planner acting as coordinator (the only way a planner holds admin)"},
		&cli.StringFlag{Name: "audience", Usage: "the grant's `AUDIENCE` (default: coordinator for the coordinator, else worker_runtime)"},
		&cli.DurationFlag{Name: "ttl", Usage: "lifetime `DURATION` (default: the policy's default_ttl_seconds; at most max_ttl_seconds)"},
		&cli.BoolFlag{Name: "single-use", Usage: "make a grant without write methods single-use too"},
		&cli.StringSliceFlag{Name: "read-root", Usage: "narrow the read roots to `PATH` (repeat)"},
		&cli.StringSliceFlag{Name: "write-root", Usage: "narrow the write roots to `PATH` (repeat)"},
		&cli.StringSliceFlag{Name: "allow-host", Usage: "narrow the hosts to `HOST` (repeat)"},
		&cli.StringSliceFlag{Name: "deny-glob", Usage: "add a deny `GLOB` (repeat)"},
		&cli.Int64Flag{Name: "max-calls", Usage: "lower max_calls to `N`"},
		&cli.Int64Flag{Name: "max-wall-seconds", Usage: "lower max_wall_seconds to `N`"},
	}
}

// deriveOptions are the parsed derivation flags.
type deriveOptions struct {
	Ref, Card, Profile string
	Need               grant.Need
}

func deriveOptionsFrom(c *cli.Context) (deriveOptions, error) {
	o := deriveOptions{Ref: c.String("ref"), Card: c.String("card"), Profile: c.String("profile")}
	if o.Card == "" {
		return o, usagef("grant %s needs --card KIND/ID[@REF] (list them with: dome registry cards)", c.Command.Name)
	}
	var caps []string
	for _, v := range c.StringSlice("capability") {
		for _, s := range strings.Split(v, ",") {
			if s = strings.TrimSpace(s); s != "" {
				caps = append(caps, s)
			}
		}
	}
	if len(caps) == 0 {
		return o, usagef("grant %s needs at least one --capability CAP (the node's required capabilities)", c.Command.Name)
	}
	ttl := c.Duration("ttl")
	if ttl < 0 || ttl%time.Second != 0 {
		return o, &errkind.InputError{Source: "--ttl", Problem: fmt.Sprintf("%s: want a positive whole number of seconds, e.g. 10m", ttl)}
	}
	o.Need = grant.Need{
		NodeID: c.String("node"), Capabilities: caps, Role: c.String("role"), ActingAsCoordinator: c.Bool("as-coordinator"),
		Audience: c.String("audience"), TTLSeconds: int64(ttl / time.Second), SingleUse: c.Bool("single-use"),
	}
	n := &grant.Template{}
	narrowed := false
	if v := c.StringSlice("read-root"); len(v) > 0 || c.IsSet("write-root") || c.IsSet("deny-glob") {
		n.IO = &grant.IOTemplate{ReadRoots: nilIfEmpty(v), WriteRoots: nilIfEmpty(c.StringSlice("write-root")), DenyGlobs: c.StringSlice("deny-glob")}
		narrowed = true
	}
	if v := c.StringSlice("allow-host"); len(v) > 0 {
		n.Net = &grant.NetTemplate{AllowHosts: v}
		narrowed = true
	}
	if c.IsSet("max-calls") || c.IsSet("max-wall-seconds") {
		n.Budgets = &grant.BudgetsTemplate{}
		if c.IsSet("max-calls") {
			v := c.Int64("max-calls")
			n.Budgets.MaxCalls = &v
		}
		if c.IsSet("max-wall-seconds") {
			v := c.Int64("max-wall-seconds")
			n.Budgets.MaxWallSeconds = &v
		}
		narrowed = true
	}
	if narrowed {
		o.Need.Narrow = n
	}
	return o, nil
}

func nilIfEmpty(v []string) []string {
	if len(v) == 0 {
		return nil
	}
	return v
}

// derive reads every input at its pin and derives.
func derive(ctx context.Context, reg *registry.Registry, o deriveOptions) (*grant.Derivation, error) {
	p, err := reg.PinRev(ctx, "", o.Ref, registry.PinOptions{Source: "--ref", Display: o.Ref})
	if err != nil {
		return nil, err
	}
	var specs grant.Specs
	pb, err := reg.ReadPolicyFile(p, registry.PolicySpecPath)
	if err != nil {
		return nil, err
	}
	pol, err := specs.ParsePolicy(registry.PolicySpecPath+"@"+p.Commit.Short(), pb)
	if err != nil {
		return nil, err
	}
	rb, err := reg.ReadPolicyFile(p, registry.ResolverSpecPath)
	if err != nil {
		return nil, err
	}
	res, err := specs.ParseResolver(registry.ResolverSpecPath+"@"+p.Commit.Short(), rb)
	if err != nil {
		return nil, err
	}
	cat, err := skill.Catalog(reg, p, res)
	if err != nil {
		return nil, err
	}
	ix, err := grant.NewIndex(res, cat)
	if err != nil {
		return nil, err
	}
	src := grant.Sources{Policy: pol, Index: ix}
	cref, err := registry.ParseA2ARef("--card", o.Card, o.Ref)
	if err != nil {
		return nil, err
	}
	if cref.Kind == registry.A2AProfile {
		return nil, &errkind.InputError{Source: "--card", Problem: o.Card + " is an A2A profile, not a card", Hint: "give it with --profile; --card takes runtime/<id> or tool/<id>"}
	}
	card, cpin, err := a2aAt(ctx, reg, cref, "--card")
	if err != nil {
		return nil, err
	}
	src.Card, src.CardID, src.CardRef, src.CardDigest = card.Parsed, cref.Name(), cref.Name()+"@"+cpin.Commit.String(), card.Digest
	if o.Profile != "" {
		ps := o.Profile
		if !strings.HasPrefix(ps, registry.A2AProfile+"/") {
			ps = registry.A2AProfile + "/" + ps
		}
		pref, err := registry.ParseA2ARef("--profile", ps, o.Ref)
		if err != nil {
			return nil, err
		}
		if pref.Kind != registry.A2AProfile {
			return nil, &errkind.InputError{Source: "--profile", Problem: o.Profile + " is a card", Hint: "give it with --card"}
		}
		prof, ppin, err := a2aAt(ctx, reg, pref, "--profile")
		if err != nil {
			return nil, err
		}
		src.Profile, src.ProfileRef, src.ProfileDigest = prof.Profile, pref.Name()+"@"+ppin.Commit.String(), prof.Digest
	}
	return grant.Derive(src, o.Need)
}

func a2aAt(ctx context.Context, reg *registry.Registry, ref registry.A2ARef, source string) (*registry.A2AEntry, registry.Pin, error) {
	p, err := reg.PinRev(ctx, "", ref.Rev, registry.PinOptions{Source: source, Display: ref.String()})
	if err != nil {
		return nil, p, err
	}
	e, err := reg.A2AAt(ref.Kind, ref.ID, p)
	return e, p, err
}

// grantError maps a grant refusal to dome's exit codes: bad input (2) or a
// failed check (1) naming the reason code.
func grantError(err error) error {
	ge, ok := grant.AsError(err)
	if !ok {
		return err
	}
	if ge.Err != nil && errkind.IsInput(ge.Err) && ge.Msg == "" {
		var ie *errkind.InputError
		errors.As(ge.Err, &ie)
		c := *ie
		c.Problem = c.Problem + " (" + string(ge.Code) + ")"
		return &c
	}
	if ge.Source == "derive" {
		// Name the flag the field came from.
		c := *ge
		c.Source, c.Field = "--"+deriveFlagOf(ge.Field), ""
		if ge.Field == "" || ge.Field == "budgets" || strings.HasPrefix(ge.Field, "budgets.") || ge.Field == "narrow" || ge.Field == "constraints" {
			c.Source = "grant derive"
		}
		ge = &c
	}
	msg := ge.Error()
	if ge.Code.Input() {
		return &errkind.InputError{Problem: msg, Hint: ge.Hint, Err: err}
	}
	return &errkind.CheckError{Problem: msg, Details: []string{"code: " + string(ge.Code)}, Hint: ge.Hint}
}

// nowFrom reads --now (RFC 3339), else SOURCE_DATE_EPOCH, else the clock.
func nowFrom(env *Env, flag string) (time.Time, error) {
	if flag != "" {
		t, err := time.Parse(time.RFC3339, flag)
		if err != nil {
			return time.Time{}, &errkind.InputError{Source: "--now", Problem: err.Error(), Hint: "write an RFC 3339 time, e.g. 2026-01-02T03:04:05Z"}
		}
		return t.UTC(), nil
	}
	return createdAt(env, "")
}

// grantStoreFlag is --store of the stateful grant commands.
func grantStoreFlag() cli.Flag {
	return &cli.StringFlag{Name: "store", EnvVars: []string{"DOME_GRANT_STORE"}, Usage: "spent and revoked grants: a `DIR` (default ops/runs/<run_id>/grants), postgres://... or postgres ($DATABASE_URL)"}
}

// openGrantStore opens --store; "" is the file store under the run.
// create false leaves a missing file store absent (nil, nil): nothing was
// spent or revoked there yet.
func openGrantStore(ctx context.Context, env *Env, flag, runID string, create bool) (grant.Store, string, error) {
	switch {
	case flag == "postgres" || flag == "postgresql":
		u := env.Getenv("DATABASE_URL")
		if u == "" {
			return nil, "", &errkind.InputError{Source: "--store postgres", Problem: "DATABASE_URL is not set", Hint: "set DATABASE_URL=postgres://USER:PASSWORD@HOST:5432/DB or give --store postgres://..."}
		}
		flag = u
		fallthrough
	case grantpg.IsURL(flag):
		s, err := grantpg.Open(ctx, flag)
		if err != nil {
			return nil, "", &errkind.InputError{Source: "--store", Problem: err.Error(), Err: err}
		}
		return s, s.String(), nil
	}
	dir := flag
	if dir == "" {
		if err := grant.CheckID(runID); err != nil {
			return nil, "", &errkind.InputError{Source: "--run", Problem: err.Error()}
		}
		dir = filepath.Join("ops", "runs", runID, "grants")
	}
	abs := inputPath(env, dir)
	if !create {
		if _, err := os.Stat(abs); errors.Is(err, os.ErrNotExist) {
			return nil, dir + " (not created yet: nothing spent or revoked)", nil
		}
	}
	s, err := grantfile.Open(abs)
	if err != nil {
		return nil, "", &errkind.InputError{Source: "--store " + dir, Problem: err.Error(), Err: err}
	}
	return s, dir, nil
}

// readGrantFile reads a grant (one final newline is tolerated).
func readGrantFile(env *Env, arg string) ([]byte, error) {
	data, err := readInputFile(env, arg, grant.MaxGrantBytes+2)
	if err != nil {
		return nil, err
	}
	return []byte(strings.TrimSuffix(string(data), "\n")), nil
}

// deriveFlagOf names the flag behind a derivation field.
func deriveFlagOf(field string) string {
	switch field {
	case "capabilities":
		return "capability"
	case "node_id":
		return "node"
	}
	return field
}
