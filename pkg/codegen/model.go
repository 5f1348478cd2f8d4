package codegen

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/dome-registry/dome/pkg/errkind"
)

// Model is the language-neutral view of a filtered spec that templates
// render: named schemas, operations with resolved parameters, bodies and
// responses, and security schemes, all in a stable order.
type Model struct {
	Title           string
	Version         string
	Description     string
	Servers         []string
	Schemas         []*NamedType
	Operations      []*Operation
	SecuritySchemes []*SecurityScheme
}

// NamedType is a component schema.
type NamedType struct {
	Name        string // as written in components/schemas
	TypeName    string // the identifier (naming.type)
	Description string
	Type        *Type
}

// Type is a schema reduced to what clients need. Kind is one of string,
// integer, number, boolean, array, object, map, ref, enum, union,
// intersection, null, any.
type Type struct {
	Kind        string
	Format      string
	Ref         string // kind ref: the component name
	Name        string // kind ref: the identifier of the component
	Items       *Type  // array
	Props       []*Property
	Additional  *Type    // map values, or an object's additionalProperties
	Enum        []string // enum: each value as a JSON literal
	EnumBase    string   // enum: the JSON type of the values
	Variants    []*Type  // union, intersection
	Nullable    bool
	Description string
}

// Property is one property of an object type.
type Property struct {
	Name        string // the JSON name
	Type        *Type
	Required    bool
	ReadOnly    bool
	WriteOnly   bool
	Description string
}

// Operation is one operation of the filtered spec.
type Operation struct {
	ID          string
	Name        string // the identifier (naming.operation)
	Method      string // upper case
	Path        string
	PathParts   []PathPart
	Summary     string
	Description string
	Deprecated  bool
	Tags        []string
	Params      []*Param // path params in path order, then query, header, cookie by name
	PathParams  []*Param
	QueryParams []*Param
	HeaderParam []*Param
	Body        *Body
	Responses   []*Response
	Success     []*Type // the types of 2xx responses with a body, unique
	Security    []map[string][]string
}

// PathPart is a literal segment of a path template or a parameter.
type PathPart struct {
	Literal string
	Param   *Param
}

// Param is an operation parameter.
type Param struct {
	Name        string // as written
	VarName     string // the identifier (naming.parameter)
	In          string
	Required    bool
	Type        *Type
	Description string
}

// Body is a request body.
type Body struct {
	ContentType string
	JSON        bool
	Required    bool
	Type        *Type
}

// Response is one response of an operation.
type Response struct {
	Status      string
	Description string
	ContentType string
	JSON        bool
	Type        *Type // nil without content
}

// SecurityScheme is a component security scheme.
type SecurityScheme struct {
	Name      string
	Type      string // apiKey, http, oauth2, openIdConnect, mutualTLS
	In        string // apiKey: header, query, cookie
	ParamName string // apiKey: the header/query/cookie name
	Scheme    string // http: bearer, basic, ...
}

var methods = []string{"get", "put", "post", "delete", "options", "head", "patch", "trace"}

// BuildModel reads a filtered spec (JSON) into a Model, naming identifiers
// with n. An operation without an operationId, and two names that collide
// after mangling, are input errors.
func BuildModel(source string, spec []byte, n Namer) (*Model, error) {
	dec := json.NewDecoder(bytes.NewReader(spec))
	dec.UseNumber()
	var root map[string]any
	if err := dec.Decode(&root); err != nil {
		return nil, &errkind.InputError{Source: source, Problem: "not a JSON object: " + err.Error()}
	}
	b := &modelBuilder{root: root, n: n, source: source}
	return b.build()
}

type modelBuilder struct {
	root   map[string]any
	n      Namer
	source string
	steps  int // schema nodes visited: bounds work on hostile specs
}

// maxSteps bounds the schema nodes one model visits. References to
// components stop the descent, but other local references and allOf chains
// can fan out; past this budget a schema becomes "any".
const maxSteps = 1 << 20

