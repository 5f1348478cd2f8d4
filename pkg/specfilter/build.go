package specfilter

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/dome-registry/dome/pkg/errkind"
)

// build makes the output tree: kept operations, the component closure, used
// tags, then the profile's servers and extension stripping.
func (f *filter) build() (*Value, error) {
	in := f.doc.Root
	out := &Value{Kind: KindObject}
	for _, m := range in.Members {
		if isExtension(m.Key) && f.strips(m.Key) {
			f.ex.Stripped++ // before the closure, so that it follows nothing inside
			continue
		}
		switch m.Key {
		case "paths":
			out.Members = append(out.Members, Member{Key: m.Key, Value: f.keepPaths("paths", m.Value)})
		case "webhooks", xWebhooks:
			if w := f.keepPaths(m.Key, m.Value); len(w.Members) > 0 {
				out.Members = append(out.Members, Member{Key: m.Key, Value: w})
			}
		case "components", "tags":
			// decided below, from what the kept operations reach
		default:
			if isExtension(m.Key) && !f.p.TopLevelExtensions.Keeps(m.Key) {
				f.ex.Removed = append(f.ex.Removed, Pointer{m.Key}.String()+" (top_level_extensions)")
				continue
			}
			out.Members = append(out.Members, Member{Key: m.Key, Value: m.Value.Copy()})
		}
	}
	if t := f.p.TopLevelExtensions; t != nil {
		for _, name := range t.Keep {
			if in.Get(name) == nil {
				f.ex.warn(fmt.Sprintf("top_level_extensions names %s, which %s does not have", name, f.doc.describe(f.doc.File)))
			}
		}
	}
	walk(out, kDocument, nil, &callbackInliner{f: f})
	cl := &closure{f: f, reached: map[compKey]bool{}, tags: map[string]bool{}}
	if err := cl.run(out); err != nil {
		return nil, err
	}
	if comps := f.keepComponents(cl); comps != nil {
		out.Set("components", comps)
	}
	if tags := f.keepTags(cl); tags != nil {
		out.Set("tags", tags)
	}
	f.pruneLinks(out)
	f.overrideServers(out)
	if len(f.p.StripExtensions) > 0 {
		walk(out, kDocument, nil, &stripper{prefixes: f.p.StripExtensions, ex: f.ex})
	}
	if ref, at, line := danglingRef(out); ref != "" {
		src, field := f.doc.location(at)
		return nil, &errkind.InputError{Source: src, Field: fieldAt(field, line), Problem: fmt.Sprintf("$ref %q does not resolve in the filtered spec (the profile removes its target)", ref), Hint: "keep the target (widen the profile, or drop the strip_extensions or servers override that removes it); this is dome spec filter's self-check: report it if the profile removes nothing the reference needs"}
	}
	f.policyWarnings(out)
	return out, nil
}

// keepPaths copies the path items (or webhooks) with their kept operations.
func (f *filter) keepPaths(section string, in *Value) *Value {
	out := &Value{Kind: KindObject, Members: []Member{}}
	if !in.IsObject() {
		return out
	}
	for _, pm := range in.Members {
		if section == "paths" && !strings.HasPrefix(pm.Key, "/") {
			out.Members = append(out.Members, Member{Key: pm.Key, Value: pm.Value.Copy()}) // an extension of the Paths object
			continue
		}
		item := f.pathItem(pm.Value)
		all, some := true, false
		for _, method := range httpMethods {
			if !item.Get(method).IsObject() {
				continue
			}
			if f.decided[Pointer{section, pm.Key, method}.String()] {
				some = true
			} else {
				all = false
			}
		}
		if !some {
			continue
		}
		var kept *Value
		if item == pm.Value {
			kept = pm.Value.Copy()
		} else {
			kept = inlinePathItem(pm.Value, item)
			if !all {
				f.ex.warn(fmt.Sprintf("%s %s: only some operations of the referenced path item are kept", section, pm.Key))
			}
		}
		for _, method := range httpMethods {
			if kept.Get(method) != nil && !f.decided[Pointer{section, pm.Key, method}.String()] {
				kept.Delete(method)
			}
		}
		out.Members = append(out.Members, Member{Key: pm.Key, Value: kept})
	}
	return out
}

// inlinePathItem copies the path item a reference (ref) points at, with the
// reference's own fields (summary, description) on top. dome inlines path
// items referenced from components/pathItems (OpenAPI 3.1): kin-openapi and
// most generators do not read components.pathItems.
func inlinePathItem(ref, target *Value) *Value {
	kept := target.Copy()
	for _, mem := range ref.Members {
		if mem.Key != "$ref" {
			kept.Set(mem.Key, mem.Value.Copy())
		}
	}
	return kept
}

