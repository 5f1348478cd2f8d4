package storetest

import (
	"bytes"
	"context"
	"fmt"
	"sort"
	"sync"

	"github.com/dome-registry/dome/pkg/action"
)

// MemStore is the smallest correct action.Store, in memory: the suite runs
// against it to check itself, and handler tests use it where a real store
// would only slow them down.
type MemStore struct {
	mu       sync.Mutex
	recs     map[string]map[string]action.Record
	notReady error
}

var _ action.Store = (*MemStore)(nil)

// NewMemStore returns an empty MemStore.
func NewMemStore() *MemStore { return &MemStore{recs: map[string]map[string]action.Record{}} }

// Publish stores rec (see action.Store).
func (m *MemStore) Publish(_ context.Context, rec action.Record) (action.PublishResult, error) {
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
			return action.PublishResult{}, fmt.Errorf("%s@%s: %w", rec.Name, rec.Version, action.ErrImmutableConflict)
		}
		return action.PublishResult{Record: clone(old)}, nil
	}
	if m.recs[rec.Name] == nil {
		m.recs[rec.Name] = map[string]action.Record{}
	}
	rec = clone(rec)
	rec.Deprecation = nil
	m.recs[rec.Name][rec.Version] = rec
	return action.PublishResult{Created: true, Record: clone(rec)}, nil
}

func clone(r action.Record) action.Record {
	r.Document = bytes.Clone(r.Document)
	if r.Deprecation != nil {
		d := *r.Deprecation
		r.Deprecation = &d
	}
	return r
}

// Get returns one version (see action.Store).
func (m *MemStore) Get(_ context.Context, name, version string) (action.Record, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.get(name, version)
}

func (m *MemStore) get(name, version string) (action.Record, error) {
	vs, ok := m.recs[name]
	if !ok {
		return action.Record{}, fmt.Errorf("action %q: %w", name, action.ErrActionNotFound)
	}
	r, ok := vs[version]
	if !ok {
		return action.Record{}, fmt.Errorf("action %q has no version %q: %w", name, version, action.ErrVersionNotFound)
	}
	return clone(r), nil
}

// List returns every action sorted by name (see action.Store).
func (m *MemStore) List(context.Context) ([]action.Summary, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := []action.Summary{}
	for name, vs := range m.recs {
		recs := make([]action.Record, 0, len(vs))
		for _, r := range vs {
			recs = append(recs, r)
		}
		out = append(out, action.SummaryOf(name, recs))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// Deprecate sets or clears a version's deprecation (see action.Store).
func (m *MemStore) Deprecate(_ context.Context, name, version string, d *action.Deprecation) (action.Record, error) {
	if err := action.CheckDeprecation(d); err != nil {
		return action.Record{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	r, err := m.get(name, version)
	if err != nil {
		return r, err
	}
	r.Deprecation = d
	r = clone(r)
	m.recs[name][version] = r
	return clone(r), nil
}

// Ready returns the error SetNotReady set.
func (m *MemStore) Ready(context.Context) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.notReady
}

// SetNotReady makes Ready return err (nil: ready again).
func (m *MemStore) SetNotReady(err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.notReady = err
}

// Close does nothing.
func (m *MemStore) Close() error { return nil }

// Tamper replaces the stored bytes of name@version with edit(bytes), as an
// attacker with write access to the storage would.
func (m *MemStore) Tamper(name, version string, edit func([]byte) []byte) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.recs[name][version]
	if !ok {
		return fmt.Errorf("tamper: no record %s@%s", name, version)
	}
	r.Document = edit(bytes.Clone(r.Document))
	m.recs[name][version] = r
	return nil
}
