package grant

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/dome-registry/dome/pkg/a2a"
	"github.com/dome-registry/dome/pkg/canonical"
)

// Sources are the pinned inputs of a derivation.
type Sources struct {
	Policy        *Policy
	Index         *Index    // the resolver checked against the contracts
	Card          *a2a.Card // the card of what will run the node
	CardID        string    // "runtime/<id>" or "tool/<id>"
	CardRef       string    // where it was read, e.g. "runtime/dome-worker@<commit>"
	CardDigest    string    // sha256 of its canonical bytes
	Profile       *a2a.Profile
	ProfileRef    string
	ProfileDigest string
}

// Need is what a node needs: the capabilities it declares and who holds
// the grant.
type Need struct {
	NodeID              string   // the TaskSpec node (optional)
	Capabilities        []string // required_capabilities(node)
	Role                string   // worker, coordinator or planner
	ActingAsCoordinator bool     // a planner acting as coordinator holds what a coordinator holds
	Audience            string   // default: coordinator for the coordinator, else worker_runtime
	TTLSeconds          int64    // 0: the policy's default_ttl_seconds
	SingleUse           bool     // make a grant without write methods single-use too
	Narrow              *Template
}

// Profile is a derived ToolProfile before it is bound to an execution.
type Profile struct {
	AllowedCapabilities []string    `json:"allowed_capabilities"`
	AllowedMethods      []Method    `json:"allowed_methods"`
	Audience            string      `json:"audience"`
	Budgets             Budgets     `json:"budgets"`
	Constraints         Constraints `json:"constraints"`
	Contracts           []string    `json:"contracts"`
	NodeID              string      `json:"node_id,omitempty"`
	ProfileID           string      `json:"profile_id"`
	SingleUse           bool        `json:"single_use"`
}

// Method is one granted method.
type Method struct {
	Capability string `json:"capability"`
	Class      Class  `json:"class"`
	Method     string `json:"method"`
	SideEffect string `json:"side_effect,omitempty"`
}

// Derivation is Derive's result: the profile, its lifetime, why it is what
// it is, and the digest of every input.
type Derivation struct {
	Profile         Profile     `json:"profile"`
	TTLSeconds      int64       `json:"ttl_seconds"`
	InputsHash      string      `json:"inputs_hash"`
	DeterminismSeed string      `json:"determinism_seed,omitempty"`
	Explain         Explanation `json:"explain"`
}

// Explanation says which rule let each method in, which kept each other
// method of the same contracts out, and where each constraint came from.
type Explanation struct {
	Role          string               `json:"role"`
	EffectiveRole string               `json:"effective_role"`
	Granted       []MethodDecision     `json:"granted"`
	Excluded      []MethodDecision     `json:"excluded"`
	Constraints   []ConstraintDecision `json:"constraints"`
}

// MethodDecision is one method and the rule that decided it.
type MethodDecision struct {
	Method     string `json:"method"`
	Capability string `json:"capability,omitempty"`
	Class      Class  `json:"class"`
	Rule       string `json:"rule"`
}

// ConstraintDecision is one constraint's value and where it came from.
type ConstraintDecision struct {
	Field string `json:"field"`
	Value any    `json:"value"`
	Rule  string `json:"rule"`
}

func reqErr(code Code, field, format string, a ...any) *Error {
	return &Error{Code: code, Source: "derive", Field: field, Msg: fmt.Sprintf(format, a...)}
}

