package aicontract

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/dome-registry/dome/pkg/canonical"
	"github.com/dome-registry/dome/pkg/errkind"
)

// Blocked reasons (the spec's BlockedResolution.reason).
const (
	UnknownCommand       = "unknown_command"
	MissingProject       = "missing_project"
	ConflictingRules     = "conflicting_rules"
	InvalidConfiguration = "invalid_configuration"
)

// MaxInputChars bounds the user input.
const MaxInputChars = 4000

// Request is the spec's ResolveRequest (target and contextHints, which the
// MVP may ignore, are not read).
type Request struct {
	ProjectID string `json:"projectId"`
	CommandID string `json:"commandId"`
	UserInput string `json:"userInput"`
}

// Options are the resolution's inputs from outside the request.
type Options struct {
	// GeneratedAt is written as meta.generatedAt (RFC 3339, UTC, seconds);
	// it is not part of the contract id or text.
	GeneratedAt time.Time
	// Catalog says where the catalog was read (meta.catalog), optional.
	Catalog *CatalogRef
}

// CatalogRef names the catalog a contract was compiled from.
type CatalogRef struct {
	Path   string `json:"path,omitempty"`
	Ref    string `json:"ref,omitempty"`
	Commit string `json:"commit,omitempty"`
}

// Result is the spec's ResolveResult.
type Result struct {
	Status   string    `json:"status"` // "ok" or "blocked"
	Contract *Contract `json:"contract,omitempty"`
	Blocked  *Blocked  `json:"blocked,omitempty"`
	trace    trace
}

// trace is what a log line needs of a resolution, whatever its status.
type trace struct {
	intent      string
	rules       []string
	constraints map[string]any
	generatedAt string
}

// Contract is the spec's ResolvedContract.
type Contract struct {
	ID           string `json:"id"`
	ProjectID    string `json:"projectId"`
	CommandID    string `json:"commandId"`
	IntentID     string `json:"intentId"`
	ContractText string `json:"contractText"`
	Meta         Meta   `json:"meta"`
}

// Meta is the contract's metadata for logging and audit.
type Meta struct {
	StackPresetID      string         `json:"stackPresetId"`
	RulesApplied       []RuleRef      `json:"rulesApplied"`
	RulesDropped       []Dropped      `json:"rulesDropped,omitempty"`
	ConstraintsApplied map[string]any `json:"constraintsApplied"`
	StopConditions     []string       `json:"stopConditions"`
	GeneratedAt        string         `json:"generatedAt"`
	Catalog            *CatalogRef    `json:"catalog,omitempty"`
	// What the contract is for, kept out of the fixed template: the
	// template the text was rendered from, the command's display name, the
	// intent as the text names it, and the user's request (normalized: one
	// line) for the caller to send beside the contract.
	TemplateID         string `json:"templateId"`
	CommandDisplayName string `json:"commandDisplayName"`
	IntentHuman        string `json:"intentHuman"`
	UserInput          string `json:"userInput"`
}

// RuleRef is an applied rule.
type RuleRef struct {
	ID       string `json:"id"`
	Severity string `json:"severity"`
}

// Dropped is an active rule that lost a conflict.
type Dropped struct {
	ID         string `json:"id"`
	Severity   string `json:"severity"`
	DroppedFor string `json:"droppedFor"`
	Why        string `json:"why"`
}

// Blocked is the spec's BlockedResolution.
type Blocked struct {
	Reason  string   `json:"reason"`
	Message string   `json:"message"`
	Details *Details `json:"details,omitempty"`
}

// Details lists the pairs that blocked a resolution.
type Details struct {
	Conflicts []Conflict `json:"conflicts,omitempty"`
}

// Conflict is two rules (or a rule and a project setting) that cannot both hold.
type Conflict struct {
	A   string `json:"a"`
	B   string `json:"b"`
	Why string `json:"why"`
}

// StopConditions are the template's fixed stop conditions (TestTemplateV1
// keeps them equal to the template's lines).
func StopConditions() []string {
	return []string{
		"If any rule must be violated, STOP and ask for explicit permission.",
		"If required information is missing, ask instead of guessing.",
	}
}

