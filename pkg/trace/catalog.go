package trace

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/dome-registry/dome/pkg/schemaval"
)

// CatalogPath is where a repository keeps its requirements catalogue.
const CatalogPath = "doc/graph/reviewpack_requirements.json"

// SchemaVersion is the catalogue format this package reads.
const SchemaVersion = "dome.requirements/v1"

// MaxCatalogBytes bounds what ParseCatalog reads.
const MaxCatalogBytes = 16 << 20

// Levels and statuses of a requirement, and kinds of check.
const (
	LevelRequired = "required"
	LevelOptional = "optional"

	StatusImplemented = "implemented"
	StatusPartial     = "partial"
	StatusPlanned     = "planned"

	KindSchemaGate      = "schema_gate"
	KindConformanceTest = "conformance_test"
	KindReplayTest      = "replay_test"
)

//go:embed schemas/requirements.schema.json
var schemaJSON []byte

// SchemaJSON returns the JSON Schema of the catalogue.
func SchemaJSON() []byte { return append([]byte(nil), schemaJSON...) }

var compileSchema = sync.OnceValue(func() *schemaval.Schema {
	return schemaval.MustCompile("reviewpack_requirements.schema.json", schemaJSON)
})

// Catalog is a parsed requirements catalogue.
type Catalog struct {
	SchemaVersion   string        `json:"schema_version"`
	Description     string        `json:"description,omitempty"`
	Seeds           []Seed        `json:"seeds"`
	ScriptDirs      []ScriptDir   `json:"script_dirs"`
	ActiveDocs      []string      `json:"active_docs"`
	DeprecatedPaths []Deprecated  `json:"deprecated_paths"`
	Requirements    []Requirement `json:"requirements"`

	source string
	pos    map[string]schemaval.Position
	byID   map[string]int
}

// Seed is a requirement document the catalogue's entries come from, named
// by a stable short id.
type Seed struct {
	ID     string `json:"id"`
	Title  string `json:"title"`
	File   string `json:"file"`
	OwnIDs string `json:"own_ids,omitempty"`
	Cover  string `json:"cover,omitempty"`
}

// ScriptDir is a folder of testscript stories run by one Go test, each
// story as its subtest Test/<file name without .txtar>.
type ScriptDir struct {
	Dir     string `json:"dir"`
	Package string `json:"package"`
	Test    string `json:"test"`
}

// Deprecated is a path that must no longer appear in the pages users read.
type Deprecated struct {
	Path       string `json:"path"`
	UseInstead string `json:"use_instead"`
	Why        string `json:"why,omitempty"`
}

// Requirement is one catalogue entry.
type Requirement struct {
	ID        string   `json:"id"`
	Seed      string   `json:"seed"`
	Section   string   `json:"section"`
	Statement string   `json:"statement"`
	Level     string   `json:"level"`
	Status    string   `json:"status"`
	Note      string   `json:"note,omitempty"`
	Quotes    []string `json:"quotes,omitempty"`
	Checks    []Check  `json:"checks"`
}

// Check names one check: a Go test (Package, a folder relative to the
// module root, and Test, optionally with a subtest path), a testscript
// story (Script, a file in a script folder) or a JSON Schema (Schema, its
// $id).
type Check struct {
	Kind    string `json:"kind"`
	Package string `json:"package,omitempty"`
	Test    string `json:"test,omitempty"`
	Script  string `json:"script,omitempty"`
	Schema  string `json:"schema,omitempty"`
}

// String names the check as reports show it.
func (c Check) String() string {
	switch {
	case c.Script != "":
		return "script " + c.Script
	case c.Schema != "":
		return "schema " + c.Schema
	}
	return "test " + c.Package + " " + c.Test
}

// Runs reports whether the check is something "go test" runs (a test or a
// script), as opposed to a schema, which trace compiles itself.
func (c Check) Runs() bool { return c.Schema == "" }

// Source returns the name the catalogue was parsed under.
func (c *Catalog) Source() string { return c.source }

