package specfilter

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/dome-registry/dome/pkg/canonical"
	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/getkin/kin-openapi/openapi3"
)

// maxReported bounds the validation problems listed in one error.
const maxReported = 5

// kinCheck loads data with kin-openapi (external references refused) and
// validates it. It returns the loaded document when data is valid, else the
// load error, or the validation problems, or what kin-openapi panicked with
// (dome must not crash on a document kin-openapi cannot handle). It needs
// nothing but the bytes, so a caller can run it after dropping the input
// document, and place the problems in the input only when there are some.
func kinCheck(data []byte) (kdoc *openapi3.T, loadErr error, problems []error, crash any) {
	defer func() {
		if r := recover(); r != nil {
			kdoc, loadErr, problems, crash = nil, nil, nil, r
		}
	}()
	loader := openapi3.NewLoader()
	loader.IsExternalRefsAllowed = false
	loader.ReadFromURIFunc = func(*openapi3.Loader, *url.URL) ([]byte, error) {
		return nil, errors.New("dome never reads external references while validating")
	}
	kdoc, err := loader.LoadFromData(data)
	if err != nil {
		return nil, err, nil, nil
	}
	errs, perr := validateKin(context.Background(), kdoc)
	if perr != nil {
		return nil, nil, nil, perr
	}
	if len(errs) > 0 {
		return nil, nil, errs, nil
	}
	return kdoc, nil, nil, nil
}

// validate checks data (the filtered spec, or the whole input) with
// kin-openapi and reports problems at their place in the input: the file,
// the JSON pointer and the line. It returns the loaded document (validation
// only reads it).
func (f *filter) validate(data []byte, what string) (*openapi3.T, error) {
	kdoc, loadErr, problems, crash := kinCheck(data)
	if kdoc != nil {
		return kdoc, nil
	}
	return nil, f.validationError(what, loadErr, problems, crash)
}

// validationError places kinCheck's findings in the input document.
func (f *filter) validationError(what string, loadErr error, errs []error, crash any) error {
	switch {
	case crash != nil:
		return &errkind.InputError{Source: f.doc.describe(f.doc.File), Problem: fmt.Sprintf("kin-openapi failed while validating %s: %v", what, crash), Hint: f.opts.Offer.or("--no-validate", "pass --no-validate to skip validation, and report the document to dome's maintainers", "report the document to dome's maintainers")}
	case loadErr != nil:
		return &errkind.InputError{Source: f.doc.describe(f.doc.File), Problem: fmt.Sprintf("%s is not a valid OpenAPI document: %v", what, loadErr), Err: loadErr, Hint: f.validateHint()}
	}
	var lines []string
	var first *errkind.InputError
	var lastPlace string
	for _, e := range errs {
		at, example, msg := locate(e)
		at = f.refineExample(at, example)
		var se *openapi3.SchemaError
		if errors.As(e, &se) {
			at = f.refineValue(at, se)
		}
		msg = brief(msg)
		src, field := f.doc.location(at)
		if field == "" {
			field = "(document root)"
		}
		if v := f.doc.Root.Resolve(at); v != nil && v.Line > 0 {
			field = fmt.Sprintf("line %d (%s)", v.Line, shortPointer(field))
		}
		place := src + ": " + field
		if first == nil {
			first = &errkind.InputError{Source: src, Field: field, Problem: fmt.Sprintf("%s is not a valid OpenAPI document: %s", what, msg), Err: e, Hint: f.validateHint()}
		} else if len(lines) < maxReported {
			if place == lastPlace {
				lines = append(lines, msg) // same place as the one before
			} else {
				lines = append(lines, place+": "+msg)
			}
		}
		lastPlace = place
	}
	if n := len(errs) - 1; n > 0 {
		first.Problem += fmt.Sprintf(" (and %d more: %s)", n, strings.Join(lines, "; "))
	}
	return first
}

func (f *filter) validateHint() string {
	return f.opts.Offer.or("--no-validate", "fix the spec, or pass --no-validate for a knowingly broken one", "fix the spec")
}

