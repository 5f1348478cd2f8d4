package schemaval

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// verr is one violation at an instance location.
type verr struct {
	loc []string
	msg string
}

type validator struct {
	errs  []verr
	depth int
}

func (v *validator) fail(loc []string, format string, a ...any) {
	v.errs = append(v.errs, verr{append([]string(nil), loc...), fmt.Sprintf(format, a...)})
}

// maxRefDepth stops schemas that recurse through $ref without consuming input.
const maxRefDepth = 200

func typeOf(x any) string {
	switch t := x.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case json.Number:
		if f, err := strconv.ParseFloat(string(t), 64); err == nil && f == math.Trunc(f) && !strings.ContainsAny(string(t), ".eE") {
			return "integer"
		}
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", x)
}

func isInteger(x any) bool {
	n, ok := x.(json.Number)
	if !ok {
		return false
	}
	f, err := strconv.ParseFloat(string(n), 64)
	return err == nil && f == math.Trunc(f)
}

func (v *validator) validate(n *node, x any, loc []string) {
	if n.always != nil {
		if !*n.always {
			v.fail(loc, "not allowed (false schema)")
		}
		return
	}
	if n.refNode != nil {
		v.depth++
		if v.depth > maxRefDepth {
			v.fail(loc, "$ref %s: recursion deeper than %d", n.ref, maxRefDepth)
		} else {
			v.validate(n.refNode, x, loc)
		}
		v.depth--
	}
	if len(n.types) > 0 {
		t := typeOf(x)
		ok := false
		for _, want := range n.types {
			if want == t || want == "number" && t == "integer" || want == "integer" && isInteger(x) {
				ok = true
				break
			}
		}
		if !ok {
			if len(n.types) == 1 {
				v.fail(loc, "got %s, want %s", t, n.types[0])
			} else {
				v.fail(loc, "got %s, want %s", t, strings.Join(n.types, " or "))
			}
			return
		}
	}
	if n.enum != nil {
		ok := false
		for _, e := range n.enum {
			if equal(e, x) {
				ok = true
				break
			}
		}
		if !ok {
			v.fail(loc, "value must be one of %s", list(n.enum))
		}
	}
	if n.hasConst && !equal(n.constVal, x) {
		v.fail(loc, "value must be %s", show(n.constVal))
	}
	switch t := x.(type) {
	case map[string]any:
		v.object(n, t, loc)
	case []any:
		v.array(n, t, loc)
	case string:
		v.str(n, t, loc)
	case json.Number:
		v.num(n, t, loc)
	}
	for _, s := range n.allOf {
		v.validate(s, x, loc)
	}
	if len(n.anyOf) > 0 {
		matched, best := 0, []verr(nil)
		for _, s := range n.anyOf {
			errs := v.try(s, x, loc)
			if len(errs) == 0 {
				matched++
				break
			}
			best = deeper(best, errs)
		}
		if matched == 0 {
			v.fail(loc, "anyOf: matches none of %d alternatives (closest: %s)", len(n.anyOf), describeOne(best))
		}
	}
	if len(n.oneOf) > 0 {
		var matches []int
		var best []verr
		for i, s := range n.oneOf {
			errs := v.try(s, x, loc)
			if len(errs) == 0 {
				matches = append(matches, i)
			} else {
				best = deeper(best, errs)
			}
		}
		switch len(matches) {
		case 1:
		case 0:
			v.fail(loc, "oneOf: matches none of %d alternatives (closest: %s)", len(n.oneOf), describeOne(best))
		default:
			v.fail(loc, "oneOf: matches alternatives %v, want exactly one", matches)
		}
	}
	if n.not != nil && len(v.try(n.not, x, loc)) == 0 {
		v.fail(loc, "not: must not match the schema")
	}
	if n.ifN != nil {
		if len(v.try(n.ifN, x, loc)) == 0 {
			if n.thenN != nil {
				v.validate(n.thenN, x, loc)
			}
		} else if n.elseN != nil {
			v.validate(n.elseN, x, loc)
		}
	}
}

// try validates without recording, returning the violations.
func (v *validator) try(n *node, x any, loc []string) []verr {
	saved := v.errs
	v.errs = nil
	v.validate(n, x, loc)
	errs := v.errs
	v.errs = saved
	return errs
}

// deeper keeps the set of violations that points deepest into the instance.
func deeper(a, b []verr) []verr {
	if len(a) == 0 {
		return b
	}
	if len(b) > 0 && len(b[0].loc) > len(a[0].loc) {
		return b
	}
	return a
}

func describeOne(errs []verr) string {
	if len(errs) == 0 {
		return "-"
	}
	return pointerOrRoot(errs[0].loc) + ": " + errs[0].msg
}

