package specdiff

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// Kinds of change.
const (
	RemovedOperation         = "removed_operation"
	RemovedParameter         = "removed_parameter"
	ParameterNewlyRequired   = "parameter_newly_required"
	PropertyNewlyRequired    = "property_newly_required"
	RequestBodyNewlyRequired = "request_body_newly_required"
	TypeChanged              = "type_changed"
	EnumNarrowed             = "enum_narrowed"
	RemovedResponse          = "removed_response"
	RemovedMediaType         = "removed_media_type"
	RemovedSecurityScheme    = "removed_security_scheme"
	RemovedProperty          = "removed_property"

	AddedOperation      = "added_operation"
	AddedParameter      = "added_parameter"
	AddedResponse       = "added_response"
	AddedMediaType      = "added_media_type"
	AddedSecurityScheme = "added_security_scheme"
	EnumWidened         = "enum_widened"
	TypeWidened         = "type_widened"
	AddedProperty       = "added_property"
	ParameterOptional   = "parameter_now_optional"
)

// Change is one difference between the old and the new document.
type Change struct {
	Kind      string `json:"kind"`
	Breaking  bool   `json:"breaking"`
	Operation string `json:"operation,omitempty"` // operationId, or "METHOD /path"
	Location  string `json:"location"`            // where, as a JSON pointer into the document it concerns
	Detail    string `json:"detail"`
}

// Report is the classified difference.
type Report struct {
	Breaking    []Change `json:"breaking"`
	NonBreaking []Change `json:"non_breaking"`
}

// HasBreaking reports whether any change breaks clients of the old document.
func (r Report) HasBreaking() bool { return len(r.Breaking) > 0 }

// Diff compares two OpenAPI documents given as JSON.
func Diff(oldDoc, newDoc []byte) (Report, error) {
	o, err := decode(oldDoc)
	if err != nil {
		return Report{}, fmt.Errorf("old spec: %w", err)
	}
	n, err := decode(newDoc)
	if err != nil {
		return Report{}, fmt.Errorf("new spec: %w", err)
	}
	d := &differ{old: o, new: n}
	d.operations()
	d.securitySchemes()
	return d.report(), nil
}

func decode(b []byte) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return nil, err
	}
	if m == nil {
		return nil, fmt.Errorf("not a JSON object")
	}
	return m, nil
}

type differ struct {
	old, new map[string]any
	changes  []Change
}

func (d *differ) add(kind string, breaking bool, op, loc, format string, a ...any) {
	d.changes = append(d.changes, Change{Kind: kind, Breaking: breaking, Operation: op, Location: loc, Detail: fmt.Sprintf(format, a...)})
}

func (d *differ) report() Report {
	sort.SliceStable(d.changes, func(i, j int) bool {
		a, b := d.changes[i], d.changes[j]
		if a.Operation != b.Operation {
			return a.Operation < b.Operation
		}
		if a.Location != b.Location {
			return a.Location < b.Location
		}
		if a.Kind != b.Kind {
			return a.Kind < b.Kind
		}
		return a.Detail < b.Detail
	})
	r := Report{Breaking: []Change{}, NonBreaking: []Change{}}
	seen := map[Change]bool{}
	for _, c := range d.changes {
		if seen[c] {
			continue
		}
		seen[c] = true
		if c.Breaking {
			r.Breaking = append(r.Breaking, c)
		} else {
			r.NonBreaking = append(r.NonBreaking, c)
		}
	}
	return r
}

var methods = []string{"get", "put", "post", "delete", "options", "head", "patch", "trace"}

type operation struct {
	key    string // operationId or "METHOD /path"
	path   string
	method string
	ptr    string
	op     map[string]any
	params []any // path-level parameters first
}

func ops(doc map[string]any) map[string]operation {
	out := map[string]operation{}
	paths, _ := doc["paths"].(map[string]any)
	for p, item := range paths {
		pi, _ := item.(map[string]any)
		pathParams, _ := pi["parameters"].([]any)
		for _, m := range methods {
			o, ok := pi[m].(map[string]any)
			if !ok {
				continue
			}
			key := strings.ToUpper(m) + " " + p
			if id, ok := o["operationId"].(string); ok && id != "" {
				key = id
			}
			opParams, _ := o["parameters"].([]any)
			out[key] = operation{key: key, path: p, method: m, ptr: "/paths/" + esc(p) + "/" + m, op: o, params: append(append([]any{}, pathParams...), opParams...)}
		}
	}
	return out
}

