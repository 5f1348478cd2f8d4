package httpapi_test

import (
	"context"
	"errors"
	"slices"
	"sort"
	"sync"
	"testing"

	"github.com/dome-registry/dome/pkg/action"
	"github.com/dome-registry/dome/pkg/signing"
)

// memStore is a minimal action.Store for the handler's own tests (routing,
// errors, publish rules); the acceptance suite also runs against the git and
// PostgreSQL stores.
type memStore struct {
	mu       sync.Mutex
	recs     map[string]map[string]action.Record
	notReady error
}

func newMemStore() *memStore { return &memStore{recs: map[string]map[string]action.Record{}} }

func (m *memStore) Publish(_ context.Context, rec action.Record) (action.PublishResult, error) {
	if err := action.CheckName(rec.Name); err != nil {
		return action.PublishResult{}, err
	}
	if err := action.CheckVersion(rec.Version); err != nil {
		return action.PublishResult{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if old, ok := m.recs[rec.Name][rec.Version]; ok {
		if old.Hash != rec.Hash {
			return action.PublishResult{}, action.ErrImmutableConflict
		}
		return action.PublishResult{Record: old}, nil
	}
	if m.recs[rec.Name] == nil {
		m.recs[rec.Name] = map[string]action.Record{}
	}
	rec.Document = slices.Clone(rec.Document)
	m.recs[rec.Name][rec.Version] = rec
	return action.PublishResult{Created: true, Record: rec}, nil
}

func (m *memStore) Get(_ context.Context, name, version string) (action.Record, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	vs, ok := m.recs[name]
	if !ok {
		return action.Record{}, action.ErrActionNotFound
	}
	r, ok := vs[version]
	if !ok {
		return action.Record{}, action.ErrVersionNotFound
	}
	return r, nil
}

func (m *memStore) List(context.Context) ([]action.Summary, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []action.Summary
	for name, vs := range m.recs {
		s := action.Summary{Name: name}
		for v := range vs {
			s.Versions = append(s.Versions, v)
		}
		action.SortVersions(s.Versions)
		s.LatestVersion = action.LatestVersion(s.Versions)
		if d, err := action.ParseDocument(vs[s.LatestVersion].Document); err == nil {
			s.Description = d.Description
		}
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

func (m *memStore) Ready(context.Context) error { return m.notReady }
func (m *memStore) Close() error                { return nil }

func memKit() storeKit {
	return storeKit{
		open: func(t testing.TB) action.Store { return newMemStore() },
		tamper: func(t testing.TB, s action.Store, name, version string, edit func([]byte) []byte) {
			m := s.(*memStore)
			m.mu.Lock()
			defer m.mu.Unlock()
			r, ok := m.recs[name][version]
			if !ok {
				t.Fatal(errors.New("tamper: no such record"))
			}
			r.Document = edit(slices.Clone(r.Document))
			m.recs[name][version] = r
		},
	}
}

func TestAPI_MemStore(t *testing.T) { runSuite(t, memKit()) }

func newKeys(keys ...signing.PrivateKey) (*signing.TrustedKeys, error) {
	var pubs []signing.PublicKey
	for _, k := range keys {
		pubs = append(pubs, k.Public())
	}
	return signing.NewTrustedKeys(pubs...)
}
