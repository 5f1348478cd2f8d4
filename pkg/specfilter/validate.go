package specfilter

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"sort"
	"strings"

	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/getkin/kin-openapi/openapi3"
)

// maxReported bounds the validation problems listed in one error.
const maxReported = 5

// validate checks data (the filtered spec, or the whole input) with
// kin-openapi and reports problems at their place in the input: the file,
// the JSON pointer and the line. It returns the loaded document (validation
// only reads it).
func (f *filter) validate(data []byte, what string) (kdoc *openapi3.T, err error) {
	// dome must not crash on a document kin-openapi cannot handle.
	defer func() {
		if r := recover(); r != nil {
			kdoc, err = nil, &errkind.InputError{Source: f.doc.describe(f.doc.File), Problem: fmt.Sprintf("kin-openapi failed while validating %s: %v", what, r), Hint: "pass --no-validate to skip validation, and report the document to dome's maintainers"}
		}
	}()
	loader := openapi3.NewLoader()
	loader.IsExternalRefsAllowed = false
	loader.ReadFromURIFunc = func(*openapi3.Loader, *url.URL) ([]byte, error) {
		return nil, errors.New("dome never reads external references while validating")
	}
	kdoc, err = loader.LoadFromData(data)
	if err != nil {
		return nil, &errkind.InputError{Source: f.doc.describe(f.doc.File), Problem: fmt.Sprintf("%s is not a valid OpenAPI document: %v", what, err), Err: err, Hint: "fix the spec, or pass --no-validate for a knowingly broken one"}
	}
	errs, perr := validateKin(context.Background(), kdoc)
	if perr != nil {
		panic(perr)
	}
	if len(errs) == 0 {
		return kdoc, nil
	}
	var lines []string
	var first *errkind.InputError
	for _, e := range errs {
		at, msg := locate(e)
		src, field := f.doc.location(at)
		if field == "" {
			field = "(document root)"
		}
		if v := f.doc.Root.Resolve(at); v != nil && v.Line > 0 {
			field = fmt.Sprintf("line %d (%s)", v.Line, field)
		}
		if first == nil {
			first = &errkind.InputError{Source: src, Field: field, Problem: fmt.Sprintf("%s is not a valid OpenAPI document: %s", what, msg), Err: e, Hint: "fix the spec, or pass --no-validate for a knowingly broken one"}
		} else if len(lines) < maxReported {
			lines = append(lines, fmt.Sprintf("%s: %s: %s", src, field, msg))
		}
	}
	if n := len(errs) - 1; n > 0 {
		first.Problem += fmt.Sprintf(" (and %d more: %s)", n, strings.Join(lines, "; "))
	}
	return nil, first
}

// validateKin runs kin-openapi's validation on two cores: the component
// schemas (usually the bulk) in one goroutine, everything else (what
// doc.Validate does, minus those schemas) in the other. kin-openapi's
// validation only reads the document (its pattern cache is a sync.Map).
func validateKin(ctx context.Context, kdoc *openapi3.T) ([]error, any) {
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

func flatten(err error) []error {
	if err == nil {
		return nil
	}
	var me openapi3.MultiError
	if errors.As(err, &me) {
		var out []error
		for _, e := range me {
			out = append(out, flatten(e)...)
		}
		return out
	}
	return []error{err}
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
func locate(err error) (Pointer, string) {
	var at Pointer
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
		default:
			return at, e.Error()
		}
	}
	return at, err.Error()
}
