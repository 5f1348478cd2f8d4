package agent

import (
	"bytes"
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/dome-registry/dome/pkg/specfilter"
)

// MaxAbilityBytes bounds one ability file.
const MaxAbilityBytes = 256 << 10

// Ability is a piece of knowledge an agent's system prompt may carry: a
// Markdown file registry/abilities/<id>.md with an optional YAML
// frontmatter (title, tags).
type Ability struct {
	ID     string   `json:"id"`
	Title  string   `json:"title"`
	Tags   []string `json:"tags,omitempty"`
	Body   string   `json:"-"`
	Source string   `json:"source"`

	head map[string]bool // terms of the id, title and tags
	body map[string]bool // terms of the body
}

// AbilityFileID returns the ability id a file name carries (<id>.md).
func AbilityFileID(name string) (string, bool) {
	id, ok := strings.CutSuffix(fileBase(name), ".md")
	return id, ok && validID(id)
}

// validID checks an agent or ability id: lowercase letters and digits in
// groups joined by single hyphens, at most 64 characters.
func validID(id string) bool {
	if id == "" || len(id) > 64 || id[0] == '-' || id[len(id)-1] == '-' {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
		case c == '-' && id[i-1] != '-':
		default:
			return false
		}
	}
	return true
}

// ParseAbility reads an ability file. The id comes from the file name; the
// title from the frontmatter, else the first "# " heading, else the id.
func ParseAbility(source string, data []byte) (*Ability, error) {
	id, ok := AbilityFileID(source)
	if !ok {
		return nil, &errkind.InputError{Source: source, Problem: "an ability file is named <id>.md, the id of lowercase letters, digits and hyphens"}
	}
	if len(data) > MaxAbilityBytes {
		return nil, &errkind.InputError{Source: source, Problem: fmt.Sprintf("%d bytes, over the limit of %d", len(data), MaxAbilityBytes), Hint: "split it into smaller abilities"}
	}
	if !utf8.Valid(data) {
		return nil, &errkind.InputError{Source: source, Problem: "not UTF-8 text"}
	}
	a := &Ability{ID: id, Source: source}
	body := data
	if fm, rest, ok := cutFrontmatter(data); ok {
		if err := a.frontmatter(source, fm); err != nil {
			return nil, err
		}
		body = rest
	}
	a.Body = strings.TrimSpace(strings.ReplaceAll(string(body), "\r\n", "\n"))
	if a.Title == "" {
		a.Title = firstHeading(a.Body)
	}
	if a.Title == "" {
		a.Title = id
	}
	if a.Body == "" {
		return nil, &errkind.InputError{Source: source, Problem: "the ability has no text", Hint: "write what the agent should know, in Markdown"}
	}
	a.head = termSet(nil, a.ID, a.Title)
	termSet(a.head, a.Tags...)
	a.body = termSet(nil, a.Body)
	return a, nil
}

// cutFrontmatter splits "---\n<yaml>\n---\n<body>".
func cutFrontmatter(data []byte) (fm, rest []byte, ok bool) {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	if !bytes.HasPrefix(data, []byte("---\n")) && !bytes.HasPrefix(data, []byte("---\r\n")) {
		return nil, nil, false
	}
	_, after, _ := bytes.Cut(data, []byte("\n"))
	for pos := 0; pos < len(after); {
		line := after[pos:]
		next := len(after)
		if i := bytes.IndexByte(line, '\n'); i >= 0 {
			line, next = line[:i], pos+i+1
		}
		if t := string(bytes.TrimRight(line, " \t\r")); t == "---" || t == "..." {
			return after[:pos], after[next:], true
		}
		pos = next
	}
	return nil, nil, false
}

