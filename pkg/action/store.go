package action

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// PayloadType is the DSSE payload type every action schema signature is made
// for (pkg/signing domain separation): a signature over an action can never
// verify as any other artifact kind, nor the reverse.
const PayloadType = "application/vnd.dome.action+json"

// Record is one published (name, version) as a store holds it.
type Record struct {
	Name    string
	Version string
	// Document is the published document exactly as stored: the canonical
	// (RFC 8785) bytes of the signed schema object including its "hash" and
	// "signature" members. Stores never reformat it; a tamper check re-derives
	// the hash from these bytes.
	Document []byte
	// Hash is "sha256:<hex>" of the canonical payload (the document without
	// "hash", "signature" and "verified"), as computed at publish time.
	Hash string
	// Revision names where the record lives: the git commit that added it
	// (git store) or "" (Postgres).
	Revision string
	// Deprecation is the version's deprecation, if any: metadata beside the
	// immutable document, which it never changes.
	Deprecation *Deprecation
}

// Deprecation marks a published version as one not to use any more. The
// version stays published, immutable and resolvable by an exact pin; it is
// no longer an action's latest_version nor picked for a range while another
// version qualifies.
type Deprecation struct {
	Reason string `json:"reason"` // why, and what to use instead; never empty
}

// MaxDeprecationReason bounds a deprecation reason, in bytes.
const MaxDeprecationReason = 1024

// CheckDeprecation checks a deprecation to set (nil, to clear, is fine): a
// reason that is not blank, at most MaxDeprecationReason bytes of UTF-8
// without control characters.
func CheckDeprecation(d *Deprecation) error {
	if d == nil {
		return nil
	}
	switch {
	case strings.TrimSpace(d.Reason) == "":
		return fmt.Errorf("%w: a deprecation needs a reason (say what to use instead)", ErrInvalid)
	case len(d.Reason) > MaxDeprecationReason:
		return fmt.Errorf("%w: the deprecation reason is %d bytes, over %d", ErrInvalid, len(d.Reason), MaxDeprecationReason)
	case !utf8.ValidString(d.Reason):
		return fmt.Errorf("%w: the deprecation reason is not UTF-8", ErrInvalid)
	case strings.IndexFunc(d.Reason, unicode.IsControl) >= 0:
		return fmt.Errorf("%w: the deprecation reason has a control character", ErrInvalid)
	}
	return nil
}

// Summary is one action in a listing.
type Summary struct {
	Name          string
	LatestVersion string   // by SemVer precedence, deprecated versions last (LatestVersion)
	Versions      []string // sorted by SemVer precedence, lowest first
	Description   string   // the latest version's "description", "" if none
	// Deprecated maps each deprecated version to its reason (nil: none).
	Deprecated map[string]string
}

// SummaryOf builds the Summary of action name from its records (in any
// order): versions by SemVer precedence, deprecations, latest_version and
// the latest version's description. In-memory stores list with it.
func SummaryOf(name string, recs []Record) Summary {
	s := Summary{Name: name}
	docs := map[string][]byte{}
	for _, r := range recs {
		s.Versions = append(s.Versions, r.Version)
		docs[r.Version] = r.Document
		if r.Deprecation != nil {
			if s.Deprecated == nil {
				s.Deprecated = map[string]string{}
			}
			s.Deprecated[r.Version] = r.Deprecation.Reason
		}
	}
	SortVersions(s.Versions)
	s.LatestVersion = LatestVersion(s.Versions, s.Deprecated)
	if d, err := ParseDocument(docs[s.LatestVersion]); err == nil {
		s.Description = d.Description
	}
	return s
}

// PublishResult says what a publish did.
type PublishResult struct {
	// Created is false when the identical document was already stored (an
	// idempotent republish).
	Created bool
	Record  Record
}

// Store holds published action documents. Implementations must be safe for
// concurrent use by many goroutines and, for the same backing store, by many
// processes: of N concurrent publishes of one (name, version) with different
// hashes exactly one succeeds and the others get ErrImmutableConflict; a
// publish either is stored completely and durably before it returns nil, or
// not at all.
type Store interface {
	// Publish stores rec.Document (already verified and canonical) under
	// (rec.Name, rec.Version). Same hash already stored: Created=false, nil
	// error. Different hash stored: an error wrapping ErrImmutableConflict.
	Publish(ctx context.Context, rec Record) (PublishResult, error)
	// Get returns one version. Unknown name: ErrActionNotFound; known name,
	// unknown version: ErrVersionNotFound.
	Get(ctx context.Context, name, version string) (Record, error)
	// List returns every action sorted by name.
	List(ctx context.Context) ([]Summary, error)
	// Deprecate sets (d != nil) or clears (d == nil) the deprecation of one
	// stored version and returns the record as it now is; the document and
	// its hash never change. Unknown name or version: as Get. Setting the
	// same deprecation again changes nothing.
	Deprecate(ctx context.Context, name, version string, d *Deprecation) (Record, error)
	// Ready reports whether the store can serve (for /readyz).
	Ready(ctx context.Context) error
	Close() error
}

// Errors every store and the HTTP API map to stable codes.
var (
	ErrActionNotFound    = errors.New("ACTION_NOT_FOUND")
	ErrVersionNotFound   = errors.New("VERSION_NOT_FOUND")
	ErrImmutableConflict = errors.New("IMMUTABLE_VERSION_CONFLICT")
	ErrUnknownKeyID      = errors.New("UNKNOWN_KEY_ID")
	ErrBadSignature      = errors.New("BAD_SIGNATURE")
	ErrInvalid           = errors.New("INVALID_ACTION") // bad name, version or document
)
