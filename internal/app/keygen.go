package app

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/dome-registry/dome/pkg/outfile"
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
	CreatedFolder   string `json:"created_folder,omitempty"` // --out, when keygen made it
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
	// --out names the key folder itself: dome creates it (and says so), but
	// not the folders above it.
	dir := inputPath(env, opts.Out)
	if err := os.Mkdir(dir, 0o755); err == nil {
		res.CreatedFolder = opts.Out
	} else if !errors.Is(err, fs.ErrExist) {
		problem := "cannot create the folder: " + pathErr(err)
		if errors.Is(err, fs.ErrNotExist) {
			problem = fmt.Sprintf("cannot create the folder: %s does not exist", filepath.Dir(opts.Out))
		}
		return &errkind.InputError{Source: "--out " + opts.Out, Problem: problem, Hint: "dome keygen creates the key folder, not the folders above it: create them first (mkdir -p)"}
	}
	for _, f := range files {
		if _, err := outfile.Write(inputPath(env, f.path), f.data, outfile.Options{Perm: f.perm, Exclusive: true}); err != nil {
			var re *outfile.RefusedError
			if errors.As(err, &re) && re.Problem == "already exists" {
				return &errkind.InputError{Source: f.path, Problem: "already exists; dome keygen never overwrites a key", Hint: "pick another --kid or --out, or remove the old files yourself"}
			}
			return outputError("--out", err)
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
	if res.CreatedFolder != "" {
		fmt.Fprintf(w, "folder\t%s\t(created)\n", res.CreatedFolder)
	}
	fmt.Fprintf(w, "kid\t%s\n", opts.KID)
	fmt.Fprintf(w, "private key\t%s\t(PKCS#8 PEM, mode 0600: keep it secret)\n", res.PrivateKeyFile)
	fmt.Fprintf(w, "public key\t%s\t(PKIX PEM)\n", res.PublicKeyFile)
	fmt.Fprintf(w, "trusted keys\t%s\t(for dome verify --trusted)\n", res.TrustedKeysFile)
	fmt.Fprintf(w, "entry\t%s\n", entry)
	return w.Flush()
}
