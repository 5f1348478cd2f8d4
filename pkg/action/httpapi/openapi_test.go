package httpapi_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"
)

// specPath is the service's own OpenAPI description in the example registry.
var specPath = filepath.Join("..", "..", "..", "registry", "tools", "action-registry", "spec", "openapi.yaml")

// apiSpec is the loaded description and a router over it.
type apiSpec struct {
	doc    *openapi3.T
	router routers.Router
}

var loadSpec = sync.OnceValues(func() (*apiSpec, error) {
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromFile(specPath)
	if err != nil {
		return nil, err
	}
	if err := doc.Validate(loader.Context); err != nil {
		return nil, err
	}
	// Route any host: the tests serve on a random loopback port.
	doc.Servers = nil
	r, err := legacy.NewRouter(doc)
	if err != nil {
		return nil, err
	}
	return &apiSpec{doc: doc, router: r}, nil
})

func spec(t testing.TB) *apiSpec {
	t.Helper()
	s, err := loadSpec()
	if err != nil {
		t.Fatalf("load %s: %v", specPath, err)
	}
	return s
}

// checkResponse validates a response against the operation the spec routes
// the request to, status included (an undocumented status fails). Requests
// the spec has no route for (unknown endpoints, other methods) must answer
// with the Error schema.
func (s *apiSpec) checkResponse(t testing.TB, method, path string, status int, hdr http.Header, body []byte) {
	t.Helper()
	// Route on the path's segments: an escaped slash stays inside its
	// segment (the server sees it so too).
	u, _ := url.Parse("http://127.0.0.1" + strings.ReplaceAll(path, "%2F", "_"))
	req := &http.Request{Method: method, URL: u, Header: http.Header{}}
	if method == http.MethodHead {
		return
	}
	if ct := hdr.Get("Content-Type"); ct != "application/json" {
		t.Errorf("%s %s: Content-Type %q, want application/json", method, path, ct)
	}
	route, params, err := s.router.FindRoute(req)
	if err != nil {
		s.checkSchema(t, "Error", method+" "+path, body)
		if status != http.StatusNotFound && status != http.StatusMethodNotAllowed {
			t.Errorf("%s %s: no route in the spec (%v) yet status %d", method, path, err, status)
		}
		return
	}
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route},
		Status:                 status,
		Header:                 hdr,
		Body:                   io.NopCloser(bytes.NewReader(body)),
		Options:                &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true},
	}
	if err := openapi3filter.ValidateResponse(context.Background(), in); err != nil {
		t.Errorf("%s %s: %d response does not match the spec: %v\n%s", method, path, status, oneLine(err), body)
	}
}

// checkSchema validates body against components.schemas[name].
func (s *apiSpec) checkSchema(t testing.TB, name, what string, body []byte) {
	t.Helper()
	ref := s.doc.Components.Schemas[name]
	if ref == nil {
		t.Fatalf("no schema %s in the spec", name)
	}
	v, err := decodeJSON(body)
	if err != nil {
		t.Errorf("%s: body is not JSON: %v\n%s", what, err, body)
		return
	}
	if err := ref.Value.VisitJSON(v, openapi3.MultiErrors()); err != nil {
		t.Errorf("%s: body does not match %s: %v\n%s", what, name, oneLine(err), body)
	}
}

func oneLine(err error) string {
	s := strings.Join(strings.Fields(err.Error()), " ")
	if len(s) > 400 {
		s = s[:400] + "..."
	}
	return s
}
