package action

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/dome-registry/dome/pkg/canonical"
	"github.com/dome-registry/dome/pkg/signing"
)

// LockFileName is the lock file `dome action lock` writes by default.
const LockFileName = "actions.lock"

// LockVersion is the version of the lock file format.
const LockVersion = 1

// Lock is an actions.lock file: each requested action pinned to an exact
// version, the hash of its canonical payload, the key that signed it and the
// registry commit that added it (git store; "" for PostgreSQL). Encoded by
// Marshal as indented JSON, entries sorted by name, one entry per name, so
// equal locks have equal bytes:
//
//	{
//	  "lock_version": 1,
//	  "actions": [
//	    {
//	      "name": "files.move",
//	      "range": "^1.0.0",
//	      "version": "1.1.0",
//	      "hash": "sha256:...",
//	      "kid": "dev-root-1",
//	      "revision": "<40 hex>"
//	    }
//	  ]
//	}
type Lock struct {
	LockVersion int         `json:"lock_version"`
	Actions     []LockEntry `json:"actions"`
}

// LockEntry is one pinned action.
type LockEntry struct {
	Name     string `json:"name"`
	Range    string `json:"range"`
	Version  string `json:"version"`
	Hash     string `json:"hash"`
	KID      string `json:"kid"`
	Revision string `json:"revision,omitempty"`
}

// Marshal encodes the lock in its one byte form (see Lock).
func (l *Lock) Marshal() []byte {
	c := Lock{LockVersion: LockVersion, Actions: slices.Clone(l.Actions)}
	if c.Actions == nil {
		c.Actions = []LockEntry{}
	}
	slices.SortFunc(c.Actions, func(a, b LockEntry) int { return strings.Compare(a.Name, b.Name) })
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(c); err != nil { // plain strings and ints: cannot fail
		panic(fmt.Sprintf("action: encode lock: %v", err))
	}
	return buf.Bytes()
}

// Entry returns the entry for name.
func (l *Lock) Entry(name string) (LockEntry, bool) {
	for _, e := range l.Actions {
		if e.Name == name {
			return e, true
		}
	}
	return LockEntry{}, false
}

// ParseLock reads an actions.lock strictly: strict JSON without duplicate
// members, no unknown fields, lock_version 1, valid names, ranges, versions
// and hashes, one entry per name. Errors wrap ErrInvalid.
func ParseLock(data []byte) (*Lock, error) {
	if _, err := canonical.Transform(data); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var l Lock
	if err := dec.Decode(&l); err != nil {
		return nil, fmt.Errorf(`%w: want {"lock_version": 1, "actions": [{"name", "range", "version", "hash", "kid", "revision"}]}: %w`, ErrInvalid, err)
	}
	if l.LockVersion != LockVersion {
		return nil, fmt.Errorf("%w: lock_version %d is not supported (this dome reads %d)", ErrInvalid, l.LockVersion, LockVersion)
	}
	seen := map[string]bool{}
	for i, e := range l.Actions {
		where := fmt.Sprintf("actions[%d]", i)
		if err := CheckName(e.Name); err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		if seen[e.Name] {
			return nil, fmt.Errorf("%w: %s: %q is locked twice", ErrInvalid, where, e.Name)
		}
		seen[e.Name] = true
		if _, err := ParseRange(e.Range); err != nil {
			return nil, fmt.Errorf("%s (%s): %w", where, e.Name, err)
		}
		if err := CheckVersion(e.Version); err != nil {
			return nil, fmt.Errorf("%s (%s): %w", where, e.Name, err)
		}
		if _, err := canonical.ParseDigest(e.Hash); err != nil {
			return nil, fmt.Errorf("%w: %s (%s): hash: %w", ErrInvalid, where, e.Name, err)
		}
		if err := signing.CheckKID(e.KID); err != nil {
			return nil, fmt.Errorf("%w: %s (%s): kid: %w", ErrInvalid, where, e.Name, err)
		}
		if e.Revision != "" && !isHex40(e.Revision) {
			return nil, fmt.Errorf("%w: %s (%s): revision %q is not a full commit id", ErrInvalid, where, e.Name, e.Revision)
		}
	}
	if l.Actions == nil {
		l.Actions = []LockEntry{}
	}
	return &l, nil
}

