package app

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/dome-registry/dome/pkg/gitstore"
	"github.com/dome-registry/dome/pkg/gitstore/gitsign"
	"github.com/dome-registry/dome/pkg/readlimit"
	"github.com/dome-registry/dome/pkg/registry"
	"github.com/dome-registry/dome/pkg/release"
	"github.com/urfave/cli/v2"
)

type releaseOptions struct {
	Tool, Version string
	Ref           string
	SignKey       string
	Push          string
	AllowBreaking string
	CreatedAt     string
	JSON          bool
}

func newReleaseCommand(env *Env) *cli.Command {
	return &cli.Command{
		Name:      "release",
		Usage:     "check a tool at a commit and tag it as an immutable release registry/<tool>/vX.Y.Z",
		ArgsUsage: "<tool_id> <vX.Y.Z>",
		Flags: withGlobal(
			&cli.StringFlag{Name: "ref", Value: "HEAD", Usage: "release the tool at `REF`"},
			&cli.StringFlag{Name: "sign-key", Usage: "sign the tag with the armored OpenPGP private key in `FILE` (passphrase in DOME_SIGN_KEY_PASSPHRASE)"},
			&cli.StringFlag{Name: "push", Usage: "push only the new tag to `REMOTE` (a remote name or URL)"},
			&cli.StringFlag{Name: "allow-breaking", Usage: "release breaking changes without a major bump; `REASON` goes into the release record"},
			&cli.StringFlag{Name: "created-at", Usage: "tagger time, RFC 3339 (default: SOURCE_DATE_EPOCH, else now)"},
		),
		Subcommands: []*cli.Command{newReleaseVerifyCommand(env)},
		Action: func(c *cli.Context) error {
			if c.NArg() != 2 {
				return usagef("release takes <tool_id> <vX.Y.Z> (or: release verify <tool@vX.Y.Z>)")
			}
			opts := releaseOptions{
				Tool: c.Args().Get(0), Version: c.Args().Get(1), Ref: c.String("ref"), SignKey: c.String("sign-key"),
				Push: c.String("push"), AllowBreaking: c.String("allow-breaking"), CreatedAt: c.String("created-at"),
				JSON: globalBool(c, flagJSON),
			}
			reg, err := openRegistry(c.Context, env, c)
			if err != nil {
				return err
			}
			return runRelease(c.Context, env, reg, opts)
		},
		Description: help("release"),
	}
}

func runRelease(ctx context.Context, env *Env, reg *registry.Registry, opts releaseOptions) error {
	when, err := createdAt(env, opts.CreatedAt)
	if err != nil {
		return err
	}
	tagger := taggerIdentity(env, reg.Repo())
	tagger.When = when
	ro := release.Options{
		ToolID: opts.Tool, Version: opts.Version, Ref: opts.Ref, AllowBreaking: opts.AllowBreaking,
		Tagger: tagger, Push: opts.Push, Reproduce: reproduceFor(env, reg),
	}
	if opts.SignKey != "" {
		if ro.Key, err = readSignKey(env, opts.SignKey); err != nil {
			return err
		}
	}
	res, err := release.Run(ctx, reg, ro)
	if err != nil {
		return err
	}
	if opts.JSON {
		return writeJSON(env.Stdout, res)
	}
	w := table(env.Stdout)
	fmt.Fprintf(w, "released\t%s\n", res.Tag)
	fmt.Fprintf(w, "commit\t%s\n", res.Record.Commit)
	fmt.Fprintf(w, "tag object\t%s\n", res.TagObject)
	if res.Record.PreviousRelease != "" {
		fmt.Fprintf(w, "previous\t%s (%s bump)\n", res.Record.PreviousRelease, res.Bump)
	}
	fmt.Fprintf(w, "profiles\t%d\n", len(res.Record.Profiles))
	fmt.Fprintf(w, "breaking changes\t%d\n", len(res.Record.BreakingChanges))
	if res.Record.AllowBreaking != "" {
		fmt.Fprintf(w, "allowed because\t%s\n", res.Record.AllowBreaking)
	}
	fmt.Fprintf(w, "signed\t%v\n", res.Signed)
	if res.Pushed != "" {
		fmt.Fprintf(w, "pushed to\t%s\n", res.Pushed)
	}
	return w.Flush()
}

func taggerIdentity(env *Env, repo *gitstore.Repo) gitstore.Signature {
	name, email := env.Getenv("DOME_TAGGER_NAME"), env.Getenv("DOME_TAGGER_EMAIL")
	if name == "" {
		name = env.Getenv("GIT_COMMITTER_NAME")
	}
	if email == "" {
		email = env.Getenv("GIT_COMMITTER_EMAIL")
	}
	if name == "" || email == "" {
		n, e := repo.Identity()
		if name == "" {
			name = n
		}
		if email == "" {
			email = e
		}
	}
	if name == "" {
		name = "dome"
	}
	if email == "" {
		email = "dome@localhost"
	}
	return gitstore.Signature{Name: name, Email: email}
}

