package app

import (
	"github.com/dome-registry/dome/internal/patchcmd"
	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/dome-registry/dome/pkg/patch"
	"github.com/urfave/cli/v2"
)

type patchFingerprintsOptions struct {
	Patches []string
	Base    string // a full commit SHA, after resolution
	Strip   int
	MaxSize int64
}

func newPatchFingerprintsCommand(env *Env) *cli.Command {
	return &cli.Command{
		Name:      "fingerprints",
		Usage:     "print the hunk fingerprints of patches against a base commit (JSON)",
		ArgsUsage: "PATCH... (- for standard input)",
		Flags: withGlobal(
			&cli.StringFlag{Name: "base", Usage: "the base commit `REV` (recorded as base_ref, a full SHA)"},
			patchStripFlag(), patchMaxSizeFlag(),
		),
		Action: func(c *cli.Context) error {
			base := c.String("base")
			if base == "" {
				return usagef("patch fingerprints needs --base REV (the commit the patch is made against)")
			}
			if _, ok := patch.ParseOID(base); !ok {
				repo, err := openRepo(c.Context, env, c)
				if err != nil {
					return err
				}
				defer repo.Close()
				h, _, err := patchcmd.ResolveBase(repo, "--base", base)
				if err != nil {
					return err
				}
				base = h.String()
			}
			return runPatchFingerprints(env, patchFingerprintsOptions{Patches: c.Args().Slice(), Base: base, Strip: stripArg(c), MaxSize: c.Int64("max-size")})
		},
		Description: help("patch_fingerprints"),
	}
}

type patchFingerprintsOutput struct {
	BaseRef            string              `json:"base_ref"`
	FingerprintVersion string              `json:"fingerprint_version"`
	Fingerprints       []patch.Fingerprint `json:"fingerprints"`
}

func runPatchFingerprints(env *Env, opts patchFingerprintsOptions) error {
	if _, ok := patch.ParseOID(opts.Base); !ok {
		return &errkind.InputError{Source: "--base", Field: opts.Base, Problem: "base_ref must be a full commit SHA"}
	}
	ps, err := patchcmd.ReadPatches(env.patch(), opts.Patches, opts.Strip, opts.MaxSize)
	if err != nil {
		return err
	}
	out := patchFingerprintsOutput{BaseRef: opts.Base, FingerprintVersion: patch.FingerprintVersion, Fingerprints: []patch.Fingerprint{}}
	for _, p := range ps {
		out.Fingerprints = append(out.Fingerprints, patch.Fingerprints(p.Patch, opts.Base)...)
	}
	return writeJSON(env.Stdout, out)
}
