package specfilter

import (
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
)

// stubReferencedSchemas makes kin-openapi validate each component schema
// once. kin-openapi validates a schema wherever it is used: the component
// itself, and again, whole, at every media type, parameter and header that
// references it (each call with a fresh record of what it visited), so on
// the Stripe spec two thirds of the validation was the same schemas again.
// validateKin validates the component schemas on their own; this replaces,
// for the rest of the document, each use of one (a $ref to
// #/components/schemas/...) by the same reference to an empty schema, and
// returns the function that puts the uses back. A use whose example or
// examples kin-openapi validates against the schema keeps it. What changes
// is only that an invalid component schema is reported once, at the
// component, not again at each use.
func stubReferencedSchemas(kdoc *openapi3.T) (restore func()) {
	s := &schemaStubber{empty: &openapi3.Schema{}, seen: map[any]bool{}}
	if kdoc.Paths != nil {
		for _, pi := range kdoc.Paths.Map() {
			s.pathItem(pi, 0)
		}
	}
	for _, pi := range kdoc.Webhooks {
		s.pathItem(pi, 0)
	}
	if c := kdoc.Components; c != nil {
		for _, p := range c.Parameters {
			if p != nil {
				s.parameter(p.Value)
			}
		}
		for _, h := range c.Headers {
			if h != nil && h.Value != nil {
				s.parameter(&h.Value.Parameter)
			}
		}
		for _, rb := range c.RequestBodies {
			if rb != nil && rb.Value != nil {
				s.content(rb.Value.Content)
			}
		}
		for _, r := range c.Responses {
			s.response(r)
		}
		for _, cb := range c.Callbacks {
			s.callback(cb, 0)
		}
	}
	return func() {
		for i := len(s.undo) - 1; i >= 0; i-- {
			u := s.undo[i]
			*u.slot = u.ref
		}
	}
}

type schemaStubber struct {
	empty *openapi3.Schema
	seen  map[any]bool
	undo  []stubbed
}

type stubbed struct {
	slot **openapi3.SchemaRef
	ref  *openapi3.SchemaRef
}

func (s *schemaStubber) stub(slot **openapi3.SchemaRef) {
	r := *slot
	if r == nil || r.Value == nil || !strings.HasPrefix(r.Ref, "#/components/schemas/") {
		return
	}
	c := *r
	c.Value = s.empty
	*slot = &c
	s.undo = append(s.undo, stubbed{slot, r})
}

func (s *schemaStubber) once(x any) bool {
	if s.seen[x] {
		return false
	}
	s.seen[x] = true
	return true
}

func (s *schemaStubber) content(c openapi3.Content) {
	for _, mt := range c {
		if mt != nil && s.once(mt) && mt.Example == nil && len(mt.Examples) == 0 {
			s.stub(&mt.Schema)
		}
	}
}

func (s *schemaStubber) parameter(p *openapi3.Parameter) {
	if p == nil || !s.once(p) {
		return
	}
	if p.Example == nil && len(p.Examples) == 0 {
		s.stub(&p.Schema)
	}
	s.content(p.Content)
}

func (s *schemaStubber) response(r *openapi3.ResponseRef) {
	if r == nil || r.Value == nil || !s.once(r.Value) {
		return
	}
	for _, h := range r.Value.Headers {
		if h != nil && h.Value != nil {
			s.parameter(&h.Value.Parameter)
		}
	}
	s.content(r.Value.Content)
}

func (s *schemaStubber) callback(cb *openapi3.CallbackRef, depth int) {
	if cb == nil || cb.Value == nil || depth > 8 || !s.once(cb.Value) {
		return
	}
	for _, pi := range cb.Value.Map() {
		s.pathItem(pi, depth+1)
	}
}

func (s *schemaStubber) pathItem(pi *openapi3.PathItem, depth int) {
	if pi == nil || !s.once(pi) {
		return
	}
	for _, p := range pi.Parameters {
		if p != nil {
			s.parameter(p.Value)
		}
	}
	for _, op := range pi.Operations() {
		for _, p := range op.Parameters {
			if p != nil {
				s.parameter(p.Value)
			}
		}
		if op.RequestBody != nil && op.RequestBody.Value != nil {
			s.content(op.RequestBody.Value.Content)
		}
		if op.Responses != nil {
			for _, r := range op.Responses.Map() {
				s.response(r)
			}
		}
		for _, cb := range op.Callbacks {
			s.callback(cb, depth)
		}
	}
}
