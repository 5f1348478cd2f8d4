package grantstoretest

import (
	"context"
	"sync"
	"time"

	"github.com/dome-registry/dome/pkg/grant"
)

// MemStore is an in-memory grant.Store: the reference semantics, for tests.
type MemStore struct {
	mu      sync.Mutex
	spent   map[[2]string]grant.Spend
	revoked map[[3]string]grant.Revocation // issuer, kind, value
}

// NewMemStore returns an empty MemStore.
func NewMemStore() *MemStore {
	return &MemStore{spent: map[[2]string]grant.Spend{}, revoked: map[[3]string]grant.Revocation{}}
}

var _ grant.Store = (*MemStore)(nil)

// Lookup implements grant.Store.
func (m *MemStore) Lookup(_ context.Context, issuer, jti, profileID string) (grant.Status, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.lookup(issuer, jti, profileID), nil
}

func (m *MemStore) lookup(issuer, jti, profileID string) grant.Status {
	var st grant.Status
	if s, ok := m.spent[[2]string{issuer, jti}]; ok {
		st.Spent = &s
	}
	st.Revoked = grant.Stronger(m.revocation(issuer, grant.RevokeJTI, jti), m.revocation(issuer, grant.RevokeProfile, profileID))
	return st
}

func (m *MemStore) revocation(issuer, kind, value string) *grant.Revocation {
	if r, ok := m.revoked[[3]string{issuer, kind, value}]; ok {
		return &r
	}
	return nil
}

// Spend implements grant.Store.
func (m *MemStore) Spend(_ context.Context, s grant.Spend) error {
	if err := s.Check(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	st := m.lookup(s.Issuer, s.JTI, s.ProfileID)
	if st.Revoked != nil && st.Revoked.Until.After(s.SpentAt) {
		return grant.ErrRevoked
	}
	if st.Spent != nil {
		return grant.ErrSpent
	}
	m.spent[[2]string{s.Issuer, s.JTI}] = s
	return nil
}

// Revoke implements grant.Store.
func (m *MemStore) Revoke(_ context.Context, r grant.Revocation) error {
	if err := r.Check(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	k := [3]string{r.Issuer, r.Kind, r.Value}
	if old, ok := m.revoked[k]; ok && !r.Until.After(old.Until) {
		return nil
	}
	m.revoked[k] = r
	return nil
}

// Prune implements grant.Store.
func (m *MemStore) Prune(_ context.Context, now time.Time) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for k, s := range m.spent {
		if s.ExpiresAt.Before(now) {
			delete(m.spent, k)
			n++
		}
	}
	for k, r := range m.revoked {
		if r.Until.Before(now) {
			delete(m.revoked, k)
			n++
		}
	}
	return n, nil
}

// Close implements grant.Store.
func (m *MemStore) Close() error { return nil }