// callbackInliner inlines referenced path items inside callbacks.
type callbackInliner struct {
	f     *filter
	depth int
}

func (c *callbackInliner) object(v *Value, k objKind, at Pointer) bool {
	if k != kCallback {
		return true
	}
	for i, m := range v.Members {
		if isExtension(m.Key) || !m.Value.IsObject() || m.Value.Get("$ref") == nil {
			continue
		}
		if t := c.f.pathItem(m.Value); t != m.Value && t.IsObject() && c.depth < 16 {
			v.Members[i].Value = inlinePathItem(m.Value, t)
			c.depth++
		}
	}
	return true
}

// compKey names a component.
type compKey struct{ section, name string }

// closure collects the components, security schemes and tags reachable
// from the kept parts of the document, to a fixpoint: it follows $ref,
// discriminator mappings, security requirement names, tag names and
// links' operationRef, through components that reach other components.
type closure struct {
	f       *filter
	reached map[compKey]bool
	order   []compKey
	tags    map[string]bool
	err     error
	out     *Value // the kept document, where pointers outside components must land
}

func (c *closure) run(out *Value) error {
	c.out = out
	walk(out, kDocument, nil, c)
	// The components' own extensions and unknown keys are copied as written
	// (keepComponents): their references count too.
	for _, m := range c.f.doc.Root.Get("components").membersOrNil() {
		if _, known := sectionKind(m.Key); !known && !(isExtension(m.Key) && c.f.strips(m.Key)) {
			c.data(m.Value, Pointer{"components", m.Key}, m.Key)
		}
	}
	for i := 0; i < len(c.order) && c.err == nil; i++ {
		k := c.order[i]
		v := c.f.ix.comps[k.section][k.name]
		kind, _ := sectionKind(k.section)
		walk(v, kind, Pointer{"components", k.section, k.name}, c)
	}
	return c.err
}

func (c *closure) reach(section, name string) {
	k := compKey{section, name}
	if !c.reached[k] {
		c.reached[k] = true
		c.order = append(c.order, k)
	}
}

// pointerTarget marks the component a pointer lands in; a pointer outside
// the components must land in the kept document.
func (c *closure) pointerTarget(p Pointer, at Pointer, line int32, what string) {
	if len(p) >= 1 && p[0] == "components" {
		if len(p) >= 3 {
			if _, ok := c.f.ix.comps[p[1]][p[2]]; ok {
				c.reach(p[1], p[2])
				return
			}
		}
		if len(p) >= 2 {
			if _, known := sectionKind(p[1]); !known && c.f.doc.Root.Resolve(p) != nil {
				return // components' extensions and unknown keys are kept as written
			}
		}
	} else if c.out.Resolve(p) != nil {
		return
	}
	if c.err == nil {
		src, field := c.f.doc.location(at)
		c.err = &errkind.InputError{Source: src, Field: fieldAt(field, line), Problem: fmt.Sprintf("%s %q points at a part of the document the profile drops", what, "#"+p.String()), Hint: "move the target to components, or keep the operation it lives in"}
	}
}

func (c *closure) object(v *Value, k objKind, at Pointer) bool {
	if c.err != nil {
		return false
	}
	// A $ref is followed wherever it sits: where OpenAPI allows a Reference
	// Object, and elsewhere too (most tools resolve every $ref they meet).
	if ref, ok := v.Str("$ref"); ok {
		c.ref(ref, at, v.Line, "")
	}
	// Extensions and data (examples, defaults, unknown keys) are copied as
	// written; a $ref inside them must reach a kept object as well.
	for i := range v.Members {
		m := &v.Members[i]
		if m.Value.Kind != KindObject && m.Value.Kind != KindArray {
			continue
		}
		if _, _, spec := child(k, m.Key); spec {
			continue
		}
		ext := isExtension(m.Key) && hasExtensions(k)
		if ext && c.f.strips(m.Key) {
			continue
		}
		where := ""
		if ext {
			where = m.Key
		}
		c.data(m.Value, at.Child(m.Key), where)
	}
	switch k {
	case kOperation:
		for _, t := range stringList(v.Get("tags")) {
			c.tags[t] = true
		}
	case kSecurityRequirement:
		for _, m := range v.Members {
			if _, ok := c.f.ix.comps["securitySchemes"][m.Key]; ok {
				c.reach("securitySchemes", m.Key)
			}
		}
	case kDiscriminator:
		if m := v.Get("mapping"); m.IsObject() {
			for _, mem := range m.Members {
				if mem.Value.Kind != KindString {
					continue
				}
				if isMappingRef(mem.Value.Text) {
					if p, ok := internalPointer(mem.Value.Text); ok {
						c.pointerTarget(p, at.Child("mapping", mem.Key), mem.Value.Line, "discriminator mapping")
					}
				} else if _, ok := c.f.ix.comps["schemas"][mem.Value.Text]; ok {
					c.reach("schemas", mem.Value.Text)
				}
			}
		}
	case kLink:
		if ref, ok := v.Str("operationRef"); ok {
			if p, ok := internalPointer(ref); ok {
				if len(p) >= 3 && p[0] == "components" {
					if _, ok := c.f.ix.comps[p[1]][p[2]]; ok {
						c.reach(p[1], p[2])
					}
				}
			}
		}
	}
	return c.err == nil
}

