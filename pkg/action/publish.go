package action

import (
	"context"
	"fmt"

	"github.com/dome-registry/dome/pkg/signing"
)

// Publish is the one publish path of the CLI and the HTTP API: it prepares
// doc (Prepare), verifies its signature against keys and stores it. A
// document that does not verify is never stored: the error wraps
// ErrUnknownKeyID or ErrBadSignature, and the Verification says why. An
// invalid document wraps ErrInvalid; a (name, version) already stored with
// another hash wraps ErrImmutableConflict.
func Publish(ctx context.Context, store Store, doc []byte, keys *signing.TrustedKeys) (PublishResult, Verification, error) {
	d, err := ParseDocument(doc)
	if err != nil {
		return PublishResult{}, Verification{}, err
	}
	v := verifyParsed(d, keys)
	if !v.Verified {
		return PublishResult{}, v, fmt.Errorf("%s@%s: %w", d.Name, d.Version, v.Err)
	}
	res, err := store.Publish(ctx, Record{Name: d.Name, Version: d.Version, Document: d.Canonical, Hash: d.Hash})
	if err != nil {
		return res, v, fmt.Errorf("publish %s@%s: %w", d.Name, d.Version, err)
	}
	return res, v, nil
}
