package actiongit

import (
	"bytes"
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/dome-registry/dome/pkg/action"
	"github.com/dome-registry/dome/pkg/gitstore"
	"github.com/dome-registry/dome/pkg/signing"
)

// Violation kinds found by Audit.
const (
	// KindChanged: a commit replaced the bytes of a published version.
	KindChanged = "changed"
	// KindRemoved: a commit deleted a published version.
	KindRemoved = "removed"
	// KindInvalid: a commit added a file that is not a valid canonical action
	// document for its path (unparseable, not canonical, or naming another
	// name or version).
	KindInvalid = "invalid"
	// KindUnverified: a version at the head does not verify against the
	// trusted keys (only with AuditOptions.Keys).
	KindUnverified = "unverified"
)

// Violation is one broken promise in the branch history.
type Violation struct {
	Kind    string `json:"kind"`
	Commit  string `json:"commit"`           // the commit that did it (the head for KindUnverified)
	Parent  string `json:"parent,omitempty"` // the parent it is compared with
	Path    string `json:"path"`
	Name    string `json:"name"`
	Version string `json:"version"`
	Before  string `json:"before_blob,omitempty"`
	After   string `json:"after_blob,omitempty"`
	Detail  string `json:"detail"`
}

// AuditReport is what Audit found.
type AuditReport struct {
	Branch     string      `json:"branch"`
	Head       string      `json:"head"` // "" for a branch that does not exist
	Commits    int         `json:"commits"`
	Versions   int         `json:"versions"` // at the head
	Verified   int         `json:"verified,omitempty"`
	Violations []Violation `json:"violations"`
}

// OK reports whether the audit found nothing.
func (r *AuditReport) OK() bool { return len(r.Violations) == 0 }

// AuditOptions configure Audit.
type AuditOptions struct {
	// Keys, when set, also verifies every version at the head.
	Keys *signing.TrustedKeys
}

// Audit walks every commit reachable from the branch head and checks that
// no commit changed or removed a file Dir/<name>/<version>.json that its
// parent held, and that every file a commit added is the canonical document
// of that name and version. With opts.Keys it also verifies every version at
// the head. Violations are sorted oldest first: by generation (a commit comes
// after its parents), then commit id and path.
func (s *Store) Audit(ctx context.Context, opts AuditOptions) (*AuditReport, error) {
	head, err := s.Head()
	if err != nil {
		return nil, err
	}
	rep := &AuditReport{Branch: s.branch, Violations: []Violation{}}
	if head.IsZero() {
		return rep, nil
	}
	rep.Head = head.String()
	parentsOf := map[gitstore.Hash][]gitstore.Hash{}
	seen := map[gitstore.Hash]bool{}
	checked := map[gitstore.Hash]bool{} // blobs already checked for validity at a path
	stack := []gitstore.Hash{head}
	for len(stack) > 0 {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		h := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if seen[h] {
			continue
		}
		seen[h] = true
		c, err := s.repo.Commit(h)
		if err != nil {
			return nil, fmt.Errorf("audit %s: %w", s.branch, err)
		}
		rep.Commits++
		parentsOf[c.Hash] = c.Parents
		changes, err := s.commitChanges(c)
		if err != nil {
			return nil, fmt.Errorf("audit %s: %w", s.branch, err)
		}
		for _, ch := range changes {
			name, version := splitPath(ch.path)
			v := Violation{Commit: c.Hash.String(), Path: ch.path, Name: name, Version: version}
			if !ch.parent.IsZero() {
				v.Parent = ch.parent.String()
			}
			switch {
			case !ch.before.IsZero() && ch.after.IsZero():
				v.Kind, v.Before = KindRemoved, ch.before.String()
				v.Detail = fmt.Sprintf("%s@%s was published (blob %s) and this commit deletes it", name, version, ch.before.Short())
				rep.Violations = append(rep.Violations, v)
			case !ch.before.IsZero():
				v.Kind, v.Before, v.After = KindChanged, ch.before.String(), ch.after.String()
				v.Detail = fmt.Sprintf("%s@%s was published as blob %s and this commit replaces it with blob %s", name, version, ch.before.Short(), ch.after.Short())
				rep.Violations = append(rep.Violations, v)
			}
			if ch.added && !checked[ch.after] {
				checked[ch.after] = true
				if problem := s.checkFile(ch.after, name, version); problem != "" {
					v.Kind, v.Before, v.After = KindInvalid, "", ch.after.String()
					v.Detail = problem
					rep.Violations = append(rep.Violations, v)
				}
			}
		}
		stack = append(stack, c.Parents...)
	}
	snap, err := s.snapshot()
	if err != nil {
		return nil, err
	}
	for name, err := range snap.badDeps {
		rep.Violations = append(rep.Violations, Violation{Kind: KindInvalid, Commit: rep.Head, Path: DeprecationsPath(name), Name: name, Detail: err.Error()})
	}
	for _, name := range snap.names {
		for _, version := range snap.versions(name) {
			rep.Versions++
			if opts.Keys == nil {
				continue
			}
			rec, err := s.Get(ctx, name, version)
			if err != nil {
				return nil, err
			}
			if vr := action.VerifyRecord(rec, opts.Keys); !vr.Verified {
				rep.Violations = append(rep.Violations, Violation{Kind: KindUnverified, Commit: rep.Head, Path: FilePath(name, version), Name: name, Version: version, Detail: vr.Code() + ": " + vr.Reason})
			} else {
				rep.Verified++
			}
		}
	}
	gen := generations(head, parentsOf)
	sort.SliceStable(rep.Violations, func(i, j int) bool {
		a, b := rep.Violations[i], rep.Violations[j]
		ga, gb := gen[a.Commit], gen[b.Commit]
		if ga != gb {
			return ga < gb
		}
		if a.Commit != b.Commit {
			return a.Commit < b.Commit
		}
		if a.Path != b.Path {
			return a.Path < b.Path
		}
		return a.Kind < b.Kind
	})
	return rep, nil
}

