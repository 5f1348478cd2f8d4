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
		Name:      "validate",
		Usage:     "validate a SpawnSpec (fail closed), optionally against the grant it names",
		ArgsUsage: "SPEC",
		Description: `Checks SPEC (a JSON file, - for stdin) as the dispatcher does before it spawns:
exactly the fields run_id, wave_id, node_id, node_execution_id, task_spec_ref,
tool_profile_ref, container_ref, action_spec, determinism_seed and inputs_hash
(unknown or missing ones are refused); task_spec_ref and tool_profile_ref pinned
to a full commit SHA or a sha256 digest; container_ref an image digest;
action_spec intent-level; inputs_hash recomputed. With --grant, the grant's bytes
must hash to tool_profile_ref and bind the same run, wave, node and node
execution. Exit 0 valid, 2 bad input, 1 for an inputs_hash or grant mismatch.`,
		Flags: withGlobal(&cli.StringFlag{Name: "grant", Usage: "the grant `FILE` tool_profile_ref must name"}),
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
	r, err := openInput(env, file)
	if err != nil {
		return err
	}
	data, err := readAtMost(r, spawn.MaxBytes)
	r.Close()
	if err != nil {
		return &errkind.InputError{Source: sourceName(file), Problem: err.Error()}
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
