package agent

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/dome-registry/dome/pkg/agent/provider"
	"github.com/dome-registry/dome/pkg/errkind"
)

// File is one registry file: its path and bytes.
type File struct {
	Path string
	Data []byte
}

// CatalogError lists every problem of an agent registry, in file order. It
// unwraps to the first one (an *errkind.InputError: exit 2).
type CatalogError struct {
	Problems []error
}

func (e *CatalogError) Error() string {
	if len(e.Problems) == 1 {
		return e.Problems[0].Error()
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d problems in the agent registry:", len(e.Problems))
	for i, p := range e.Problems {
		if i == 20 {
			fmt.Fprintf(&b, "\n  ... and %d more", len(e.Problems)-20)
			break
		}
		b.WriteString("\n  ")
		b.WriteString(p.Error())
	}
	return b.String()
}

func (e *CatalogError) Unwrap() error { return e.Problems[0] }

// LoadOptions say what LoadCatalog checks beyond each file.
type LoadOptions struct {
	// Tokenizer, when set, also checks that every agent's core abilities
	// fit its token budget (they are never left out, so they must fit).
	Tokenizer *Tokenizer
}

// LoadCatalog parses and checks the agent registry at commit: every profile
// (file name <id>.agent.json/.yaml/.yml, the id inside equal to it),
// ability and runtime, and across them: ids unique, the standard agent
// present and enabled, every referenced ability, runtime and delegate
// present, every model in its runtime's allowlist, no delegation cycle
// among the workflows' delegate steps, and no chain of them deeper than
// the maxDepth of an agent on it. All problems are reported together.
func LoadCatalog(commit string, agents, runtimes, abilities []File, opts LoadOptions) (*Catalog, error) {
	var probs []error
	add := func(err error) { probs = append(probs, err) }
	v := NewValidator()
	set := NewSet(v)
	tok := opts.Tokenizer
	if tok == nil {
		tok = NewTokenizer()
	}
	// Files that fail are reported once; what refers to them is not
	// reported again as missing.
	broken := map[string]bool{}
	var ablist []*Ability
	for _, f := range abilities {
		a, err := ParseAbility(f.Path, f.Data)
		if err != nil {
			add(err)
			broken["ability:"+strings.TrimSuffix(fileBase(f.Path), ".md")] = true
			continue
		}
		ablist = append(ablist, a)
	}
	abs, err := NewAbilities(ablist, tok)
	if err != nil {
		add(err)
		abs, _ = NewAbilities(nil, tok)
	}
	rts := map[string]*provider.Runtime{}
	rtSchema := provider.CompileRuntimeSchema()
	for _, f := range runtimes {
		rt, err := provider.ParseRuntime(f.Path, f.Data, rtSchema)
		if err != nil {
			add(err)
			broken["runtime:"+strings.TrimSuffix(fileBase(f.Path), ".runtime.json")] = true
			continue
		}
		if want := strings.TrimSuffix(fileBase(f.Path), ".runtime.json"); rt.ID != want {
			add(&errkind.InputError{Source: f.Path, Field: "/id", Problem: fmt.Sprintf("%q, but the file is named for %q", rt.ID, want), Hint: "name the file <id>.runtime.json"})
			continue
		}
		rts[rt.ID] = rt
	}
	sawStandard := false
	for _, f := range agents {
		id, ok := ProfileFileID(f.Path)
		sawStandard = sawStandard || id == StandardAgentID
		if !ok {
			add(&errkind.InputError{Source: f.Path, Problem: "an agent profile is named <id>.agent.json, .agent.yaml or .agent.yml"})
			continue
		}
		p, err := v.Parse(f.Path, f.Data)
		if err != nil {
			add(err)
			broken["agent:"+id] = true
			continue
		}
		if p.ID != id {
			add(&errkind.InputError{Source: f.Path, Field: "/id", Problem: fmt.Sprintf("%q, but the file is named for %q", p.ID, id), Hint: "name the file <id>.agent.json"})
			continue
		}
		if err := set.create(f.Path, p); err != nil { // Parse validated it
			add(err)
		}
	}
	if _, ok := set.byID[StandardAgentID]; ok || !sawStandard {
		// (A standard profile that failed to parse is reported already.)
		if err := set.CheckStandard(); err != nil {
			add(err)
		}
	}
	for _, id := range set.ids {
		p, src := set.byID[id].p, set.byID[id].source
		for i, a := range p.CoreAbilities {
			if _, ok := abs.byID[a]; !ok && !broken["ability:"+a] {
				add(&errkind.InputError{Source: src, Field: fmt.Sprintf("/coreAbilities/%d", i), Problem: fmt.Sprintf("ability %q does not exist", a), Hint: "add abilities/" + a + ".md"})
			}
		}
		for i, a := range p.Abilities {
			if _, ok := abs.byID[a]; !ok && !broken["ability:"+a] {
				add(&errkind.InputError{Source: src, Field: fmt.Sprintf("/abilities/%d", i), Problem: fmt.Sprintf("ability %q does not exist", a), Hint: "add abilities/" + a + ".md"})
			}
		}
		if rt, ok := rts[p.Provider.Runtime]; !ok && broken["runtime:"+p.Provider.Runtime] {
		} else if !ok {
			add(&errkind.InputError{Source: src, Field: "/provider/runtime", Problem: fmt.Sprintf("model runtime %q does not exist", p.Provider.Runtime), Hint: "add agents/runtimes/" + p.Provider.Runtime + ".runtime.json"})
		} else if !rt.AllowsModel(p.Provider.Model) {
			add(&errkind.InputError{Source: src, Field: "/provider/model", Problem: fmt.Sprintf("model %q is not in runtime %s's allowlist (%s)", p.Provider.Model, rt.ID, strings.Join(rt.Models, ", "))})
		}
		if p.Delegation != nil {
			for i, d := range p.Delegation.AllowedDelegates {
				if _, ok := set.byID[d]; !ok && !broken["agent:"+d] {
					add(&errkind.InputError{Source: src, Field: fmt.Sprintf("/delegation/allowedDelegates/%d", i), Problem: fmt.Sprintf("agent %q does not exist", d)})
				}
			}
		}
		if opts.Tokenizer != nil {
			if err := checkCoreBudget(abs, p, src); err != nil {
				add(err)
			}
		}
	}
	probs = append(probs, checkDelegationGraph(set, broken)...)
	if len(probs) > 0 {
		return nil, &CatalogError{Problems: probs}
	}
	return &Catalog{Commit: commit, Agents: set, Abilities: abs, Runtimes: rts}, nil
}

// checkCoreBudget fails when the core abilities alone exceed the budget.
func checkCoreBudget(abs *Abilities, p *Profile, src string) error {
	if len(p.CoreAbilities) == 0 {
		return nil
	}
	var b strings.Builder
	b.WriteString(injectionHeader)
	for _, id := range p.CoreAbilities {
		if a, ok := abs.byID[id]; ok {
			b.WriteString(a.section())
		}
	}
	b.WriteString(injectionSep)
	if n := abs.tok.Count(b.String()); n > p.TokenBudget() {
		return &errkind.InputError{Source: src, Field: "/coreAbilities", Problem: fmt.Sprintf("the core abilities take %d %s tokens, over the abilityTokenBudget of %d", n, TokenizerName, p.TokenBudget()),
			Hint: "core abilities are always injected whole: raise abilityTokenBudget or move some to abilities"}
	}
	return nil
}

// delegateTargets lists the agents a profile's workflow delegates to, with
// the field that says so.
func delegateTargets(p *Profile) []struct{ to, field string } {
	var out []struct{ to, field string }
	if p.Workflow == nil {
		return nil
	}
	for i, s := range p.Workflow.Steps {
		if s.Delegate != nil {
			out = append(out, struct{ to, field string }{s.Delegate.Agent, fmt.Sprintf("/workflow/steps/%d/delegate/agent", i)})
		}
		if s.Compensate != nil && s.Compensate.Delegate != nil {
			out = append(out, struct{ to, field string }{s.Compensate.Delegate.Agent, fmt.Sprintf("/workflow/steps/%d/compensate/delegate/agent", i)})
		}
	}
	return out
}

// checkDelegationGraph finds, among the delegate steps of all workflows,
// delegates that do not exist, cycles (a run would reach an agent already
// in its chain) and chains deeper than the smallest maxDepth on them.
func checkDelegationGraph(set *Set, broken map[string]bool) []error {
	var probs []error
	edges := map[string][]string{}
	for _, id := range set.ids {
		p, src := set.byID[id].p, set.byID[id].source
		for _, t := range delegateTargets(p) {
			if _, ok := set.byID[t.to]; !ok {
				if broken["agent:"+t.to] {
					continue
				}
				probs = append(probs, &errkind.InputError{Source: src, Field: t.field, Problem: fmt.Sprintf("agent %q does not exist", t.to)})
				continue
			}
			edges[id] = append(edges[id], t.to)
		}
	}
	for id := range edges {
		sort.Strings(edges[id])
	}
	// Cycles: a depth-first search over the ids in order.
	const white, grey, black = 0, 1, 2
	color := map[string]int{}
	var stack []string
	reported := map[string]bool{}
	var visit func(id string)
	visit = func(id string) {
		color[id] = grey
		stack = append(stack, id)
		for _, to := range edges[id] {
			switch color[to] {
			case grey:
				i := len(stack) - 1
				for stack[i] != to {
					i--
				}
				cycle := append(append([]string(nil), stack[i:]...), to)
				if !reported[to] {
					reported[to] = true
					probs = append(probs, &errkind.InputError{Source: set.byID[id].source, Field: "/workflow",
						Problem: fmt.Sprintf("delegation cycle: %s (DELEGATION_CYCLE)", strings.Join(cycle, " -> ")),
						Hint:    "an agent may not delegate to itself or to an agent that delegates back to it"})
				}
			case white:
				visit(to)
			}
		}
		stack = stack[:len(stack)-1]
		color[id] = black
	}
	for _, id := range set.ids {
		if color[id] == white {
			visit(id)
		}
	}
	if len(probs) > 0 {
		return probs
	}
	// Depth: from each agent, the longest chain of delegate steps against
	// the smallest maxDepth on it. (The graph is acyclic here.)
	type key struct {
		id           string
		depth, limit int
	}
	seen := map[key]bool{}
	var walk func(chain []string, limit int) error
	walk = func(chain []string, limit int) error {
		cur := chain[len(chain)-1]
		k := key{cur, len(chain) - 1, limit}
		if seen[k] {
			return nil
		}
		seen[k] = true
		for _, to := range edges[cur] {
			l := min(limit, set.byID[to].p.MaxDepth())
			next := append(append([]string(nil), chain...), to)
			if len(next)-1 > l {
				return &errkind.InputError{Source: set.byID[chain[0]].source, Field: "/delegation/maxDepth",
					Problem: fmt.Sprintf("the delegation chain %s is %d deep, over maxDepth %d (DELEGATION_DEPTH_EXCEEDED)", strings.Join(next, " -> "), len(next)-1, l),
					Hint:    "raise delegation.maxDepth of the agents on the chain, or delegate less deeply"}
			}
			if err := walk(next, l); err != nil {
				return err
			}
		}
		return nil
	}
	for _, id := range set.ids {
		if err := walk([]string{id}, set.byID[id].p.MaxDepth()); err != nil {
			probs = append(probs, err)
			break
		}
	}
	return probs
}

// IsCatalogError reports whether err is a CatalogError.
func IsCatalogError(err error) bool {
	var ce *CatalogError
	return errors.As(err, &ce)
}