func esc(s string) string { return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1") }

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

func (d *differ) operations() {
	oldOps, newOps := ops(d.old), ops(d.new)
	for _, k := range sortedKeys(oldOps) {
		o := oldOps[k]
		n, ok := newOps[k]
		if !ok {
			d.add(RemovedOperation, true, k, o.ptr, "%s %s was removed", strings.ToUpper(o.method), o.path)
			continue
		}
		d.parameters(k, o, n)
		d.requestBody(k, o, n)
		d.responses(k, o, n)
	}
	for _, k := range sortedKeys(newOps) {
		if _, ok := oldOps[k]; !ok {
			n := newOps[k]
			d.add(AddedOperation, false, k, n.ptr, "%s %s was added", strings.ToUpper(n.method), n.path)
		}
	}
}

type param struct {
	in, name string
	required bool
	schema   any
	ptr      string
}

func (d *differ) paramsOf(doc map[string]any, o operation) map[string]param {
	out := map[string]param{}
	for i, raw := range o.params {
		p, ptr := d.deref(doc, raw, fmt.Sprintf("%s/parameters/%d", o.ptr, i))
		pm, _ := p.(map[string]any)
		if pm == nil {
			continue
		}
		in, _ := pm["in"].(string)
		name, _ := pm["name"].(string)
		req, _ := pm["required"].(bool)
		out[in+":"+name] = param{in: in, name: name, required: req || in == "path", schema: pm["schema"], ptr: ptr}
	}
	return out
}

func (d *differ) parameters(k string, o, n operation) {
	op, np := d.paramsOf(d.old, o), d.paramsOf(d.new, n)
	var removed, added []param
	for _, key := range sortedKeys(op) {
		a := op[key]
		b, ok := np[key]
		if !ok {
			removed = append(removed, a)
			continue
		}
		if b.required && !a.required {
			d.add(ParameterNewlyRequired, true, k, b.ptr, "%s parameter %q is now required", a.in, a.name)
		}
		if a.required && !b.required {
			d.add(ParameterOptional, false, k, b.ptr, "%s parameter %q is now optional", a.in, a.name)
		}
		d.schema(k, a.schema, b.schema, b.ptr+"/schema", true, map[[2]string]bool{})
	}
	for _, key := range sortedKeys(np) {
		if _, ok := op[key]; !ok {
			added = append(added, np[key])
		}
	}
	for _, a := range removed {
		detail := fmt.Sprintf("%s parameter %q was removed", a.in, a.name)
		for _, b := range added {
			if b.in == a.in {
				detail = fmt.Sprintf("%s parameter %q was removed or renamed (to %q?)", a.in, a.name, b.name)
				break
			}
		}
		d.add(RemovedParameter, true, k, a.ptr, "%s", detail)
	}
	for _, b := range added {
		if b.required {
			d.add(ParameterNewlyRequired, true, k, b.ptr, "new required %s parameter %q", b.in, b.name)
		} else {
			d.add(AddedParameter, false, k, b.ptr, "new optional %s parameter %q", b.in, b.name)
		}
	}
}

func (d *differ) requestBody(k string, o, n operation) {
	ob, optr := d.deref(d.old, o.op["requestBody"], o.ptr+"/requestBody")
	nb, nptr := d.deref(d.new, n.op["requestBody"], n.ptr+"/requestBody")
	obm, _ := ob.(map[string]any)
	nbm, _ := nb.(map[string]any)
	if nbm == nil {
		return
	}
	nreq, _ := nbm["required"].(bool)
	oreq := false
	if obm != nil {
		oreq, _ = obm["required"].(bool)
	}
	if nreq && !oreq {
		d.add(RequestBodyNewlyRequired, true, k, nptr, "the request body is now required")
	}
	if obm == nil {
		return
	}
	d.content(k, obm["content"], nbm["content"], optr+"/content", nptr+"/content", true)
}

func (d *differ) content(k string, oc, nc any, optr, nptr string, request bool) {
	om, _ := oc.(map[string]any)
	nm, _ := nc.(map[string]any)
	for _, mt := range sortedKeys(om) {
		nmt, ok := nm[mt]
		if !ok {
			d.add(RemovedMediaType, true, k, optr+"/"+esc(mt), "media type %s was removed", mt)
			continue
		}
		omtm, _ := om[mt].(map[string]any)
		nmtm, _ := nmt.(map[string]any)
		if omtm != nil && nmtm != nil {
			d.schema(k, omtm["schema"], nmtm["schema"], nptr+"/"+esc(mt)+"/schema", request, map[[2]string]bool{})
		}
	}
	for _, mt := range sortedKeys(nm) {
		if _, ok := om[mt]; !ok {
			d.add(AddedMediaType, false, k, nptr+"/"+esc(mt), "media type %s was added", mt)
		}
	}
}

func (d *differ) responses(k string, o, n operation) {
	or, _ := o.op["responses"].(map[string]any)
	nr, _ := n.op["responses"].(map[string]any)
	for _, code := range sortedKeys(or) {
		nresp, ok := nr[code]
		optr := o.ptr + "/responses/" + esc(code)
		if !ok {
			d.add(RemovedResponse, true, k, optr, "response %s was removed", code)
			continue
		}
		a, aptr := d.deref(d.old, or[code], optr)
		b, bptr := d.deref(d.new, nresp, n.ptr+"/responses/"+esc(code))
		am, _ := a.(map[string]any)
		bm, _ := b.(map[string]any)
		if am != nil && bm != nil {
			d.content(k, am["content"], bm["content"], aptr+"/content", bptr+"/content", false)
		}
	}
	for _, code := range sortedKeys(nr) {
		if _, ok := or[code]; !ok {
			d.add(AddedResponse, false, k, n.ptr+"/responses/"+esc(code), "response %s was added", code)
		}
	}
}

func (d *differ) securitySchemes() {
	get := func(doc map[string]any) map[string]any {
		c, _ := doc["components"].(map[string]any)
		s, _ := c["securitySchemes"].(map[string]any)
		return s
	}
	o, n := get(d.old), get(d.new)
	for _, name := range sortedKeys(o) {
		if _, ok := n[name]; !ok {
			d.add(RemovedSecurityScheme, true, "", "/components/securitySchemes/"+esc(name), "security scheme %q was removed", name)
		}
	}
	for _, name := range sortedKeys(n) {
		if _, ok := o[name]; !ok {
			d.add(AddedSecurityScheme, false, "", "/components/securitySchemes/"+esc(name), "security scheme %q was added", name)
		}
	}
}

// deref follows local $refs ("#/...") in doc, returning the target and its pointer.
func (d *differ) deref(doc map[string]any, v any, ptr string) (any, string) {
	for i := 0; i < 32; i++ {
		m, ok := v.(map[string]any)
		if !ok {
			return v, ptr
		}
		ref, ok := m["$ref"].(string)
		if !ok || !strings.HasPrefix(ref, "#/") {
			return v, ptr
		}
		target, ok := lookup(doc, ref[1:])
		if !ok {
			return v, ptr
		}
		v, ptr = target, ref[1:]
	}
	return v, ptr
}

func lookup(doc map[string]any, ptr string) (any, bool) {
	var cur any = doc
	for _, tok := range strings.Split(strings.TrimPrefix(ptr, "/"), "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[tok]; !ok {
			return nil, false
		}
	}
	return cur, true
}