// Seed returns the source document with id, or false.
func (c *Catalog) Seed(id string) (Seed, bool) {
	for _, s := range c.Seeds {
		if s.ID == id {
			return s, true
		}
	}
	return Seed{}, false
}

// ScriptDirOf returns the script folder that holds script, or false.
func (c *Catalog) ScriptDirOf(script string) (ScriptDir, bool) {
	dir := script[:max(strings.LastIndexByte(script, '/'), 0)]
	for _, d := range c.ScriptDirs {
		if d.Dir == dir {
			return d, true
		}
	}
	return ScriptDir{}, false
}

// position returns the line and column of the value at ptr.
func (c *Catalog) position(ptr string) schemaval.Position {
	return schemaval.Locate(c.pos, ptr)
}

// diag makes a diagnostic of the catalogue at the JSON pointer ptr.
func (c *Catalog) diag(ptr, problem, hint string) schemaval.Diagnostic {
	p := c.position(ptr)
	return schemaval.Diagnostic{File: c.source, Line: p.Line, Column: p.Column,
		Field: schemaval.FieldPath(schemaval.SplitPointer(ptr)), Problem: problem, Hint: hint}
}

// ParseCatalog reads a catalogue (source names it in messages): strict JSON,
// the schema, then what a schema cannot say. Every problem is reported,
// each at its line and field, as one *schemaval.InvalidError (exit 2).
func ParseCatalog(source string, data []byte) (*Catalog, error) {
	if len(data) > MaxCatalogBytes {
		return nil, &errkind.InputError{Source: source, Problem: fmt.Sprintf("%d bytes, over the limit of %d", len(data), MaxCatalogBytes)}
	}
	doc, pos, err := schemaval.DecodeLocated(data)
	if err != nil {
		return nil, schemaval.Invalid(source, []schemaval.Diagnostic{schemaval.SyntaxDiagnostic(source, err, "write valid JSON with unique keys")})
	}
	hint := func(field, problem string) string {
		return "fix the field to match the catalogue schema (docs/formats.md)"
	}
	if diags := compileSchema().Diagnose(source, doc, pos, hint); len(diags) > 0 {
		return nil, schemaval.Invalid(source, diags)
	}
	c := &Catalog{source: source, pos: pos}
	if err := json.Unmarshal(data, c); err != nil {
		return nil, &errkind.InputError{Source: source, Problem: err.Error()}
	}
	if diags := c.validate(); len(diags) > 0 {
		return nil, schemaval.Invalid(source, diags)
	}
	return c, nil
}