// refineValue finds the example below at whose value holds the value a
// schema error is about: kin-openapi reports an invalid response example
// at its operation, with the value and its path inside the example but not
// where the example is. It returns the pointer to that value (or to the
// closest enclosing value that matches), or at itself.
func (f *filter) refineValue(at Pointer, se *openapi3.SchemaError) Pointer {
	base := f.doc.Root.Resolve(at)
	if base == nil || se.Value == nil {
		return at
	}
	raw, err := json.Marshal(se.Value)
	if err != nil {
		return at
	}
	want, err := canonical.Transform(raw)
	if err != nil {
		return at
	}
	path := se.JSONPointer()
	var found Pointer
	try := func(ex *Value, p Pointer) {
		for k := len(path); k >= 0 && found == nil; k-- {
			t := ex.Resolve(Pointer(path[:k]))
			if t == nil {
				continue
			}
			if got, err := canonical.Transform(t.AppendJSON(nil)); err == nil && bytes.Equal(got, want) {
				found = append(p, path[:k]...)
			}
			return // the deepest existing value decides
		}
	}
	var find func(v *Value, p Pointer)
	find = func(v *Value, p Pointer) {
		if found != nil || v == nil || v.Kind != KindObject {
			return
		}
		if ex := v.Get("example"); ex != nil {
			try(ex, p.Child("example"))
		}
		for _, m := range v.Get("examples").membersOrNil() {
			if val := m.Value.Get("value"); val != nil && found == nil {
				try(val, p.Child("examples", m.Key, "value"))
			}
		}
		for _, m := range v.Members {
			if m.Key != "example" && m.Key != "examples" && m.Value.Kind == KindObject {
				find(m.Value, append(p, m.Key))
			}
		}
	}
	find(base, append(Pointer{}, at...))
	if found == nil {
		return at
	}
	return found
}

// maxProblem bounds one validation problem in a message: kin-openapi's
// schema errors carry the whole schema and value (35 KB on GitHub's spec).
const maxProblem = 300

// brief keeps the first line of a kin-openapi message (its "Schema:" and
// "Value:" dumps go), at most maxProblem bytes, cut at a rune boundary.
func brief(msg string) string {
	if i := strings.IndexByte(msg, '\n'); i >= 0 {
		msg = strings.TrimSpace(msg[:i])
	}
	if len(msg) <= maxProblem {
		return msg
	}
	cut := maxProblem
	for cut > 0 && !utf8.RuneStart(msg[cut]) {
		cut--
	}
	return msg[:cut] + fmt.Sprintf("... (%d bytes more)", len(msg)-cut)
}

// refineExample finds the example named name below at (kin-openapi names
// the example but not the response or media type it sits in): the first
// examples/<name> in document order, or at itself.
func (f *filter) refineExample(at Pointer, name string) Pointer {
	if name == "" {
		return at
	}
	var found Pointer
	var find func(v *Value, p Pointer)
	find = func(v *Value, p Pointer) {
		if found != nil || v == nil || v.Kind != KindObject {
			return
		}
		if ex := v.Get("examples"); ex.IsObject() && ex.Get(name) != nil {
			found = p.Child("examples", name)
			return
		}
		for _, m := range v.Members {
			if m.Key != "example" && m.Key != "examples" {
				find(m.Value, append(p, m.Key))
			}
		}
	}
	find(f.doc.Root.Resolve(at), append(Pointer{}, at...))
	if found == nil {
		return at
	}
	return found
}

// validateKin runs kin-openapi's validation on two cores: the component
// schemas (usually the bulk) in one goroutine, everything else (what
// doc.Validate does, minus those schemas) in the other. kin-openapi's
// validation only reads the document (its pattern cache is a sync.Map).
func validateKin(ctx context.Context, kdoc *openapi3.T) ([]error, any) {
	defer stubReferencedSchemas(kdoc)()
	opts := []openapi3.ValidationOption{openapi3.EnableMultiError()}
	if kdoc.IsOpenAPI31OrLater() {
		opts = append(opts, openapi3.IsOpenAPI31OrLater())
	}
	var schemas openapi3.Schemas
	if kdoc.Components != nil && len(kdoc.Components.Schemas) > 0 {
		schemas = kdoc.Components.Schemas
		comps := *kdoc.Components
		comps.Schemas = nil
		rest := *kdoc
		rest.Components = &comps
		kdoc = &rest
	}
	type result struct {
		errs  []error
		panic any
	}
	done := make(chan result)
	go func() {
		var errs []error
		defer func() {
			done <- result{errs, recover()}
		}()
		sctx := openapi3.WithValidationOptions(ctx, opts...)
		names := make([]string, 0, len(schemas))
		for n := range schemas {
			names = append(names, n)
		}
		sort.Strings(names)
		if allSchemasValid(sctx, schemas, names) {
			return
		}
		for _, n := range names {
			err := openapi3.ValidateIdentifier(n)
			if err == nil {
				err = schemas[n].Validate(sctx)
			}
			for _, e := range flatten(err) {
				errs = append(errs, &openapi3.SectionValidationError{Section: "components", Cause: &openapi3.ComponentValidationError{Section: "schema", Name: n, Cause: e}})
			}
		}
	}()
	var errs []error
	var mainPanic any
	func() {
		defer func() { mainPanic = recover() }()
		errs = flatten(kdoc.Validate(ctx, opts...))
	}()
	r := <-done
	if r.panic != nil {
		return nil, r.panic
	}
	if mainPanic != nil {
		return nil, mainPanic
	}
	return append(r.errs, errs...), nil
}

