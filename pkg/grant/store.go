package grant

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Store keeps, per issuer, the spent jtis of single-use grants and the
// revocations (by jti or by profile_id). Entries carry an expiry (the
// grant's expires_at, or the revocation's until) after which Prune may drop
// them: an expired grant fails verification on its own. Implementations:
// package grantfile (a crash-safe file under the run, the default) and
// package grantpg (PostgreSQL, for many coordinators); both pass the suite
// in package storetest.
type Store interface {
	// Lookup answers both stateful questions of a verification in one
	// round trip: is jti or profileID revoked, and is jti spent.
	Lookup(ctx context.Context, issuer, jti, profileID string) (Status, error)
	// Spend marks jti spent, atomically with the checks: ErrSpent when it
	// already was, ErrRevoked when the jti or the profile is revoked (then
	// nothing changes). It returns only once the spend is durable.
	Spend(ctx context.Context, s Spend) error
	// Revoke records a revocation (durably). Revoking what is already
	// revoked extends its until, never shortens it.
	Revoke(ctx context.Context, r Revocation) error
	// Prune drops spends and revocations that expired before now.
	Prune(ctx context.Context, now time.Time) (int, error)
	// Close releases the store.
	Close() error
}

// Status is what a Store knows about a grant.
type Status struct {
	Spent   *Spend      // nil: not spent
	Revoked *Revocation // nil: not revoked
}

// Spend is one spent single-use grant.
type Spend struct {
	Issuer    string    `json:"issuer"`
	JTI       string    `json:"jti"`
	ProfileID string    `json:"profile_id"`
	Grant     string    `json:"grant"` // sha256 of the grant's bytes
	Method    string    `json:"method,omitempty"`
	ExpiresAt time.Time `json:"expires_at"` // the grant's: kept until then
	SpentAt   time.Time `json:"spent_at"`
}

// Revocation kinds: what Value names.
const (
	RevokeJTI     = "jti"
	RevokeProfile = "profile_id"
)

// Revocation revokes one jti or every grant of one profile_id of an issuer
// until a time (after which the grants it could match have expired).
type Revocation struct {
	Issuer    string    `json:"issuer"`
	Kind      string    `json:"kind"` // RevokeJTI or RevokeProfile
	Value     string    `json:"value"`
	Reason    string    `json:"reason,omitempty"`
	Until     time.Time `json:"until"`
	RevokedAt time.Time `json:"revoked_at"`
}

// Errors of Store.Spend.
var (
	ErrSpent   = errors.New("the grant is already spent")
	ErrRevoked = errors.New("the grant is revoked")
)

// MaxReasonBytes bounds a revocation reason.
const MaxReasonBytes = 1024

// Check validates a spend before a store records it.
func (s Spend) Check() error {
	for _, f := range []struct{ name, v string }{{"issuer", s.Issuer}, {"jti", s.JTI}, {"profile_id", s.ProfileID}} {
		if err := CheckID(f.v); err != nil {
			return fmt.Errorf("spend: %s: %w", f.name, err)
		}
	}
	if s.Grant != "" {
		if len(s.Grant) != 71 || s.Grant[:7] != "sha256:" {
			return fmt.Errorf("spend: grant: want sha256:<64 hex>")
		}
	}
	if s.Method != "" {
		if _, _, ok := SplitMethod(s.Method); !ok {
			return fmt.Errorf("spend: method %q: want <tool_id>/<operationId>", s.Method)
		}
	}
	if s.ExpiresAt.IsZero() || s.SpentAt.IsZero() {
		return errors.New("spend: expires_at and spent_at are required")
	}
	return nil
}

// Check validates a revocation before a store records it.
func (r Revocation) Check() error {
	if err := CheckID(r.Issuer); err != nil {
		return fmt.Errorf("revocation: issuer: %w", err)
	}
	if r.Kind != RevokeJTI && r.Kind != RevokeProfile {
		return fmt.Errorf("revocation: kind %q: want jti or profile_id", r.Kind)
	}
	if err := CheckID(r.Value); err != nil {
		return fmt.Errorf("revocation: %s: %w", r.Kind, err)
	}
	if len(r.Reason) > MaxReasonBytes {
		return fmt.Errorf("revocation: reason: at most %d bytes", MaxReasonBytes)
	}
	for _, c := range r.Reason {
		if c < 0x20 || c == 0x7f {
			return errors.New("revocation: reason: control characters are not allowed")
		}
	}
	if r.Until.IsZero() || r.RevokedAt.IsZero() {
		return errors.New("revocation: until and revoked_at are required")
	}
	if !r.Until.After(r.RevokedAt) {
		return errors.New("revocation: until must be after revoked_at")
	}
	return nil
}

// Matches reports whether r revokes the grant (issuer, jti, profileID).
func (r *Revocation) Matches(issuer, jti, profileID string) bool {
	if r.Issuer != issuer {
		return false
	}
	if r.Kind == RevokeJTI {
		return r.Value == jti
	}
	return r.Value == profileID
}

// Stronger returns the revocation that lasts longer (a on a tie); either
// may be nil.
func Stronger(a, b *Revocation) *Revocation {
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	case b.Until.After(a.Until):
		return b
	}
	return a
}
