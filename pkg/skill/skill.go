package skill

import (
	"bytes"
	_ "embed"
	"fmt"
	"slices"
	"strings"

	"github.com/dome-registry/dome/pkg/canonical"
	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/dome-registry/dome/pkg/grant"
	"github.com/dome-registry/dome/pkg/registry"
	"github.com/dome-registry/dome/pkg/specfilter"
)

// errorTaxonomy is the shared error schema of every skill contract; each
// skill tool ships an identical spec/schemas/Error.json.
//
//go:embed error_taxonomy.json
var errorTaxonomy []byte

// ErrorTaxonomy returns the canonical bytes of the shared error schema.
func ErrorTaxonomy() []byte {
	c, err := canonical.Transform(errorTaxonomy)
	if err != nil {
		panic(err) // embedded; TestErrorTaxonomy keeps this unreachable
	}
	return c
}

// Extension names on operations.
const (
	ExtClass       = "x-dome-class"
	ExtSideEffect  = "x-dome-side-effect"
	ExtIdempotency = "x-dome-idempotency"
)

// IdempotencyKeyField is the request member that carries the key.
const IdempotencyKeyField = "idempotency_key"

var httpMethods = []string{"get", "put", "post", "delete", "options", "head", "patch", "trace"}

// Operations lists a document's callable operations (webhooks excluded),
// sorted by operationId, with their classes. A document that declares
// x-dome-class on any operation is a skill contract and must pass Check.
func Operations(doc *specfilter.Document) (ops []grant.Operation, isSkill bool, err error) {
	paths := doc.Root.Get("paths")
	for _, pm := range members(paths) {
		for _, mm := range members(pm.Value) {
			if !slices.Contains(httpMethods, mm.Key) || !mm.Value.IsObject() {
				continue
			}
			op := mm.Value
			id, ok := op.Str("operationId")
			if !ok {
				continue // the resolver names operations by id: without one, no grant can name it
			}
			o := grant.Operation{ID: id, HTTPMethod: strings.ToUpper(mm.Key), Path: pm.Key}
			for _, t := range items(op.Get("tags")) {
				if t.Kind == specfilter.KindString {
					o.Tags = append(o.Tags, t.Text)
				}
			}
			if c, ok := op.Str(ExtClass); ok {
				o.Class, o.Declared, isSkill = grant.Class(c), true, true
			} else {
				o.Class = grant.InferClass(o.HTTPMethod, o.Tags)
			}
			o.SideEffect, _ = op.Str(ExtSideEffect)
			if idem := op.Get(ExtIdempotency); idem != nil {
				if r := idem.Get("required"); r != nil && r.Kind == specfilter.KindBool {
					o.IdempotencyKey = r.Bool
				}
			}
			ops = append(ops, o)
		}
	}
	slices.SortFunc(ops, func(a, b grant.Operation) int { return strings.Compare(a.ID, b.ID) })
	for i := 1; i < len(ops); i++ {
		if ops[i].ID == ops[i-1].ID {
			return nil, false, fmt.Errorf("operationId %q is used twice", ops[i].ID)
		}
	}
	return ops, isSkill, nil
}

func members(v *specfilter.Value) []specfilter.Member {
	if v == nil || v.Kind != specfilter.KindObject {
		return nil
	}
	return v.Members
}

func items(v *specfilter.Value) []*specfilter.Value {
	if v == nil || v.Kind != specfilter.KindArray {
		return nil
	}
	out := make([]*specfilter.Value, len(v.Members))
	for i, m := range v.Members {
		out[i] = m.Value
	}
	return out
}

// Problem is one broken skill-contract rule.
type Problem struct {
	Pointer string // JSON pointer into the spec
	Rule    string
}

// Check returns every broken skill-contract rule of a skill contract.
func Check(doc *specfilter.Document) []Problem {
	var ps []Problem
	add := func(ptr, format string, a ...any) { ps = append(ps, Problem{ptr, fmt.Sprintf(format, a...)}) }
	taxonomy := ErrorTaxonomy()
	for _, pm := range members(doc.Root.Get("paths")) {
		for _, mm := range members(pm.Value) {
			if !slices.Contains(httpMethods, mm.Key) || !mm.Value.IsObject() {
				continue
			}
			op := mm.Value
			ptr := "/paths/" + escape(pm.Key) + "/" + mm.Key
			id, ok := op.Str("operationId")
			if !ok {
				add(ptr, "a skill operation needs an operationId (grants name methods by it)")
				continue
			}
			if err := checkMethodName(id); err != nil {
				add(ptr+"/operationId", "%v", err)
			}
			c, _ := op.Str(ExtClass)
			class, err := grant.ParseClass(c)
			if err != nil {
				add(ptr+"/"+ExtClass, "%s: want read, write or admin", id)
				continue
			}
			se, _ := op.Str(ExtSideEffect)
			if !grant.ValidSideEffect(se) {
				add(ptr+"/"+ExtSideEffect, "%s: %q, want none, artifact_put or proposal_register", id, se)
			}
			if class == grant.ClassRead && se != grant.SideEffectNone {
				add(ptr+"/"+ExtSideEffect, "%s: a read operation is pure: side effect none, not %q", id, se)
			}
			if class != grant.ClassRead && se == grant.SideEffectNone {
				add(ptr+"/"+ExtSideEffect, "%s: a %s operation changes something: declare artifact_put or proposal_register", id, class)
			}
			idem := op.Get(ExtIdempotency)
			req := idem.Get("required")
			if idem == nil || !idem.IsObject() || req == nil || req.Kind != specfilter.KindBool {
				add(ptr+"/"+ExtIdempotency, "%s: want {required: true|false, ...}", id)
				continue
			}
			if class.Mutates() {
				if !req.Bool {
					add(ptr+"/"+ExtIdempotency+"/required", "%s: every %s operation requires an idempotency_key", id, class)
				}
				if k, _ := idem.Str("key"); k != IdempotencyKeyField {
					add(ptr+"/"+ExtIdempotency+"/key", "%s: the key is %q, want %q", id, k, IdempotencyKeyField)
				}
				body := resolve(doc, op.Get("requestBody"))
				schema := resolve(doc, resolve(doc, body.Get("content")).Get("application/json").Get("schema"))
				need := []string{IdempotencyKeyField}
				if class == grant.ClassWrite {
					need = append(need, "node_execution_id")
				}
				for _, f := range need {
					if !containsString(items(schema.Get("required")), f) || schema.Get("properties").Get(f) == nil {
						add(ptr+"/requestBody", "%s: the JSON request body must require %q", id, f)
					}
				}
			} else if req.Bool {
				add(ptr+"/"+ExtIdempotency+"/required", "%s: a read operation needs no idempotency key", id)
			}
			def := resolve(doc, op.Get("responses").Get("default"))
			schema := resolve(doc, def.Get("content").Get("application/json").Get("schema"))
			if schema == nil {
				add(ptr+"/responses/default", "%s: errors must be answered in the shared taxonomy (a default response with schemas/Error.json)", id)
				continue
			}
			got, err := canonical.Transform(schema.AppendJSON(nil))
			if err != nil || !bytes.Equal(got, taxonomy) {
				add(ptr+"/responses/default", "%s: the error schema differs from the shared taxonomy (copy registry/tools/repo-read/spec/schemas/Error.json)", id)
			}
		}
	}
	return ps
}