// validate checks what the schema cannot: unique ids and seeds, known
// seeds, checks in declared script folders, valid patterns and globs.
func (c *Catalog) validate() []schemaval.Diagnostic {
	var diags []schemaval.Diagnostic
	seeds := map[string]int{}
	for i, s := range c.Seeds {
		ptr := pointer("seeds", i)
		if j, dup := seeds[s.ID]; dup {
			diags = append(diags, c.diag(pointer(ptr, "id"), fmt.Sprintf("duplicate source document id %q (also at line %d)", s.ID, c.position(pointer("seeds", j, "id")).Line), "give every document its own id"))
		}
		seeds[s.ID] = i
		for _, f := range []struct{ name, re string }{{"own_ids", s.OwnIDs}, {"cover", s.Cover}} {
			if f.re == "" {
				continue
			}
			if _, err := regexp.Compile(f.re); err != nil {
				diags = append(diags, c.diag(pointer(ptr, f.name), "not a regular expression: "+err.Error(), "write a Go regular expression (RE2 syntax)"))
			}
		}
	}
	dirs := map[string]bool{}
	for i, d := range c.ScriptDirs {
		if dirs[d.Dir] {
			diags = append(diags, c.diag(pointer("script_dirs", i, "dir"), fmt.Sprintf("script folder %q listed twice", d.Dir), "list each folder once"))
		}
		dirs[d.Dir] = true
		if !cleanPath(d.Dir) || !cleanPath(d.Package) {
			diags = append(diags, c.diag(pointer("script_dirs", i), "a folder must be a clean relative path (no . or .. segments)", ""))
		}
	}
	for i, g := range c.ActiveDocs {
		if !doublestar.ValidatePattern(g) || strings.HasPrefix(g, "/") || strings.Contains(g, "..") {
			diags = append(diags, c.diag(pointer("active_docs", i), fmt.Sprintf("%q is not a relative glob pattern", g), "write a pattern such as docs/**/*.md"))
		}
	}
	deps := map[string]bool{}
	for i, d := range c.DeprecatedPaths {
		if deps[d.Path] {
			diags = append(diags, c.diag(pointer("deprecated_paths", i, "path"), fmt.Sprintf("deprecated path %q listed twice", d.Path), "list each path once"))
		}
		deps[d.Path] = true
	}
	c.byID = make(map[string]int, len(c.Requirements))
	for i, r := range c.Requirements {
		ptr := pointer("requirements", i)
		if j, dup := c.byID[r.ID]; dup {
			diags = append(diags, c.diag(pointer(ptr, "id"), fmt.Sprintf("duplicate requirement id %q (also at line %d)", r.ID, c.position(pointer("requirements", j, "id")).Line), "give every requirement its own id"))
		} else {
			c.byID[r.ID] = i
		}
		if _, ok := seeds[r.Seed]; !ok {
			diags = append(diags, c.diag(pointer(ptr, "seed"), fmt.Sprintf("unknown source document %q; known: %s", r.Seed, strings.Join(c.seedIDs(), ", ")), "name a document listed under seeds, or add it there"))
		}
		seen := map[Check]bool{}
		for k, ch := range r.Checks {
			cptr := pointer(ptr, "checks", k)
			if seen[ch] {
				diags = append(diags, c.diag(cptr, fmt.Sprintf("%s listed twice for %s", ch, r.ID), "list each check once"))
			}
			seen[ch] = true
			switch {
			case ch.Package != "" && !cleanPath(ch.Package):
				diags = append(diags, c.diag(pointer(cptr, "package"), fmt.Sprintf("%q is not a clean relative folder", ch.Package), "name the package by its folder relative to the module root, e.g. pkg/trace"))
			case ch.Script != "":
				if !cleanPath(ch.Script) || !strings.HasSuffix(ch.Script, ".txtar") {
					diags = append(diags, c.diag(pointer(cptr, "script"), fmt.Sprintf("%q is not a .txtar file path", ch.Script), "name the story by its path, e.g. cmd/dome/testdata/script/usage.txtar"))
				} else if _, ok := c.ScriptDirOf(ch.Script); !ok {
					diags = append(diags, c.diag(pointer(cptr, "script"), fmt.Sprintf("%s is in no folder listed under script_dirs", ch.Script), "add its folder, the package and the Go test that runs it to script_dirs"))
				}
			}
		}
	}
	return diags
}

func (c *Catalog) seedIDs() []string {
	ids := make([]string, len(c.Seeds))
	for i, s := range c.Seeds {
		ids[i] = s.ID
	}
	sort.Strings(ids)
	return ids
}

// cleanPath reports whether p is a relative slash path with no empty, "."
// or ".." segment.
func cleanPath(p string) bool {
	if p == "" || strings.HasPrefix(p, "/") {
		return false
	}
	for _, s := range strings.Split(p, "/") {
		if s == "" || s == "." || s == ".." {
			return false
		}
	}
	return true
}

// pointer builds a JSON pointer from tokens: a leading token that is itself
// a pointer (starts with "/") is extended.
func pointer(tokens ...any) string {
	var b strings.Builder
	for i, t := range tokens {
		switch v := t.(type) {
		case int:
			b.WriteByte('/')
			b.WriteString(strconv.Itoa(v))
		case string:
			if i == 0 && strings.HasPrefix(v, "/") {
				b.WriteString(v)
				continue
			}
			b.WriteByte('/')
			b.WriteString(strings.ReplaceAll(strings.ReplaceAll(v, "~", "~0"), "/", "~1"))
		}
	}
	return b.String()
}
