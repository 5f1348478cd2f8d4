package agentlock

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/dome-registry/dome/pkg/canonical"
	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/dome-registry/dome/pkg/schemaval"
)

// LockfileVersion is the version of the agents.lock format.
const LockfileVersion = 1

// HashFormula is the agent resolver spec's per-selection hash, over the
// UTF-8 bytes of the string, written "sha256:<64 lowercase hex>". Scopes are
// sorted in byte order. The schemas forbid @ and | in ids, versions and
// endpoints and , and | in scopes, so the string is unambiguous.
const HashFormula = `sha256(id + "@" + version + "|" + endpoint + "|" + sorted_scopes.join(","))`

// LockAgent names the agent a lock or resolution is for.
type LockAgent struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	// FrontmatterDigest is Agent.Digest: the lock is stale when the
	// constraints or requirements change, not when the prose does.
	FrontmatterDigest string `json:"frontmatterDigest"`
}

// Selection is the server pinned for one requirement.
type Selection struct {
	Category  string   `json:"category"`
	ID        string   `json:"id"`
	Version   string   `json:"version"`
	Endpoint  string   `json:"endpoint"`
	Scopes    []string `json:"scopes"`
	Hash      string   `json:"hash"`
	Signed    bool     `json:"signed"`
	Publisher string   `json:"publisher"`
}

// Lock is agents.lock.
type Lock struct {
	LockfileVersion  int         `json:"lockfileVersion"`
	Canonicalization string      `json:"canonicalization"`
	HashFormula      string      `json:"hashFormula"`
	Agent            LockAgent   `json:"agent"`
	Index            Origin      `json:"index"`
	Selections       []Selection `json:"selections"`
}