func (v *validator) object(n *node, m map[string]any, loc []string) {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var missing []string
	for _, r := range n.required {
		if _, ok := m[r]; !ok {
			missing = append(missing, r)
		}
	}
	if len(missing) > 0 {
		qs := make([]string, len(missing))
		for i, s := range missing {
			qs[i] = "'" + s + "'"
		}
		word := "property"
		if len(missing) > 1 {
			word = "properties"
		}
		v.fail(loc, "missing %s %s", word, strings.Join(qs, ", "))
	}
	for dk, req := range n.depRequired {
		if _, ok := m[dk]; !ok {
			continue
		}
		for _, r := range req {
			if _, ok := m[r]; !ok {
				v.fail(loc, "property '%s' requires property '%s'", dk, r)
			}
		}
	}
	if n.minProps != nil && len(m) < *n.minProps {
		v.fail(loc, "minProperties: got %d, want %d", len(m), *n.minProps)
	}
	if n.maxProps != nil && len(m) > *n.maxProps {
		v.fail(loc, "maxProperties: got %d, want %d", len(m), *n.maxProps)
	}
	for _, k := range keys {
		child := append(loc, k)
		if n.propNames != nil {
			for _, e := range v.try(n.propNames, k, loc) {
				v.fail(child, "property name %q: %s", k, e.msg)
			}
		}
		covered := false
		if s, ok := n.props[k]; ok {
			covered = true
			v.validate(s, m[k], child)
		}
		for _, pp := range n.patProps {
			if pp.re.MatchString(k) {
				covered = true
				v.validate(pp.n, m[k], child)
			}
		}
		if !covered && n.addl != nil {
			if n.addl.always != nil && !*n.addl.always {
				v.fail(child, "unknown field %q", k)
			} else {
				v.validate(n.addl, m[k], child)
			}
		}
	}
}

func (v *validator) array(n *node, a []any, loc []string) {
	if n.minItems != nil && len(a) < *n.minItems {
		v.fail(loc, "minItems: got %d, want %d", len(a), *n.minItems)
	}
	if n.maxItems != nil && len(a) > *n.maxItems {
		v.fail(loc, "maxItems: got %d, want %d", len(a), *n.maxItems)
	}
	if n.unique {
	outer:
		for i := range a {
			for j := 0; j < i; j++ {
				if equal(a[i], a[j]) {
					v.fail(append(loc, strconv.Itoa(i)), "uniqueItems: items %d and %d are equal", j, i)
					break outer
				}
			}
		}
	}
	if n.items != nil {
		for i, e := range a {
			v.validate(n.items, e, append(loc, strconv.Itoa(i)))
		}
	}
}

func (v *validator) str(n *node, s string, loc []string) {
	l := utf8.RuneCountInString(s)
	if n.minLen != nil && l < *n.minLen {
		v.fail(loc, "minLength: got %d, want %d", l, *n.minLen)
	}
	if n.maxLen != nil && l > *n.maxLen {
		v.fail(loc, "maxLength: got %d, want %d", l, *n.maxLen)
	}
	if n.pattern != nil && !n.pattern.MatchString(s) {
		v.fail(loc, "%q does not match pattern %q", s, n.pattern.src)
	}
}

func (v *validator) num(n *node, x json.Number, loc []string) {
	f, err := strconv.ParseFloat(string(x), 64)
	if err != nil {
		v.fail(loc, "number %s out of range", x)
		return
	}
	if n.minimum != nil && f < *n.minimum {
		v.fail(loc, "minimum: got %s, want >= %v", x, *n.minimum)
	}
	if n.maximum != nil && f > *n.maximum {
		v.fail(loc, "maximum: got %s, want <= %v", x, *n.maximum)
	}
	if n.exMinimum != nil && f <= *n.exMinimum {
		v.fail(loc, "exclusiveMinimum: got %s, want > %v", x, *n.exMinimum)
	}
	if n.exMaximum != nil && f >= *n.exMaximum {
		v.fail(loc, "exclusiveMaximum: got %s, want < %v", x, *n.exMaximum)
	}
	if n.multipleOf != nil {
		q := f / *n.multipleOf
		if math.Abs(q-math.Round(q)) > 1e-9 {
			v.fail(loc, "multipleOf: %s is not a multiple of %v", x, *n.multipleOf)
		}
	}
}

// equal is JSON equality: numbers by value, objects regardless of key order.
func equal(a, b any) bool {
	switch x := a.(type) {
	case json.Number:
		y, ok := b.(json.Number)
		if !ok {
			return false
		}
		fx, e1 := strconv.ParseFloat(string(x), 64)
		fy, e2 := strconv.ParseFloat(string(y), 64)
		return e1 == nil && e2 == nil && fx == fy
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !equal(x[i], y[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, xv := range x {
			yv, ok := y[k]
			if !ok || !equal(xv, yv) {
				return false
			}
		}
		return true
	default:
		return a == b
	}
}

func show(x any) string {
	b, err := json.Marshal(x)
	if err != nil {
		return fmt.Sprint(x)
	}
	return string(b)
}

func list(xs []any) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = show(x)
	}
	return strings.Join(parts, ", ")
}