func (a *Ability) frontmatter(source string, fm []byte) error {
	if len(bytes.TrimSpace(fm)) == 0 {
		return nil
	}
	v, err := specfilter.ParseYAML(fm, specfilter.Limits{MaxBytes: MaxAbilityBytes, MaxDepth: 8})
	if err != nil {
		return &errkind.InputError{Source: source, Field: "frontmatter", Problem: "invalid YAML: " + err.Error(), Err: err}
	}
	if !v.IsObject() {
		return &errkind.InputError{Source: source, Field: "frontmatter", Problem: "want a mapping of title and tags"}
	}
	for _, m := range v.Members {
		switch m.Key {
		case "title":
			if m.Value.Kind != specfilter.KindString || strings.TrimSpace(m.Value.Text) == "" || len(m.Value.Text) > 200 {
				return &errkind.InputError{Source: source, Field: "frontmatter/title", Problem: "want a string of 1 to 200 characters"}
			}
			a.Title = strings.TrimSpace(m.Value.Text)
		case "tags":
			if m.Value.Kind != specfilter.KindArray || len(m.Value.Members) > 100 {
				return &errkind.InputError{Source: source, Field: "frontmatter/tags", Problem: "want a list of at most 100 strings"}
			}
			for i, item := range m.Value.Members { // an array's items
				it := item.Value
				if it.Kind != specfilter.KindString || it.Text == "" || len(it.Text) > 100 {
					return &errkind.InputError{Source: source, Field: fmt.Sprintf("frontmatter/tags/%d", i), Problem: "want a string of 1 to 100 characters"}
				}
				a.Tags = append(a.Tags, it.Text)
			}
		default:
			return &errkind.InputError{Source: source, Field: "frontmatter/" + m.Key, Problem: "unknown key", Hint: "the frontmatter takes title and tags"}
		}
	}
	return nil
}

func firstHeading(body string) string {
	for _, l := range strings.Split(body, "\n") {
		if t, ok := strings.CutPrefix(l, "# "); ok {
			return strings.TrimSpace(t)
		}
	}
	return ""
}

// relevance scores the ability for a task's terms: 2 for each term in its
// id, title or tags, 1 for each other term in its text.
func (a *Ability) relevance(taskTerms []string) int {
	r := 0
	for _, t := range taskTerms {
		switch {
		case a.head[t]:
			r += 2
		case a.body[t]:
			r++
		}
	}
	return r
}

// section is the ability as injected.
func (a *Ability) section() string {
	return "## " + a.Title + "\n\n" + a.Body + "\n\n"
}

// Injection header and separator: the abilities come first in the system
// prompt, then the agent's own system prompt.
const (
	injectionHeader = "# Abilities\n\n"
	injectionSep    = "---\n\n"
	truncatedMark   = "\n[truncated]\n\n"
	minTruncated    = 16 // a cut ability shorter than this many tokens is left out instead
)

// InjectedAbility is one ability in an Injection.
type InjectedAbility struct {
	ID        string `json:"id"`
	Core      bool   `json:"core"`
	Relevance int    `json:"relevance"` // 0 for core abilities
	Tokens    int    `json:"tokens"`    // as injected
	Full      int    `json:"fullTokens"`
	Truncated bool   `json:"truncated"`
}

// Injection is a system prompt with the agent's abilities in front.
type Injection struct {
	System    string            `json:"-"`
	Abilities []InjectedAbility `json:"abilities"`
	Omitted   []string          `json:"omitted"` // task-matched abilities left out for the budget
	Tokens    int               `json:"tokens"`  // of the injected block (header and separator included)
	Budget    int               `json:"budget"`
	Tokenizer string            `json:"tokenizer"`
	Warnings  []string          `json:"warnings"`
}

// Abilities holds the abilities of a registry.
type Abilities struct {
	byID map[string]*Ability
	tok  *Tokenizer
}

// NewAbilities indexes abilities by id; a second ability with an id is an
// error.
func NewAbilities(list []*Ability, tok *Tokenizer) (*Abilities, error) {
	as := &Abilities{byID: map[string]*Ability{}, tok: tok}
	for _, a := range list {
		if old, ok := as.byID[a.ID]; ok {
			return nil, &errkind.InputError{Source: a.Source, Problem: fmt.Sprintf("ability %q is also %s", a.ID, old.Source)}
		}
		as.byID[a.ID] = a
	}
	return as, nil
}

// Get returns an ability.
func (as *Abilities) Get(id string) (*Ability, bool) {
	a, ok := as.byID[id]
	return a, ok
}

