package app

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/dome-registry/dome/pkg/signing"
	"github.com/urfave/cli/v2"
)

type keygenOptions struct {
	KID  string
	Out  string // directory
	JSON bool
}

func newKeygenCommand(env *Env) *cli.Command {
	return &cli.Command{
		Name:  "keygen",
		Usage: "create an Ed25519 signing key and its trusted key entry",
		Flags: withGlobal(
			&cli.StringFlag{Name: "kid", Usage: "key id `KID` (letters, digits, . _ : @ + -)"},
			&cli.StringFlag{Name: "out", Value: ".", Usage: "directory `DIR` for the key files"},
		),
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usagef("keygen takes no arguments (got %q)", c.Args().First())
			}
			if c.String("kid") == "" {
				return usagef("keygen needs --kid KID")
			}
			return runKeygen(c.Context, env, rand.Reader, keygenOptions{KID: c.String("kid"), Out: c.String("out"), JSON: globalBool(c, flagJSON)})
		},
		Description: help("keygen"),
	}
}

type keygenResult struct {
	signing.TrustedKeyEntry
	PrivateKeyFile  string `json:"private_key_file"`
	PublicKeyFile   string `json:"public_key_file"`
	TrustedKeysFile string `json:"trusted_keys_file"`
}

func runKeygen(_ context.Context, env *Env, random io.Reader, opts keygenOptions) error {
	if err := signing.CheckKID(opts.KID); err != nil {
		return &errkind.InputError{Source: "--kid", Problem: err.Error(), Hint: "pick an id such as dev-root-1"}
	}
	key, err := signing.GenerateKey(opts.KID, random)
	if err != nil {
		return err
	}
	privPEM, err := key.MarshalPEM()
	if err != nil {
		return err
	}
	pub := key.Public()
	pubPEM, err := pub.MarshalPEM()
	if err != nil {
		return err
	}
	set, err := json.MarshalIndent([]signing.TrustedKeyEntry{pub.Entry()}, "", "  ")
	if err != nil {
		return err
	}
	res := keygenResult{
		TrustedKeyEntry: pub.Entry(),
		PrivateKeyFile:  filepath.Join(opts.Out, opts.KID+".key"),
		PublicKeyFile:   filepath.Join(opts.Out, opts.KID+".pub"),
		TrustedKeysFile: filepath.Join(opts.Out, opts.KID+".trusted.json"),
	}
	files := []struct {
		path string
		data []byte
		perm os.FileMode
	}{
		{res.PrivateKeyFile, privPEM, 0o600},
		{res.PublicKeyFile, pubPEM, 0o644},
		{res.TrustedKeysFile, append(set, '\n'), 0o644},
	}
	for _, f := range files {
		if _, err := os.Lstat(inputPath(env, f.path)); err == nil {
			return &errkind.InputError{Source: f.path, Problem: "already exists; dome keygen never overwrites a key", Hint: "pick another --kid or --out, or remove the old files yourself"}
		}
	}
	dir := inputPath(env, opts.Out)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return &errkind.InputError{Source: "--out " + opts.Out, Problem: "cannot create the directory: " + pathErr(err)}
	}
	for _, f := range files {
		if err := writeNewFile(inputPath(env, f.path), f.data, f.perm); err != nil {
			return err
		}
	}
	if opts.JSON {
		return writeJSON(env.Stdout, res)
	}
	entry, err := json.Marshal(res.TrustedKeyEntry)
	if err != nil {
		return err
	}
	w := table(env.Stdout)
	fmt.Fprintf(w, "kid\t%s\n", opts.KID)
	fmt.Fprintf(w, "private key\t%s\t(PKCS#8 PEM, mode 0600: keep it secret)\n", res.PrivateKeyFile)
	fmt.Fprintf(w, "public key\t%s\t(PKIX PEM)\n", res.PublicKeyFile)
	fmt.Fprintf(w, "trusted keys\t%s\t(for dome verify --trusted)\n", res.TrustedKeysFile)
	fmt.Fprintf(w, "entry\t%s\n", entry)
	return w.Flush()
}

// writeNewFile writes a file that must not exist yet, atomically: a synced
// temporary file hard-linked into place (link fails if the name is taken).
func writeNewFile(path string, data []byte, perm os.FileMode) error {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	name := tmp.Name()
	defer os.Remove(name)
	if err := tmp.Chmod(perm); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Link(name, path); err != nil {
		if errors.Is(err, os.ErrExist) {
			return &errkind.InputError{Source: path, Problem: "already exists; dome keygen never overwrites a key"}
		}
		return fmt.Errorf("write %s: %w", path, err)
	}
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}
