package agentlock

import (
	"fmt"
	"sort"
	"strings"

	"github.com/dome-registry/dome/internal/lazyre"
	"github.com/dome-registry/dome/pkg/schemaval"
)

// Agent is the parsed frontmatter of agents.md.
type Agent struct {
	Name        string      `json:"name"`
	Version     string      `json:"version"`
	Requires    Requires    `json:"requires"`
	Constraints Constraints `json:"constraints"`
	Trust       Trust       `json:"trust"`
	// Lines of requires.mcp[i], for messages; not part of the agent's identity.
	lines map[string]int
}

// Requires lists what the agent needs.
type Requires struct {
	MCP []Requirement `json:"mcp"`
}

// Requirement is one capability category and the scopes needed in it.
type Requirement struct {
	Category    string   `json:"category"`
	Permissions []string `json:"permissions"`
}

// Constraints are hard filters on servers.
type Constraints struct {
	Data    DataConstraints   `json:"data"`
	Actions ActionConstraints `json:"actions"`
}

// DataConstraints say how sensitive the agent's data is and where it may live.
type DataConstraints struct {
	Sensitivity string `json:"sensitivity,omitempty"`
	Residency   string `json:"residency,omitempty"`
}

// ActionConstraints list action labels the agent must not have.
type ActionConstraints struct {
	Forbid []string `json:"forbid,omitempty"`
}

// Trust says which servers the agent trusts.
type Trust struct {
	RequireSigned bool `json:"requireSigned,omitempty"`
}

// Line returns the line of the requirement for category (0 if unknown).
func (a *Agent) Line(category string) int { return a.lines[category] }

// ParseAgents reads agents.md (file names it in messages): the YAML
// frontmatter is validated against schemas/agents.schema.json, and every
// problem is reported with its line, column and field in an *InvalidError.
// Categories must be unique across requires.mcp. The Markdown body is
// not read.
func ParseAgents(file string, data []byte) (*Agent, error) {
	fm, d := splitFrontmatter(file, data)
	if d != nil {
		return nil, invalid(file, []Diagnostic{*d})
	}
	doc, pos, d := yamlValue(file, fm)
	if d != nil {
		return nil, invalid(file, []Diagnostic{*d})
	}
	diags := violations(file, SchemaAgents, doc, pos, agentsHint)
	diags = append(diags, nearMisses(file, doc, pos)...)
	if len(diags) > 0 {
		return nil, invalid(file, diags)
	}
	// Other top-level keys are ignored; drop them so that encoding/json,
	// which matches names without regard to case, cannot read them.
	top := doc.(map[string]any)
	for k := range top {
		if !isTopLevelField(k) {
			delete(top, k)
		}
	}
	var a Agent
	if err := decodeInto(doc, &a); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	a.lines = map[string]int{}
	for i, r := range a.Requires.MCP {
		ptr := fmt.Sprintf("/requires/mcp/%d", i)
		if first, dup := a.lines[r.Category]; dup {
			p := pos[ptr+"/category"]
			diags = append(diags, Diagnostic{File: file, Line: p.Line, Column: p.Column, Field: fmt.Sprintf("requires.mcp[%d].category", i),
				Problem: fmt.Sprintf("category %q is already required on line %d", r.Category, first),
				Hint:    "merge the two requirements into one and list all the permissions there"})
			continue
		}
		a.lines[r.Category] = pos[ptr].Line
	}
	if len(diags) > 0 {
		return nil, invalid(file, diags)
	}
	return &a, nil
}

func isTopLevelField(k string) bool {
	switch k {
	case "name", "version", "requires", "constraints", "trust":
		return true
	}
	return false
}

// nearMisses reports top-level keys that look like a field dome reads but
// are not spelt like it (Constraints, contraints): ignoring them, as other
// unknown keys are, would silently drop a requirement or a constraint.
func nearMisses(file string, doc any, pos map[string]schemaval.Position) []Diagnostic {
	top, ok := doc.(map[string]any)
	if !ok {
		return nil
	}
	known := []string{"name", "version", "requires", "constraints", "trust"}
	var out []Diagnostic
	for k := range top {
		if isTopLevelField(k) {
			continue
		}
		if m := nearMiss(k, known); m != "" {
			p := pos["/"+strings.ReplaceAll(strings.ReplaceAll(k, "~", "~0"), "/", "~1")+keySuffix]
			out = append(out, Diagnostic{File: file, Line: p.Line, Column: p.Column, Field: fieldPath([]string{k}),
				Problem: fmt.Sprintf("unknown field %q looks like %q, and would be ignored", k, m),
				Hint:    "did you mean " + m + "? (other top-level keys are ignored; rename this one if it is yours)"})
		}
	}
	return out
}