// Derive computes ToolProfile = policy ∩ resolver(required_capabilities) ∩
// card (∩ the A2A profile, ∩ the request's narrowing). It refuses, with a
// reason code, any required capability that one of them does not allow: a
// node gets everything it declared or nothing.
func Derive(src Sources, req Need) (*Derivation, error) {
	if src.Policy == nil || src.Index == nil || src.Card == nil {
		return nil, reqErr(CodeBadRequest, "", "a derivation needs a policy, a resolver index and a card")
	}
	pol, ix, card := src.Policy, src.Index, src.Card
	ex := Explanation{Role: req.Role, EffectiveRole: req.Role}
	if req.NodeID != "" {
		if err := CheckID(req.NodeID); err != nil {
			return nil, reqErr(CodeBadRequest, "node_id", "%v", err)
		}
	}
	switch req.Role {
	case RoleWorker, RoleCoordinator, RolePlanner:
	default:
		return nil, reqErr(CodeBadRequest, "role", "%q: want worker, coordinator or planner", req.Role)
	}
	if req.ActingAsCoordinator {
		if req.Role != RolePlanner {
			return nil, reqErr(CodeBadRequest, "role", "only a planner acts as coordinator (role is %s)", req.Role)
		}
		ex.EffectiveRole = RoleCoordinator
	}
	role := ex.EffectiveRole
	audience := req.Audience
	if audience == "" {
		audience = AudienceWorker
		if role == RoleCoordinator {
			audience = AudienceCoordinator
		}
	}
	if !pol.MayUseAudience(role, audience) {
		e := reqErr(CodeAudienceNotPermitted, "audience", "%s may not ask for audience %q (%s: /grants/audiences)", describeRole(req), audience, pol.Source)
		if audience == AudienceCoordinator {
			e.Hint = "the coordinator audience is the coordinator's alone; a planner gets it only with --as-coordinator"
		}
		return nil, e
	}
	ttl := req.TTLSeconds
	switch {
	case ttl < 0:
		return nil, reqErr(CodeBadRequest, "ttl", "%d s: want a positive lifetime", ttl)
	case ttl == 0:
		ttl = pol.Grants.DefaultTTLSeconds
	case ttl > pol.Grants.MaxTTLSeconds:
		return nil, reqErr(CodeTTLOverCap, "ttl", "%d s is over the policy's max_ttl_seconds (%d, %s)", ttl, pol.Grants.MaxTTLSeconds, pol.Source)
	}
	if len(req.Capabilities) == 0 {
		return nil, reqErr(CodeBadRequest, "capabilities", "the node requires no capability; a grant needs at least one")
	}
	caps := sortedSet(req.Capabilities)
	for _, c := range caps {
		if err := checkCapabilityID(c); err != nil {
			return nil, reqErr(CodeBadRequest, "capabilities", "%v", err)
		}
	}
	prof := src.Profile
	if prof != nil {
		if prof.Card != src.CardID {
			return nil, reqErr(CodeProfileMismatch, "profile", "A2A profile %s is for card %s, not %s", prof.ID, prof.Card, src.CardID)
		}
		if prof.Audience != audience {
			return nil, reqErr(CodeProfileMismatch, "profile", "A2A profile %s is for audience %s, not %s", prof.ID, prof.Audience, audience)
		}
	}

	// Each required capability must be allowed by all three (four).
	var capabilities []*Capability
	for _, c := range caps {
		capb, ok := ix.Resolver.Capabilities[c]
		if !ok {
			e := reqErr(CodeUnknownCapability, "capabilities", "capability %q is not in %s", c, ix.Resolver.Source)
			e.Hint = "known capabilities: " + strings.Join(ix.Resolver.IDs(), ", ")
			return nil, e
		}
		if !card.HasCapability(c) {
			return nil, reqErr(CodeCardLacksCapability, "capabilities", "card %s does not offer %q (x-dome.capabilities: %s)", src.CardID, c, strings.Join(card.XDome.Capabilities, ", "))
		}
		if !card.HasClass(string(capb.Class)) {
			return nil, reqErr(CodeCardLacksClass, "capabilities", "%q is a %s capability; card %s allows %s (x-dome.max_classes)", c, capb.Class, src.CardID, strings.Join(card.XDome.MaxClasses, ", "))
		}
		if !pol.MayHold(role, capb.Class) {
			return nil, reqErr(CodeClassNotPermitted, "capabilities", "%s may not hold %s capabilities such as %q (%s: /classes/%s/holders: %s)", describeRole(req), capb.Class, c, pol.Source, capb.Class, strings.Join(pol.Classes[capb.Class].Holders, ", "))
		}
		if capb.Class == ClassAdmin && audience != AudienceCoordinator {
			return nil, reqErr(CodeClassNotPermitted, "capabilities", "admin capability %q goes only to the coordinator audience, not %s", c, audience)
		}
		if prof != nil && !slices.Contains(prof.Capabilities, c) {
			return nil, reqErr(CodeProfileMismatch, "capabilities", "A2A profile %s does not grant %q (it grants %s)", prof.ID, c, strings.Join(prof.Capabilities, ", "))
		}
		capabilities = append(capabilities, capb)
	}

	// Methods: the union of the capabilities' methods, through the view.
	granted := map[string]bool{}
	methods := make([]Method, 0, 16)
	tools := map[string]bool{}
	for _, capb := range capabilities {
		tools[capb.Tool] = true
		rules := map[string]string{} // by Via: one rule string per capability and route
		for _, m := range ix.methods[capb.ID] {
			if granted[m.Method] {
				continue
			}
			if prof != nil {
				if ok, why := viewAllows(prof, m); !ok {
					ex.Excluded = append(ex.Excluded, MethodDecision{Method: m.Method, Capability: capb.ID, Class: m.Class, Rule: fmt.Sprintf("A2A profile %s: %s", prof.ID, why)})
					continue
				}
			}
			granted[m.Method] = true
			methods = append(methods, Method{Capability: capb.ID, Class: m.Class, Method: m.Method, SideEffect: m.SideEffect})
			rule, ok := rules[m.Via]
			if !ok {
				rule = "resolver " + capb.ID + " via " + m.Via + " (" + string(capb.Class) + "); policy: " + role + " may hold " + string(capb.Class) + "; card " + src.CardID + " offers " + capb.ID
				if prof != nil {
					rule += "; A2A profile " + prof.ID + " lets it through"
				}
				rules[m.Via] = rule
			}
			ex.Granted = append(ex.Granted, MethodDecision{Method: m.Method, Capability: capb.ID, Class: m.Class, Rule: rule})
		}
	}
	if len(methods) == 0 {
		return nil, reqErr(CodeNoMethods, "capabilities", "nothing is left to grant: the A2A profile's view removed every method of %s", strings.Join(caps, ", "))
	}
	// Sort by name through an index: cheaper than moving the structs.
	order := make([]int, len(methods))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return strings.Compare(methods[a].Method, methods[b].Method) })
	sorted := make([]Method, len(methods))
	for i, j := range order {
		sorted[i] = methods[j]
	}
	methods = sorted
	explainExcluded(&ex, ix, tools, granted, caps)

	d := &Derivation{TTLSeconds: ttl}
	d.Profile = Profile{AllowedCapabilities: caps, AllowedMethods: methods, Audience: audience, NodeID: req.NodeID}
	if err := deriveConstraints(d, &ex, pol, capabilities, prof, req.Narrow); err != nil {
		return nil, err
	}
	hasWrite := false
	for _, m := range methods {
		hasWrite = hasWrite || m.Class.Mutates()
	}
	switch {
	case hasWrite && pol.Grants.SingleUseForWrite:
		d.Profile.SingleUse = true
		ex.Constraints = append(ex.Constraints, ConstraintDecision{Field: "single_use", Value: true, Rule: "the grant has write or admin methods and the policy's single_use_for_write is on: spent by its first write or admin call"})
	case req.SingleUse:
		d.Profile.SingleUse = true
		ex.Constraints = append(ex.Constraints, ConstraintDecision{Field: "single_use", Value: true, Rule: "requested"})
	default:
		ex.Constraints = append(ex.Constraints, ConstraintDecision{Field: "single_use", Value: false, Rule: "no write method: usable until it expires"})
	}
	ex.Constraints = append(ex.Constraints, ConstraintDecision{Field: "ttl_seconds", Value: ttl, Rule: fmt.Sprintf("requested or the policy default (%d s), at most max_ttl_seconds (%d s)", pol.Grants.DefaultTTLSeconds, pol.Grants.MaxTTLSeconds)})
	var contracts []string
	for t := range tools {
		if c := ix.Catalog.Contracts[t]; c != nil {
			for _, m := range methods {
				if strings.HasPrefix(m.Method, t+"/") {
					contracts = append(contracts, c.ContractRef())
					break
				}
			}
		}
	}
	slices.Sort(contracts)
	d.Profile.Contracts = contracts
	pid, err := profileID(d.Profile)
	if err != nil {
		return nil, err
	}
	d.Profile.ProfileID = pid
	if prof != nil && prof.Determinism != nil && prof.Determinism.Seed != nil {
		d.DeterminismSeed = fmt.Sprint(*prof.Determinism.Seed)
	}
	ih, err := inputsHash(src, req, role, audience, ttl, tools)
	if err != nil {
		return nil, err
	}
	d.InputsHash = ih
	d.Explain = ex
	return d, nil
}

