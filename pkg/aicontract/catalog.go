package aicontract

import (
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strings"

	"github.com/dome-registry/dome/internal/lazyre"
	"github.com/dome-registry/dome/pkg/canonical"
	"github.com/dome-registry/dome/pkg/schemaval"
)

// Catalog files, relative to the catalog root (policy/contracts/ in a repository).
const (
	CommandsFile    = "commands.json"
	RulesFile       = "rules.json"
	PresetsFile     = "presets.json"
	ConstraintsFile = "constraints.json"
	ProjectsDir     = "projects"
)

// Source reads catalog files by slash-separated path relative to the
// catalog root: a directory on disk, or a tree at a pinned git commit.
type Source interface {
	// ReadFile returns the file's bytes; an error that wraps fs.ErrNotExist
	// when there is no such file.
	ReadFile(name string) ([]byte, error)
	// List returns the names of the regular files in dir, sorted; an error
	// that wraps fs.ErrNotExist when there is no such directory.
	List(dir string) ([]string, error)
	// Name is how messages name the file (e.g. policy/contracts/rules.json@3f2c1a9).
	Name(name string) string
}

// Intents, and the severities of rules in decreasing order.
const (
	IntentGenerate = "generate"
	IntentRefactor = "refactor"
	IntentReview   = "review"

	SeverityError = "error"
	SeverityWarn  = "warn"
	SeverityInfo  = "info"
)

func severityRank(s string) int {
	switch s {
	case SeverityError:
		return 0
	case SeverityWarn:
		return 1
	}
	return 2
}

// Command is a command definition (system-owned).
type Command struct {
	ID          string `json:"id"`
	DisplayName string `json:"displayName"`
	Description string `json:"description,omitempty"`
	IntentID    string `json:"intentId"`
	TemplateID  string `json:"templateId"`
}

// Rule is a rule catalog entry.
type Rule struct {
	ID                     string         `json:"id"`
	Title                  string         `json:"title"`
	Description            string         `json:"description"`
	Severity               string         `json:"severity"`
	AppliesToIntents       []string       `json:"appliesToIntents"`
	Directive              string         `json:"directive"`
	DefaultEnabled         bool           `json:"defaultEnabled"`
	ConflictsWith          []string       `json:"conflictsWith,omitempty"`
	ContributesConstraints map[string]any `json:"contributesConstraints,omitempty"`
}

// Preset is a stack preset.
type Preset struct {
	ID          string         `json:"id"`
	DisplayName string         `json:"displayName"`
	Description string         `json:"description,omitempty"`
	Stack       []string       `json:"stack"`
	Constraints map[string]any `json:"constraints,omitempty"`
}

// ConstraintDef declares a constraint key and the type of its value.
type ConstraintDef struct {
	Key         string   `json:"key"`
	Type        string   `json:"type"` // boolean, integer, string, string-list
	Description string   `json:"description"`
	Minimum     *int64   `json:"minimum,omitempty"`
	Enum        []string `json:"enum,omitempty"`
}

// Project is a user's project.
type Project struct {
	ID                  string          `json:"id"`
	DisplayName         string          `json:"displayName,omitempty"`
	StackPresetID       string          `json:"stackPresetId"`
	Toggles             map[string]bool `json:"toggles,omitempty"`
	ConstraintOverrides map[string]any  `json:"constraintOverrides,omitempty"`
}

// Catalog is the system-owned part: commands, rules, presets, constraint keys.
type Catalog struct {
	Commands    []Command       `json:"commands"`
	Rules       []Rule          `json:"rules"`
	Presets     []Preset        `json:"presets"`
	Constraints []ConstraintDef `json:"constraints"`
	// Digest is the sha256 of the RFC 8785 form of the four files' documents.
	Digest string `json:"-"`

	commands    map[string]*Command
	rules       map[string]*Rule
	presets     map[string]*Preset
	constraints map[string]*ConstraintDef
}

// Command returns the command with id, or nil.
func (c *Catalog) Command(id string) *Command { return c.commands[id] }

// Rule returns the rule with id, or nil.
func (c *Catalog) Rule(id string) *Rule { return c.rules[id] }

// Preset returns the preset with id, or nil.
func (c *Catalog) Preset(id string) *Preset { return c.presets[id] }

// The JSON Schemas of the catalog files and of ResolveResult.
//
//go:embed schemas/*.schema.json
var schemaFS embed.FS