// nearMiss returns the known name that k looks like a misspelling of:
// equal but for case, one edit away (two for names longer than five
// letters), or sharing a prefix of six letters or more (requirements).
func nearMiss(k string, known []string) string {
	lk := strings.ToLower(k)
	for _, n := range known {
		ln := strings.ToLower(n)
		limit := 1
		if len(ln) > 5 {
			limit = 2
		}
		common := 0
		for common < len(lk) && common < len(ln) && lk[common] == ln[common] {
			common++
		}
		if editDistance(lk, ln) <= limit || common >= 6 {
			return n
		}
	}
	return ""
}

// normalized returns the agent with set-like lists sorted, the form its
// digest is taken over: reordering requirements or permissions in
// agents.md does not change the lock.
func (a *Agent) normalized() Agent {
	n := Agent{Name: a.Name, Version: a.Version, Constraints: a.Constraints, Trust: a.Trust}
	for _, r := range a.Requires.MCP {
		n.Requires.MCP = append(n.Requires.MCP, Requirement{Category: r.Category, Permissions: sortedCopy(r.Permissions)})
	}
	sort.Slice(n.Requires.MCP, func(i, j int) bool { return n.Requires.MCP[i].Category < n.Requires.MCP[j].Category })
	n.Constraints.Actions.Forbid = sortedCopy(a.Constraints.Actions.Forbid)
	return n
}

func sortedCopy(s []string) []string {
	if s == nil {
		return nil
	}
	out := append([]string(nil), s...)
	sort.Strings(out)
	return out
}

var indexRE = lazyre.New(`\[\d+\]`)

// knownFields lists the keys each strict object of the frontmatter accepts.
func knownFields(parent string) string {
	switch parent {
	case "requires":
		return "mcp"
	case "requires.mcp[]":
		return "category, permissions"
	case "constraints":
		return "data, actions"
	case "constraints.data":
		return "sensitivity, residency"
	case "constraints.actions":
		return "forbid"
	case "trust":
		return "requireSigned"
	}
	return ""
}

// agentsHint returns advice for a violation of agents.schema.json.
func agentsHint(field, problem string) string {
	f := indexRE().ReplaceAllString(field, "[]")
	parent := f
	if i := strings.LastIndexAny(f, "."); i >= 0 {
		parent = f[:i]
	} else {
		parent = ""
	}
	switch {
	case strings.HasPrefix(problem, "missing "):
		switch {
		case f == "" && strings.Contains(problem, "'name'"):
			return "add name: <agent name> to the frontmatter"
		case f == "" && strings.Contains(problem, "'version'"):
			return `add version: "0.1.0" (quoted, so YAML keeps it a string)`
		case f == "" && strings.Contains(problem, "'requires'"):
			return "add requires: with mcp: a list of {category, permissions}"
		case f == "requires":
			return "add mcp: a list of {category, permissions} under requires"
		case f == "requires.mcp[]":
			return "each requirement needs category: <name> and permissions: [<scope>, ...]"
		}
	case strings.HasPrefix(problem, "unknown field"):
		if k := knownFields(parent); k != "" {
			return suggest(problem, strings.Split(k, ", ")) + "known fields here: " + k
		}
	case strings.HasPrefix(problem, "got number") || strings.HasPrefix(problem, "got integer") || strings.HasPrefix(problem, "got boolean") || strings.HasPrefix(problem, "got null"):
		if strings.HasSuffix(problem, "want string") {
			return `quote the value so YAML reads it as a string: "..."`
		}
	case strings.HasPrefix(problem, "got string, want array"):
		return "write a list: [a, b] or one '- item' per line"
	case strings.HasPrefix(problem, "minItems") && f == "requires.mcp":
		return "list at least one requirement: an agent that needs no MCP server has nothing to lock"
	case strings.HasPrefix(problem, "minItems") && strings.HasSuffix(f, ".permissions"):
		return "list the scopes the agent needs in this category, e.g. [reports.read]"
	case strings.HasPrefix(problem, "uniqueItems"):
		return "remove the repeated entry"
	case strings.Contains(problem, "does not match pattern"):
		return "no whitespace, commas, | or @ (they separate fields in the lock's selection hash)"
	}
	return ""
}

// suggest returns "did you mean X? " when the unknown field named in problem
// is within two edits of a known one.
func suggest(problem string, known []string) string {
	_, name, ok := strings.Cut(problem, `"`)
	if !ok {
		return ""
	}
	name = strings.TrimSuffix(name, `"`)
	best, bestD := "", 3
	for _, k := range known {
		if d := editDistance(strings.ToLower(name), strings.ToLower(k)); d < bestD {
			best, bestD = k, d
		}
	}
	if best == "" {
		return ""
	}
	return "did you mean " + best + "? "
}

// editDistance is the Levenshtein distance between a and b.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}
