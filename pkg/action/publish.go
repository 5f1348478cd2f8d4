package action

import (
	"context"
	"fmt"

	"github.com/dome-registry/dome/pkg/signing"
)

// Publish is the one publish path of the CLI and the HTTP API: it reads doc
// in either shape (ParseSubmitted), verifies its signature against keys and
// stores it (PublishDocument).
func Publish(ctx context.Context, store Store, doc []byte, keys *signing.TrustedKeys) (PublishResult, Verification, error) {
	d, err := ParseSubmitted(doc)
	if err != nil {
		return PublishResult{}, Verification{}, err
	}
	return PublishDocument(ctx, store, d, keys)
}

// PublishDocument verifies a parsed document against keys and stores it. A
// document that does not verify is never stored: the error wraps
// ErrUnknownKeyID or ErrBadSignature, and the Verification says why. A
// (name, version) already stored with another hash wraps
// ErrImmutableConflict. The same payload signed again by another trusted key
// is an idempotent republish: the result holds the stored record, whose
// signature is the first publisher's (StoredSignature).
func PublishDocument(ctx context.Context, store Store, d *Document, keys *signing.TrustedKeys) (PublishResult, Verification, error) {
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

// StoredSignature returns the signature block a record's stored document
// carries (nil when it has none or does not parse).
func StoredSignature(rec Record) *signing.Signature {
	e, err := signing.SplitEmbedded(rec.Document)
	if err != nil {
		return nil
	}
	return e.Signature
}