// NormalizeInput checks the user input (UTF-8, no control characters but
// whitespace, at most MaxInputChars) and collapses every run of whitespace
// to one space, so that the input is one line (meta.userInput).
func NormalizeInput(s string) (string, error) {
	if !utf8.ValidString(s) {
		return "", &errkind.InputError{Source: "--input", Problem: "not valid UTF-8"}
	}
	if n := utf8.RuneCountInString(s); n > MaxInputChars {
		return "", &errkind.InputError{Source: "--input", Problem: fmt.Sprintf("%d characters, more than %d", n, MaxInputChars), Hint: "describe the task in fewer words; the contract is not the place for code"}
	}
	for _, r := range s {
		if unicode.IsControl(r) && !unicode.IsSpace(r) {
			return "", &errkind.InputError{Source: "--input", Problem: fmt.Sprintf("control character %U", r), Hint: "remove it"}
		}
	}
	return strings.Join(strings.Fields(s), " "), nil
}

// InputDigest is what logs record instead of the user input.
func InputDigest(s string) string {
	sum := sha256.Sum256([]byte(s))
	return "sha256:" + hex.EncodeToString(sum[:])
}

func blocked(reason, msg string, tr trace, conflicts ...Conflict) *Result {
	b := &Blocked{Reason: reason, Message: msg}
	if len(conflicts) > 0 {
		b.Details = &Details{Conflicts: conflicts}
	}
	return &Result{Status: "blocked", Blocked: b, trace: tr}
}

// Resolve runs the spec's steps 1 to 9. A blocked resolution is a Result;
// an error is an input the user must fix (a malformed project file, a bad
// input string) or a failure to read.
func Resolve(c *Catalog, src Source, req Request, opts Options) (*Result, error) {
	input, err := NormalizeInput(req.UserInput)
	if err != nil {
		return nil, err
	}
	tr := trace{generatedAt: opts.GeneratedAt.UTC().Format(time.RFC3339), constraints: map[string]any{}}

	// Step 1: project.
	proj, found, err := LoadProject(src, req.ProjectID)
	if err != nil {
		return nil, err
	}
	if !found {
		msg := fmt.Sprintf("project %q not found (%s)", req.ProjectID, src.Name(ProjectsDir+"/"+req.ProjectID+".json"))
		if ids, _ := ListProjects(src); len(ids) > 0 {
			msg += "; projects: " + strings.Join(ids, ", ")
		}
		return blocked(MissingProject, msg, tr), nil
	}
	// Step 2: command.
	cmd := c.Command(req.CommandID)
	if cmd == nil {
		var ids []string
		for _, x := range c.Commands {
			ids = append(ids, x.ID)
		}
		return blocked(UnknownCommand, fmt.Sprintf("command %q is not in %s; %scommands: %s", req.CommandID, src.Name(CommandsFile), nearest(req.CommandID, ids), strings.Join(ids, ", ")), tr), nil
	}
	// Step 3: intent, by the fixed mapping.
	tr.intent = cmd.IntentID
	// Step 4: stack preset.
	preset := c.Preset(proj.StackPresetID)
	if preset == nil {
		var ids []string
		for _, p := range c.Presets {
			ids = append(ids, p.ID)
		}
		return blocked(InvalidConfiguration, fmt.Sprintf("project %q uses stack preset %q, which is not in %s; %spresets: %s", proj.ID, proj.StackPresetID, src.Name(PresetsFile), nearest(proj.StackPresetID, ids), strings.Join(ids, ", ")), tr), nil
	}
	// Step 5: the ruleset base, toggles, then the intent filter.
	for _, id := range sortedKeys(proj.Toggles) {
		if c.Rule(id) == nil {
			return blocked(InvalidConfiguration, fmt.Sprintf("project %q toggles rule %q, which is not in %s; %s", proj.ID, id, src.Name(RulesFile), strings.TrimSuffix(nearest(id, c.ruleIDs()), " ")), tr), nil
		}
	}
	var active []*Rule
	for i := range c.Rules {
		r := &c.Rules[i]
		on := r.DefaultEnabled
		if t, ok := proj.Toggles[r.ID]; ok {
			on = t
		}
		if on && contains(r.AppliesToIntents, cmd.IntentID) {
			active = append(active, r)
		}
	}
	sortRules(active)
	// Step 6: conflicts.
	kept, dropped, conflicts := resolveConflicts(active)
	if len(conflicts) > 0 {
		var pairs []string
		for _, x := range conflicts {
			pairs = append(pairs, x.A+" and "+x.B)
		}
		return blocked(ConflictingRules, fmt.Sprintf("conflicting rules for %s (%s): %s", cmd.ID, cmd.IntentID, strings.Join(pairs, "; ")), tr, conflicts...), nil
	}
	// Step 7: constraints: preset, then rules, then project overrides.
	constraints, res := compileConstraints(c, src, proj, preset, kept, tr)
	if res != nil {
		return res, nil
	}
	tr.constraints = constraints
	for _, r := range kept {
		tr.rules = append(tr.rules, r.ID)
	}
	// Step 8: render.
	text := Render(cmd, preset, kept, constraints)
	// Step 9: the contract.
	id, err := contractID(cmd, proj, preset, active, input)
	if err != nil {
		return nil, err
	}
	meta := Meta{StackPresetID: preset.ID, RulesApplied: []RuleRef{}, RulesDropped: dropped, ConstraintsApplied: constraints,
		StopConditions: StopConditions(), GeneratedAt: tr.generatedAt, Catalog: opts.Catalog,
		TemplateID: cmd.TemplateID, CommandDisplayName: cmd.DisplayName, IntentHuman: IntentHuman(cmd.IntentID), UserInput: input}
	for _, r := range kept {
		meta.RulesApplied = append(meta.RulesApplied, RuleRef{ID: r.ID, Severity: r.Severity})
	}
	return &Result{Status: "ok", trace: tr, Contract: &Contract{
		ID: id, ProjectID: proj.ID, CommandID: cmd.ID, IntentID: cmd.IntentID, ContractText: text, Meta: meta,
	}}, nil
}