func types(m map[string]any) []string {
	switch t := m["type"].(type) {
	case string:
		out := []string{t}
		if n, _ := m["nullable"].(bool); n {
			out = append(out, "null")
		}
		return out
	case []any:
		var out []string
		for _, x := range t {
			if s, ok := x.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

func set(ss []string) map[string]bool {
	m := map[string]bool{}
	for _, s := range ss {
		m[s] = true
	}
	return m
}

// schema compares two schemas; request says which way data flows (a
// request schema breaks clients when it accepts less, a response schema
// when it promises less).
func (d *differ) schema(k string, os, ns any, ptr string, request bool, seen map[[2]string]bool) {
	o, optr := d.deref(d.old, os, "")
	n, nptr := d.deref(d.new, ns, ptr)
	if optr != "" || nptr != ptr {
		key := [2]string{optr, nptr}
		if seen[key] {
			return // a cycle: already compared
		}
		seen[key] = true
	}
	om, _ := o.(map[string]any)
	nm, _ := n.(map[string]any)
	if om == nil || nm == nil {
		return
	}
	ot, nt := types(om), types(nm)
	if len(ot) > 0 && len(nt) > 0 {
		os, ns := set(ot), set(nt)
		narrowed := false
		for t := range os {
			if !ns[t] && !(t == "integer" && ns["number"]) {
				narrowed = true
			}
		}
		switch {
		case narrowed:
			d.add(TypeChanged, true, k, nptr, "type changed from %s to %s", strings.Join(ot, "|"), strings.Join(nt, "|"))
			return
		case len(ns) != len(os) || !sameSet(os, ns):
			d.add(TypeWidened, !request, k, nptr, "type widened from %s to %s", strings.Join(ot, "|"), strings.Join(nt, "|"))
		}
	}
	if oe, ok := om["enum"].([]any); ok {
		ne, _ := nm["enum"].([]any)
		if _, hasNew := nm["enum"]; hasNew {
			var gone, added []string
			for _, v := range oe {
				if !containsJSON(ne, v) {
					gone = append(gone, show(v))
				}
			}
			for _, v := range ne {
				if !containsJSON(oe, v) {
					added = append(added, show(v))
				}
			}
			if len(gone) > 0 {
				d.add(EnumNarrowed, true, k, nptr, "enum no longer allows %s", strings.Join(gone, ", "))
			}
			if len(added) > 0 {
				d.add(EnumWidened, !request, k, nptr, "enum now also allows %s", strings.Join(added, ", "))
			}
		}
	} else if ne, ok := nm["enum"].([]any); ok && request {
		var vals []string
		for _, v := range ne {
			vals = append(vals, show(v))
		}
		d.add(EnumNarrowed, true, k, nptr, "values are now restricted to %s", strings.Join(vals, ", "))
	}
	oreq, nreq := set(strs(om["required"])), set(strs(nm["required"]))
	oprops, _ := om["properties"].(map[string]any)
	nprops, _ := nm["properties"].(map[string]any)
	for _, p := range sortedKeys(nreq) {
		if !oreq[p] && request {
			d.add(PropertyNewlyRequired, true, k, nptr+"/properties/"+esc(p), "property %q is now required", p)
		}
	}
	for _, p := range sortedKeys(oprops) {
		np, ok := nprops[p]
		if !ok {
			if nprops != nil || nm["additionalProperties"] == false {
				d.add(RemovedProperty, !request, k, nptr+"/properties/"+esc(p), "property %q was removed", p)
			}
			continue
		}
		d.schema(k, oprops[p], np, nptr+"/properties/"+esc(p), request, seen)
	}
	for _, p := range sortedKeys(nprops) {
		if _, ok := oprops[p]; !ok && !nreq[p] {
			d.add(AddedProperty, false, k, nptr+"/properties/"+esc(p), "optional property %q was added", p)
		}
	}
	if oi, ok := om["items"]; ok {
		if ni, ok := nm["items"]; ok {
			d.schema(k, oi, ni, nptr+"/items", request, seen)
		}
	}
	for _, comb := range []string{"allOf", "oneOf", "anyOf"} {
		oa, _ := om[comb].([]any)
		na, _ := nm[comb].([]any)
		for i := 0; i < len(oa) && i < len(na); i++ {
			d.schema(k, oa[i], na[i], fmt.Sprintf("%s/%s/%d", nptr, comb, i), request, seen)
		}
	}
	if oa, ok := om["additionalProperties"].(map[string]any); ok {
		if na, ok := nm["additionalProperties"].(map[string]any); ok {
			d.schema(k, oa, na, nptr+"/additionalProperties", request, seen)
		}
	}
}

func sameSet(a, b map[string]bool) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if !b[k] {
			return false
		}
	}
	return true
}

func strs(v any) []string {
	arr, _ := v.([]any)
	var out []string
	for _, x := range arr {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

func show(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func containsJSON(list []any, v any) bool {
	s := show(v)
	for _, x := range list {
		if show(x) == s {
			return true
		}
	}
	return false
}