func readSignKey(env *Env, path string) (*gitsign.OpenPGPKey, error) {
	if !filepath.IsAbs(path) {
		path = filepath.Join(env.WorkDir, path)
	}
	data, err := readlimit.ReadFile(path, readlimit.PrivateKey)
	if err != nil {
		return nil, &errkind.InputError{Source: "--sign-key", Problem: err.Error(), Hint: "give an armored OpenPGP private key file (gpg --export-secret-keys --armor KEYID)"}
	}
	key, err := gitsign.ReadOpenPGPKey(data, []byte(env.Getenv("DOME_SIGN_KEY_PASSPHRASE")))
	if err != nil {
		return nil, &errkind.InputError{Source: "--sign-key", Problem: err.Error(), Hint: "give an armored OpenPGP private key; set DOME_SIGN_KEY_PASSPHRASE if it is encrypted"}
	}
	return key, nil
}

func readKeyring(env *Env, path string) ([]byte, error) {
	if path == "" {
		return nil, nil
	}
	if !filepath.IsAbs(path) {
		path = filepath.Join(env.WorkDir, path)
	}
	data, err := readlimit.ReadFile(path, readlimit.KeySet)
	if err != nil {
		return nil, &errkind.InputError{Source: "--keyring", Problem: err.Error(), Hint: "give a file of armored OpenPGP public keys (gpg --export --armor KEYID)"}
	}
	return data, nil
}

type releaseVerifyOptions struct {
	Tool    string
	Keyring string
	JSON    bool
}

func newReleaseVerifyCommand(env *Env) *cli.Command {
	return &cli.Command{
		Name:      "verify",
		Usage:     "verify a release tag: annotated, signed by a trusted key (--keyring), and its recorded digests still reproduce",
		ArgsUsage: "<tool@vX.Y.Z>",
		Flags: withGlobal(
			&cli.StringFlag{Name: "keyring", Usage: "armored OpenPGP public keys in `FILE`; the tag must be signed by one of them"},
		),
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return usagef("release verify takes one <tool@vX.Y.Z>")
			}
			reg, err := openRegistry(c.Context, env, c)
			if err != nil {
				return err
			}
			return runReleaseVerify(c.Context, env, reg, releaseVerifyOptions{Tool: c.Args().First(), Keyring: c.String("keyring"), JSON: globalBool(c, flagJSON)})
		},
		Description: help("release_verify"),
	}
}

func runReleaseVerify(ctx context.Context, env *Env, reg *registry.Registry, opts releaseVerifyOptions) error {
	ref, err := registry.ParseRef("tool", opts.Tool)
	if err != nil {
		return err
	}
	if !registry.IsReleaseVersion(ref.Rev) {
		return &errkind.InputError{Source: "tool", Problem: fmt.Sprintf("%q is not a release version", ref.Rev), Hint: "write <tool>@vX.Y.Z"}
	}
	keyring, err := readKeyring(env, opts.Keyring)
	if err != nil {
		return err
	}
	// The tag as it is, whatever it is: verify reports every finding.
	all, err := reg.ReleaseTags()
	if err != nil {
		return err
	}
	rels := all[ref.ID]
	var rel *registry.Release
	for i := range rels {
		if rels[i].Version == ref.Rev {
			rel = &rels[i]
		}
	}
	if rel == nil {
		return &errkind.InputError{Source: "tool", Problem: fmt.Sprintf("%s has no release %s (tag %s)", ref.ID, ref.Rev, registry.ReleaseTag(ref.ID, ref.Rev))}
	}
	v := release.Verify(ctx, reg, *rel, release.VerifyOptions{Keyring: keyring, Reproduce: reproduceFor(env, reg)})
	return reportVerifications(env, []*release.Verification{v}, opts.JSON)
}

func reportVerifications(env *Env, vs []*release.Verification, asJSON bool) error {
	bad := 0
	for _, v := range vs {
		if !v.OK() {
			bad++
		}
	}
	if asJSON {
		if err := writeJSON(env.Stdout, vs); err != nil {
			return err
		}
	} else {
		for _, v := range vs {
			status := "ok"
			if !v.OK() {
				status = "FAILED"
			}
			signed := ""
			if v.SignedBy != "" {
				signed = " signed by " + v.SignedBy
			}
			fmt.Fprintf(env.Stdout, "%-6s %s%s\n", status, v.Tag, signed)
			for _, p := range v.Problems {
				fmt.Fprintf(env.Stdout, "       - %s\n", p)
			}
		}
	}
	if bad > 0 {
		return &errkind.CheckError{Problem: fmt.Sprintf("%d of %d releases failed verification", bad, len(vs))}
	}
	return nil
}
