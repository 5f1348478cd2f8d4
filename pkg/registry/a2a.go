package registry

import (
	"errors"
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/dome-registry/dome/pkg/a2a"
	"github.com/dome-registry/dome/pkg/canonical"
	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/dome-registry/dome/pkg/gitstore"
)

// A2A entry kinds: card folders and the profiles folder.
const (
	A2ARuntime = a2a.KindRuntime
	A2ATool    = a2a.KindTool
	A2AProfile = "profile"
)

// File suffixes of A2A entries.
const (
	CardSuffix       = ".card.json"
	A2AProfileSuffix = ".profile.json"
)

// A2ARef names an A2A entry at a revision: "<kind>/<id>@<rev>", kind being
// runtime, tool or profile.
type A2ARef struct {
	Kind, ID, Rev string
}

func (r A2ARef) String() string { return r.Kind + "/" + r.ID + "@" + r.Rev }

// Name is "<kind>/<id>", as A2A profiles name their card.
func (r A2ARef) Name() string { return r.Kind + "/" + r.ID }

// ParseA2ARef reads "<kind>/<id>@<rev>" (arg names the argument in errors).
// defaultRev is used when "@<rev>" is missing ("" requires it).
func ParseA2ARef(arg, s, defaultRev string) (A2ARef, error) {
	name, rev, ok := strings.Cut(s, "@")
	if !ok {
		rev = defaultRev
	}
	kind, id, _ := strings.Cut(name, "/")
	switch {
	case kind != A2ARuntime && kind != A2ATool && kind != A2AProfile:
		return A2ARef{}, &errkind.InputError{Source: arg, Problem: fmt.Sprintf("%q: want runtime/<id>@<ref>, tool/<id>@<ref> or profile/<id>@<ref>", s), Hint: "list them with: dome registry cards"}
	case !ValidID(id):
		return A2ARef{}, &errkind.InputError{Source: arg, Problem: fmt.Sprintf("%q: id %q is not valid (^[a-z0-9][a-z0-9._-]*$)", s, id)}
	case rev == "":
		return A2ARef{}, &errkind.InputError{Source: arg, Problem: fmt.Sprintf("%q: no ref", s), Hint: "write " + name + "@<ref>, e.g. " + name + "@HEAD"}
	}
	return A2ARef{Kind: kind, ID: id, Rev: rev}, nil
}

// A2AEntry is one card or A2A profile at a pinned commit.
type A2AEntry struct {
	Kind         string        `json:"kind"` // runtime, tool or profile
	ID           string        `json:"id"`
	Path         string        `json:"path"`
	Blob         gitstore.Hash `json:"blob"`
	Digest       string        `json:"digest"` // sha256 of the canonical bytes
	Name         string        `json:"name,omitempty"`
	Version      string        `json:"version,omitempty"`
	Description  string        `json:"description,omitempty"`
	MaxClasses   []string      `json:"max_classes,omitempty"`
	Capabilities []string      `json:"capabilities"`
	Skills       []string      `json:"skills,omitempty"`
	Interface    string        `json:"interface,omitempty"` // the preferred one's URL
	Card         string        `json:"card,omitempty"`      // profiles: the card they are for
	Audience     string        `json:"audience,omitempty"`  // profiles

	Data    []byte       `json:"-"`
	Parsed  *a2a.Card    `json:"-"` // cards
	Profile *a2a.Profile `json:"-"` // profiles
}

func (r *Registry) a2aDir(p Pin) (string, error) {
	l, err := r.layoutAt(p)
	if err != nil {
		return "", err
	}
	return path.Join(l.root, "a2a"), nil
}

func a2aFolder(dir, kind string) string {
	if kind == A2AProfile {
		return path.Join(dir, "profiles")
	}
	return path.Join(dir, "cards", kind)
}

func a2aSuffix(kind string) string {
	if kind == A2AProfile {
		return A2AProfileSuffix
	}
	return CardSuffix
}