func obj(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

func str(m map[string]any, k string) string {
	s, _ := m[k].(string)
	return s
}

func sortedKeys(m map[string]any) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

func (b *modelBuilder) build() (*Model, error) {
	info := obj(b.root["info"])
	m := &Model{Title: str(info, "title"), Version: str(info, "version"), Description: str(info, "description")}
	if ss, ok := b.root["servers"].([]any); ok {
		for _, s := range ss {
			if u := str(obj(s), "url"); u != "" {
				m.Servers = append(m.Servers, u)
			}
		}
	}
	comps := obj(b.root["components"])
	schemas := obj(comps["schemas"])
	typeNames := map[string]string{} // identifier -> component name
	for _, name := range sortedKeys(schemas) {
		tn := b.n.Type(name)
		if other, ok := typeNames[tn]; ok {
			return nil, &errkind.InputError{Source: b.source, Field: "/components/schemas", Problem: fmt.Sprintf("schemas %q and %q both become the type name %s", other, name, tn), Hint: "rename one of the schemas (or give it an x- name the bundle uses) so the names differ after mangling"}
		}
		typeNames[tn] = name
		s := obj(schemas[name])
		m.Schemas = append(m.Schemas, &NamedType{Name: name, TypeName: tn, Description: str(s, "description"), Type: b.typeOf(s, 0)})
	}
	secs := obj(comps["securitySchemes"])
	for _, name := range sortedKeys(secs) {
		s := obj(secs[name])
		m.SecuritySchemes = append(m.SecuritySchemes, &SecurityScheme{Name: name, Type: str(s, "type"), In: str(s, "in"), ParamName: str(s, "name"), Scheme: strings.ToLower(str(s, "scheme"))})
	}
	opNames := map[string]string{} // identifier -> operationId
	paths := obj(b.root["paths"])
	var missing []string
	for _, p := range sortedKeys(paths) {
		item := obj(paths[p])
		for _, meth := range methods {
			raw := obj(item[meth])
			if raw == nil {
				continue
			}
			id := str(raw, "operationId")
			if id == "" {
				missing = append(missing, strings.ToUpper(meth)+" "+p)
				continue
			}
			op, err := b.operation(p, meth, id, item, raw)
			if err != nil {
				return nil, err
			}
			if other, ok := opNames[op.Name]; ok {
				return nil, &errkind.InputError{Source: b.source, Field: "/paths", Problem: fmt.Sprintf("operationIds %q and %q both become the name %s", other, id, op.Name), Hint: "rename one operationId so they differ after name mangling"}
			}
			opNames[op.Name] = id
			m.Operations = append(m.Operations, op)
		}
	}
	if len(missing) > 0 {
		return nil, &errkind.InputError{Source: b.source, Problem: "operations without an operationId: " + strings.Join(missing, ", "), Hint: "give every operation an explicit operationId: generated names must be stable"}
	}
	sort.Slice(m.Operations, func(i, j int) bool { return m.Operations[i].ID < m.Operations[j].ID })
	return m, nil
}

// deref follows a local $ref to its target, a few hops at most.
func (b *modelBuilder) deref(v map[string]any) map[string]any {
	for i := 0; i < 16 && v != nil; i++ {
		ref := str(v, "$ref")
		if ref == "" {
			return v
		}
		v = obj(b.resolve(ref))
	}
	return v
}

func (b *modelBuilder) resolve(ref string) any {
	if !strings.HasPrefix(ref, "#/") {
		return nil
	}
	var cur any = b.root
	for _, tok := range strings.Split(ref[2:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		cur = obj(cur)[tok]
	}
	return cur
}

const schemaPrefix = "#/components/schemas/"

const maxTypeDepth = 64

func (b *modelBuilder) typeOf(s map[string]any, depth int) *Type {
	b.steps++
	if s == nil || depth > maxTypeDepth || b.steps > maxSteps {
		return &Type{Kind: "any"}
	}
	t := b.typeOfInner(s, depth)
	if t.Description == "" {
		t.Description = str(s, "description")
	}
	if nb, _ := s["nullable"].(bool); nb {
		t.Nullable = true
	}
	return t
}

func (b *modelBuilder) typeOfInner(s map[string]any, depth int) *Type {
	if ref := str(s, "$ref"); ref != "" {
		if name, ok := strings.CutPrefix(ref, schemaPrefix); ok && !strings.Contains(name, "/") {
			name = strings.ReplaceAll(strings.ReplaceAll(name, "~1", "/"), "~0", "~")
			return &Type{Kind: "ref", Ref: name, Name: b.n.Type(name)}
		}
		return b.typeOf(obj(b.resolve(ref)), depth+1)
	}
	if c, ok := s["const"]; ok {
		return enumType([]any{c})
	}
	if e, ok := s["enum"].([]any); ok && len(e) > 0 {
		t := enumType(e)
		return t
	}
	for _, k := range []string{"oneOf", "anyOf"} {
		if vs, ok := s[k].([]any); ok && len(vs) > 0 {
			t := &Type{Kind: "union"}
			for _, v := range vs {
				vt := b.typeOf(obj(v), depth+1)
				if vt.Kind == "null" {
					t.Nullable = true
					continue
				}
				t.Variants = append(t.Variants, vt)
			}
			if len(t.Variants) == 1 {
				one := *t.Variants[0]
				one.Nullable = one.Nullable || t.Nullable
				return &one
			}
			if len(t.Variants) == 0 {
				return &Type{Kind: "null"}
			}
			return t
		}
	}
	if parts, ok := s["allOf"].([]any); ok && len(parts) > 0 {
		return b.allOf(s, parts, depth)
	}
	types := schemaTypes(s)
	nullable := false
	var nonNull []string
	for _, ty := range types {
		if ty == "null" {
			nullable = true
		} else {
			nonNull = append(nonNull, ty)
		}
	}
	if len(nonNull) > 1 {
		t := &Type{Kind: "union", Nullable: nullable}
		for _, ty := range nonNull {
			cp := map[string]any{}
			for k, v := range s {
				cp[k] = v
			}
			cp["type"] = ty
			t.Variants = append(t.Variants, b.typeOf(cp, depth+1))
		}
		return t
	}
	ty := ""
	if len(nonNull) == 1 {
		ty = nonNull[0]
	} else if len(types) == 1 {
		return &Type{Kind: "null"}
	}
	if ty == "" && (s["properties"] != nil || s["additionalProperties"] != nil) {
		ty = "object"
	}
	if ty == "" && s["items"] != nil {
		ty = "array"
	}
	var t *Type
	switch ty {
	case "string", "integer", "number", "boolean":
		t = &Type{Kind: ty, Format: str(s, "format")}
	case "array":
		t = &Type{Kind: "array", Items: b.typeOf(obj(s["items"]), depth+1)}
	case "object":
		t = b.object(s, depth)
	default:
		t = &Type{Kind: "any"}
	}
	t.Nullable = t.Nullable || nullable
	return t
}

func schemaTypes(s map[string]any) []string {
	switch v := s["type"].(type) {
	case string:
		return []string{v}
	case []any:
		var out []string
		for _, x := range v {
			if t, ok := x.(string); ok {
				out = append(out, t)
			}
		}
		return out
	}
	return nil
}

func enumType(vals []any) *Type {
	t := &Type{Kind: "enum"}
	base := ""
	for _, v := range vals {
		if v == nil {
			t.Nullable = true
			continue
		}
		lit, _ := json.Marshal(v)
		t.Enum = append(t.Enum, string(lit))
		kind := "string"
		switch v.(type) {
		case json.Number:
			kind = "number"
		case bool:
			kind = "boolean"
		case map[string]any, []any:
			kind = "any"
		}
		if base == "" || base == kind {
			base = kind
		} else {
			base = "any"
		}
	}
	t.EnumBase = base
	if base == "any" || len(t.Enum) == 0 {
		return &Type{Kind: "any", Nullable: t.Nullable}
	}
	return t
}

func (b *modelBuilder) object(s map[string]any, depth int) *Type {
	props := obj(s["properties"])
	req := map[string]bool{}
	if rs, ok := s["required"].([]any); ok {
		for _, r := range rs {
			if n, ok := r.(string); ok {
				req[n] = true
			}
		}
	}
	t := &Type{Kind: "object"}
	for _, name := range sortedKeys(props) {
		ps := obj(props[name])
		ro, _ := ps["readOnly"].(bool)
		wo, _ := ps["writeOnly"].(bool)
		t.Props = append(t.Props, &Property{Name: name, Type: b.typeOf(ps, depth+1), Required: req[name], ReadOnly: ro, WriteOnly: wo, Description: str(ps, "description")})
	}
	switch ap := s["additionalProperties"].(type) {
	case map[string]any:
		t.Additional = b.typeOf(ap, depth+1)
	case bool:
		if ap {
			t.Additional = &Type{Kind: "any"}
		}
	}
	if len(t.Props) == 0 && t.Additional != nil {
		return &Type{Kind: "map", Additional: t.Additional}
	}
	if len(t.Props) == 0 && t.Additional == nil && s["properties"] == nil && s["additionalProperties"] == nil {
		return &Type{Kind: "map", Additional: &Type{Kind: "any"}}
	}
	return t
}

// allOf merges object parts into one object (properties and required
// lists), which every target language can express; anything else becomes an
// intersection of its parts.
func (b *modelBuilder) allOf(s map[string]any, parts []any, depth int) *Type {
	merged := map[string]any{"type": "object"}
	props := map[string]any{}
	var required []any
	ok := true
	var visit func(p map[string]any, d int)
	seen := map[string]bool{}
	visit = func(p map[string]any, d int) {
		b.steps++
		if d > maxTypeDepth || b.steps > maxSteps {
			ok = false
			return
		}
		if ref := str(p, "$ref"); ref != "" {
			if seen[ref] {
				return // an allOf cycle adds nothing new
			}
			seen[ref] = true
		}
		p = b.deref(p)
		if p == nil {
			ok = false
			return
		}
		if sub, is := p["allOf"].([]any); is {
			for _, x := range sub {
				visit(obj(x), d+1)
			}
		}
		tys := schemaTypes(p)
		if len(tys) > 0 && !(len(tys) == 1 && tys[0] == "object") {
			ok = false
		}
		if p["oneOf"] != nil || p["anyOf"] != nil || p["enum"] != nil {
			ok = false
		}
		for k, v := range obj(p["properties"]) {
			props[k] = v
		}
		if rs, is := p["required"].([]any); is {
			required = append(required, rs...)
		}
		if ap, is := p["additionalProperties"]; is {
			merged["additionalProperties"] = ap
		}
	}
	rest := map[string]any{}
	for k, v := range s {
		if k != "allOf" {
			rest[k] = v
		}
	}
	for _, p := range parts {
		visit(obj(p), depth+1)
	}
	visit(rest, depth+1)
	if !ok {
		t := &Type{Kind: "intersection"}
		for _, p := range parts {
			t.Variants = append(t.Variants, b.typeOf(obj(p), depth+1))
		}
		if len(t.Variants) == 1 {
			return t.Variants[0]
		}
		return t
	}
	merged["properties"] = props
	merged["required"] = required
	return b.object(merged, depth)
}

func (b *modelBuilder) operation(path, meth, id string, item, raw map[string]any) (*Operation, error) {
	op := &Operation{ID: id, Name: b.n.Operation(id), Method: strings.ToUpper(meth), Path: path, Summary: str(raw, "summary"), Description: str(raw, "description")}
	op.Deprecated, _ = raw["deprecated"].(bool)
	if tags, ok := raw["tags"].([]any); ok {
		for _, t := range tags {
			if s, ok := t.(string); ok {
				op.Tags = append(op.Tags, s)
			}
		}
	}
	// Parameters: the path item's, overridden by the operation's (by name and in).
	byKey := map[string]*Param{}
	var order []string
	for _, src := range []any{item["parameters"], raw["parameters"]} {
		list, _ := src.([]any)
		for _, x := range list {
			p := b.deref(obj(x))
			if p == nil {
				continue
			}
			par := &Param{Name: str(p, "name"), In: str(p, "in"), Description: str(p, "description")}
			par.Required, _ = p["required"].(bool)
			par.Type = b.typeOf(obj(p["schema"]), 0)
			if p["schema"] == nil {
				if c := obj(p["content"]); c != nil {
					for _, ct := range sortedKeys(c) {
						par.Type = b.typeOf(obj(obj(c[ct])["schema"]), 0)
						break
					}
				}
			}
			key := par.In + "\x00" + par.Name
			if _, seen := byKey[key]; !seen {
				order = append(order, key)
			}
			byKey[key] = par
		}
	}
	varNames := map[string]string{}
	for _, key := range order {
		p := byKey[key]
		p.VarName = b.n.Parameter(p.Name)
		if other, ok := varNames[p.VarName]; ok {
			return nil, &errkind.InputError{Source: b.source, Field: "/paths/" + escapePointer(path) + "/" + meth, Problem: fmt.Sprintf("operation %s: parameters %q and %q both become %s", id, other, p.Name, p.VarName), Hint: "rename one of the parameters"}
		}
		varNames[p.VarName] = p.Name
		switch p.In {
		case "query":
			op.QueryParams = append(op.QueryParams, p)
		case "header":
			op.HeaderParam = append(op.HeaderParam, p)
		}
	}
	// Path parameters in the order the template names them.
	rest := path
	for rest != "" {
		i := strings.IndexByte(rest, '{')
		j := strings.IndexByte(rest, '}')
		if i < 0 || j < i {
			op.PathParts = append(op.PathParts, PathPart{Literal: rest})
			break
		}
		if i > 0 {
			op.PathParts = append(op.PathParts, PathPart{Literal: rest[:i]})
		}
		name := rest[i+1 : j]
		p := byKey["path\x00"+name]
		if p == nil {
			p = &Param{Name: name, VarName: b.n.Parameter(name), In: "path", Required: true, Type: &Type{Kind: "string"}}
		}
		op.PathParams = append(op.PathParams, p)
		op.PathParts = append(op.PathParts, PathPart{Param: p})
		rest = rest[j+1:]
	}
	op.Params = append(append(append([]*Param{}, op.PathParams...), op.QueryParams...), op.HeaderParam...)
	if rb := b.deref(obj(raw["requestBody"])); rb != nil {
		if ct, media := pickContent(obj(rb["content"])); ct != "" {
			op.Body = &Body{ContentType: ct, JSON: isJSON(ct), Type: b.typeOf(obj(media["schema"]), 0)}
			op.Body.Required, _ = rb["required"].(bool)
		}
	}
	resps := obj(raw["responses"])
	seen := map[string]bool{}
	for _, code := range sortedKeys(resps) {
		r := b.deref(obj(resps[code]))
		if r == nil {
			continue
		}
		resp := &Response{Status: code, Description: str(r, "description")}
		if ct, media := pickContent(obj(r["content"])); ct != "" {
			resp.ContentType, resp.JSON = ct, isJSON(ct)
			resp.Type = b.typeOf(obj(media["schema"]), 0)
			key, _ := json.Marshal(resp.Type)
			if strings.HasPrefix(code, "2") && !seen[string(key)] {
				seen[string(key)] = true
				op.Success = append(op.Success, resp.Type)
			}
		}
		op.Responses = append(op.Responses, resp)
	}
	sec, hasSec := raw["security"].([]any)
	if !hasSec {
		sec, _ = b.root["security"].([]any)
	}
	for _, alt := range sec {
		m := map[string][]string{}
		for name, scopes := range obj(alt) {
			list := []string{}
			if ss, ok := scopes.([]any); ok {
				for _, x := range ss {
					if s, ok := x.(string); ok {
						list = append(list, s)
					}
				}
			}
			m[name] = list
		}
		op.Security = append(op.Security, m)
	}
	return op, nil
}

// pickContent chooses a media type: application/json, else another JSON
// type, else the first by name.
func pickContent(c map[string]any) (string, map[string]any) {
	if len(c) == 0 {
		return "", nil
	}
	if m, ok := c["application/json"]; ok {
		return "application/json", obj(m)
	}
	keys := sortedKeys(c)
	for _, k := range keys {
		if isJSON(k) {
			return k, obj(c[k])
		}
	}
	return keys[0], obj(c[keys[0]])
}

func isJSON(ct string) bool {
	ct = strings.ToLower(strings.TrimSpace(strings.SplitN(ct, ";", 2)[0]))
	return ct == "application/json" || strings.HasSuffix(ct, "+json")
}

func escapePointer(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}
