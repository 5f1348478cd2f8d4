// Package agentlock resolves an agent's declared needs against an index of
// MCP servers, deterministically and without model calls: it reads the YAML
// frontmatter of agents.md (name, version, requires.mcp, constraints, trust)
// and an mcp.index.json, validates both against JSON Schemas (embedded, see
// schemas/) with errors that name the file, line, column and field, selects
// per requirement the servers that have the category and every scope, drops
// those that break a hard constraint (residency, sensitivity, signing,
// forbidden actions) with a reason code each, breaks ties by signed first,
// then the smallest id, then the smallest version (SemVer precedence where
// both versions are SemVer), and renders agents.lock and the explain
// document agents.resolution.json as sorted, indented JSON whose key order
// and content are those of RFC 8785 (https://www.rfc-editor.org/rfc/rfc8785).
// Each selection carries the hash of the agent resolver spec:
// sha256(id + "@" + version + "|" + endpoint + "|" + sorted_scopes.join(",")).
// It reads no files and no clock: callers pass bytes and say where they came
// from (a file, or a registry path at a pinned commit). It never ranks by
// anything but these rules, never runs a server, and never writes a lock for
// a resolution that failed.
package agentlock