// ref follows the reference ref found in the object at pointer at; ext
// names the extension it sits in, if any.
func (c *closure) ref(ref string, at Pointer, line int32, ext string) {
	if c.err != nil {
		return
	}
	if p, ok := internalPointer(ref); ok {
		c.pointerTarget(p, at.Child("$ref"), line, "$ref")
		return
	}
	src, field := c.f.doc.location(at.Child("$ref"))
	field = fieldAt(field, line)
	hint := "point the reference inside the document (#/components/...), or write the value out in full"
	if ext != "" {
		hint = fmt.Sprintf("remove the extension with the profile's strip_extensions (or top_level_extensions, at the top level), or point the reference inside the document; dome never follows external references (in %s)", ext)
	}
	c.err = &errkind.InputError{Source: src, Field: field, Problem: fmt.Sprintf("$ref %q is not a reference inside the document: the filtered spec keeps only internal references that resolve", ref), Hint: hint}
}

// data follows the references in v, a value copied as written (an
// extension's value, an example, a default); ext names the extension.
func (c *closure) data(v *Value, at Pointer, ext string) {
	switch v.Kind {
	case KindObject:
		if ref, ok := v.Str("$ref"); ok {
			c.ref(ref, at, v.Line, ext)
		}
		for i := range v.Members {
			if m := &v.Members[i]; m.Value.Kind == KindObject || m.Value.Kind == KindArray {
				c.data(m.Value, append(at, m.Key), ext)
			}
		}
	case KindArray:
		for i, m := range v.Members {
			if it := m.Value; it.Kind == KindObject || it.Kind == KindArray {
				c.data(it, append(at, itoa(i)), ext)
			}
		}
	}
}

// strips reports an extension that the profile's strip_extensions removes.
func (f *filter) strips(key string) bool {
	return (&stripper{prefixes: f.p.StripExtensions}).matches(key)
}

// danglingRef is the filter's self-check, run on every output: it returns
// the first $ref of the document, wherever it sits, that is not internal or
// does not resolve (with its pointer and line), or "". The closure makes
// every reference resolve; this proves it on the tree about to be written.
func danglingRef(out *Value) (ref string, at Pointer, line int32) {
	ix := newIndex(out)
	var visit func(v *Value, p Pointer) bool
	visit = func(v *Value, p Pointer) bool {
		switch v.Kind {
		case KindObject:
			if r, ok := v.Str("$ref"); ok {
				if ptr, ok := internalPointer(r); !ok || ix.resolve(ptr) == nil {
					ref, at, line = r, p.Child("$ref"), v.Line
					return false
				}
			}
			for i := range v.Members {
				if m := &v.Members[i]; (m.Value.Kind == KindObject || m.Value.Kind == KindArray) && !visit(m.Value, append(p, m.Key)) {
					return false
				}
			}
		case KindArray:
			for i, m := range v.Members {
				if it := m.Value; (it.Kind == KindObject || it.Kind == KindArray) && !visit(it, append(p, itoa(i))) {
					return false
				}
			}
		}
		return true
	}
	visit(out, nil)
	return ref, at, line
}

