package gitstore

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// RefKind says how a revision was named.
type RefKind string

// Revision kinds.
const (
	KindFullSHA  RefKind = "full_sha"
	KindShortSHA RefKind = "short_sha"
	KindTag      RefKind = "tag"
	KindBranch   RefKind = "branch"
	KindHead     RefKind = "head"
	KindRef      RefKind = "ref"      // a fully qualified ref outside refs/heads and refs/tags
	KindAncestor RefKind = "ancestor" // a revision with ~N or ^N steps, e.g. main~2
)

// CheckRevision validates a revision as ResolveRevision accepts it: HEAD or
// a ref name (check-ref-format rules) or hex, optionally followed by ~N and ^N
// steps. It returns the base name.
func CheckRevision(rev string) (string, error) {
	base, _, err := splitAncestry(rev)
	if err != nil {
		return "", err
	}
	if base != "HEAD" {
		if err := CheckRefName(base); err != nil {
			return "", err
		}
	}
	return base, nil
}

// SplitAncestry returns the base of a revision and its ~N/^N suffix ("" if none).
func SplitAncestry(rev string) (base, suffix string) {
	b, steps, err := splitAncestry(rev)
	if err != nil || len(steps) == 0 {
		return rev, ""
	}
	return b, rev[len(b):]
}

// splitAncestry splits "main~2^2" into "main" and its steps.
func splitAncestry(rev string) (string, []step, error) {
	i := len(rev)
	for i > 0 {
		j := i
		for j > 0 && rev[j-1] >= '0' && rev[j-1] <= '9' {
			j--
		}
		if j == 0 || (rev[j-1] != '~' && rev[j-1] != '^') {
			break
		}
		i = j - 1
	}
	if i == len(rev) {
		return rev, nil, nil
	}
	if i == 0 {
		return "", nil, fmt.Errorf("revision %q has no base before its ~ or ^ steps", rev)
	}
	var steps []step
	rest := rev[i:]
	for len(rest) > 0 {
		op := rest[0]
		k := 1
		for k < len(rest) && rest[k] >= '0' && rest[k] <= '9' {
			k++
		}
		n := 1
		if k > 1 {
			v, err := strconv.Atoi(rest[1:k])
			if err != nil || v > 100000 {
				return "", nil, fmt.Errorf("revision %q: bad count %q", rev, rest[1:k])
			}
			n = v
		}
		steps = append(steps, step{op, n})
		rest = rest[k:]
	}
	return rev[:i], steps, nil
}

type step struct {
	op byte // '~' (n first parents) or '^' (the n-th parent; ^0 is the commit)
	n  int
}

// Revision is a resolved revision: what was asked, how it was named, and the
// commit it peels to.
type Revision struct {
	Input     string  `json:"requested"`
	Kind      RefKind `json:"kind"`
	RefName   string  `json:"ref,omitempty"`       // full ref name; "" for SHAs
	Object    Hash    `json:"object"`              // what the ref or SHA names (an annotated tag's object id)
	Commit    Hash    `json:"commit"`              // the peeled commit
	Annotated bool    `json:"annotated,omitempty"` // Object is an annotated tag
}

// AmbiguousError is a short SHA that names more than one object.
type AmbiguousError struct {
	Prefix     string
	Candidates []Candidate
}

// Candidate is one object matching an ambiguous prefix.
type Candidate struct {
	Hash Hash
	Type ObjectType
}

func (e *AmbiguousError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "short SHA %s is ambiguous: it matches %d objects (", e.Prefix, len(e.Candidates))
	for i, c := range e.Candidates {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s %s", c.Hash, c.Type)
	}
	b.WriteString(")")
	return b.String()
}

// NotCommitError is a revision that names a tree or a blob, directly or
// through a tag, where a commit is needed.
type NotCommitError struct {
	Name string
	Type ObjectType
	Hash Hash
}

func (e *NotCommitError) Error() string {
	return fmt.Sprintf("%s points at a %s (%s), not a commit", e.Name, e.Type, e.Hash)
}

// AmbiguousRefError is a short name that is both a tag and a branch.
type AmbiguousRefError struct {
	Name string
	Refs []string
}

func (e *AmbiguousRefError) Error() string {
	return fmt.Sprintf("%q is ambiguous: it names %s", e.Name, strings.Join(e.Refs, " and "))
}

// MinShortSHA is the shortest abbreviated object id dome accepts.
const MinShortSHA = 7

// Peel follows annotated tags from h to a commit.
func (r *Repo) Peel(name string, h Hash) (commit Hash, annotated bool, err error) {
	cur := h
	for depth := 0; depth < 16; depth++ {
		t, err := r.ObjectType(cur)
		if err != nil {
			return ZeroHash, false, fmt.Errorf("%s: %w", name, err)
		}
		switch t {
		case TypeCommit:
			return cur, annotated, nil
		case TypeTag:
			tag, err := r.Tag(cur)
			if err != nil {
				return ZeroHash, false, err
			}
			annotated = true
			cur = tag.Target
		default:
			return ZeroHash, false, &NotCommitError{Name: name, Type: t, Hash: cur}
		}
	}
	return ZeroHash, false, fmt.Errorf("%s: tag chain longer than 16", name)
}

