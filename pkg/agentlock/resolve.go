package agentlock

import (
	"fmt"
	"sort"
	"strings"

	"github.com/dome-registry/dome/pkg/canonical"
)

// Reason codes of a rejected candidate. The first five are the agent
// resolver spec's; ACTION_FORBIDDEN is dome's, for constraints.actions.forbid.
const (
	MissingCategory     = "MISSING_CATEGORY"
	MissingScope        = "MISSING_SCOPE"
	ResidencyMismatch   = "RESIDENCY_MISMATCH"
	SensitivityExceeded = "SENSITIVITY_EXCEEDED"
	UnsignedNotAllowed  = "UNSIGNED_NOT_ALLOWED"
	ActionForbidden     = "ACTION_FORBIDDEN"
)

// Sensitivities returns the sensitivity levels in increasing order.
func Sensitivities() []string {
	return []string{"public", "internal", "confidential", "pii.low", "pii.moderate", "pii.high"}
}

// Residencies returns the residency values.
func Residencies() []string { return []string{"any", "us-only", "eu-only"} }

func sensitivityRank(s string) int {
	for i, x := range Sensitivities() {
		if x == s {
			return i
		}
	}
	return -1
}

// residencyCompatible is the spec's table: us-only rejects eu-only, eu-only
// rejects us-only, any accepts all. A server whose residency is any is
// accepted by every agent.
func residencyCompatible(agent, server string) bool {
	return !(agent == "us-only" && server == "eu-only" || agent == "eu-only" && server == "us-only")
}

// Origin says where the index came from; it is recorded in the lock.
type Origin struct {
	// Path is the registry path of the index when it was read from git
	// (registry/mcp/index.json); empty for a local file, whose path depends
	// on where dome runs.
	Path string `json:"path,omitempty"`
	// Commit is the full SHA the index was read at (git only).
	Commit string `json:"commit,omitempty"`
	// Digest is Index.Digest.
	Digest string `json:"digest"`
}

// Effective are the exact constraint values a resolution used, defaults
// filled in and named in Defaulted.
type Effective struct {
	Data      DataConstraints   `json:"data"`
	Actions   ActionConstraints `json:"actions"`
	Trust     EffectiveTrust    `json:"trust"`
	Defaulted []string          `json:"defaulted,omitempty"`
}

// EffectiveTrust is Trust with requireSigned always written.
type EffectiveTrust struct {
	RequireSigned bool `json:"requireSigned"`
}

// Candidate is a server as a resolution reports it.
type Candidate struct {
	ID        string `json:"id"`
	Version   string `json:"version"`
	Endpoint  string `json:"endpoint"`
	Signed    bool   `json:"signed"`
	Publisher string `json:"publisher"`
}

// Reason is why a server cannot serve a requirement.
type Reason struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	// The values compared: what the agent requires and what the server has.
	Required string   `json:"required,omitempty"`
	Server   string   `json:"server,omitempty"`
	Missing  []string `json:"missing,omitempty"`
	Actions  []string `json:"actions,omitempty"`
}

// Rejected is a server that cannot serve a requirement, with every reason.
type Rejected struct {
	Candidate
	Reasons []Reason `json:"reasons"`
}

// Outcome is the resolution of one requirement.
type Outcome struct {
	Category    string   `json:"category"`
	Permissions []string `json:"permissions"`
	// Selected is the first eligible server in tie-break order; nil when no
	// server is eligible.
	Selected *Candidate `json:"selected"`
	// Alternatives are the other eligible servers, in tie-break order.
	Alternatives []Candidate `json:"alternatives"`
	// Rejected are the other servers, by id then version.
	Rejected []Rejected `json:"rejected"`
}

// Resolution is the result of resolving an agent against an index.
type Resolution struct {
	Agent        LockAgent `json:"agent"`
	Index        Origin    `json:"index"`
	Constraints  Effective `json:"constraints"`
	Requirements []Outcome `json:"requirements"`
}

// OK reports whether every requirement has a server.
func (r *Resolution) OK() bool { return len(r.Unsatisfied()) == 0 }

// Unsatisfied returns the requirements without a server.
func (r *Resolution) Unsatisfied() []Outcome {
	var out []Outcome
	for _, o := range r.Requirements {
		if o.Selected == nil {
			out = append(out, o)
		}
	}
	return out
}

// TieBreak describes the selection order among eligible servers.
const TieBreak = "signed servers first, then the smallest id (byte order), then the smallest version (SemVer precedence when both are SemVer, SemVer before other versions, otherwise byte order)"