func describeRole(req Need) string {
	if req.ActingAsCoordinator {
		return "a planner acting as coordinator"
	}
	return "a " + req.Role
}

// viewAllows applies an A2A profile's view to a method.
func viewAllows(p *a2a.Profile, m resolvedMethod) (bool, string) {
	if p.View == nil {
		return true, ""
	}
	match := func(sel string) bool {
		if tag, ok := strings.CutPrefix(sel, "tag:"); ok {
			return slices.Contains(m.Tags, tag)
		}
		ok, _ := doublestar.Match(sel, m.Method)
		return ok
	}
	for _, s := range p.View.Deny {
		if match(s) {
			return false, fmt.Sprintf("view.deny %q", s)
		}
	}
	if len(p.View.Allow) == 0 {
		return true, ""
	}
	for _, s := range p.View.Allow {
		if match(s) {
			return true, ""
		}
	}
	return false, "not in view.allow " + strings.Join(p.View.Allow, ", ")
}

// explainExcluded lists every other operation of the contracts the grant
// touches, with the rule that kept it out.
func explainExcluded(ex *Explanation, ix *Index, tools map[string]bool, granted map[string]bool, required []string) {
	viewed := map[string]bool{}
	for _, e := range ex.Excluded {
		viewed[e.Method] = true
	}
	names := make([]string, 0, len(tools))
	for t := range tools {
		names = append(names, t)
	}
	slices.Sort(names)
	for _, t := range names {
		c := ix.Catalog.Contracts[t]
		for _, op := range c.Operations {
			m := MethodName(t, op.ID)
			if granted[m] || viewed[m] {
				continue
			}
			owners := ix.owners[m]
			rule := "no capability of " + ix.Resolver.Source + " maps it"
			capID := ""
			if len(owners) > 0 {
				capID = owners[0]
				var why []string
				for _, o := range owners {
					why = append(why, fmt.Sprintf("%s (%s)", o, ix.Resolver.Capabilities[o].Class))
				}
				rule = "mapped only by " + strings.Join(why, ", ") + ", which the node does not require (it requires " + strings.Join(required, ", ") + ")"
			}
			ex.Excluded = append(ex.Excluded, MethodDecision{Method: m, Capability: capID, Class: op.Class, Rule: rule})
		}
	}
	slices.SortFunc(ex.Excluded, func(a, b MethodDecision) int { return strings.Compare(a.Method, b.Method) })
}

