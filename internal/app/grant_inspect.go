package app

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/dome-registry/dome/pkg/grant"
	"github.com/urfave/cli/v2"
)

func newGrantInspectCommand(env *Env) *cli.Command {
	return &cli.Command{
		Name:        "inspect",
		Usage:       "show what a grant says (and, with --trusted, whether its signature holds)",
		ArgsUsage:   "GRANT",
		Description: help("grant_inspect"),
		Flags:       withGlobal(&cli.StringFlag{Name: "trusted", Usage: "check the signature against trusted keys `FILE`"}),
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return usagef("grant inspect takes exactly one GRANT file (- for stdin)")
			}
			return runGrantInspect(c.Context, env, c.Args().First(), c.String("trusted"), globalBool(c, flagJSON))
		},
	}
}

func runGrantInspect(_ context.Context, env *Env, file, trusted string, asJSON bool) error {
	tok, err := readGrantFile(env, file)
	if err != nil {
		return err
	}
	g, err := grant.Parse(tok)
	if err != nil {
		return grantError(err)
	}
	sig := "not checked (give --trusted)"
	var verr error
	if trusted != "" {
		keys, _, err := loadTrustedKeys(env, trusted)
		if err != nil {
			return err
		}
		v, _ := grant.NewVerifier(keys, grant.Options{})
		_, verr = v.CheckSignature(tok)
		sig = "valid (kid " + g.Header.KID + ")"
		if verr != nil {
			sig = "INVALID: " + verr.Error()
		}
	}
	if asJSON {
		out := struct {
			Header    any    `json:"header"`
			Payload   any    `json:"payload"`
			Digest    string `json:"grant_digest"`
			Signature string `json:"signature_check"`
		}{g.Header, g.Payload, g.Digest, sig}
		if err := writeJSON(env.Stdout, out); err != nil {
			return err
		}
	} else {
		p := g.Payload
		w := table(env.Stdout)
		fmt.Fprintf(w, "grant\t%s (%s)\n", p.JTI, g.Digest)
		fmt.Fprintf(w, "kind\t%s, signed by kid %s\n", g.Header.ArtifactKind, g.Header.KID)
		fmt.Fprintf(w, "signature\t%s\n", sig)
		fmt.Fprintf(w, "profile\t%s\n", p.ProfileID)
		fmt.Fprintf(w, "issuer\t%s\n", p.Issuer)
		fmt.Fprintf(w, "audience\t%s\n", p.Audience)
		fmt.Fprintf(w, "bound to\trun %s, wave %s, worker %s, node %s, node execution %s\n", p.RunID, p.WaveID, orDash(p.WorkerID), orDash(p.NodeID), orDash(p.NodeExecutionID))
		fmt.Fprintf(w, "valid\t%s to %s\n", p.IssuedAt, p.ExpiresAt)
		fmt.Fprintf(w, "single use\t%v\n", p.SingleUse)
		fmt.Fprintf(w, "contracts\t%s\n", strings.Join(p.Contracts, ", "))
		var ms []string
		for _, m := range p.AllowedMethods {
			ms = append(ms, m.Method+" ("+string(m.Class)+")")
		}
		fmt.Fprintf(w, "methods\t%s\n", strings.Join(ms, ", "))
		c, _ := json.Marshal(p.Constraints)
		fmt.Fprintf(w, "constraints\t%s\n", c)
		fmt.Fprintf(w, "budgets\tmax_calls %d, max_wall_seconds %d, by capability %s\n", p.Budgets.MaxCalls, p.Budgets.MaxWallSeconds, byCapability(p.Budgets.MaxCallsByCapability))
		if g.Header.BaseRef != "" {
			fmt.Fprintf(w, "base ref\t%s\n", g.Header.BaseRef)
		}
		if g.Header.InputsHash != "" {
			fmt.Fprintf(w, "inputs hash\t%s\n", g.Header.InputsHash)
		}
		if err := w.Flush(); err != nil {
			return err
		}
	}
	if verr != nil {
		return grantError(verr)
	}
	return nil
}
