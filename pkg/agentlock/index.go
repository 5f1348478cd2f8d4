package agentlock

import (
	"fmt"
	"sort"
	"strings"

	"github.com/dome-registry/dome/pkg/canonical"
	"github.com/dome-registry/dome/pkg/schemaval"
)

// Index is a parsed MCP server index.
type Index struct {
	Servers []Server `json:"servers"`
	// Digest is the sha256 of the RFC 8785 form of the index with servers
	// sorted by id then version and categories, scopes and actions sorted:
	// reordering the index does not change it, editing a value does.
	Digest string `json:"-"`
}

// Server is one MCP server of the index.
type Server struct {
	ID          string        `json:"id"`
	Version     string        `json:"version"`
	Endpoint    string        `json:"endpoint"`
	Title       string        `json:"title,omitempty"`
	Description string        `json:"description,omitempty"`
	Categories  []string      `json:"categories"`
	Scopes      []string      `json:"scopes"`
	Data        ServerData    `json:"data"`
	Trust       ServerTrust   `json:"trust"`
	Policy      *ServerPolicy `json:"policy,omitempty"`
	Actions     []string      `json:"actions,omitempty"`
}

// ServerData says where a server keeps data and how sensitive it may be.
type ServerData struct {
	Residency      string `json:"residency"`
	MaxSensitivity string `json:"maxSensitivity"`
}

// ServerTrust says whether the index entry is signed and by whom.
type ServerTrust struct {
	Signed    bool   `json:"signed"`
	Publisher string `json:"publisher"`
}

// ServerPolicy holds the server's declared limits.
type ServerPolicy struct {
	RateLimitPerMin *float64 `json:"rateLimitPerMin,omitempty"`
}

// Key is the server's identity, id@version.
func (s *Server) Key() string { return s.ID + "@" + s.Version }

// ParseIndex reads an MCP server index (file names it in messages), either
// {"servers": [...]} or the list of servers itself: the JSON is validated
// against schemas/mcp_index.schema.json, and every problem is reported with
// its line, column and field in an *InvalidError; id@version must be unique
// and every version exact (MovingVersion: a lock pins what it names).
func ParseIndex(file string, data []byte) (*Index, error) {
	doc, pos, err := schemaval.DecodeLocated(data)
	if err != nil {
		return nil, invalid(file, []Diagnostic{schemaval.SyntaxDiagnostic(file, err, "write valid JSON (no comments, no trailing commas, unique keys)")})
	}
	if list, ok := doc.([]any); ok {
		// The index written per server, as a bare list: the same index as
		// {"servers": [...]} (same diagnostics, same digest).
		doc = map[string]any{"servers": list}
		wrapped := make(map[string]schemaval.Position, len(pos)+1)
		for ptr, p := range pos {
			wrapped["/servers"+ptr] = p
		}
		wrapped[""] = pos[""]
		pos = wrapped
	}
	diags := violations(file, SchemaIndex, doc, pos, indexHint)
	if len(diags) > 0 {
		return nil, invalid(file, diags)
	}
	var idx Index
	if err := decodeInto(doc, &idx); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	first := map[string]int{}
	for i, s := range idx.Servers {
		if why := MovingVersion(s.Version); why != "" {
			p := pos[fmt.Sprintf("/servers/%d/version", i)]
			diags = append(diags, Diagnostic{File: file, Line: p.Line, Column: p.Column, Field: fmt.Sprintf("servers[%d].version", i),
				Problem: fmt.Sprintf("%q is a moving version (%s): a lock pins a server to one exact version", s.Version, why),
				Hint:    "write the exact version the server runs now, e.g. 1.4.2"})
			continue
		}
		if j, dup := first[s.Key()]; dup {
			p := pos[fmt.Sprintf("/servers/%d", i)]
			diags = append(diags, Diagnostic{File: file, Line: p.Line, Column: p.Column, Field: fmt.Sprintf("servers[%d]", i),
				Problem: fmt.Sprintf("duplicate server %s (first at servers[%d], line %d)", s.Key(), j, pos[fmt.Sprintf("/servers/%d", j)].Line),
				Hint:    "an index lists each id@version once; bump the version or remove one entry"})
			continue
		}
		first[s.Key()] = i
	}
	if len(diags) > 0 {
		return nil, invalid(file, diags)
	}
	if idx.Digest, err = indexDigest(doc); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return &idx, nil
}

// indexDigest normalizes a validated index document in place and digests
// its canonical bytes.
func indexDigest(doc any) (string, error) {
	m := doc.(map[string]any)
	servers, _ := m["servers"].([]any)
	for _, s := range servers {
		sm := s.(map[string]any)
		for _, k := range []string{"categories", "scopes", "actions"} {
			if a, ok := sm[k].([]any); ok {
				sort.Slice(a, func(i, j int) bool { return a[i].(string) < a[j].(string) })
			}
		}
	}
	sort.Slice(servers, func(i, j int) bool {
		a, b := servers[i].(map[string]any), servers[j].(map[string]any)
		if a["id"] != b["id"] {
			return a["id"].(string) < b["id"].(string)
		}
		return a["version"].(string) < b["version"].(string)
	})
	b, err := canonical.Marshal(doc)
	if err != nil {
		return "", err
	}
	return canonical.Digest(b), nil
}

// indexHint returns advice for a violation of mcp_index.schema.json.
func indexHint(field, problem string) string {
	f := indexRE().ReplaceAllString(field, "[]")
	switch {
	case strings.HasPrefix(problem, "missing ") && f == "servers[]":
		return "each server needs id, version, endpoint, categories, scopes, data {residency, maxSensitivity} and trust {signed, publisher}"
	case strings.HasPrefix(problem, "missing ") && f == "":
		return `the index is {"servers": [...]} or the list of servers itself: [...]`
	case strings.HasPrefix(problem, "unknown field"):
		var known []string
		switch {
		case strings.HasPrefix(f, "servers[].data."):
			known = []string{"residency", "maxSensitivity"}
		case strings.HasPrefix(f, "servers[].trust."):
			known = []string{"signed", "publisher"}
		case strings.HasPrefix(f, "servers[].policy."):
			known = []string{"rateLimitPerMin"}
		case strings.HasPrefix(f, "servers[]."):
			known = []string{"id", "version", "endpoint", "title", "description", "categories", "scopes", "data", "trust", "policy", "actions"}
		default:
			known = []string{"servers", "description", "$schema"}
		}
		return suggest(problem, known) + "known fields here: " + strings.Join(known, ", ") + "; prefix your own with x-"
	case strings.Contains(problem, "does not match pattern"):
		return "no whitespace, commas, | or @ where they would make the selection hash ambiguous"
	case strings.HasPrefix(problem, "uniqueItems"):
		return "remove the repeated entry"
	}
	return ""
}