// deriveConstraints starts from the policy defaults and each capability's
// template, then narrows by the A2A profile and the request.
func deriveConstraints(d *Derivation, ex *Explanation, pol *Policy, caps []*Capability, prof *a2a.Profile, narrow *Template) error {
	def := &pol.Defaults
	var read, write, deny, hosts []string
	deny = slices.Clone(def.denyGlobs())
	byCap := map[string]int64{}
	var total int64
	wall := int64(-1)
	wallFrom := ""
	from := map[string][]string{}
	for _, c := range caps {
		t := c.Template
		pick := func(field string, tv, dv []string) []string {
			if tv != nil {
				from[field] = append(from[field], c.ID+" template ["+strings.Join(tv, " ")+"]")
				return tv
			}
			from[field] = append(from[field], c.ID+" policy default ["+strings.Join(dv, " ")+"]")
			return dv
		}
		read = append(read, pick("io.read_roots", t.readRoots(), def.readRoots())...)
		if c.Class.Mutates() {
			write = append(write, pick("io.write_roots", t.writeRoots(), def.writeRoots())...)
		}
		deny = append(deny, t.denyGlobs()...)
		hosts = append(hosts, pick("net.allow_hosts", t.hosts(), def.hosts())...)
		calls := *def.maxCalls()
		if v := t.maxCalls(); v != nil {
			calls = *v
		}
		byCap[c.ID] = calls
		from["budgets.max_calls_by_capability"] = append(from["budgets.max_calls_by_capability"], c.ID+" "+strconv.FormatInt(calls, 10))
		total += calls
		w := *def.maxWall()
		if v := t.maxWall(); v != nil {
			w = *v
		}
		if wall < 0 || w < wall {
			wall, wallFrom = w, c.ID
		}
	}
	read, write, deny, hosts = minimalRoots(read), minimalRoots(write), sortedSet(deny), sortedSet(hosts)
	united := func(field string) string {
		if len(from[field]) == 0 {
			return "no write or admin capability: nothing"
		}
		return "united: " + strings.Join(from[field], "; ")
	}
	rules := map[string]string{
		"io.read_roots": united("io.read_roots"), "io.write_roots": united("io.write_roots"),
		"io.deny_globs": "every deny glob of the policy defaults (" + pol.Source + ") and the capabilities' templates", "net.allow_hosts": united("net.allow_hosts"),
		"budgets.max_calls": "the sum of the capabilities' max_calls", "budgets.max_calls_by_capability": "each capability's template, else the policy default: " + strings.Join(from["budgets.max_calls_by_capability"], ", "),
		"budgets.max_wall_seconds": "the smallest max_wall_seconds of the capabilities (" + wallFrom + ")",
	}
	apply := func(t *Template, who string) error {
		if t == nil {
			return nil
		}
		if v := t.readRoots(); v != nil {
			read = intersectRoots(read, v)
			rules["io.read_roots"] += "; narrowed by " + who
		}
		if v := t.writeRoots(); v != nil {
			write = intersectRoots(write, v)
			rules["io.write_roots"] += "; narrowed by " + who
		}
		if v := t.denyGlobs(); len(v) > 0 {
			deny = sortedSet(append(deny, v...))
			rules["io.deny_globs"] += "; added by " + who
		}
		if v := t.hosts(); v != nil {
			hosts = intersectHosts(hosts, v)
			rules["net.allow_hosts"] += "; narrowed by " + who
		}
		if v := t.maxCalls(); v != nil && *v < total {
			total = *v
			rules["budgets.max_calls"] += "; lowered by " + who
		}
		if v := t.maxWall(); v != nil && *v < wall {
			wall = *v
			rules["budgets.max_wall_seconds"] += "; lowered by " + who
		}
		if t.Budgets != nil {
			for c, v := range t.Budgets.MaxCallsByCapability {
				cur, ok := byCap[c]
				if !ok {
					return reqErr(CodeBadRequest, "budgets.max_calls_by_capability", "%s names %q, which the grant does not hold", who, c)
				}
				if v < cur {
					byCap[c] = v
					rules["budgets.max_calls_by_capability"] += "; " + c + " lowered by " + who
				}
			}
		}
		return nil
	}
	if prof != nil && prof.Constraints != nil {
		t, err := TemplateFromA2A(prof.Constraints)
		if err != nil {
			return reqErr(CodeProfileMismatch, "constraints", "A2A profile %s: %v", prof.ID, err)
		}
		if err := apply(t, "A2A profile "+prof.ID); err != nil {
			return err
		}
	}
	if narrow != nil {
		if err := narrow.check(""); err != nil {
			return reqErr(CodeBadRequest, "narrow", "%v", err)
		}
		n := *narrow
		if err := normalizeTemplate(&n); err != nil {
			return reqErr(CodeBadRequest, "narrow", "%v", err)
		}
		if err := apply(&n, "the request"); err != nil {
			return err
		}
	}
	for c, v := range byCap {
		if v > total {
			byCap[c] = total
		}
	}
	if total <= 0 || wall <= 0 {
		return reqErr(CodeBadRequest, "budgets", "narrowing left no budget (max_calls %d, max_wall_seconds %d)", total, wall)
	}
	if read == nil {
		read = []string{}
	}
	if write == nil {
		write = []string{}
	}
	if hosts == nil {
		hosts = []string{}
	}
	d.Profile.Constraints = Constraints{IO: IO{DenyGlobs: deny, ReadRoots: read, WriteRoots: write}, Net: Net{AllowHosts: hosts}}
	d.Profile.Budgets = Budgets{MaxCalls: total, MaxCallsByCapability: byCap, MaxWallSeconds: wall}
	for _, f := range []struct {
		name string
		v    any
	}{
		{"io.read_roots", read}, {"io.write_roots", write}, {"io.deny_globs", deny}, {"net.allow_hosts", hosts},
		{"budgets.max_calls", total}, {"budgets.max_calls_by_capability", byCap}, {"budgets.max_wall_seconds", wall},
	} {
		ex.Constraints = append(ex.Constraints, ConstraintDecision{Field: f.name, Value: f.v, Rule: rules[f.name]})
	}
	return nil
}

