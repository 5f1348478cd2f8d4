package app

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/dome-registry/dome/pkg/canonical"
	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/dome-registry/dome/pkg/signing"
	"github.com/urfave/cli/v2"
)

type signOptions struct {
	Key   string // PKCS#8 PEM file
	KID   string // default: the key file's name without .key/.pem
	Kind  string // payload type: the artifact kind
	Input string
	Embed bool
	Out   string
}

// Top-level members of an embedded-signature document that are not part of
// the signed payload (the action registry seed's list).
var embeddedExcluded = []string{"hash", "signature", "verified"}

func newSignCommand(env *Env) *cli.Command {
	return &cli.Command{
		Name:      "sign",
		Usage:     "sign the canonical form of a JSON file with an Ed25519 key",
		ArgsUsage: "FILE",
		Description: `Signs the RFC 8785 canonical form of FILE as payload type --kind (the artifact kind,
e.g. dome.action/v1): Ed25519 over the DSSE PAE of (kind, "sha256:<hex>" of the
canonical payload). Prints a detached signature file:
  {"payload_type", "canonicalization", "hash", "signature": {"alg", "kid", "sig"}}
With --embed, FILE must be a JSON object: its top-level "hash", "signature" and
"verified" members are left out of the payload, and the canonical document with a
fresh "hash" and "signature" block is printed instead.`,
		Flags: withGlobal(
			&cli.StringFlag{Name: "key", Usage: "private key `FILE` (PKCS#8 PEM, as dome keygen writes)"},
			&cli.StringFlag{Name: "kid", Usage: "key id `KID` (default: the key file name without .key or .pem)"},
			&cli.StringFlag{Name: "kind", Usage: "payload type `KIND` the signature is bound to (e.g. dome.action/v1)"},
			&cli.BoolFlag{Name: "embed", Usage: "print the document with its signature block embedded"},
			&cli.StringFlag{Name: "out", Aliases: []string{"o"}, Usage: "write to `FILE` (atomically) instead of stdout"},
		),
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return usagef("sign takes exactly one FILE (or - for stdin)")
			}
			if c.String("key") == "" || c.String("kind") == "" {
				return usagef("sign needs --key FILE and --kind KIND")
			}
			return runSign(c.Context, env, signOptions{
				Key: c.String("key"), KID: c.String("kid"), Kind: c.String("kind"), Input: c.Args().First(),
				Embed: c.Bool("embed"), Out: c.String("out"),
			})
		},
	}
}

// signatureFile is dome's detached signature file.
type signatureFile struct {
	PayloadType      string            `json:"payload_type"`
	Canonicalization string            `json:"canonicalization"`
	Hash             string            `json:"hash"`
	Signature        signing.Signature `json:"signature"`
}

func runSign(_ context.Context, env *Env, opts signOptions) error {
	key, err := loadPrivateKey(env, opts.Key, opts.KID)
	if err != nil {
		return err
	}
	data, err := readInput(env, opts.Input)
	if err != nil {
		return err
	}
	var payload []byte
	var members map[string]json.RawMessage
	if opts.Embed {
		members, payload, err = splitEmbedded(env, opts.Input, data)
	} else {
		payload, err = canonical.Transform(data)
		if err != nil {
			err = canonicalInputError(env, opts.Input, data, err)
		}
	}
	if err != nil {
		return err
	}
	sig, err := signing.Sign(key, opts.Kind, payload)
	if err != nil {
		return &errkind.InputError{Source: "--kind", Problem: err.Error()}
	}
	hash := canonical.Digest(payload)
	if !opts.Embed {
		var buf bytes.Buffer
		if err := writeJSON(&buf, signatureFile{PayloadType: opts.Kind, Canonicalization: canonical.Name, Hash: hash, Signature: sig}); err != nil {
			return err
		}
		return writeOutput(env, opts.Out, buf.Bytes())
	}
	delete(members, "verified")
	members["hash"], _ = json.Marshal(hash)
	members["signature"], _ = json.Marshal(sig)
	doc, err := canonical.Marshal(members)
	if err != nil {
		return fmt.Errorf("encode the signed document: %w", err)
	}
	return writeOutput(env, opts.Out, doc)
}

// splitEmbedded reads a JSON object with an embedded signature (or one to
// be signed): all its top-level members, and the signed payload, that is the
// canonical object without the excluded members.
func splitEmbedded(env *Env, arg string, data []byte) (map[string]json.RawMessage, []byte, error) {
	c, err := canonical.Transform(data)
	if err != nil {
		return nil, nil, canonicalInputError(env, arg, data, err)
	}
	var members map[string]json.RawMessage
	if err := json.Unmarshal(c, &members); err != nil || members == nil {
		return nil, nil, &errkind.InputError{Source: sourceName(arg), Problem: "an embedded signature needs a JSON object", Hint: "sign other JSON values with a detached signature (without --embed)"}
	}
	rest := make(map[string]json.RawMessage, len(members))
	for k, v := range members {
		rest[k] = v
	}
	for _, name := range embeddedExcluded {
		delete(rest, name)
	}
	payload, err := canonical.Marshal(rest)
	if err != nil {
		return nil, nil, fmt.Errorf("encode the payload: %w", err)
	}
	return members, payload, nil
}