// sortRules orders rules by severity (error, warn, info), then id.
func sortRules(rs []*Rule) {
	sort.SliceStable(rs, func(i, j int) bool {
		if a, b := severityRank(rs[i].Severity), severityRank(rs[j].Severity); a != b {
			return a < b
		}
		return rs[i].ID < rs[j].ID
	})
}

// conflicting reports whether a and b conflict: either lists the other.
func conflicting(a, b *Rule) bool {
	return contains(a.ConflictsWith, b.ID) || contains(b.ConflictsWith, a.ID)
}

func conflictWhy(a, b *Rule) string {
	lists := a.ID + " lists " + b.ID
	if !contains(a.ConflictsWith, b.ID) {
		lists = b.ID + " lists " + a.ID
	}
	return fmt.Sprintf("%s rule %s and %s rule %s conflict (%s in conflictsWith)", a.Severity, a.ID, b.Severity, b.ID, lists)
}

// resolveConflicts applies step 6 to the active rules (sorted), in this
// order so that the outcome never depends on the order of the catalog:
//  1. every pair of conflicting error rules blocks;
//  2. an info rule that conflicts with any active rule is dropped;
//  3. a warn rule that conflicts with an error rule is dropped;
//  4. two conflicting warn rules that are both left block (the spec does
//     not rank them, and dome will not pick one).
func resolveConflicts(active []*Rule) (kept []*Rule, dropped []Dropped, blocking []Conflict) {
	pairs := func(sa, sb string) [][2]*Rule {
		var out [][2]*Rule
		for i, a := range active {
			for _, b := range active[i+1:] {
				if conflicting(a, b) && (a.Severity == sa && b.Severity == sb || a.Severity == sb && b.Severity == sa) {
					out = append(out, [2]*Rule{a, b})
				}
			}
		}
		return out
	}
	for _, p := range pairs(SeverityError, SeverityError) {
		blocking = append(blocking, Conflict{A: p[0].ID, B: p[1].ID, Why: conflictWhy(p[0], p[1]) + "; two error rules cannot both hold: disable one in the project's toggles"})
	}
	if len(blocking) > 0 {
		return active, nil, blocking
	}
	gone := map[string]bool{}
	drop := func(loser, winner *Rule, why string) {
		if !gone[loser.ID] {
			gone[loser.ID] = true
			dropped = append(dropped, Dropped{ID: loser.ID, Severity: loser.Severity, DroppedFor: winner.ID, Why: why})
		}
	}
	for _, r := range active {
		if r.Severity != SeverityInfo {
			continue
		}
		for _, o := range active {
			if o != r && conflicting(r, o) {
				drop(r, o, conflictWhy(r, o)+"; an info rule in conflict is dropped")
				break
			}
		}
	}
	for _, r := range active {
		if r.Severity != SeverityWarn {
			continue
		}
		for _, o := range active {
			if o.Severity == SeverityError && conflicting(r, o) {
				drop(r, o, conflictWhy(r, o)+"; the error rule wins")
				break
			}
		}
	}
	for _, p := range pairs(SeverityWarn, SeverityWarn) {
		if !gone[p[0].ID] && !gone[p[1].ID] {
			blocking = append(blocking, Conflict{A: p[0].ID, B: p[1].ID, Why: conflictWhy(p[0], p[1]) + "; neither outranks the other: disable one in the project's toggles"})
		}
	}
	for _, r := range active {
		if !gone[r.ID] {
			kept = append(kept, r)
		}
	}
	sort.Slice(dropped, func(i, j int) bool { return dropped[i].ID < dropped[j].ID })
	return kept, dropped, blocking
}