// A2AIDs lists the ids of one kind at a pinned commit, sorted.
func (r *Registry) A2AIDs(p Pin, kind string) ([]string, error) {
	dir, err := r.a2aDir(p)
	if err != nil {
		return nil, err
	}
	e, err := r.repo.EntryAt(p.Tree, a2aFolder(dir, kind))
	if errors.Is(err, gitstore.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if !e.Mode.IsDir() {
		return nil, nil
	}
	es, err := r.repo.ReadTree(e.Hash)
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, x := range es {
		id, ok := strings.CutSuffix(x.Name, a2aSuffix(kind))
		if ok && !x.Mode.IsDir() && ValidID(id) {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	return ids, nil
}

// A2AAt reads and validates one card or A2A profile at a pinned commit.
func (r *Registry) A2AAt(kind, id string, p Pin) (*A2AEntry, error) {
	dir, err := r.a2aDir(p)
	if err != nil {
		return nil, err
	}
	file := path.Join(a2aFolder(dir, kind), id+a2aSuffix(kind))
	e, err := r.repo.EntryAt(p.Tree, file)
	if err != nil || e.Mode.IsDir() || e.Mode == gitstore.ModeSymlink {
		if err != nil && !errors.Is(err, gitstore.ErrNotFound) {
			return nil, err
		}
		ids, _ := r.A2AIDs(p, kind)
		hint := kind + "s at this commit: " + strings.Join(ids, ", ")
		if len(ids) == 0 {
			hint = fmt.Sprintf("there are none at %s; add %s", p.Commit.Short(), file)
		}
		return nil, &errkind.InputError{Source: kind + "/" + id, Problem: fmt.Sprintf("not found at %s (%s)", p.Commit.Short(), file), Hint: hint}
	}
	data, err := r.repo.ReadBlob(e.Hash)
	if err != nil {
		return nil, err
	}
	source := file + "@" + p.Commit.Short()
	out := &A2AEntry{Kind: kind, ID: id, Path: file, Blob: e.Hash, Data: data}
	if kind == A2AProfile {
		prof, err := r.a2a.ParseProfile(source, id, data)
		if err != nil {
			return nil, err
		}
		out.Profile, out.Description, out.Capabilities, out.Card, out.Audience = prof, prof.Description, prof.Capabilities, prof.Card, prof.Audience
	} else {
		c, err := r.a2a.ParseCard(source, kind, data)
		if err != nil {
			return nil, err
		}
		out.Parsed, out.Name, out.Version, out.Description = c, c.Name, c.Version, c.Description
		out.MaxClasses, out.Capabilities, out.Interface = c.XDome.MaxClasses, c.XDome.Capabilities, c.SupportedInterfaces[0].URL
		for _, s := range c.Skills {
			out.Skills = append(out.Skills, s.ID)
		}
	}
	if out.Digest, err = canonical.DigestJSON(data); err != nil {
		return nil, &errkind.InputError{Source: source, Problem: err.Error()}
	}
	return out, nil
}

// A2AList reads every card and A2A profile at a pinned commit, runtime
// cards first, then tool cards, then profiles, each sorted by id. Every
// entry is validated; the first invalid one is the error. A profile must
// name a card that exists.
func (r *Registry) A2AList(p Pin) ([]*A2AEntry, error) {
	var out []*A2AEntry
	cards := map[string]bool{}
	for _, kind := range []string{A2ARuntime, A2ATool, A2AProfile} {
		ids, err := r.A2AIDs(p, kind)
		if err != nil {
			return nil, err
		}
		for _, id := range ids {
			e, err := r.A2AAt(kind, id, p)
			if err != nil {
				return nil, err
			}
			if kind == A2AProfile && !cards[e.Card] {
				return nil, &errkind.InputError{Source: e.Path + "@" + p.Commit.Short(), Field: "/card", Problem: fmt.Sprintf("card %s does not exist at this commit", e.Card), Hint: "name a card under a2a/cards/"}
			}
			cards[kind+"/"+id] = true
			out = append(out, e)
		}
	}
	return out, nil
}