// SelectionHash computes HashFormula.
func SelectionHash(id, version, endpoint string, scopes []string) string {
	s := sortedCopy(scopes)
	sum := sha256.Sum256([]byte(id + "@" + version + "|" + endpoint + "|" + strings.Join(s, ",")))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// Lock returns the lock of a successful resolution: one selection per
// requirement, sorted by category, scopes sorted.
func (r *Resolution) Lock() (*Lock, error) {
	if !r.OK() {
		return nil, fmt.Errorf("resolution of %s %s failed: no lock", r.Agent.Name, r.Agent.Version)
	}
	l := &Lock{LockfileVersion: LockfileVersion, Canonicalization: canonical.Name, HashFormula: HashFormula, Agent: r.Agent, Index: r.Index, Selections: []Selection{}}
	for _, o := range r.Requirements {
		s := o.Selected
		scopes := sortedCopy(o.Permissions)
		l.Selections = append(l.Selections, Selection{
			Category: o.Category, ID: s.ID, Version: s.Version, Endpoint: s.Endpoint, Scopes: scopes,
			Hash: SelectionHash(s.ID, s.Version, s.Endpoint, scopes), Signed: s.Signed, Publisher: s.Publisher,
		})
	}
	sort.Slice(l.Selections, func(i, j int) bool { return l.Selections[i].Category < l.Selections[j].Category })
	return l, nil
}

// Marshal renders the lock: the RFC 8785 form (keys sorted, one way to
// write each value), indented by two spaces, with a final newline.
func (l *Lock) Marshal() ([]byte, error) { return indented(l) }

// ResolutionVersion is the version of the agents.resolution.json format.
const ResolutionVersion = 1

// Explain is agents.resolution.json: the resolution with its status.
type Explain struct {
	ResolutionVersion int    `json:"resolutionVersion"`
	Status            string `json:"status"` // "resolved" or "unsatisfiable"
	TieBreak          string `json:"tieBreak"`
	*Resolution
}

// Explain returns the explain document of the resolution.
func (r *Resolution) Explain() *Explain {
	st := "resolved"
	if !r.OK() {
		st = "unsatisfiable"
	}
	return &Explain{ResolutionVersion: ResolutionVersion, Status: st, TieBreak: TieBreak, Resolution: r}
}

// Marshal renders the explain document like Lock.Marshal.
func (e *Explain) Marshal() ([]byte, error) { return indented(e) }

func indented(v any) ([]byte, error) {
	b, err := canonical.Marshal(v)
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	if err := json.Indent(&out, b, "", "  "); err != nil {
		return nil, err
	}
	out.WriteByte('\n')
	return out.Bytes(), nil
}

// ParseLock reads an agents.lock, validated against schemas/agents_lock.schema.json.
func ParseLock(file string, data []byte) (*Lock, error) {
	doc, pos, err := schemaval.DecodeLocated(data)
	if err != nil {
		return nil, invalid(file, []Diagnostic{schemaval.SyntaxDiagnostic(file, err, "regenerate it with dome agent resolve")})
	}
	if diags := violations(file, SchemaLock, doc, pos, func(string, string) string { return "regenerate it with dome agent resolve" }); len(diags) > 0 {
		return nil, invalid(file, diags)
	}
	var l Lock
	if err := decodeInto(doc, &l); err != nil {
		return nil, &errkind.InputError{Source: file, Problem: err.Error(), Err: err}
	}
	return &l, nil
}

// Changes lists, one line each, how the lock want differs from have: the
// agent, its frontmatter, the index and each selection. It is empty when
// they agree on everything dome writes.
func Changes(have, want *Lock) []string {
	var out []string
	if have.LockfileVersion != want.LockfileVersion {
		out = append(out, fmt.Sprintf("lockfileVersion: %d -> %d", have.LockfileVersion, want.LockfileVersion))
	}
	if have.Canonicalization != want.Canonicalization || have.HashFormula != want.HashFormula {
		out = append(out, "canonicalization or hash formula changed")
	}
	if have.Agent.Name != want.Agent.Name || have.Agent.Version != want.Agent.Version {
		out = append(out, fmt.Sprintf("agent: %s %s -> %s %s", have.Agent.Name, have.Agent.Version, want.Agent.Name, want.Agent.Version))
	}
	if have.Agent.FrontmatterDigest != want.Agent.FrontmatterDigest {
		out = append(out, fmt.Sprintf("agents.md frontmatter changed: %s -> %s", have.Agent.FrontmatterDigest, want.Agent.FrontmatterDigest))
	}
	if have.Index.Path != want.Index.Path {
		out = append(out, fmt.Sprintf("index path: %q -> %q", have.Index.Path, want.Index.Path))
	}
	if have.Index.Commit != want.Index.Commit {
		out = append(out, fmt.Sprintf("index commit: %s -> %s", orNone(have.Index.Commit), orNone(want.Index.Commit)))
	}
	if have.Index.Digest != want.Index.Digest {
		out = append(out, fmt.Sprintf("index digest: %s -> %s", have.Index.Digest, want.Index.Digest))
	}
	hs, ws := map[string]Selection{}, map[string]Selection{}
	var cats []string
	for _, s := range have.Selections {
		hs[s.Category] = s
		cats = append(cats, s.Category)
	}
	for _, s := range want.Selections {
		ws[s.Category] = s
		if _, ok := hs[s.Category]; !ok {
			cats = append(cats, s.Category)
		}
	}
	sort.Strings(cats)
	for _, c := range cats {
		h, inH := hs[c]
		w, inW := ws[c]
		switch {
		case !inW:
			out = append(out, fmt.Sprintf("%s: %s@%s is no longer required", c, h.ID, h.Version))
		case !inH:
			out = append(out, fmt.Sprintf("%s: new requirement, %s@%s", c, w.ID, w.Version))
		case h.ID != w.ID || h.Version != w.Version:
			out = append(out, fmt.Sprintf("%s: %s@%s -> %s@%s", c, h.ID, h.Version, w.ID, w.Version))
		case h.Endpoint != w.Endpoint:
			out = append(out, fmt.Sprintf("%s: endpoint %s -> %s", c, h.Endpoint, w.Endpoint))
		case strings.Join(h.Scopes, ",") != strings.Join(w.Scopes, ","):
			out = append(out, fmt.Sprintf("%s: scopes %s -> %s", c, strings.Join(h.Scopes, ","), strings.Join(w.Scopes, ",")))
		case h.Hash != w.Hash:
			out = append(out, fmt.Sprintf("%s: hash %s -> %s", c, h.Hash, w.Hash))
		case h.Signed != w.Signed || h.Publisher != w.Publisher:
			out = append(out, fmt.Sprintf("%s: trust changed (signed %t, publisher %s)", c, w.Signed, w.Publisher))
		}
	}
	return out
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}