// TemplateFromA2A converts an A2A profile's constraints into a Template and
// checks it.
func TemplateFromA2A(c *a2a.Constraints) (*Template, error) {
	t := &Template{}
	if c.Net != nil {
		t.Net = &NetTemplate{AllowHosts: c.Net.AllowHosts}
	}
	if c.IO != nil {
		t.IO = &IOTemplate{ReadRoots: c.IO.ReadRoots, WriteRoots: c.IO.WriteRoots, DenyGlobs: c.IO.DenyGlobs}
	}
	if c.Budgets != nil {
		t.Budgets = &BudgetsTemplate{MaxCalls: c.Budgets.MaxCalls, MaxWallSeconds: c.Budgets.MaxWallSeconds, MaxCallsByCapability: c.Budgets.MaxCallsByCapability}
	}
	if err := t.check("/constraints"); err != nil {
		return nil, err
	}
	if err := normalizeTemplate(t); err != nil {
		return nil, err
	}
	return t, nil
}

// profileID content-addresses a profile: "tp-" and 20 hex digits of the
// digest of its canonical content (profile_id excluded). Profile's members
// are declared in canonical order, its maps have ASCII keys and its strings
// hold no control characters nor U+2028/U+2029 (checked when the inputs
// were parsed), so encoding/json without HTML escaping writes exactly the
// RFC 8785 bytes (TestProfileID_Canonical) at a fraction of the cost.
func profileID(p Profile) (string, error) {
	p.ProfileID = ""
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(p); err != nil {
		return "", fmt.Errorf("profile id: %w", err)
	}
	sum := sha256.Sum256(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
	return "tp-" + hex.EncodeToString(sum[:10]), nil
}

// ProfileCanonical returns the canonical bytes a profile_id is the digest of.
func ProfileCanonical(p Profile) ([]byte, error) {
	p.ProfileID = ""
	return canonical.Marshal(p)
}

// inputsHash is the digest of every input of a derivation: the policy, the
// resolver, the contracts' specs, the card, the A2A profile and the request.
func inputsHash(src Sources, req Need, role, audience string, ttl int64, tools map[string]bool) (string, error) {
	type contractIn struct {
		Version string `json:"version"`
		Commit  string `json:"commit,omitempty"`
		Digest  string `json:"digest"`
	}
	contracts := map[string]contractIn{}
	for t := range tools {
		if c := src.Index.Catalog.Contracts[t]; c != nil {
			contracts[t] = contractIn{Version: c.Version, Commit: c.Commit, Digest: c.Digest}
		}
	}
	in := map[string]any{
		"policy":    src.Policy.Digest,
		"resolver":  src.Index.Resolver.Digest,
		"contracts": contracts,
		"card":      map[string]string{"id": src.CardID, "ref": src.CardRef, "digest": src.CardDigest},
		"request": map[string]any{
			"node_id": req.NodeID, "capabilities": sortedSet(req.Capabilities), "role": role, "audience": audience,
			"ttl_seconds": ttl, "single_use": req.SingleUse, "narrow": req.Narrow,
		},
	}
	if src.Profile != nil {
		in["a2a_profile"] = map[string]string{"id": src.Profile.ID, "ref": src.ProfileRef, "digest": src.ProfileDigest}
	}
	b, err := canonical.Marshal(in)
	if err != nil {
		return "", fmt.Errorf("inputs hash: %w", err)
	}
	return canonical.Digest(b), nil
}
