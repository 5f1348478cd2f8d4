package specfilter

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/dome-registry/dome/pkg/errkind"
)

// index finds components by section and name in O(1).
type index struct {
	root  *Value
	comps map[string]map[string]*Value
}

func newIndex(root *Value) *index {
	ix := &index{root: root, comps: map[string]map[string]*Value{}}
	c := root.Get("components")
	if !c.IsObject() {
		return ix
	}
	for _, sec := range c.Members {
		if _, ok := sectionKind(sec.Key); !ok || !sec.Value.IsObject() {
			continue
		}
		m := make(map[string]*Value, len(sec.Value.Members))
		for _, e := range sec.Value.Members {
			m[e.Key] = e.Value
		}
		ix.comps[sec.Key] = m
	}
	return ix
}

// internalPointer parses an internal reference ("#/a/b").
func internalPointer(ref string) (Pointer, bool) {
	frag, ok := strings.CutPrefix(ref, "#")
	if !ok {
		return nil, false
	}
	if strings.Contains(frag, "%") {
		f, err := url.PathUnescape(frag)
		if err != nil {
			return nil, false
		}
		frag = f
	}
	return ParsePointer(frag)
}

// resolve follows an internal pointer.
func (ix *index) resolve(p Pointer) *Value {
	if len(p) >= 3 && p[0] == "components" {
		if sec, ok := ix.comps[p[1]]; ok {
			return sec[p[2]].Resolve(p[3:])
		}
	}
	return ix.root.Resolve(p)
}

// refCheck walks the bundled document and reports the first reference that
// does not resolve.
type refCheck struct {
	doc *Document
	ix  *index
	err error
}

func (d *Document) checkRefs() error {
	rc := &refCheck{doc: d, ix: newIndex(d.Root)}
	walk(d.Root, kDocument, nil, rc)
	return rc.err
}

func (rc *refCheck) fail(at Pointer, line int32, format string, a ...any) {
	if rc.err == nil {
		src, field := rc.doc.location(at)
		rc.err = &errkind.InputError{Source: src, Field: fieldAt(field, line), Problem: fmt.Sprintf(format, a...), Hint: "fix the pointer or add the missing object"}
	}
}

func (rc *refCheck) object(v *Value, k objKind, at Pointer) bool {
	if rc.err != nil {
		return false
	}
	if refable(k) {
		if ref, ok := v.Str("$ref"); ok {
			p, ok := internalPointer(ref)
			if !ok {
				rc.fail(at.Child("$ref"), v.Line, "$ref %q is not a JSON pointer", ref)
			} else if rc.ix.resolve(p) == nil {
				rc.fail(at.Child("$ref"), v.Line, "$ref %q: no such object in the document", ref)
			}
		}
	}
	if k == kDiscriminator {
		if m := v.Get("mapping"); m.IsObject() {
			for _, mem := range m.Members {
				if mem.Value.Kind != KindString {
					continue
				}
				s := mem.Value.Text
				if isMappingRef(s) {
					if p, ok := internalPointer(s); !ok || rc.ix.resolve(p) == nil {
						rc.fail(at.Child("mapping", mem.Key), v.Line, "discriminator mapping %q: no such schema", s)
					}
				} else if rc.ix.comps["schemas"][s] == nil {
					rc.fail(at.Child("mapping", mem.Key), v.Line, "discriminator mapping %q: no schema of that name in components/schemas", s)
				}
			}
		}
	}
	if k == kLink {
		if ref, ok := v.Str("operationRef"); ok {
			if p, ok := internalPointer(ref); !ok || rc.ix.resolve(p) == nil {
				rc.fail(at.Child("operationRef"), v.Line, "operationRef %q: no such operation in the document", ref)
			}
		}
	}
	return rc.err == nil
}
