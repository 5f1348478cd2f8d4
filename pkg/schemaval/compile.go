package schemaval

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// node is one compiled (sub)schema.
type node struct {
	always *bool // a boolean schema

	types    []string
	enum     []any
	hasConst bool
	constVal any

	props       map[string]*node
	required    []string
	addl        *node
	patProps    []patProp
	propNames   *node
	minProps    *int
	maxProps    *int
	depRequired map[string][]string
	items       *node
	minItems    *int
	maxItems    *int
	unique      bool
	minLen      *int
	maxLen      *int
	pattern     *pattern
	minimum     *float64
	maximum     *float64
	exMinimum   *float64
	exMaximum   *float64
	multipleOf  *float64
	ref         string
	refNode     *node
	allOf       []*node
	anyOf       []*node
	oneOf       []*node
	not         *node
	ifN, thenN  *node
	elseN       *node
}

type patProp struct {
	re *pattern
	n  *node
}

// pattern is a regular expression of a schema, compiled once, on its first
// match when the schema is one of the binary's own (MustCompile: their
// patterns are checked by TestEmbeddedSchemas), so that a command compiles
// only the patterns of the fields its files have; a schema compiled from
// input (Compile) has each compiled at once, so that a bad one is an error
// there.
type pattern struct {
	src  string
	once sync.Once
	re   *regexp.Regexp
}

// MatchString reports whether s matches the pattern.
func (p *pattern) MatchString(s string) bool {
	p.once.Do(func() {
		if p.re == nil {
			p.re = regexp.MustCompile(p.src)
		}
	})
	return p.re.MatchString(s)
}

type compiler struct {
	root  any
	name  string
	nodes map[string]*node // by JSON pointer, for $ref
	refs  []*node
	// lazy leaves patterns to their first match (MustCompile).
	lazy     bool
	patterns map[string]*pattern // one per source: schemas repeat their id patterns
}

// pattern returns the compiled pattern of src, shared by every place of
// the schema that has it.
func (c *compiler) pattern(src string) (*pattern, error) {
	if p, ok := c.patterns[src]; ok {
		return p, nil
	}
	p := &pattern{src: src}
	if !c.lazy {
		re, err := regexp.Compile(src)
		if err != nil {
			return nil, err
		}
		p.re = re
	}
	if c.patterns == nil {
		c.patterns = map[string]*pattern{}
	}
	c.patterns[src] = p
	return p, nil
}

func compileDoc(name string, doc any, lazy bool) (*node, error) {
	c := &compiler{root: doc, name: name, nodes: map[string]*node{}, lazy: lazy}
	n, err := c.compile(doc, "")
	if err != nil {
		return nil, err
	}
	for _, r := range c.refs {
		target, err := c.resolve(r.ref)
		if err != nil {
			return nil, err
		}
		r.refNode = target
	}
	return n, nil
}

func (c *compiler) resolve(ref string) (*node, error) {
	if !strings.HasPrefix(ref, "#") {
		return nil, fmt.Errorf("$ref %q: only references inside the schema (#/...) are supported", ref)
	}
	ptr := strings.TrimPrefix(ref, "#")
	if n, ok := c.nodes[ptr]; ok {
		return n, nil
	}
	v := c.root
	if ptr != "" {
		for _, tok := range strings.Split(strings.TrimPrefix(ptr, "/"), "/") {
			tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
			switch x := v.(type) {
			case map[string]any:
				var ok bool
				if v, ok = x[tok]; !ok {
					return nil, fmt.Errorf("$ref %q: no %q", ref, tok)
				}
			case []any:
				i, err := strconv.Atoi(tok)
				if err != nil || i < 0 || i >= len(x) {
					return nil, fmt.Errorf("$ref %q: bad index %q", ref, tok)
				}
				v = x[i]
			default:
				return nil, fmt.Errorf("$ref %q: cannot descend into %T", ref, v)
			}
		}
	}
	n, err := c.compile(v, ptr)
	if err != nil {
		return nil, err
	}
	for _, r := range c.refs { // references found while compiling the target
		if r.refNode == nil {
			if r.refNode, err = c.resolve(r.ref); err != nil {
				return nil, err
			}
		}
	}
	return n, nil
}