// checkFile returns what is wrong with a file added at Dir/name/version.json.
func (s *Store) checkFile(blob gitstore.Hash, name, version string) string {
	data, err := s.repo.ReadBlob(blob)
	if err != nil {
		return "cannot read the blob: " + err.Error()
	}
	d, err := action.ParseDocument(data)
	switch {
	case err != nil:
		return "not a valid action document: " + err.Error()
	case d.Name != name || d.Version != version:
		return fmt.Sprintf("the document is %s@%s, the path says %s@%s", d.Name, d.Version, name, version)
	case !bytes.Equal(d.Canonical, data):
		return "the file is not the canonical (RFC 8785) form of its document"
	}
	return ""
}

// splitPath returns name and version of Dir/<name>/<version>.json.
func splitPath(p string) (name, version string) {
	rest := strings.TrimPrefix(p, Dir+"/")
	name, file, _ := strings.Cut(rest, "/")
	return name, strings.TrimSuffix(file, ".json")
}

// generations numbers commits so that every commit comes after its parents
// (a root is 1), without recursion.
func generations(head gitstore.Hash, parentsOf map[gitstore.Hash][]gitstore.Hash) map[string]int {
	gen := map[gitstore.Hash]int{}
	stack := []gitstore.Hash{head}
	for len(stack) > 0 {
		h := stack[len(stack)-1]
		if gen[h] > 0 {
			stack = stack[:len(stack)-1]
			continue
		}
		g, ready := 1, true
		for _, p := range parentsOf[h] {
			if _, known := parentsOf[p]; !known {
				continue
			}
			if gen[p] == 0 {
				ready = false
				stack = append(stack, p)
			} else if gen[p]+1 > g {
				g = gen[p] + 1
			}
		}
		if ready {
			gen[h] = g
			stack = stack[:len(stack)-1]
		}
	}
	out := make(map[string]int, len(gen))
	for h, g := range gen {
		out[h.String()] = g
	}
	return out
}