// pruneLinks removes links to operations the profile drops: their
// operationRef would dangle and their operationId would name nothing.
func (f *filter) pruneLinks(out *Value) {
	ids := map[string]bool{}
	walk(out, kDocument, nil, visitFunc(func(v *Value, k objKind, _ Pointer) bool {
		if id, ok := v.Str("operationId"); ok && k == kOperation {
			ids[id] = true
		}
		return true
	}))
	links := out.Get("components").Get("links")
	bad := func(l *Value) bool {
		if ref, ok := l.Str("$ref"); ok {
			if p, ok := internalPointer(ref); ok && len(p) == 3 && p[1] == "links" {
				l = links.Get(p[2])
			}
		}
		if l == nil {
			return true
		}
		if ref, ok := l.Str("operationRef"); ok {
			p, ok := internalPointer(ref)
			return !ok || out.Resolve(p) == nil
		}
		if id, ok := l.Str("operationId"); ok {
			return !ids[id]
		}
		return false
	}
	var removedComps []string
	for _, m := range links.membersOrNil() {
		if bad(m.Value) {
			removedComps = append(removedComps, m.Key)
		}
	}
	walk(out, kDocument, nil, visitFunc(func(v *Value, k objKind, at Pointer) bool {
		if k != kResponse {
			return true
		}
		ls := v.Get("links")
		if !ls.IsObject() {
			return true
		}
		kept := ls.Members[:0]
		for _, m := range ls.Members {
			if bad(m.Value) {
				f.ex.Removed = append(f.ex.Removed, at.Child("links", m.Key).String()+" (its operation is not kept)")
				continue
			}
			kept = append(kept, m)
		}
		ls.Members = kept
		if len(kept) == 0 {
			v.Delete("links")
		}
		return true
	}))
	for _, name := range removedComps {
		links.Delete(name)
		f.ex.Removed = append(f.ex.Removed, Pointer{"components", "links", name}.String()+" (its operation is not kept)")
		for i := range f.ex.Components {
			if c := &f.ex.Components[i]; c.Section == "links" && c.Name == name {
				c.Kept = false
			}
		}
	}
	if links != nil && len(links.Members) == 0 {
		comps := out.Get("components")
		comps.Delete("links")
		if len(comps.Members) == 0 {
			out.Delete("components")
		}
	}
}

// visitFunc adapts a function to the visitor interface.
type visitFunc func(v *Value, k objKind, at Pointer) bool

func (f visitFunc) object(v *Value, k objKind, at Pointer) bool { return f(v, k, at) }

// mutatesComponents reports whether the passes after keepComponents may
// change the kept components of section: strip_extensions changes any
// object, and links to dropped operations are pruned from responses (the
// callback inlining runs before the components are added). The output
// shares the other components with the input instead of copying them (most
// of a filtered spec is schemas): it is only read from then on, and the
// input stays as it was (TestApply_LeavesTheInputAsItWas).
func (f *filter) mutatesComponents(section string) bool {
	return len(f.p.StripExtensions) > 0 || section == "responses"
}

// keepComponents copies the reached components, in input order, and notes
// every component's fate in the explain report.
func (f *filter) keepComponents(cl *closure) *Value {
	in := f.doc.Root.Get("components")
	if !in.IsObject() {
		return nil
	}
	out := &Value{Kind: KindObject}
	for _, sec := range in.Members {
		if _, ok := sectionKind(sec.Key); !ok || !sec.Value.IsObject() {
			out.Members = append(out.Members, Member{Key: sec.Key, Value: sec.Value.Copy()}) // extensions and unknown keys stay
			continue
		}
		kept := &Value{Kind: KindObject}
		for _, e := range sec.Value.Members {
			keep := cl.reached[compKey{sec.Key, e.Key}]
			cd := ComponentDecision{Section: sec.Key, Name: e.Key, Kept: keep}
			if o, ok := f.doc.origins[Pointer{"components", sec.Key, e.Key}.String()]; ok {
				cd.Origin = o.File + "#" + o.Pointer.String()
			}
			f.ex.Components = append(f.ex.Components, cd)
			if keep {
				v := e.Value
				if f.mutatesComponents(sec.Key) {
					v = v.Copy()
				}
				kept.Members = append(kept.Members, Member{Key: e.Key, Value: v})
			}
		}
		if len(kept.Members) > 0 {
			out.Members = append(out.Members, Member{Key: sec.Key, Value: kept})
		}
	}
	if len(out.Members) == 0 {
		return nil
	}
	return out
}

// keepTags keeps the tag objects that a kept operation uses.
func (f *filter) keepTags(cl *closure) *Value {
	in := f.doc.Root.Get("tags")
	if in == nil || in.Kind != KindArray {
		return nil
	}
	out := &Value{Kind: KindArray}
	for _, m := range in.Members {
		t := m.Value
		name, _ := t.Str("name")
		keep := cl.tags[name]
		f.ex.Tags = append(f.ex.Tags, TagDecision{Name: name, Kept: keep})
		if keep {
			out.Members = append(out.Members, Member{Value: t.Copy()})
		}
	}
	if len(out.Members) == 0 {
		return nil
	}
	return out
}