// IDs returns the ability ids, sorted.
func (as *Abilities) IDs() []string {
	ids := make([]string, 0, len(as.byID))
	for id := range as.byID {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

// Tokens counts an ability as injected.
func (as *Abilities) Tokens(a *Ability) int { return as.tok.Count(a.section()) }

// Inject builds the system prompt of profile p for task, before anything is
// sent to a provider: the core abilities first, in the profile's order and
// whatever the task; then the profile's other abilities that match the task,
// most relevant first (ties by id); then the agent's system prompt. The
// injected block never exceeds the profile's token budget: the ability that
// does not fit is cut at a token boundary (marked [truncated]) and those
// after it are left out, each with a warning.
func (as *Abilities) Inject(p *Profile, task string) (Injection, error) {
	inj := Injection{Budget: p.TokenBudget(), Tokenizer: TokenizerName, Abilities: []InjectedAbility{}, Omitted: []string{}, Warnings: []string{}}
	type pick struct {
		a    *Ability
		core bool
		rel  int
	}
	var picks []pick
	for _, id := range p.CoreAbilities {
		a, ok := as.byID[id]
		if !ok {
			return inj, &errkind.InputError{Source: "agent " + p.ID, Field: "coreAbilities", Problem: fmt.Sprintf("ability %q does not exist", id), Hint: "add registry/abilities/" + id + ".md"}
		}
		picks = append(picks, pick{a, true, 0})
	}
	tt := terms(task)
	var matched []pick
	for _, id := range p.Abilities {
		a, ok := as.byID[id]
		if !ok {
			return inj, &errkind.InputError{Source: "agent " + p.ID, Field: "abilities", Problem: fmt.Sprintf("ability %q does not exist", id), Hint: "add registry/abilities/" + id + ".md"}
		}
		if r := a.relevance(tt); r > 0 {
			matched = append(matched, pick{a, false, r})
		}
	}
	sort.SliceStable(matched, func(i, j int) bool {
		if matched[i].rel != matched[j].rel {
			return matched[i].rel > matched[j].rel
		}
		return matched[i].a.ID < matched[j].a.ID
	})
	picks = append(picks, matched...)
	if len(picks) == 0 {
		inj.System = p.SystemPrompt
		return inj, nil
	}
	budget := inj.Budget
	used := as.tok.Count(injectionHeader) + as.tok.Count(injectionSep)
	var sections []string
	full := false
	for _, pk := range picks {
		sec := pk.a.section()
		n := as.tok.Count(sec)
		ia := InjectedAbility{ID: pk.a.ID, Core: pk.core, Relevance: pk.rel, Tokens: n, Full: n}
		switch {
		case full:
			inj.Omitted = append(inj.Omitted, pk.a.ID)
			inj.Warnings = append(inj.Warnings, fmt.Sprintf("ability %s left out: the budget of %d tokens is spent", pk.a.ID, budget))
			continue
		case used+n <= budget:
		default:
			room := budget - used - as.tok.Count(truncatedMark)
			full = true
			if room < minTruncated {
				inj.Omitted = append(inj.Omitted, pk.a.ID)
				inj.Warnings = append(inj.Warnings, fmt.Sprintf("ability %s (%d tokens) left out: %d of the budget of %d tokens remain", pk.a.ID, n, budget-used, budget))
				continue
			}
			sec = as.tok.Truncate(sec, room) + truncatedMark
			ia.Tokens, ia.Truncated = as.tok.Count(sec), true
			inj.Warnings = append(inj.Warnings, fmt.Sprintf("ability %s truncated to %d of %d tokens: the budget is %d tokens", pk.a.ID, ia.Tokens, n, budget))
		}
		used += ia.Tokens
		sections = append(sections, sec)
		inj.Abilities = append(inj.Abilities, ia)
	}
	block := injectionHeader + strings.Join(sections, "") + injectionSep
	// Token counts of concatenated pieces may differ from the sum of the
	// pieces by a merge at a seam: hold the budget on the whole block.
	for total := as.tok.Count(block); total > budget && len(sections) > 0; total = as.tok.Count(block) {
		last := len(sections) - 1
		cut := as.tok.Truncate(strings.TrimSuffix(sections[last], truncatedMark), as.tok.Count(sections[last])-(total-budget)-as.tok.Count(truncatedMark))
		if cut == "" {
			sections = sections[:last]
			dropped := inj.Abilities[last]
			inj.Abilities = inj.Abilities[:last]
			inj.Omitted = append(inj.Omitted, dropped.ID)
			inj.Warnings = append(inj.Warnings, fmt.Sprintf("ability %s left out: the budget of %d tokens is spent", dropped.ID, budget))
		} else {
			sections[last] = cut + truncatedMark
			inj.Abilities[last].Tokens, inj.Abilities[last].Truncated = as.tok.Count(sections[last]), true
		}
		block = injectionHeader + strings.Join(sections, "") + injectionSep
		if len(sections) == 0 {
			block = ""
		}
	}
	inj.Tokens = as.tok.Count(block)
	inj.System = block + p.SystemPrompt
	return inj, nil
}
