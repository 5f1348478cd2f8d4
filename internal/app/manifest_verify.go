package app

import (
	"fmt"

	"github.com/dome-registry/dome/pkg/codegen"
	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/urfave/cli/v2"
)

type manifestVerifyOptions struct {
	Dir   string
	JSON  bool
	Quiet bool
}

func newManifestCommand(env *Env) *cli.Command {
	return &cli.Command{
		Name:        "manifest",
		Usage:       "work with generation manifests (manifest.json)",
		Subcommands: []*cli.Command{newManifestVerifyCommand(env)},
		Description: help("manifest"),
	}
}

func newManifestVerifyCommand(env *Env) *cli.Command {
	return &cli.Command{
		Name:      "verify",
		Usage:     "re-hash every file each manifest.json at or below DIR lists; exit 1 on any difference",
		ArgsUsage: "DIR",
		Flags:     withGlobal(),
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return usagef("manifest verify takes one DIR")
			}
			opts := manifestVerifyOptions{Dir: absPath(env, c.Args().First()), JSON: globalBool(c, flagJSON), Quiet: globalBool(c, flagQuiet)}
			return runManifestVerify(env, opts)
		},
		Description: help("manifest_verify"),
	}
}

func runManifestVerify(env *Env, opts manifestVerifyOptions) error {
	vs, err := codegen.VerifyDir(opts.Dir)
	if err != nil {
		return err
	}
	bad := 0
	for _, v := range vs {
		if !v.OK() {
			bad++
		}
	}
	if opts.JSON {
		if err := writeJSON(env.Stdout, struct {
			OK       bool                    `json:"ok"`
			Manifest []*codegen.Verification `json:"manifests"`
		}{bad == 0, vs}); err != nil {
			return err
		}
		if bad > 0 {
			return silentError{ExitCheck}
		}
		return nil
	}
	var details []string
	w := table(env.Stdout)
	for _, v := range vs {
		status := "ok"
		if !v.OK() {
			status = "FAILED"
			for _, p := range v.Problems {
				details = append(details, v.Dir+": "+p)
			}
		}
		if !opts.Quiet {
			fmt.Fprintf(w, "%s\t%s\t%d files\t%s\n", status, v.Dir, v.Files, orDash(v.ClientArtifactHash))
		}
		for _, u := range v.Untracked {
			if !opts.Quiet {
				fmt.Fprintf(w, "  untracked\t%s/%s\t\t\n", v.Dir, u)
			}
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if bad > 0 {
		return &errkind.CheckError{Problem: fmt.Sprintf("%d of %d manifests do not match their files:", bad, len(vs)), Details: details, Hint: "regenerate with dome gen, or find out who edited the files"}
	}
	return nil
}