// Resolve selects, for each requirement of a (in category order), the
// servers of idx that have the category and every permission, drops those
// that break a constraint, and picks the first by TieBreak. Every other
// server is listed with all its reasons: a server without the category gets
// MISSING_CATEGORY only; a server with it gets every reason that applies.
// Resolve is pure: the same inputs give the same Resolution.
func Resolve(a *Agent, idx *Index, origin Origin) (*Resolution, error) {
	digest, err := a.Digest()
	if err != nil {
		return nil, err
	}
	eff := effective(a)
	res := &Resolution{
		Agent:       LockAgent{Name: a.Name, Version: a.Version, FrontmatterDigest: digest},
		Index:       origin,
		Constraints: eff,
	}
	servers := append([]Server(nil), idx.Servers...)
	sort.SliceStable(servers, func(i, j int) bool { return lessTieBreak(&servers[i], &servers[j]) })
	n := a.normalized()
	for _, req := range n.Requires.MCP {
		o := Outcome{Category: req.Category, Permissions: req.Permissions, Alternatives: []Candidate{}, Rejected: []Rejected{}}
		for i := range servers {
			s := &servers[i]
			reasons := check(req, eff, s)
			if len(reasons) > 0 {
				o.Rejected = append(o.Rejected, Rejected{Candidate: candidate(s), Reasons: reasons})
				continue
			}
			if o.Selected == nil {
				c := candidate(s)
				o.Selected = &c
				continue
			}
			o.Alternatives = append(o.Alternatives, candidate(s))
		}
		sort.SliceStable(o.Rejected, func(i, j int) bool {
			x, y := o.Rejected[i], o.Rejected[j]
			if x.ID != y.ID {
				return x.ID < y.ID
			}
			return CompareVersions(x.Version, y.Version) < 0
		})
		res.Requirements = append(res.Requirements, o)
	}
	return res, nil
}

func lessTieBreak(a, b *Server) bool {
	if a.Trust.Signed != b.Trust.Signed {
		return a.Trust.Signed
	}
	if a.ID != b.ID {
		return a.ID < b.ID
	}
	return CompareVersions(a.Version, b.Version) < 0
}

func candidate(s *Server) Candidate {
	return Candidate{ID: s.ID, Version: s.Version, Endpoint: s.Endpoint, Signed: s.Trust.Signed, Publisher: s.Trust.Publisher}
}

func effective(a *Agent) Effective {
	e := Effective{Data: a.Constraints.Data, Trust: EffectiveTrust{RequireSigned: a.Trust.RequireSigned}, Actions: ActionConstraints{Forbid: sortedCopy(a.Constraints.Actions.Forbid)}}
	if e.Data.Residency == "" {
		e.Data.Residency = "any"
		e.Defaulted = append(e.Defaulted, "constraints.data.residency")
	}
	if e.Data.Sensitivity == "" {
		e.Data.Sensitivity = "public"
		e.Defaulted = append(e.Defaulted, "constraints.data.sensitivity")
	}
	if e.Actions.Forbid == nil {
		e.Actions.Forbid = []string{}
	}
	return e
}

// check returns every reason s cannot serve req under eff (none: eligible).
func check(req Requirement, eff Effective, s *Server) []Reason {
	if !contains(s.Categories, req.Category) {
		return []Reason{{Code: MissingCategory, Required: req.Category,
			Message: fmt.Sprintf("category %s is not among the server's categories (%s)", req.Category, strings.Join(sortedCopy(s.Categories), ", "))}}
	}
	var out []Reason
	if missing := minus(req.Permissions, s.Scopes); len(missing) > 0 {
		out = append(out, Reason{Code: MissingScope, Missing: missing,
			Message: fmt.Sprintf("the server does not support scope %s", strings.Join(missing, ", "))})
	}
	if !residencyCompatible(eff.Data.Residency, s.Data.Residency) {
		out = append(out, Reason{Code: ResidencyMismatch, Required: eff.Data.Residency, Server: s.Data.Residency,
			Message: fmt.Sprintf("the agent requires residency %s; the server is %s", eff.Data.Residency, s.Data.Residency)})
	}
	if sensitivityRank(eff.Data.Sensitivity) > sensitivityRank(s.Data.MaxSensitivity) {
		out = append(out, Reason{Code: SensitivityExceeded, Required: eff.Data.Sensitivity, Server: s.Data.MaxSensitivity,
			Message: fmt.Sprintf("the agent handles %s data; the server accepts at most %s", eff.Data.Sensitivity, s.Data.MaxSensitivity)})
	}
	if eff.Trust.RequireSigned && !s.Trust.Signed {
		out = append(out, Reason{Code: UnsignedNotAllowed, Required: "signed", Server: "unsigned",
			Message: "the agent sets trust.requireSigned; the server's index entry is not signed"})
	}
	if forbidden := intersect(s.Actions, eff.Actions.Forbid); len(forbidden) > 0 {
		out = append(out, Reason{Code: ActionForbidden, Actions: forbidden,
			Message: fmt.Sprintf("the server declares forbidden action %s", strings.Join(forbidden, ", "))})
	}
	return out
}

func contains(s []string, x string) bool {
	for _, y := range s {
		if y == x {
			return true
		}
	}
	return false
}

// minus returns the elements of a (sorted) that are not in b.
func minus(a, b []string) []string {
	var out []string
	for _, x := range a {
		if !contains(b, x) {
			out = append(out, x)
		}
	}
	sort.Strings(out)
	return out
}

// intersect returns the elements of a that are in b, sorted.
func intersect(a, b []string) []string {
	var out []string
	for _, x := range a {
		if contains(b, x) {
			out = append(out, x)
		}
	}
	sort.Strings(out)
	return out
}

// Digest is the sha256 of the RFC 8785 form of the normalized frontmatter
// (the fields dome reads, lists sorted): prose, key order, unknown top-level
// keys and list order in agents.md do not change it.
func (a *Agent) Digest() (string, error) {
	b, err := canonical.Marshal(a.normalized())
	if err != nil {
		return "", err
	}
	return canonical.Digest(b), nil
}
