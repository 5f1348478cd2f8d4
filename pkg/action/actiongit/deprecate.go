package actiongit

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strings"

	"github.com/dome-registry/dome/pkg/action"
	"github.com/dome-registry/dome/pkg/canonical"
	"github.com/dome-registry/dome/pkg/gitstore"
)

// DeprecationsFile holds an action's deprecations beside its versions:
// Dir/<name>/deprecations.json, the canonical JSON object
// {"<version>": {"reason": "..."}}. It is metadata, not a published
// document: a deprecation is a commit that changes only this file, and the
// audit does not count its changes as changes to published versions.
const DeprecationsFile = "deprecations.json"

// DeprecationsPath returns the path of name's deprecations in the tree.
func DeprecationsPath(name string) string { return Dir + "/" + name + "/" + DeprecationsFile }

// readDeprecations parses name's deprecations file: version -> reason.
func (s *Store) readDeprecations(blob gitstore.Hash, name string) (map[string]string, error) {
	data, err := s.repo.ReadBlob(blob)
	if err != nil {
		return nil, err
	}
	return parseDeprecations(data, DeprecationsPath(name))
}

// deprecationAt returns the deprecation of name@version in a commit tree.
func (s *Store) deprecationAt(tree gitstore.Hash, name, version string) (*action.Deprecation, error) {
	e, err := s.repo.EntryAt(tree, DeprecationsPath(name))
	if errors.Is(err, gitstore.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	deps, err := s.readDeprecations(e.Hash, name)
	if err != nil {
		return nil, err
	}
	if reason, ok := deps[version]; ok {
		return &action.Deprecation{Reason: reason}, nil
	}
	return nil, nil
}

func parseDeprecations(data []byte, source string) (map[string]string, error) {
	if _, err := canonical.Transform(data); err != nil { // refuses duplicate keys and bad JSON
		return nil, fmt.Errorf("%s: %w (fix the file, or remove it, in a commit on the branch)", source, err)
	}
	var raw map[string]action.Deprecation
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&raw); err != nil {
		return nil, fmt.Errorf("%s: want {\"<version>\": {\"reason\": \"...\"}}: %w", source, err)
	}
	out := make(map[string]string, len(raw))
	for v, d := range raw {
		if err := action.CheckVersion(v); err != nil {
			return nil, fmt.Errorf("%s: %w", source, err)
		}
		if err := action.CheckDeprecation(&d); err != nil {
			return nil, fmt.Errorf("%s: version %s: %w", source, v, err)
		}
		out[v] = d.Reason
	}
	return out, nil
}

// Deprecate sets or clears the deprecation of name@version (see
// action.Store): one commit that changes only name's deprecations file,
// made durable before the branch moves by compare-and-swap. Setting what is
// already set makes no commit.
func (s *Store) Deprecate(ctx context.Context, name, version string, d *action.Deprecation) (action.Record, error) {
	if err := action.CheckDeprecation(d); err != nil {
		return action.Record{}, err
	}
	what := "deprecate " + name + "@" + version
	if d == nil {
		what = "undeprecate " + name + "@" + version
	}
	err := s.retry(ctx, what, func() (bool, error) {
		err := s.tryDeprecate(name, version, d, what)
		return err == nil || !isLostRace(err), err
	})
	if err != nil {
		return action.Record{}, err
	}
	return s.Get(ctx, name, version)
}

// tryDeprecate makes one attempt at the current head.
func (s *Store) tryDeprecate(name, version string, d *action.Deprecation, what string) error {
	sn, err := s.snapshot() // the commit below moves the branch from sn.head by compare-and-swap
	if err != nil {
		return err
	}
	head := sn.head
	if _, ok := sn.actions[name]; !ok {
		return fmt.Errorf("action %q: %w", name, action.ErrActionNotFound)
	}
	if _, ok := sn.actions[name][version]; !ok {
		return fmt.Errorf("action %q has no version %q (versions: %s): %w", name, version, strings.Join(sn.versions(name), ", "), action.ErrVersionNotFound)
	}
	if err := sn.badDeps[name]; err != nil {
		return fmt.Errorf("%w: %v; fix or remove it in a commit on %s first", action.ErrInvalid, err, s.branch)
	}
	deps := maps.Clone(sn.deprecated[name])
	if deps == nil {
		deps = map[string]string{}
	}
	old, had := deps[version]
	switch {
	case d == nil && !had, d != nil && had && old == d.Reason:
		return nil
	case d == nil:
		delete(deps, version)
	default:
		deps[version] = d.Reason
	}
	if err := s.checkNotCheckedOut(); err != nil {
		return err
	}
	tree, err := s.repo.CommitTree(head)
	if err != nil {
		return fmt.Errorf("branch %s at %s: %w", s.branch, head.Short(), err)
	}
	path := DeprecationsPath(name)
	change := gitstore.Change{Path: path, Mode: gitstore.ModeFile}
	var blob gitstore.Hash
	if len(deps) == 0 {
		change.Delete = true
	} else {
		data, err := marshalDeprecations(deps)
		if err != nil {
			return err
		}
		if blob, err = s.repo.WriteBlob(data); err != nil {
			return err
		}
		change.Hash = blob
	}
	newTree, err := s.repo.ApplyChanges(tree, []gitstore.Change{change})
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	msg := what + "\n"
	if d != nil {
		msg += "\nreason: " + strings.ReplaceAll(d.Reason, "\n", " ") + "\n"
	}
	if _, err := s.commit(head, tree, newTree, blob, msg); err != nil {
		return err
	}
	return nil
}

// marshalDeprecations is the canonical form of a deprecations file.
func marshalDeprecations(deps map[string]string) ([]byte, error) {
	m := make(map[string]action.Deprecation, len(deps))
	for v, reason := range deps {
		m[v] = action.Deprecation{Reason: reason}
	}
	b, err := canonical.Marshal(m)
	if err != nil {
		return nil, errors.New("encode deprecations: " + err.Error())
	}
	return b, nil
}