// overrideServers replaces the document's servers with the profile's and
// removes path- and operation-level servers, which would bypass them.
func (f *filter) overrideServers(out *Value) {
	if len(f.p.Servers) == 0 {
		return
	}
	list := &Value{Kind: KindArray}
	for _, s := range f.p.Servers {
		o := &Value{Kind: KindObject}
		o.Set("url", newString(s.URL))
		if s.Description != "" {
			o.Set("description", newString(s.Description))
		}
		list.Members = append(list.Members, Member{Value: o})
	}
	out.Set("servers", list)
	f.ex.Removed = append(f.ex.Removed, "/servers (replaced by the profile's servers)")
	for _, section := range []string{"paths", "webhooks", xWebhooks} {
		for _, pm := range out.Get(section).membersOrNil() {
			if pm.Value.Delete("servers") {
				f.ex.Removed = append(f.ex.Removed, Pointer{section, pm.Key, "servers"}.String()+" (the profile's servers apply)")
			}
			for _, method := range httpMethods {
				if op := pm.Value.Get(method); op.IsObject() && op.Delete("servers") {
					f.ex.Removed = append(f.ex.Removed, Pointer{section, pm.Key, method, "servers"}.String()+" (the profile's servers apply)")
				}
			}
		}
	}
}

func (v *Value) membersOrNil() []Member {
	if v.IsObject() {
		return v.Members
	}
	return nil
}

// stripper removes specification extensions whose name starts with one of
// the prefixes, wherever the specification allows extensions.
type stripper struct {
	prefixes []string
	ex       *Explain
	n        int
}

func (s *stripper) object(v *Value, k objKind, at Pointer) bool {
	if !hasExtensions(k) {
		return true
	}
	kept := v.Members[:0]
	for _, m := range v.Members {
		if isExtension(m.Key) && s.matches(m.Key) {
			s.ex.Stripped++
			continue
		}
		kept = append(kept, m)
	}
	for i := len(kept); i < len(v.Members); i++ {
		v.Members[i] = Member{}
	}
	v.Members = kept
	return true
}

func (s *stripper) matches(key string) bool {
	for _, p := range s.prefixes {
		if strings.HasPrefix(key, p) {
			return true
		}
	}
	return false
}

// policyWarnings compares the kept spec with the profile's auth and net
// policy: a server outside net.allow_hosts, or an operation whose security
// offers no alternative of the profile's auth mode.
func (f *filter) policyWarnings(out *Value) {
	if f.p.Net != nil && len(f.p.Net.AllowHosts) > 0 {
		allowed := map[string]bool{}
		for _, h := range f.p.Net.AllowHosts {
			allowed[strings.ToLower(h)] = true
		}
		for _, s := range out.Get("servers").itemsOrNil() {
			raw, _ := s.Value.Str("url")
			u, err := url.Parse(raw)
			if err != nil || u.Host == "" || strings.Contains(u.Host, "{") {
				continue
			}
			if !allowed[strings.ToLower(u.Hostname())] {
				f.ex.warn(fmt.Sprintf("server %s: host %s is not in net.allow_hosts", raw, u.Hostname()))
			}
		}
	}
	if f.p.Auth == nil || f.p.Auth.Mode == "" || f.p.Auth.Mode == "any" {
		return
	}
	mode := f.p.Auth.Mode
	for _, o := range f.kept {
		if len(o.Security) == 0 {
			if mode != "none" && o.Security == nil {
				continue // no security at all: nothing to authenticate
			}
		}
		ok := false
		for _, alt := range o.Security {
			if len(alt) == 0 {
				ok = true // anonymous access is an alternative
			}
			all := len(alt) > 0
			for name := range alt {
				if f.schemeType(name) != mode {
					all = false
				}
			}
			if all {
				ok = true
			}
		}
		if !ok && len(o.Security) > 0 {
			f.ex.warn(fmt.Sprintf("%s %s: no security alternative uses the profile's auth mode %s", o.Method, o.Path, mode))
		}
	}
}

func (f *filter) schemeType(name string) string {
	s := f.ix.comps["securitySchemes"][name]
	t, _ := s.Str("type")
	return t
}

// itemsOrNil returns an array's items (as Members with empty keys), or nil.
func (v *Value) itemsOrNil() []Member {
	if v != nil && v.Kind == KindArray {
		return v.Members
	}
	return nil
}
