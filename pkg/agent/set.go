package agent

import (
	"errors"
	"fmt"
	"sort"

	"github.com/dome-registry/dome/pkg/errkind"
)

// Registration error codes.
const (
	CodeInvalidProfile   = "INVALID_PROFILE"
	CodeDuplicateID      = "DUPLICATE_AGENT_ID"
	CodeAgentNotFound    = "AGENT_NOT_FOUND"
	CodeStandardRequired = "STANDARD_AGENT_REQUIRED"
)

// RegistrationError is a refused Create or Update. It unwraps to an
// *errkind.InputError (exit 2).
type RegistrationError struct {
	Code   string
	ID     string
	Source string
	Err    error // the validation error, for INVALID_PROFILE
	Hint   string
	msg    string
}

func (e *RegistrationError) Error() string { return e.msg + " (" + e.Code + ")" }

// Unwrap returns the input error behind it.
func (e *RegistrationError) Unwrap() error {
	if e.Err != nil {
		return e.Err
	}
	return &errkind.InputError{Source: e.Source, Problem: e.Error(), Hint: e.Hint}
}

// Set holds validated agent profiles by id: the agents of one registry at
// one commit. Create and Update are distinct: Create refuses an id that is
// there, Update one that is not, and both validate the whole profile first,
// so a Set never holds a partial or invalid profile. It is not safe for
// concurrent writers.
type Set struct {
	v       *Validator
	byID    map[string]*entry
	ids     []string // sorted
	version int      // bumped by every change, for caches built on the set
}

type entry struct {
	p      *Profile
	source string
}

// NewSet returns an empty set validating with v.
func NewSet(v *Validator) *Set {
	return &Set{v: v, byID: map[string]*entry{}}
}

// Create registers a new profile (a copy of p); source names where it came
// from. It fails with INVALID_PROFILE or DUPLICATE_AGENT_ID.
func (s *Set) Create(source string, p *Profile) error {
	if err := s.v.Check(source, p); err != nil {
		return &RegistrationError{Code: CodeInvalidProfile, ID: idOf(p), Source: source, Err: err, msg: err.Error()}
	}
	return s.create(source, p)
}

// create registers a profile that was just validated (by Parse or Check).
func (s *Set) create(source string, p *Profile) error {
	if old, ok := s.byID[p.ID]; ok {
		return &RegistrationError{Code: CodeDuplicateID, ID: p.ID, Source: source,
			msg:  fmt.Sprintf("agent id %q is already registered by %s", p.ID, old.source),
			Hint: "agent ids are unique: rename one of them, or update the existing agent"}
	}
	s.byID[p.ID] = &entry{p: p.Clone(), source: source}
	i := sort.SearchStrings(s.ids, p.ID)
	s.ids = append(s.ids, "")
	copy(s.ids[i+1:], s.ids[i:])
	s.ids[i] = p.ID
	s.version++
	return nil
}

// Update replaces a registered profile with a new version (a copy of p). It
// fails with INVALID_PROFILE, AGENT_NOT_FOUND, or STANDARD_AGENT_REQUIRED
// when it would disable the standard agent.
func (s *Set) Update(source string, p *Profile) error {
	if err := s.v.Check(source, p); err != nil {
		return &RegistrationError{Code: CodeInvalidProfile, ID: idOf(p), Source: source, Err: err, msg: err.Error()}
	}
	if _, ok := s.byID[p.ID]; !ok {
		return &RegistrationError{Code: CodeAgentNotFound, ID: p.ID, Source: source,
			msg: fmt.Sprintf("agent %q is not registered", p.ID), Hint: "create it first"}
	}
	if p.ID == StandardAgentID && !p.Enabled {
		return &RegistrationError{Code: CodeStandardRequired, ID: p.ID, Source: source,
			msg: "the standard agent cannot be disabled: selection falls back to it", Hint: "keep enabled: true"}
	}
	s.byID[p.ID] = &entry{p: p.Clone(), source: source}
	s.version++
	return nil
}

func idOf(p *Profile) string {
	if p == nil {
		return ""
	}
	return p.ID
}

// Get returns a copy of agent id's profile.
func (s *Set) Get(id string) (*Profile, bool) {
	e, ok := s.byID[id]
	if !ok {
		return nil, false
	}
	return e.p.Clone(), true
}

// Source returns where agent id was read from.
func (s *Set) Source(id string) string {
	if e, ok := s.byID[id]; ok {
		return e.source
	}
	return ""
}

// get returns the stored profile itself, for read-only use in the package.
func (s *Set) get(id string) (*Profile, bool) {
	e, ok := s.byID[id]
	if !ok {
		return nil, false
	}
	return e.p, true
}

// IDs returns the registered ids, sorted.
func (s *Set) IDs() []string { return append([]string(nil), s.ids...) }

// Len returns the number of profiles.
func (s *Set) Len() int { return len(s.ids) }

// CheckStandard fails unless the standard agent is registered and enabled.
func (s *Set) CheckStandard() error {
	e, ok := s.byID[StandardAgentID]
	switch {
	case !ok:
		return &RegistrationError{Code: CodeStandardRequired, ID: StandardAgentID,
			msg:  "no standard agent: every registry needs one, enabled; selection falls back to it",
			Hint: "add registry/agents/standard.agent.json"}
	case !e.p.Enabled:
		return &RegistrationError{Code: CodeStandardRequired, ID: StandardAgentID, Source: e.source,
			msg: "the standard agent is disabled: selection falls back to it", Hint: "set enabled: true"}
	}
	return nil
}

// CodeOf returns the code of a RegistrationError, or "".
func CodeOf(err error) string {
	var re *RegistrationError
	if errors.As(err, &re) {
		return re.Code
	}
	return ""
}