// ResolveRevision resolves a revision the way DESIGN.md lists them: a full
// SHA, HEAD, a fully qualified ref, a tag, a branch (a name that is both is
// ambiguous), or an unambiguous short SHA of at least MinShortSHA hex digits.
// The result is peeled to a commit; a tree or blob is a *NotCommitError.
func (r *Repo) ResolveRevision(rev string) (Revision, error) {
	base, steps, err := splitAncestry(rev)
	if err != nil {
		return Revision{Input: rev}, err
	}
	if len(steps) == 0 {
		return r.resolveBase(rev)
	}
	res, err := r.resolveBase(base)
	if err != nil {
		return Revision{Input: rev}, err
	}
	cur := res.Commit
	for _, s := range steps {
		switch s.op {
		case '~':
			for i := 0; i < s.n; i++ {
				c, err := r.Commit(cur)
				if err != nil {
					return Revision{Input: rev}, err
				}
				if len(c.Parents) == 0 {
					return Revision{Input: rev}, fmt.Errorf("revision %q: %s has no parent: %w", rev, cur.Short(), ErrNotFound)
				}
				cur = c.Parents[0]
			}
		case '^':
			if s.n == 0 {
				continue
			}
			c, err := r.Commit(cur)
			if err != nil {
				return Revision{Input: rev}, err
			}
			if s.n > len(c.Parents) {
				return Revision{Input: rev}, fmt.Errorf("revision %q: %s has %d parent(s), not %d: %w", rev, cur.Short(), len(c.Parents), s.n, ErrNotFound)
			}
			cur = c.Parents[s.n-1]
		}
	}
	return Revision{Input: rev, Kind: KindAncestor, Object: cur, Commit: cur}, nil
}

func (r *Repo) resolveBase(rev string) (Revision, error) {
	out := Revision{Input: rev}
	if h, ok := ParseHash(rev); ok {
		out.Kind, out.Object = KindFullSHA, h
		if !r.HasObject(h) {
			return out, fmt.Errorf("commit %s: %w", h, ErrNotFound)
		}
		c, ann, err := r.Peel(rev, h)
		out.Commit, out.Annotated = c, ann
		return out, err
	}
	if rev == "HEAD" {
		name, h, err := r.Head()
		if err != nil {
			return out, err
		}
		out.Kind, out.RefName, out.Object, out.Commit = KindHead, name, h, h
		c, ann, err := r.Peel("HEAD", h)
		out.Commit, out.Annotated = c, ann
		return out, err
	}
	if err := CheckRefName(rev); err != nil {
		return out, err
	}
	var found []Ref
	var kinds []RefKind
	if strings.HasPrefix(rev, "refs/") {
		if h, err := r.Ref(rev); err == nil {
			k := KindRef
			switch {
			case strings.HasPrefix(rev, "refs/tags/"):
				k = KindTag
			case strings.HasPrefix(rev, "refs/heads/"):
				k = KindBranch
			}
			found, kinds = append(found, Ref{rev, h}), append(kinds, k)
		} else if !errors.Is(err, ErrNotFound) {
			return out, err
		}
	} else {
		for _, cand := range []struct {
			prefix string
			kind   RefKind
		}{{"refs/tags/", KindTag}, {"refs/heads/", KindBranch}} {
			h, err := r.Ref(cand.prefix + rev)
			if errors.Is(err, ErrNotFound) {
				continue
			}
			if err != nil {
				return out, err
			}
			found, kinds = append(found, Ref{cand.prefix + rev, h}), append(kinds, cand.kind)
		}
	}
	switch len(found) {
	case 1:
		out.Kind, out.RefName, out.Object = kinds[0], found[0].Name, found[0].Target
		c, ann, err := r.Peel(found[0].Name, found[0].Target)
		out.Commit, out.Annotated = c, ann
		return out, err
	case 2:
		return out, &AmbiguousRefError{Name: rev, Refs: []string{found[0].Name, found[1].Name}}
	}
	if IsHex(rev) && len(rev) >= MinShortSHA && len(rev) < 40 {
		hs, err := r.HashesWithPrefix(rev)
		if err != nil {
			return out, err
		}
		var cands []Candidate
		var commitish []Hash
		for _, h := range hs {
			t, err := r.ObjectType(h)
			if err != nil {
				return out, err
			}
			cands = append(cands, Candidate{h, t})
			if t == TypeCommit || t == TypeTag {
				commitish = append(commitish, h)
			}
		}
		switch {
		case len(cands) == 0:
			return out, fmt.Errorf("revision %q: %w", rev, ErrNotFound)
		case len(cands) == 1:
			out.Kind, out.Object = KindShortSHA, cands[0].Hash
			c, ann, err := r.Peel(rev, cands[0].Hash)
			out.Commit, out.Annotated = c, ann
			return out, err
		default:
			// Like git: a revision that needs a commit ignores trees and blobs
			// when exactly one candidate is commit-ish.
			if len(commitish) == 1 {
				out.Kind, out.Object = KindShortSHA, commitish[0]
				c, ann, err := r.Peel(rev, commitish[0])
				out.Commit, out.Annotated = c, ann
				return out, err
			}
			return out, &AmbiguousError{Prefix: rev, Candidates: cands}
		}
	}
	return out, fmt.Errorf("revision %q: %w", rev, ErrNotFound)
}

// ResolveCommit resolves rev (see ResolveRevision) to a commit id.
func (r *Repo) ResolveCommit(rev string) (Hash, error) {
	res, err := r.ResolveRevision(rev)
	if err != nil {
		return ZeroHash, err
	}
	return res.Commit, nil
}
