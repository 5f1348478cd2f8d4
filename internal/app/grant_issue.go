package app

import (
	"context"
	"crypto/rand"
	"fmt"

	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/dome-registry/dome/pkg/grant"
	"github.com/dome-registry/dome/pkg/registry"
	"github.com/dome-registry/dome/pkg/signing"
	"github.com/urfave/cli/v2"
)

type grantIssueOptions struct {
	Derive  deriveOptions
	Binding grant.Binding
	Key     signing.PrivateKey
	Out     string
	JSON    bool
}

func newGrantIssueCommand(env *Env) *cli.Command {
	flags := append(deriveFlags(),
		&cli.StringFlag{Name: "key", Usage: "the coordinator's Ed25519 signing key `FILE` (PKCS#8 PEM; dome keygen)"},
		&cli.StringFlag{Name: "kid", Usage: "the key id (default: the key file's name without .key)"},
		&cli.StringFlag{Name: "run", Usage: "bind to run `ID`"},
		&cli.StringFlag{Name: "wave", Usage: "bind to wave `ID`"},
		&cli.StringFlag{Name: "worker", Usage: "bind to worker `ID` (its spawn identity)"},
		&cli.StringFlag{Name: "node-execution", Usage: "bind to node execution `ID` (the attempt)"},
		&cli.StringFlag{Name: "issuer", Usage: "the coordinator's identity `ID` (default: the kid)"},
		&cli.StringFlag{Name: "base-ref", Usage: "the full commit `SHA` the worker reads"},
		&cli.StringFlag{Name: "now", Usage: "issue at `TIME` (RFC 3339; default SOURCE_DATE_EPOCH, else the clock)"},
		&cli.StringFlag{Name: "jti", Usage: "a fixed grant `ID` (default: 128 random bits); for tests and replays"},
		&cli.StringFlag{Name: "out", Aliases: []string{"o"}, Usage: "write the grant to `FILE` (default: stdout)"},
	)
	return &cli.Command{
		Name:        "issue",
		Usage:       "derive a ToolProfile, bind it to one execution and sign it",
		Description: help("grant_issue"),
		Flags:       withGlobal(flags...),
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usagef("grant issue takes no arguments (got %q)", c.Args().First())
			}
			o := grantIssueOptions{Out: c.String("out"), JSON: globalBool(c, flagJSON)}
			var err error
			if o.Derive, err = deriveOptionsFrom(c); err != nil {
				return err
			}
			for _, f := range []string{"key", "run", "wave"} {
				if c.String(f) == "" {
					return usagef("grant issue needs --%s", f)
				}
			}
			if o.Key, err = loadPrivateKey(env, c.String("key"), c.String("kid")); err != nil {
				return err
			}
			now, err := nowFrom(env, c.String("now"))
			if err != nil {
				return err
			}
			issuer := c.String("issuer")
			if issuer == "" {
				issuer = o.Key.KID
			}
			o.Binding = grant.Binding{RunID: c.String("run"), WaveID: c.String("wave"), WorkerID: c.String("worker"), NodeExecutionID: c.String("node-execution"),
				Issuer: issuer, IssuedAt: now, JTI: c.String("jti"), BaseRef: c.String("base-ref")}
			reg, err := openRegistry(c.Context, env, c)
			if err != nil {
				return err
			}
			return runGrantIssue(c.Context, env, reg, o)
		},
	}
}

// grantSummary describes a grant in --json output.
type grantSummary struct {
	JTI          string   `json:"jti"`
	ProfileID    string   `json:"profile_id"`
	Digest       string   `json:"grant_digest"`
	Issuer       string   `json:"issuer"`
	KID          string   `json:"kid"`
	Audience     string   `json:"audience"`
	RunID        string   `json:"run_id"`
	WaveID       string   `json:"wave_id"`
	WorkerID     string   `json:"worker_id,omitempty"`
	NodeExec     string   `json:"node_execution_id,omitempty"`
	IssuedAt     string   `json:"issued_at"`
	ExpiresAt    string   `json:"expires_at"`
	SingleUse    bool     `json:"single_use"`
	Methods      []string `json:"allowed_methods"`
	Capabilities []string `json:"allowed_capabilities"`
	File         string   `json:"file,omitempty"`
}

func summarize(g *grant.Grant, file string) grantSummary {
	p := g.Payload
	s := grantSummary{JTI: p.JTI, ProfileID: p.ProfileID, Digest: g.Digest, Issuer: p.Issuer, KID: g.Header.KID, Audience: p.Audience,
		RunID: p.RunID, WaveID: p.WaveID, WorkerID: p.WorkerID, NodeExec: p.NodeExecutionID, IssuedAt: p.IssuedAt, ExpiresAt: p.ExpiresAt,
		SingleUse: p.SingleUse, Capabilities: p.AllowedCapabilities, File: file}
	for _, m := range p.AllowedMethods {
		s.Methods = append(s.Methods, m.Method)
	}
	return s
}

func runGrantIssue(ctx context.Context, env *Env, reg *registry.Registry, o grantIssueOptions) error {
	d, err := derive(ctx, reg, o.Derive)
	if err != nil {
		return grantError(err)
	}
	tok, g, err := grant.Issue(d, o.Binding, o.Key, rand.Reader)
	if err != nil {
		if ge, ok := grant.AsError(err); ok {
			return &errkind.InputError{Source: "--" + flagOf(ge.Field), Problem: ge.Msg + " (" + string(ge.Code) + ")"}
		}
		return err
	}
	if o.Out == "" || o.Out == "-" {
		_, err := env.Stdout.Write(tok)
		return err
	}
	if err := writeOutput(env, o.Out, tok); err != nil {
		return err
	}
	if o.JSON {
		return writeJSON(env.Stdout, summarize(g, o.Out))
	}
	fmt.Fprintf(env.Stdout, "issued %s: grant %s of profile %s for %s, run %s wave %s, %s to %s, single use %v\n",
		o.Out, g.Payload.JTI, g.Payload.ProfileID, g.Payload.Audience, g.Payload.RunID, g.Payload.WaveID, g.Payload.IssuedAt, g.Payload.ExpiresAt, g.Payload.SingleUse)
	return nil
}

// flagOf names the flag behind a binding field.
func flagOf(field string) string {
	switch field {
	case "run_id":
		return "run"
	case "wave_id":
		return "wave"
	case "worker_id":
		return "worker"
	case "node_execution_id":
		return "node-execution"
	case "base_ref":
		return "base-ref"
	case "issued_at":
		return "now"
	case "":
		return "ttl"
	}
	return field
}
