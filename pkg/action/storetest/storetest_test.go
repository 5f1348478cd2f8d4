package storetest

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"sort"
	"sync"
	"testing"

	"github.com/dome-registry/dome/pkg/action"
)

// memStore is the smallest correct action.Store: it checks the suite itself.
type memStore struct {
	mu   sync.Mutex
	recs map[string]map[string]action.Record
}

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
			return action.PublishResult{}, fmt.Errorf("%s@%s: %w", rec.Name, rec.Version, action.ErrImmutableConflict)
		}
		return action.PublishResult{Record: clone(old)}, nil
	}
	if m.recs[rec.Name] == nil {
		m.recs[rec.Name] = map[string]action.Record{}
	}
	rec = clone(rec)
	m.recs[rec.Name][rec.Version] = rec
	return action.PublishResult{Created: true, Record: clone(rec)}, nil
}

func clone(r action.Record) action.Record { r.Document = bytes.Clone(r.Document); return r }

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
	return clone(r), nil
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
		d, _ := action.ParseDocument(vs[s.LatestVersion].Document)
		s.Description = d.Description
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return slices.Clip(out), nil
}

func (m *memStore) Ready(context.Context) error { return nil }
func (m *memStore) Close() error                { return nil }

func TestSuiteAgainstMemoryStore(t *testing.T) {
	Run(t, func(t *testing.T) action.Store { return &memStore{recs: map[string]map[string]action.Record{}} })
}