// allSchemasValid validates every component schema in one pass, each
// schema once: kin-openapi's Schema.Validate starts a fresh record of the
// schemas it visited at every call, so validating the components one by one
// validates each again from every component that reaches it (on the Stripe
// spec, whose schemas reference each other throughout, several times over).
// One schema whose allOf lists them all shares that record. It says only
// whether they are all valid (kin-openapi stops at the first problem): on
// false, the caller validates them one by one to report each problem at its
// component.
func allSchemasValid(ctx context.Context, schemas openapi3.Schemas, names []string) bool {
	all := &openapi3.Schema{AllOf: make(openapi3.SchemaRefs, 0, len(names))}
	for _, n := range names {
		if openapi3.ValidateIdentifier(n) != nil || schemas[n] == nil || schemas[n].Value == nil {
			return false
		}
		all.AllOf = append(all.AllOf, schemas[n])
	}
	return all.Validate(ctx) == nil
}

// flatten splits kin-openapi's MultiErrors into single errors and keeps,
// for each, the context wrappers above it (section, path, operation,
// component, webhook, example...): errors.As on the whole chain would find
// the first MultiError and drop them, and every problem would then sit at
// the document root.
func flatten(err error) []error {
	if err == nil {
		return nil
	}
	switch x := err.(type) {
	case openapi3.MultiError:
		var out []error
		for _, e := range x {
			out = append(out, flatten(e)...)
		}
		return out
	case *openapi3.SectionValidationError:
		return rewrap(x.Cause, func(c error) error { y := *x; y.Cause = c; return &y })
	case *openapi3.ComponentValidationError:
		return rewrap(x.Cause, func(c error) error { y := *x; y.Cause = c; return &y })
	case *openapi3.PathValidationError:
		return rewrap(x.Cause, func(c error) error { y := *x; y.Cause = c; return &y })
	case *openapi3.OperationValidationError:
		return rewrap(x.Cause, func(c error) error { y := *x; y.Cause = c; return &y })
	case *openapi3.WebhookValidationError:
		return rewrap(x.Cause, func(c error) error { y := *x; y.Cause = c; return &y })
	case *openapi3.MediaTypeExampleValidationError:
		return rewrap(x.Cause, func(c error) error { y := *x; y.Cause = c; return &y })
	case *openapi3.ParameterExampleValidationError:
		return rewrap(x.Cause, func(c error) error { y := *x; y.Cause = c; return &y })
	case *openapi3.ParameterFieldValidationError:
		return rewrap(x.Cause, func(c error) error { y := *x; y.Cause = c; return &y })
	case *openapi3.TagValidationError:
		return rewrap(x.Cause, func(c error) error { y := *x; y.Cause = c; return &y })
	}
	var me openapi3.MultiError
	if errors.As(err, &me) {
		return flatten(me)
	}
	return []error{err}
}

// rewrap flattens cause and wraps each part again with wrap.
func rewrap(cause error, wrap func(error) error) []error {
	parts := flatten(cause)
	out := make([]error, len(parts))
	for i, p := range parts {
		out[i] = wrap(p)
	}
	return out
}

// componentSections maps kin-openapi's singular component names to sections.
func componentSectionOf(singular string) string {
	switch singular {
	case "schema":
		return "schemas"
	case "parameter":
		return "parameters"
	case "header":
		return "headers"
	case "request body":
		return "requestBodies"
	case "response":
		return "responses"
	case "security scheme":
		return "securitySchemes"
	case "example":
		return "examples"
	case "link":
		return "links"
	case "callback":
		return "callbacks"
	case "path item":
		return "pathItems"
	}
	return singular
}

// locate turns kin-openapi's context wrappers into a JSON pointer and
// returns the message of the innermost error.
func locate(err error) (at Pointer, example, msg string) {
	for e := err; e != nil; e = errors.Unwrap(e) {
		switch x := e.(type) {
		case *openapi3.SectionValidationError:
			at = append(at, x.Section)
		case *openapi3.ComponentValidationError:
			if len(at) == 0 {
				at = append(at, "components")
			}
			at = append(at, componentSectionOf(x.Section), x.Name)
		case *openapi3.PathValidationError:
			at = append(at, x.Path)
		case *openapi3.OperationValidationError:
			at = append(at, strings.ToLower(x.Method))
		case *openapi3.WebhookValidationError:
			if len(at) == 0 {
				at = append(at, "webhooks")
			}
			at = append(at, x.Name)
		case *openapi3.MediaTypeExampleValidationError:
			example = x.ExampleName
		case *openapi3.ParameterExampleValidationError:
			example = x.ExampleName
		default:
			return at, example, e.Error()
		}
	}
	return at, example, err.Error()
}