// compileConstraints applies step 7. Two applied rules that set one key to
// different values, or a project override that is undeclared or of the
// wrong type, block with invalid_configuration.
func compileConstraints(c *Catalog, src Source, proj *Project, preset *Preset, rules []*Rule, tr trace) (map[string]any, *Result) {
	out := map[string]any{}
	for k, v := range preset.Constraints {
		out[k] = v
	}
	setBy := map[string]*Rule{}
	var clashes []Conflict
	for _, r := range rules {
		for _, k := range sortedKeys(r.ContributesConstraints) {
			v := r.ContributesConstraints[k]
			if first, ok := setBy[k]; ok {
				if show(first.ContributesConstraints[k]) != show(v) {
					clashes = append(clashes, Conflict{A: first.ID, B: r.ID,
						Why: fmt.Sprintf("both set constraint %s: %s sets %s, %s sets %s", k, first.ID, show(first.ContributesConstraints[k]), r.ID, show(v))})
				}
				continue
			}
			setBy[k] = r
			out[k] = v
		}
	}
	if len(clashes) > 0 {
		var keys []string
		for _, x := range clashes {
			keys = append(keys, x.A+" and "+x.B)
		}
		return nil, blocked(InvalidConfiguration, "applied rules set one constraint to different values: "+strings.Join(keys, "; ")+"; disable one of each pair in the project's toggles", tr, clashes...)
	}
	for _, k := range sortedKeys(proj.ConstraintOverrides) {
		v := proj.ConstraintOverrides[k]
		if msg := c.checkConstraint(k, v); msg != "" {
			return nil, blocked(InvalidConfiguration, fmt.Sprintf("project %q overrides %s: %s (%s)", proj.ID, k, msg, src.Name(ProjectsDir+"/"+proj.ID+".json")), tr)
		}
		out[k] = v
	}
	return out, nil
}

// contractID is the digest of the canonical inputs that determine the
// contract: the template (its id and the digest of its bytes), the request (with the normalized input), the
// command, project and preset as defined, and the active rules (after
// toggles and the intent filter) as defined.
func contractID(cmd *Command, proj *Project, preset *Preset, active []*Rule, input string) (string, error) {
	rules := make([]Rule, len(active))
	for i, r := range active {
		rules[i] = *r
	}
	sort.Slice(rules, func(i, j int) bool { return rules[i].ID < rules[j].ID })
	b, err := canonical.Marshal(struct {
		Resolver string   `json:"resolver"`
		Template string   `json:"template"`
		Text     string   `json:"templateDigest"`
		Input    string   `json:"userInput"`
		Command  *Command `json:"command"`
		Project  *Project `json:"project"`
		Preset   *Preset  `json:"preset"`
		Rules    []Rule   `json:"rules"`
	}{"dome.aicontract/v1", cmd.TemplateID, canonical.Digest([]byte(TemplateV1)), input, cmd, proj, preset, rules})
	if err != nil {
		return "", err
	}
	return canonical.Digest(b), nil
}