func (c *compiler) errf(ptr, format string, a ...any) error {
	return fmt.Errorf("schema %s at #%s: %s", c.name, ptr, fmt.Sprintf(format, a...))
}

func (c *compiler) compile(v any, ptr string) (*node, error) {
	if n, ok := c.nodes[ptr]; ok {
		return n, nil
	}
	n := &node{}
	c.nodes[ptr] = n
	if b, ok := v.(bool); ok {
		n.always = &b
		return n, nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, c.errf(ptr, "a schema must be an object or a boolean, not %T", v)
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	sub := func(k string, x any) (*node, error) { return c.compile(x, ptr+"/"+escape(k)) }
	subList := func(k string, x any) ([]*node, error) {
		arr, ok := x.([]any)
		if !ok || len(arr) == 0 {
			return nil, c.errf(ptr, "%s must be a non-empty array", k)
		}
		out := make([]*node, len(arr))
		for i, s := range arr {
			var err error
			if out[i], err = c.compile(s, ptr+"/"+k+"/"+strconv.Itoa(i)); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	for _, k := range keys {
		x := m[k]
		var err error
		switch k {
		case "$defs", "definitions":
			defs, ok := x.(map[string]any)
			if !ok {
				return nil, c.errf(ptr, "%s must be an object", k)
			}
			for dk, dv := range defs {
				if _, err := c.compile(dv, ptr+"/"+k+"/"+escape(dk)); err != nil {
					return nil, err
				}
			}
		case "type":
			switch t := x.(type) {
			case string:
				n.types = []string{t}
			case []any:
				for _, e := range t {
					s, ok := e.(string)
					if !ok {
						return nil, c.errf(ptr, "type must be a string or an array of strings")
					}
					n.types = append(n.types, s)
				}
			default:
				return nil, c.errf(ptr, "type must be a string or an array of strings")
			}
			for _, t := range n.types {
				switch t {
				case "null", "boolean", "object", "array", "number", "integer", "string":
				default:
					return nil, c.errf(ptr, "unknown type %q", t)
				}
			}
		case "enum":
			arr, ok := x.([]any)
			if !ok {
				return nil, c.errf(ptr, "enum must be an array")
			}
			n.enum = arr
		case "const":
			n.hasConst, n.constVal = true, x
		case "properties":
			props, ok := x.(map[string]any)
			if !ok {
				return nil, c.errf(ptr, "properties must be an object")
			}
			n.props = map[string]*node{}
			for pk, pv := range props {
				if n.props[pk], err = c.compile(pv, ptr+"/properties/"+escape(pk)); err != nil {
					return nil, err
				}
			}
		case "required":
			if n.required, err = stringList(x); err != nil {
				return nil, c.errf(ptr, "required: %v", err)
			}
		case "additionalProperties":
			n.addl, err = sub(k, x)
		case "patternProperties":
			pp, ok := x.(map[string]any)
			if !ok {
				return nil, c.errf(ptr, "patternProperties must be an object")
			}
			srcs := make([]string, 0, len(pp))
			for src := range pp {
				srcs = append(srcs, src)
			}
			sort.Strings(srcs)
			for _, src := range srcs {
				re, err := c.pattern(src)
				if err != nil {
					return nil, c.errf(ptr, "patternProperties %q: %v", src, err)
				}
				sn, err := c.compile(pp[src], ptr+"/patternProperties/"+escape(src))
				if err != nil {
					return nil, err
				}
				n.patProps = append(n.patProps, patProp{re, sn})
			}
		case "propertyNames":
			n.propNames, err = sub(k, x)
		case "minProperties":
			n.minProps, err = nonNegInt(x)
		case "maxProperties":
			n.maxProps, err = nonNegInt(x)
		case "dependentRequired":
			dr, ok := x.(map[string]any)
			if !ok {
				return nil, c.errf(ptr, "dependentRequired must be an object")
			}
			n.depRequired = map[string][]string{}
			for dk, dv := range dr {
				if n.depRequired[dk], err = stringList(dv); err != nil {
					return nil, c.errf(ptr, "dependentRequired %q: %v", dk, err)
				}
			}
		case "items":
			n.items, err = sub(k, x)
		case "minItems":
			n.minItems, err = nonNegInt(x)
		case "maxItems":
			n.maxItems, err = nonNegInt(x)
		case "uniqueItems":
			b, ok := x.(bool)
			if !ok {
				return nil, c.errf(ptr, "uniqueItems must be a boolean")
			}
			n.unique = b
		case "minLength":
			n.minLen, err = nonNegInt(x)
		case "maxLength":
			n.maxLen, err = nonNegInt(x)
		case "pattern":
			s, ok := x.(string)
			if !ok {
				return nil, c.errf(ptr, "pattern must be a string")
			}
			if n.pattern, err = c.pattern(s); err != nil {
				return nil, c.errf(ptr, "pattern %q: %v", s, err)
			}
		case "minimum":
			n.minimum, err = number(x)
		case "maximum":
			n.maximum, err = number(x)
		case "exclusiveMinimum":
			n.exMinimum, err = number(x)
		case "exclusiveMaximum":
			n.exMaximum, err = number(x)
		case "multipleOf":
			if n.multipleOf, err = number(x); err == nil && *n.multipleOf <= 0 {
				err = fmt.Errorf("must be positive")
			}
		case "$ref":
			s, ok := x.(string)
			if !ok {
				return nil, c.errf(ptr, "$ref must be a string")
			}
			n.ref = s
			c.refs = append(c.refs, n)
		case "allOf":
			n.allOf, err = subList(k, x)
		case "anyOf":
			n.anyOf, err = subList(k, x)
		case "oneOf":
			n.oneOf, err = subList(k, x)
		case "not":
			n.not, err = sub(k, x)
		case "if":
			n.ifN, err = sub(k, x)
		case "then":
			n.thenN, err = sub(k, x)
		case "else":
			n.elseN, err = sub(k, x)
		default:
			if !annotationKeywords[k] {
				return nil, c.errf(ptr, "keyword %q is not supported by dome's validator", k)
			}
		}
		if err != nil {
			return nil, c.errf(ptr, "%s: %v", k, err)
		}
	}
	return n, nil
}

func escape(tok string) string {
	return strings.ReplaceAll(strings.ReplaceAll(tok, "~", "~0"), "/", "~1")
}

func stringList(x any) ([]string, error) {
	arr, ok := x.([]any)
	if !ok {
		return nil, fmt.Errorf("must be an array of strings")
	}
	out := make([]string, len(arr))
	for i, e := range arr {
		s, ok := e.(string)
		if !ok {
			return nil, fmt.Errorf("must be an array of strings")
		}
		out[i] = s
	}
	return out, nil
}

func number(x any) (*float64, error) {
	n, ok := x.(json.Number)
	if !ok {
		return nil, fmt.Errorf("must be a number")
	}
	f, err := strconv.ParseFloat(string(n), 64)
	if err != nil || math.IsInf(f, 0) {
		return nil, fmt.Errorf("must be a finite number")
	}
	return &f, nil
}

func nonNegInt(x any) (*int, error) {
	f, err := number(x)
	if err != nil || *f < 0 || *f != math.Trunc(*f) || *f > math.MaxInt32 {
		return nil, fmt.Errorf("must be a non-negative integer")
	}
	i := int(*f)
	return &i, nil
}