func isHex40(s string) bool {
	if len(s) != 40 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// LockRequest asks for one action in a range ("NAME@RANGE" on the command
// line; a bare NAME is "latest").
type LockRequest struct {
	Name  string
	Range Range
}

// ParseLockRequest parses "NAME@RANGE" or "NAME".
func ParseLockRequest(s string) (LockRequest, error) {
	name, rng, _ := strings.Cut(s, "@")
	if err := CheckName(name); err != nil {
		return LockRequest{}, err
	}
	r, err := ParseRange(rng)
	if err != nil {
		return LockRequest{}, err
	}
	return LockRequest{Name: name, Range: r}, nil
}

// ErrNoMatch is returned (wrapped) when no published version satisfies a
// requested range.
var ErrNoMatch = errors.New("NO_MATCHING_VERSION")

// ResolveEntry pins one request: the highest version in range whose record
// verifies against keys (a deprecated one only when no other is in range;
// the returned record's Deprecation says so). A version in range that does not verify is an error
// (wrapping ErrBadSignature or ErrUnknownKeyID): a lock never silently skips
// a tampered version.
func ResolveEntry(ctx context.Context, store Store, req LockRequest, keys *signing.TrustedKeys) (LockEntry, Record, error) {
	sum, err := summaryOf(ctx, store, req.Name)
	if err != nil {
		return LockEntry{}, Record{}, err
	}
	v, ok := req.Range.Resolve(sum.Versions, sum.Deprecated)
	if !ok {
		return LockEntry{}, Record{}, fmt.Errorf("%s@%s: none of the published versions (%s) is in the range: %w", req.Name, req.Range, strings.Join(sum.Versions, ", "), ErrNoMatch)
	}
	rec, err := store.Get(ctx, req.Name, v)
	if err != nil {
		return LockEntry{}, Record{}, err
	}
	vr := VerifyRecord(rec, keys)
	if !vr.Verified {
		return LockEntry{}, rec, fmt.Errorf("%s@%s resolves to %s, which does not verify: %w", req.Name, req.Range, v, vr.Err)
	}
	return LockEntry{Name: req.Name, Range: req.Range.String(), Version: v, Hash: rec.Hash, KID: vr.KID, Revision: rec.Revision}, rec, nil
}

func summaryOf(ctx context.Context, store Store, name string) (Summary, error) {
	list, err := store.List(ctx)
	if err != nil {
		return Summary{}, err
	}
	for _, s := range list {
		if s.Name == name {
			return s, nil
		}
	}
	return Summary{}, fmt.Errorf("action %q: %w", name, ErrActionNotFound)
}

// LockFinding is something CheckLock found about one entry.
type LockFinding struct {
	Name    string
	Problem bool   // false: a note (a newer version in range), true: the lock is wrong
	Detail  string // what and why
}

// CheckLock checks that every entry of a lock still holds: its version is
// in its range, is published with the locked hash (and, git store, by the
// locked commit) and verifies against keys with the locked kid. A newer
// version in range, or a locked version since deprecated, is a note, not a
// problem: a lock pins until re-locked.
func CheckLock(ctx context.Context, store Store, l *Lock, keys *signing.TrustedKeys) ([]LockFinding, error) {
	var out []LockFinding
	problem := func(name, format string, a ...any) {
		out = append(out, LockFinding{Name: name, Problem: true, Detail: fmt.Sprintf(format, a...)})
	}
	list, err := store.List(ctx)
	if err != nil {
		return nil, err
	}
	sums := map[string]Summary{}
	for _, s := range list {
		sums[s.Name] = s
	}
	for _, e := range l.Actions {
		r, err := ParseRange(e.Range)
		if err != nil {
			problem(e.Name, "%v", err)
			continue
		}
		if !r.latest && !r.Match(e.Version) {
			problem(e.Name, "locked version %s is not in the range %s", e.Version, e.Range)
		}
		rec, err := store.Get(ctx, e.Name, e.Version)
		if err != nil {
			problem(e.Name, "%s@%s: %v", e.Name, e.Version, err)
			continue
		}
		if rec.Hash != e.Hash {
			problem(e.Name, "%s@%s is published with hash %s, the lock says %s", e.Name, e.Version, rec.Hash, e.Hash)
		}
		if e.Revision != "" && rec.Revision != "" && rec.Revision != e.Revision {
			problem(e.Name, "%s@%s was added by commit %s, the lock says %s", e.Name, e.Version, rec.Revision, e.Revision)
		}
		vr := VerifyRecord(rec, keys)
		switch {
		case !vr.Verified:
			problem(e.Name, "%s@%s does not verify: %v", e.Name, e.Version, vr.Err)
		case vr.KID != e.KID:
			problem(e.Name, "%s@%s is signed by %q, the lock says %q", e.Name, e.Version, vr.KID, e.KID)
		}
		sum := sums[e.Name]
		now, ok := r.Resolve(sum.Versions, sum.Deprecated)
		if ok && now != e.Version && (CompareVersions(now, e.Version) > 0 || rec.Deprecation != nil) {
			out = append(out, LockFinding{Name: e.Name, Detail: fmt.Sprintf("%s@%s now resolves to %s (locked: %s); run dome action lock to update", e.Name, e.Range, now, e.Version)})
		}
		if rec.Deprecation != nil {
			out = append(out, LockFinding{Name: e.Name, Detail: fmt.Sprintf("%s@%s is deprecated: %s", e.Name, e.Version, rec.Deprecation.Reason)})
		}
	}
	return out, nil
}
