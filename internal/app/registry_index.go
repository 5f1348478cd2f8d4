package app

import (
	"context"
	"fmt"

	"github.com/dome-registry/dome/pkg/canonical"
	"github.com/dome-registry/dome/pkg/registry"
	"github.com/dome-registry/dome/pkg/release"
	"github.com/urfave/cli/v2"
)

type registryIndexOptions struct {
	Ref, Out string
}

func newRegistryIndexCommand(env *Env) *cli.Command {
	return &cli.Command{
		Name:  "index",
		Usage: "write the deterministic registry index (tools, releases, digests, latest per major, deprecations)",
		Flags: withGlobal(
			&cli.StringFlag{Name: "ref", Value: "HEAD", Usage: "index the tools at `REF`"},
			&cli.StringFlag{Name: "out", Aliases: []string{"o"}, Usage: "write to `FILE` instead of stdout (a file is replaced atomically; a device or FIFO is written in place)"},
		),
		Action: func(c *cli.Context) error {
			reg, err := openRegistry(c.Context, env, c)
			if err != nil {
				return err
			}
			return runRegistryIndex(c.Context, env, reg, registryIndexOptions{Ref: c.String("ref"), Out: c.String("out")})
		},
		Description: help("registry_index"),
	}
}

func runRegistryIndex(ctx context.Context, env *Env, reg *registry.Registry, opts registryIndexOptions) error {
	if _, err := registry.ParseRef("--ref", "registry@"+opts.Ref); err != nil {
		return err
	}
	p, err := reg.PinRev(ctx, "", opts.Ref, registry.PinOptions{Source: "--ref"})
	if err != nil {
		return err
	}
	idx, err := reg.BuildIndex(p)
	if err != nil {
		return err
	}
	body, err := canonical.Marshal(idx)
	if err != nil {
		return err
	}
	body = append(body, '\n')
	if opts.Out == "" {
		_, err := env.Stdout.Write(body)
		return err
	}
	if err := writeOutputFile(env, "--out", absPath(env, opts.Out), body); err != nil {
		return err
	}
	fmt.Fprintf(env.Stderr, "wrote %s: %d tools, %s\n", opts.Out, len(idx.Tools), canonical.Digest(body[:len(body)-1]))
	return nil
}

type registryVerifyOptions struct {
	Keyring string
	JSON    bool
}

func newRegistryVerifyCommand(env *Env) *cli.Command {
	return &cli.Command{
		Name:  "verify",
		Usage: "verify every release tag (as release verify does) and report all problems at once",
		Flags: withGlobal(
			&cli.StringFlag{Name: "keyring", Usage: "armored OpenPGP public keys in `FILE`; every release must be signed by one"},
		),
		Action: func(c *cli.Context) error {
			reg, err := openRegistry(c.Context, env, c)
			if err != nil {
				return err
			}
			keyring, err := readKeyring(env, c.String("keyring"))
			if err != nil {
				return err
			}
			vs, err := release.VerifyAll(c.Context, reg, release.VerifyOptions{Keyring: keyring, Reproduce: reproduceFor(env, reg)})
			if err != nil {
				return err
			}
			if len(vs) == 0 {
				fmt.Fprintln(env.Stdout, "no release tags")
				return nil
			}
			return reportVerifications(env, vs, globalBool(c, flagJSON))
		},
		Description: help("registry_verify"),
	}
}