// Schema file names.
const (
	SchemaCommands    = "commands.schema.json"
	SchemaRules       = "rules.schema.json"
	SchemaPresets     = "presets.schema.json"
	SchemaConstraints = "constraints.schema.json"
	SchemaProject     = "project.schema.json"
	SchemaResult      = "result.schema.json"
)

// SchemaBytes returns an embedded schema by file name.
func SchemaBytes(name string) ([]byte, error) { return schemaFS.ReadFile("schemas/" + name) }

// schema compiles an embedded schema (tens of microseconds; not cached in
// package state).
func schema(name string) *schemaval.Schema {
	b, err := SchemaBytes(name)
	if err != nil {
		panic(err) // embedded; TestSchemasCompile keeps this unreachable
	}
	return schemaval.MustCompile(name, b)
}

// located is a decoded catalog file with the positions of its values.
type located struct {
	file string // as messages name it
	doc  any
	pos  map[string]schemaval.Position
}

func (l *located) diag(ptr string, problem, hint string) schemaval.Diagnostic {
	p := schemaval.Locate(l.pos, ptr)
	return schemaval.Diagnostic{File: l.file, Line: p.Line, Column: p.Column, Field: schemaval.FieldPath(schemaval.SplitPointer(ptr)), Problem: problem, Hint: hint}
}

// readLocated reads, decodes and schema-validates one file.
func readLocated(src Source, name, schemaName string) (*located, error) {
	file := src.Name(name)
	data, err := src.ReadFile(name)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, schemaval.Invalid(file, []schemaval.Diagnostic{{File: file, Problem: "missing", Hint: "the contract catalog needs commands.json, rules.json, presets.json and constraints.json (see policy/contracts/ in dome's repository)"}})
		}
		return nil, fmt.Errorf("read %s: %w", file, err)
	}
	doc, pos, err := schemaval.DecodeLocated(data)
	if err != nil {
		return nil, schemaval.Invalid(file, []schemaval.Diagnostic{schemaval.SyntaxDiagnostic(file, err, "write valid JSON (no comments, no trailing commas, unique keys)")})
	}
	if diags := schema(schemaName).Diagnose(file, doc, pos, hintFor); len(diags) > 0 {
		return nil, schemaval.Invalid(file, diags)
	}
	return &located{file: file, doc: doc, pos: pos}, nil
}