func checkMethodName(id string) error {
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '.' || c == '-') {
			return fmt.Errorf("operationId %q: a method name takes letters, digits, _ . - only", id)
		}
	}
	return nil
}

func containsString(vs []*specfilter.Value, s string) bool {
	for _, v := range vs {
		if v.Kind == specfilter.KindString && v.Text == s {
			return true
		}
	}
	return false
}

// resolve follows internal $refs (a bundled document has no other kind),
// at most 32 deep.
func resolve(doc *specfilter.Document, v *specfilter.Value) *specfilter.Value {
	for i := 0; i < 32 && v != nil; i++ {
		ref, ok := v.Str("$ref")
		if !ok {
			return v
		}
		p, ok := specfilter.ParsePointer(strings.TrimPrefix(ref, "#"))
		if !ok || !strings.HasPrefix(ref, "#") {
			return nil
		}
		v = doc.Root.Resolve(p)
	}
	return v
}

func escape(s string) string { return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1") }

// Contract loads one tool at a pin as a grant.Contract. A skill contract
// that breaks a rule is an *errkind.InputError listing every problem.
func Contract(reg *registry.Registry, id string, p registry.Pin) (*grant.Contract, error) {
	t, err := reg.ToolAt(registry.Ref{ID: id, Rev: p.Commit.String()}, p)
	if err != nil {
		return nil, err
	}
	files := reg.Files(t)
	doc, err := specfilter.Load(files, t.Tool.Spec, specfilter.LoadOptions{Describe: files.Describe})
	if err != nil {
		return nil, err
	}
	return FromDocument(id, p.Commit.String(), files.Describe(t.Tool.Spec), doc)
}

// FromDocument makes a grant.Contract of a loaded document. source names
// the spec in errors.
func FromDocument(id, commit, source string, doc *specfilter.Document) (*grant.Contract, error) {
	ops, isSkill, err := Operations(doc)
	if err != nil {
		return nil, &errkind.InputError{Source: source, Field: "/paths", Problem: err.Error()}
	}
	if isSkill {
		if ps := Check(doc); len(ps) > 0 {
			var lines []string
			for _, p := range ps {
				lines = append(lines, p.Pointer+": "+p.Rule)
			}
			return nil, &errkind.InputError{Source: source, Problem: "not a valid skill contract:\n  " + strings.Join(lines, "\n  "), Hint: "every operation declares x-dome-class, x-dome-side-effect and x-dome-idempotency; writes require idempotency_key"}
		}
	}
	version, _ := doc.Root.Get("info").Str("version")
	digest, err := canonical.DigestJSON(doc.Root.AppendJSON(nil))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", source, err)
	}
	return &grant.Contract{ID: id, Version: version, Commit: commit, Digest: digest, Skill: isSkill, Operations: ops}, nil
}

// Catalog loads every tool a resolver names, at one pin. A tool the
// registry does not have is a BAD_RESOLVER error naming the capability.
func Catalog(reg *registry.Registry, p registry.Pin, r *grant.Resolver) (*grant.Catalog, error) {
	ids, err := reg.ToolIDs(p)
	if err != nil {
		return nil, err
	}
	c := &grant.Catalog{Contracts: map[string]*grant.Contract{}}
	for _, capID := range r.IDs() {
		tool := r.Capabilities[capID].Tool
		if _, ok := c.Contracts[tool]; ok {
			continue
		}
		if !slices.Contains(ids, tool) {
			return nil, &grant.Error{Code: grant.CodeBadResolver, Err: &errkind.InputError{Source: r.Source, Field: "/capabilities/" + capID + "/tool", Problem: fmt.Sprintf("tool %q is not in the registry at %s", tool, p.Commit.Short()), Hint: "tools: " + strings.Join(ids, ", ")}}
		}
		contract, err := Contract(reg, tool, p)
		if err != nil {
			return nil, fmt.Errorf("tool %s (capability %s of %s): %w", tool, capID, r.Source, err)
		}
		c.Contracts[tool] = contract
	}
	return c, nil
}
