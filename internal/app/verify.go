package app

import (
	"context"
	"errors"
	"fmt"

	"github.com/dome-registry/dome/pkg/artifact"
	"github.com/dome-registry/dome/pkg/canonical"
	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/dome-registry/dome/pkg/readlimit"
	"github.com/dome-registry/dome/pkg/signing"
	"github.com/urfave/cli/v2"
)

type verifyOptions struct {
	Trusted string // trusted keys file; else TRUSTED_KEYS_PATH / TRUSTED_KEYS_JSON
	Kind    string
	Input   string
	Sig     string // detached signature file; "" for an embedded signature
	JSON    bool
}

func newVerifyCommand(env *Env) *cli.Command {
	return &cli.Command{
		Name:      "verify",
		Usage:     "verify the signature of a JSON file against trusted keys",
		ArgsUsage: "FILE",
		Flags: withGlobal(
			&cli.StringFlag{Name: "trusted", Usage: "trusted keys `FILE`: a JSON array of {kid, alg, public_key}"},
			&cli.StringFlag{Name: "kind", Usage: "payload type `KIND` the signature must be bound to"},
			&cli.StringFlag{Name: "sig", Usage: "detached signature `FILE` (from dome sign)"},
		),
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return usagef("verify takes exactly one FILE (or - for stdin)")
			}
			if c.String("kind") == "" {
				return usagef("verify needs --kind KIND (the payload type the signature must be bound to)")
			}
			return runVerify(c.Context, env, verifyOptions{
				Trusted: c.String("trusted"), Kind: c.String("kind"), Input: c.Args().First(), Sig: c.String("sig"),
				JSON: globalBool(c, flagJSON),
			})
		},
		Description: help("verify"),
	}
}

// verifyResult is dome verify's --json output.
type verifyResult struct {
	Verified bool   `json:"verified"`
	Source   string `json:"source"`
	Kind     string `json:"kind"`
	KID      string `json:"kid,omitempty"`
	Alg      string `json:"alg,omitempty"`
	Hash     string `json:"hash,omitempty"`
	Code     string `json:"code,omitempty"`   // UNKNOWN_KEY_ID, BAD_SIGNATURE when not verified
	Reason   string `json:"reason,omitempty"` // why not
}

// verifyFailure is a check that ran and failed (exit 1).
type verifyFailure struct {
	code, reason string
}

func runVerify(_ context.Context, env *Env, opts verifyOptions) error {
	if err := signing.CheckPayloadType(opts.Kind); err != nil {
		return &errkind.InputError{Source: "--kind", Problem: err.Error()}
	}
	trusted, _, err := loadTrustedKeys(env, opts.Trusted)
	if err != nil {
		return err
	}
	data, err := readInputFile(env, opts.Input, readlimit.Document)
	if err != nil {
		return err
	}
	res := verifyResult{Source: sourceName(opts.Input), Kind: opts.Kind}
	var fail *verifyFailure
	switch {
	case opts.Sig != "":
		fail, err = verifyDetached(env, opts, trusted, data, &res)
	default:
		fail, err = verifyEmbedded(env, opts, trusted, data, &res)
	}
	if err != nil {
		return err
	}
	res.Verified = fail == nil
	if fail != nil {
		res.Code, res.Reason = fail.code, fail.reason
	}
	if opts.JSON {
		if err := writeJSON(env.Stdout, res); err != nil {
			return err
		}
	} else if fail == nil {
		fmt.Fprintf(env.Stdout, "verified: %s is signed as %s by %s (%s), hash %s\n", res.Source, res.Kind, res.KID, res.Alg, res.Hash)
	}
	if fail != nil {
		ce := &errkind.CheckError{Problem: fmt.Sprintf("%s: signature check failed: %s", res.Source, fail.reason), Details: []string{"code: " + fail.code}}
		if fail.code == signing.CodeUnknownKeyID {
			ce.Hint = fmt.Sprintf("the trusted keys are: %v; add the signer's public key or check its kid", trusted.KIDs())
		}
		return ce
	}
	return nil
}

// failure classifies a verification error.
func failure(err error) *verifyFailure {
	code := signing.Code(err)
	if code == "" {
		code = signing.CodeBadSignature
	}
	return &verifyFailure{code: code, reason: err.Error()}
}

func verifyDetached(env *Env, opts verifyOptions, trusted *signing.TrustedKeys, data []byte, res *verifyResult) (*verifyFailure, error) {
	payload, err := canonical.Transform(data)
	if err != nil {
		return nil, canonicalInputError(env, opts.Input, data, err)
	}
	raw, err := readlimit.ReadFile(inputPath(env, opts.Sig), readlimit.Signature)
	if err != nil {
		return nil, &errkind.InputError{Source: "--sig " + opts.Sig, Problem: "cannot read the signature file: " + pathErr(err)}
	}
	sf, err := signing.ParseSignatureFile(raw)
	if err != nil {
		return nil, &errkind.InputError{Source: "--sig " + opts.Sig, Problem: err.Error(), Hint: "give the file dome sign printed"}
	}
	res.Hash, res.KID, res.Alg = canonical.Digest(payload), sf.Signature.KID, sf.Signature.Alg
	if err := trusted.VerifyDetached(opts.Kind, payload, sf); err != nil {
		return failure(err), nil
	}
	return nil, nil
}

func verifyEmbedded(env *Env, opts verifyOptions, trusted *signing.TrustedKeys, data []byte, res *verifyResult) (*verifyFailure, error) {
	e, err := signing.SplitEmbedded(data)
	if err != nil {
		return nil, signInputError(env, opts.Input, data, err)
	}
	_, hasHeader := e.Members["header"]
	_, hasPayload := e.Members["payload"]
	if hasHeader && hasPayload && len(e.Members) == 2 {
		return verifyArtifact(opts, trusted, data, res)
	}
	res.Hash = e.Digest
	if e.Signature != nil {
		res.KID, res.Alg = e.Signature.KID, e.Signature.Alg
	}
	if _, err := trusted.VerifyEmbedded(opts.Kind, data); err != nil {
		return failure(err), nil
	}
	return nil, nil
}

func verifyArtifact(opts verifyOptions, trusted *signing.TrustedKeys, data []byte, res *verifyResult) (*verifyFailure, error) {
	s, err := artifact.Open(data, artifact.OpenOptions{Kind: opts.Kind, Trusted: trusted, RequireSignature: true})
	if err != nil {
		if errors.Is(err, artifact.ErrMalformed) {
			return nil, &errkind.InputError{Source: sourceName(opts.Input), Problem: err.Error()}
		}
		return failure(err), nil
	}
	res.KID, res.Alg, res.Hash = s.Header.KID, signing.AlgEd25519, s.Header.PayloadDigest
	return nil, nil
}