// decode decodes a validated document into v, keeping numbers as json.Number.
func decode(doc any, v any) error {
	b, err := json.Marshal(doc)
	if err != nil {
		return fmt.Errorf("re-encode: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("decode: %w", err)
	}
	return nil
}

// LoadCatalog reads and validates the four catalog files: each against its
// schema, then across files (unique ids, conflictsWith naming known rules,
// every constraint key declared in constraints.json with a value of its
// type). Every problem is an *schemaval.InvalidError naming file, line,
// column and field (exit 2).
func LoadCatalog(src Source) (*Catalog, error) {
	files := []struct{ name, schema, list string }{
		{ConstraintsFile, SchemaConstraints, "constraints"},
		{CommandsFile, SchemaCommands, "commands"},
		{RulesFile, SchemaRules, "rules"},
		{PresetsFile, SchemaPresets, "presets"},
	}
	docs := map[string]*located{}
	whole := map[string]any{}
	var errs []error
	for _, f := range files {
		l, err := readLocated(src, f.name, f.schema)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		docs[f.name] = l
		whole[f.name] = l.doc
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	c := &Catalog{}
	for _, x := range []struct {
		name string
		into any
	}{
		{ConstraintsFile, &struct {
			C *[]ConstraintDef `json:"constraints"`
		}{&c.Constraints}},
		{CommandsFile, &struct {
			C *[]Command `json:"commands"`
		}{&c.Commands}},
		{RulesFile, &struct {
			R *[]Rule `json:"rules"`
		}{&c.Rules}},
		{PresetsFile, &struct {
			P *[]Preset `json:"presets"`
		}{&c.Presets}},
	} {
		if err := decode(docs[x.name].doc, x.into); err != nil {
			return nil, fmt.Errorf("%s: %w", docs[x.name].file, err)
		}
	}
	b, err := canonical.Marshal(whole)
	if err != nil {
		return nil, err
	}
	c.Digest = canonical.Digest(b)
	if err := c.index(docs); err != nil {
		return nil, err
	}
	return c, nil
}

// index builds the lookups and checks what a schema cannot: unique ids,
// references between files, constraint keys and value types.
func (c *Catalog) index(docs map[string]*located) error {
	var errs []error
	c.constraints = map[string]*ConstraintDef{}
	cons := docs[ConstraintsFile]
	var diags []schemaval.Diagnostic
	for i := range c.Constraints {
		d := &c.Constraints[i]
		ptr := fmt.Sprintf("/constraints/%d", i)
		if _, dup := c.constraints[d.Key]; dup {
			diags = append(diags, cons.diag(ptr+"/key", fmt.Sprintf("constraint %q is declared twice", d.Key), "keep one declaration"))
		}
		if d.Minimum != nil && d.Type != "integer" || d.Enum != nil && d.Type != "string" {
			diags = append(diags, cons.diag(ptr, "minimum goes with type integer, enum with type string", ""))
		}
		c.constraints[d.Key] = d
	}
	errs = append(errs, schemaval.Invalid(cons.file, diags))

	cmds := docs[CommandsFile]
	diags = nil
	c.commands = map[string]*Command{}
	for i := range c.Commands {
		cmd := &c.Commands[i]
		if _, dup := c.commands[cmd.ID]; dup {
			diags = append(diags, cmds.diag(fmt.Sprintf("/commands/%d/id", i), fmt.Sprintf("command %q is defined twice", cmd.ID), "command ids are unique"))
		}
		c.commands[cmd.ID] = cmd
	}
	errs = append(errs, schemaval.Invalid(cmds.file, diags))

	rules := docs[RulesFile]
	diags = nil
	c.rules = map[string]*Rule{}
	for i := range c.Rules {
		r := &c.Rules[i]
		if _, dup := c.rules[r.ID]; dup {
			diags = append(diags, rules.diag(fmt.Sprintf("/rules/%d/id", i), fmt.Sprintf("rule %q is defined twice", r.ID), "rule ids are unique"))
		}
		c.rules[r.ID] = r
	}
	for i, r := range c.Rules {
		for j, other := range r.ConflictsWith {
			ptr := fmt.Sprintf("/rules/%d/conflictsWith/%d", i, j)
			switch {
			case other == r.ID:
				diags = append(diags, rules.diag(ptr, fmt.Sprintf("rule %q conflicts with itself", r.ID), "remove it from conflictsWith"))
			case c.rules[other] == nil:
				diags = append(diags, rules.diag(ptr, fmt.Sprintf("no rule %q in the catalog", other), nearest(other, c.ruleIDs())))
			}
		}
		for _, k := range sortedKeys(r.ContributesConstraints) {
			if p := c.checkConstraint(k, r.ContributesConstraints[k]); p != "" {
				diags = append(diags, rules.diag(fmt.Sprintf("/rules/%d/contributesConstraints/%s", i, k), p, c.constraintHint(k)))
			}
		}
	}
	errs = append(errs, schemaval.Invalid(rules.file, diags))

	presets := docs[PresetsFile]
	diags = nil
	c.presets = map[string]*Preset{}
	for i := range c.Presets {
		p := &c.Presets[i]
		if _, dup := c.presets[p.ID]; dup {
			diags = append(diags, presets.diag(fmt.Sprintf("/presets/%d/id", i), fmt.Sprintf("preset %q is defined twice", p.ID), "preset ids are unique"))
		}
		c.presets[p.ID] = p
		for _, k := range sortedKeys(p.Constraints) {
			if msg := c.checkConstraint(k, p.Constraints[k]); msg != "" {
				diags = append(diags, presets.diag(fmt.Sprintf("/presets/%d/constraints/%s", i, k), msg, c.constraintHint(k)))
			}
		}
	}
	errs = append(errs, schemaval.Invalid(presets.file, diags))
	return errors.Join(errs...)
}

func (c *Catalog) ruleIDs() []string {
	var ids []string
	for _, r := range c.Rules {
		ids = append(ids, r.ID)
	}
	return ids
}

// checkConstraint returns what is wrong with setting key to v ("" if nothing).
func (c *Catalog) checkConstraint(key string, v any) string {
	d := c.constraints[key]
	if d == nil {
		return fmt.Sprintf("constraint %q is not declared in %s", key, ConstraintsFile)
	}
	switch d.Type {
	case "boolean":
		if _, ok := v.(bool); !ok {
			return fmt.Sprintf("constraint %q is a boolean, got %s", key, show(v))
		}
	case "integer":
		n, ok := v.(json.Number)
		i, err := n.Int64()
		if !ok || err != nil {
			return fmt.Sprintf("constraint %q is an integer, got %s", key, show(v))
		}
		if d.Minimum != nil && i < *d.Minimum {
			return fmt.Sprintf("constraint %q must be at least %d, got %d", key, *d.Minimum, i)
		}
	case "string":
		s, ok := v.(string)
		if !ok {
			return fmt.Sprintf("constraint %q is a string, got %s", key, show(v))
		}
		if d.Enum != nil && !contains(d.Enum, s) {
			return fmt.Sprintf("constraint %q must be one of %s, got %q", key, strings.Join(d.Enum, ", "), s)
		}
	case "string-list":
		a, ok := v.([]any)
		if !ok {
			return fmt.Sprintf("constraint %q is a list of strings, got %s", key, show(v))
		}
		seen := map[string]bool{}
		for _, x := range a {
			s, ok := x.(string)
			if !ok || seen[s] {
				return fmt.Sprintf("constraint %q is a list of distinct strings, got %s", key, show(v))
			}
			seen[s] = true
		}
	}
	return ""
}

func (c *Catalog) constraintHint(key string) string {
	if d := c.constraints[key]; d != nil {
		return d.Key + ": " + d.Description
	}
	var keys []string
	for _, d := range c.Constraints {
		keys = append(keys, d.Key)
	}
	return nearest(key, keys) + "declared constraints: " + strings.Join(keys, ", ")
}

// show writes a value as canonical JSON for messages and contract bullets.
func show(v any) string {
	b, err := canonical.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

func contains(s []string, x string) bool {
	for _, y := range s {
		if y == x {
			return true
		}
	}
	return false
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// nearest returns "did you mean X? " for a near miss among names, else "".
func nearest(name string, names []string) string {
	best, bestD := "", 3
	for _, n := range names {
		if d := editDistance(strings.ToLower(name), strings.ToLower(n)); d < bestD {
			best, bestD = n, d
		}
	}
	if best == "" {
		return ""
	}
	return "did you mean " + best + "? "
}

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

var idRE = lazyre.New(`^[a-z0-9][a-z0-9._-]*$`)

// ValidID reports whether s can name a project, command, rule or preset.
func ValidID(s string) bool { return len(s) <= 100 && idRE().MatchString(s) }

// hintFor gives advice for a schema violation in a catalog file.
func hintFor(field, problem string) string {
	switch {
	case strings.HasPrefix(problem, "unknown field"):
		return "see the schema named by the file's $schema (pkg/aicontract/schemas/)"
	case strings.Contains(problem, "does not match pattern") && strings.HasSuffix(field, "id"):
		return "ids are lowercase letters, digits, '.', '_' and '-', starting with a letter or digit"
	case strings.Contains(problem, "does not match pattern"):
		return "one line: no newlines or tabs"
	case strings.HasPrefix(problem, "value must be") && strings.HasSuffix(field, "schemaVersion"):
		return "this dome reads version 1 of the catalog format"
	}
	return ""
}

// ListProjects returns the project ids under projects/ (files <id>.json), sorted.
func ListProjects(src Source) ([]string, error) {
	names, err := src.List(ProjectsDir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, n := range names {
		if id, ok := strings.CutSuffix(n, ".json"); ok && ValidID(id) {
			ids = append(ids, id)
		}
	}
	return ids, nil
}

// LoadProject reads projects/<id>.json. found is false when there is no
// such file (or id cannot name one). A file that exists but breaks the
// schema, or whose id differs from its name, is an error (exit 2).
func LoadProject(src Source, id string) (p *Project, found bool, err error) {
	if !ValidID(id) {
		return nil, false, nil
	}
	name := ProjectsDir + "/" + id + ".json"
	if _, err := src.ReadFile(name); errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	l, err := readLocated(src, name, SchemaProject)
	if err != nil {
		return nil, true, err
	}
	var proj Project
	if err := decode(l.doc, &proj); err != nil {
		return nil, true, fmt.Errorf("%s: %w", l.file, err)
	}
	if proj.ID != id {
		return nil, true, schemaval.Invalid(l.file, []schemaval.Diagnostic{l.diag("/id", fmt.Sprintf("id %q differs from the file name %s.json", proj.ID, id), "rename the file or fix the id")})
	}
	return &proj, true, nil
}
