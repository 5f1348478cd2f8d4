package skill

import (
	"fmt"
	"slices"
	"strings"

	"github.com/dome-registry/dome/pkg/specfilter"
)

// RequestSchema returns the JSON Schema (draft 2020-12) of an operation's
// JSON request body, standing alone: the body's schema at the root and the
// contract's component schemas under $defs, every local reference
// #/components/schemas/X rewritten to #/$defs/X. Annotations that are
// OpenAPI's own (x- extensions, example, externalDocs, xml, discriminator)
// are dropped; everything else is kept as written, so a validator that
// refuses keywords it does not know refuses a schema it cannot enforce.
// An operation without a JSON request body gets {"type": "object",
// "maxProperties": 0}: a call takes no input.
func RequestSchema(doc *specfilter.Document, operationID string) ([]byte, error) {
	var op *specfilter.Value
	for _, pm := range members(doc.Root.Get("paths")) {
		for _, mm := range members(pm.Value) {
			if !slices.Contains(httpMethods, mm.Key) || !mm.Value.IsObject() {
				continue
			}
			if id, _ := mm.Value.Str("operationId"); id == operationID {
				op = mm.Value
			}
		}
	}
	if op == nil {
		return nil, fmt.Errorf("no operation %q", operationID)
	}
	body := op.Get("requestBody").Get("content").Get("application/json").Get("schema")
	root := &specfilter.Value{Kind: specfilter.KindObject}
	root.Members = append(root.Members, specfilter.Member{Key: "$schema", Value: &specfilter.Value{Kind: specfilter.KindString, Text: "https://json-schema.org/draft/2020-12/schema"}})
	if body == nil {
		root.Members = append(root.Members,
			specfilter.Member{Key: "type", Value: &specfilter.Value{Kind: specfilter.KindString, Text: "object"}},
			specfilter.Member{Key: "maxProperties", Value: &specfilter.Value{Kind: specfilter.KindNumber, Text: "0"}})
		return root.AppendJSON(nil), nil
	}
	b, err := rewriteSchema(body, "/paths/.../requestBody")
	if err != nil {
		return nil, fmt.Errorf("operation %s: %w", operationID, err)
	}
	if b.Kind == specfilter.KindObject {
		root.Members = append(root.Members, b.Members...)
	} else {
		root.Members = append(root.Members, specfilter.Member{Key: "allOf", Value: &specfilter.Value{Kind: specfilter.KindArray, Members: []specfilter.Member{{Value: b}}}})
	}
	defs := &specfilter.Value{Kind: specfilter.KindObject}
	for _, m := range members(doc.Root.Get("components").Get("schemas")) {
		s, err := rewriteSchema(m.Value, "/components/schemas/"+m.Key)
		if err != nil {
			return nil, err
		}
		defs.Members = append(defs.Members, specfilter.Member{Key: m.Key, Value: s})
	}
	if len(defs.Members) > 0 {
		root.Members = append(root.Members, specfilter.Member{Key: "$defs", Value: defs})
	}
	return root.AppendJSON(nil), nil
}

// openAPIOnly are schema annotations of OpenAPI that JSON Schema does not
// have.
var openAPIOnly = map[string]bool{"example": true, "externalDocs": true, "xml": true, "discriminator": true}

// Keywords whose values are schemas, maps of schemas or lists of them;
// every other keyword's value is data (enum, const, default, required...)
// and is copied as it is.
var (
	schemaKeywords     = map[string]bool{"items": true, "not": true, "if": true, "then": true, "else": true, "additionalProperties": true, "propertyNames": true, "contains": true, "unevaluatedItems": true, "unevaluatedProperties": true}
	schemaMapKeywords  = map[string]bool{"properties": true, "patternProperties": true, "$defs": true, "definitions": true, "dependentSchemas": true}
	schemaListKeywords = map[string]bool{"allOf": true, "anyOf": true, "oneOf": true, "prefixItems": true}
)

// rewriteSchema copies a schema, rewriting component references and
// dropping OpenAPI's own annotations. A reference elsewhere than the
// contract's component schemas is refused.
func rewriteSchema(v *specfilter.Value, at string) (*specfilter.Value, error) {
	if v.Kind != specfilter.KindObject {
		return v, nil // true, false, or what the validator will refuse
	}
	out := &specfilter.Value{Kind: specfilter.KindObject}
	add := func(k string, val *specfilter.Value) {
		out.Members = append(out.Members, specfilter.Member{Key: k, Value: val})
	}
	for _, m := range v.Members {
		switch k := m.Key; {
		case strings.HasPrefix(k, "x-") || openAPIOnly[k]:
		case k == "$ref" && m.Value.Kind == specfilter.KindString:
			name, ok := strings.CutPrefix(m.Value.Text, "#/components/schemas/")
			if !ok || name == "" || strings.Contains(name, "/") {
				return nil, fmt.Errorf("%s: $ref %q: only #/components/schemas/<name> can be followed", at, m.Value.Text)
			}
			add(k, &specfilter.Value{Kind: specfilter.KindString, Text: "#/$defs/" + name})
		case schemaKeywords[k]:
			c, err := rewriteSchema(m.Value, at+"/"+k)
			if err != nil {
				return nil, err
			}
			add(k, c)
		case schemaMapKeywords[k] && m.Value.Kind == specfilter.KindObject:
			mm := &specfilter.Value{Kind: specfilter.KindObject}
			for _, p := range m.Value.Members {
				c, err := rewriteSchema(p.Value, at+"/"+k+"/"+p.Key)
				if err != nil {
					return nil, err
				}
				mm.Members = append(mm.Members, specfilter.Member{Key: p.Key, Value: c})
			}
			add(k, mm)
		case schemaListKeywords[k] && m.Value.Kind == specfilter.KindArray:
			l := &specfilter.Value{Kind: specfilter.KindArray}
			for i, it := range m.Value.Members { // an array's items
				c, err := rewriteSchema(it.Value, fmt.Sprintf("%s/%s/%d", at, k, i))
				if err != nil {
					return nil, err
				}
				l.Members = append(l.Members, specfilter.Member{Value: c})
			}
			add(k, l)
		default:
			add(k, m.Value)
		}
	}
	return out, nil
}
