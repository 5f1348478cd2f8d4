package specfilter

import "github.com/dome-registry/dome/pkg/canonical"

// leanDescription stands in for a non-empty description in the bytes
// validation reads.
const leanDescription = "d"

// leanOf returns the canonical JSON of an OpenAPI document as validation
// reads it: with its descriptions shortened (appendLeanCanonical). It parses
// the bytes again rather than writing them from the filter's tree, so that
// it runs once the input document is dropped: the output's own tree is a
// few times its size, and garbage before kin-openapi's load starts.
func leanOf(canon []byte) ([]byte, error) {
	v, err := ParseJSON(canon, Limits{MaxBytes: int64(len(canon)) + 1})
	if err != nil {
		return nil, err
	}
	return v.appendLeanCanonical(make([]byte, 0, len(canon)), kDocument)
}

// appendLeanCanonical appends the canonical form of v (an object of kind k)
// with the string value of every description of a specification object
// replaced by a one-byte stand-in ("" stays ""): the bytes AppendCanonical
// gives but for those strings. Descriptions are a third of a real spec (367
// KB of the 931 KB Stripe's four main resources filter to), and kin-openapi
// decodes each string again at every level of the objects around it; it
// checks nothing in a description but that a response has one, which the
// stand-in keeps. Data (examples, defaults, enums, extensions' values,
// unknown keys: kind kNone) is written as it is, so a property or an
// example member named "description" is left alone, and so is a
// description that is not a string (kin-openapi's load refuses it).
func (v *Value) appendLeanCanonical(b []byte, k objKind) ([]byte, error) {
	if v.Kind != KindObject || k == kNone {
		return v.AppendCanonical(b)
	}
	return appendCanonicalObject(b, v.Members, func(b []byte, m Member) ([]byte, error) {
		if m.Key == "description" && m.Value.Kind == KindString && k != kSecurityRequirement {
			if m.Value.Text == "" {
				return append(b, `""`...), nil
			}
			return canonical.AppendString(b, leanDescription), nil
		}
		ck, sh, ok := child(k, m.Key)
		if !ok {
			return m.Value.AppendCanonical(b)
		}
		return m.Value.appendLeanShape(b, ck, sh)
	})
}

// appendLeanShape writes the value under a key laid out as sh (as
// walkShape reads it); a value of another JSON type is data.
func (v *Value) appendLeanShape(b []byte, k objKind, sh shape) ([]byte, error) {
	switch {
	case sh == one || (sh == multi && v.Kind == KindObject):
		return v.appendLeanCanonical(b, k)
	case (sh == list || sh == multi) && v.Kind == KindArray:
		b = append(b, '[')
		for i, it := range v.Members {
			if i > 0 {
				b = append(b, ',')
			}
			var err error
			if b, err = it.Value.appendLeanCanonical(b, k); err != nil {
				return b, err
			}
		}
		return append(b, ']'), nil
	case sh == dict && v.Kind == KindObject:
		// Named entries, each an object of kind k: a name (even
		// "description") is not a keyword.
		return appendCanonicalObject(b, v.Members, func(b []byte, m Member) ([]byte, error) {
			return m.Value.appendLeanCanonical(b, k)
		})
	}
	return v.AppendCanonical(b)
}
