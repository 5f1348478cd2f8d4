package app

import (
	"context"
	"errors"
	"fmt"

	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/dome-registry/dome/pkg/grant"
	"github.com/dome-registry/dome/pkg/spawn"
	"github.com/urfave/cli/v2"
)

func newSpawnCommand(env *Env) *cli.Command {
	return &cli.Command{
		Name:        "spawn",
		Usage:       "check SpawnSpecs, the contract every worker is dispatched with",
		Subcommands: []*cli.Command{newSpawnValidateCommand(env)},
	}
}

func newSpawnValidateCommand(env *Env) *cli.Command {
	return &cli.Command{
		Name:        "validate",
		Usage:       "validate a SpawnSpec (fail closed), optionally against the grant it names",
		ArgsUsage:   "SPEC",
		Description: help("spawn_validate"),
		Flags:       withGlobal(&cli.StringFlag{Name: "grant", Usage: "the grant `FILE` tool_profile_ref must name"}),
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return usagef("spawn validate takes exactly one SPEC file (- for stdin)")
			}
			return runSpawnValidate(c.Context, env, c.Args().First(), c.String("grant"), globalBool(c, flagJSON))
		},
	}
}

type spawnValidateResult struct {
	Valid      bool   `json:"valid"`
	Code       string `json:"code,omitempty"`
	Reason     string `json:"reason,omitempty"`
	InputsHash string `json:"inputs_hash,omitempty"`
	Grant      string `json:"grant_digest,omitempty"`
}

func runSpawnValidate(_ context.Context, env *Env, file, grantFile string, asJSON bool) error {
	data, err := readInputFile(env, file, spawn.MaxBytes)
	if err != nil {
		return err
	}
	var v spawn.Validator
	s, err := v.Parse(sourceName(file), data)
	res := spawnValidateResult{}
	if err == nil && grantFile != "" {
		tok, gerr := readGrantFile(env, grantFile)
		if gerr != nil {
			return gerr
		}
		g, gerr := grant.Parse(tok)
		if gerr != nil {
			return grantError(gerr)
		}
		res.Grant = g.Digest
		err = s.CheckGrant(g)
	}
	res.Valid = err == nil
	if s.Valid() {
		res.InputsHash = s.InputsHash()
	}
	var se *spawn.Error
	if errors.As(err, &se) {
		res.Code, res.Reason = se.Code, se.Error()
	}
	if asJSON {
		if werr := writeJSON(env.Stdout, res); werr != nil {
			return werr
		}
	} else if err == nil {
		f := s.Fields()
		fmt.Fprintf(env.Stdout, "valid: node %s execution %s of run %s wave %s, inputs_hash %s\n", f.NodeID, f.NodeExecutionID, f.RunID, f.WaveID, f.InputsHash)
	}
	switch {
	case err == nil:
		return nil
	case se == nil:
		return err
	case se.Input():
		return &errkind.InputError{Problem: se.Error(), Err: err, Hint: "a SpawnSpec is fail-closed: fix the field, or rebuild the spec with the coordinator"}
	}
	return &errkind.CheckError{Problem: se.Error(), Details: []string{"code: " + se.Code}}
}
