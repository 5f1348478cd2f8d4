package contracttest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
)

// specOps indexes a filtered spec's operations by operationId.
type specOps struct {
	doc *openapi3.T
	ops map[string]*route
}

type route struct {
	path     string
	method   string
	item     *openapi3.PathItem
	op       *openapi3.Operation
	headerPs map[string]bool // lower-cased names of header parameters
}

func loadSpec(filtered []byte) (*specOps, error) {
	loader := openapi3.NewLoader()
	loader.IsExternalRefsAllowed = false
	doc, err := loader.LoadFromData(filtered)
	if err != nil {
		return nil, fmt.Errorf("load the filtered spec: %w", err)
	}
	s := &specOps{doc: doc, ops: map[string]*route{}}
	for _, p := range doc.Paths.InMatchingOrder() {
		item := doc.Paths.Value(p)
		for method, op := range item.Operations() {
			if op.OperationID == "" {
				continue
			}
			r := &route{path: p, method: method, item: item, op: op, headerPs: map[string]bool{}}
			for _, ps := range []openapi3.Parameters{item.Parameters, op.Parameters} {
				for _, pr := range ps {
					if pr.Value != nil && pr.Value.In == openapi3.ParameterInHeader {
						r.headerPs[strings.ToLower(pr.Value.Name)] = true
					}
				}
			}
			s.ops[op.OperationID] = r
		}
	}
	return s, nil
}

// httpRequest builds the request a case describes, against base.
func (r *route) httpRequest(base string, c *Case) (*http.Request, error) {
	u, err := url.Parse(strings.TrimRight(base, "/") + expandPath(r.path, c.Request.PathParams))
	if err != nil {
		return nil, err
	}
	q := url.Values{}
	for k, vs := range queryValues(c.Request.Query) {
		for _, v := range vs {
			q.Add(k, v)
		}
	}
	u.RawQuery = q.Encode()
	var body io.Reader
	if len(c.Request.Body) > 0 {
		body = bytes.NewReader(c.Request.Body)
	}
	req, err := http.NewRequest(r.method, u.String(), body)
	if err != nil {
		return nil, err
	}
	for k, v := range c.Request.Headers {
		req.Header.Set(k, v)
	}
	if len(c.Request.Body) > 0 && req.Header.Get("Content-Type") == "" {
		req.Header.Set("Content-Type", r.bodyContentType())
	}
	return req, nil
}

func (r *route) bodyContentType() string {
	if r.op.RequestBody == nil || r.op.RequestBody.Value == nil {
		return "application/json"
	}
	content := r.op.RequestBody.Value.Content
	if _, ok := content["application/json"]; ok {
		return "application/json"
	}
	var cts []string
	for ct := range content {
		cts = append(cts, ct)
	}
	sort.Strings(cts)
	for _, ct := range cts {
		if strings.HasSuffix(ct, "+json") {
			return ct
		}
	}
	if len(cts) > 0 {
		return cts[0]
	}
	return "application/json"
}

// validateCase checks a case's request and response against the operation
// with kin-openapi's openapi3filter. Credentials are checked for presence:
// an apiKey in its header, query or cookie, a bearer or basic Authorization
// header, any Authorization header for oauth2 and openIdConnect.
func (s *specOps) validateCase(ctx context.Context, c *Case) []string {
	r := s.ops[c.OperationID]
	req, err := r.httpRequest("http://contract.invalid", c)
	if err != nil {
		return []string{"request: " + err.Error()}
	}
	pathParams := map[string]string{}
	for k, v := range c.Request.PathParams {
		pathParams[k] = scalar(v)
	}
	in := &openapi3filter.RequestValidationInput{
		Request:    req,
		PathParams: pathParams,
		Route:      &routers.Route{Spec: s.doc, Path: r.path, PathItem: r.item, Method: r.method, Operation: r.op},
		Options:    &openapi3filter.Options{MultiError: true, AuthenticationFunc: checkCredentials},
	}
	var problems []string
	if err := openapi3filter.ValidateRequest(ctx, in); err != nil {
		problems = append(problems, flatten("request", err)...)
	}
	hdr := http.Header{}
	for k, v := range c.Response.Headers {
		hdr.Set(k, v)
	}
	if len(c.Response.Body) > 0 && hdr.Get("Content-Type") == "" {
		hdr.Set("Content-Type", "application/json")
	}
	rin := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: in,
		Status:                 c.Response.Status,
		Header:                 hdr,
		Body:                   io.NopCloser(bytes.NewReader(c.Response.Body)),
		Options:                &openapi3filter.Options{MultiError: true, IncludeResponseStatus: true},
	}
	if err := openapi3filter.ValidateResponse(ctx, rin); err != nil {
		problems = append(problems, flatten("response", err)...)
	}
	return problems
}

func checkCredentials(_ context.Context, in *openapi3filter.AuthenticationInput) error {
	s := in.SecurityScheme
	req := in.RequestValidationInput.Request
	switch s.Type {
	case "apiKey":
		var present bool
		switch s.In {
		case "header":
			present = req.Header.Get(s.Name) != ""
		case "query":
			present = req.URL.Query().Get(s.Name) != ""
		case "cookie":
			_, err := req.Cookie(s.Name)
			present = err == nil
		}
		if !present {
			return fmt.Errorf("no %s %s for security scheme %s", s.In, s.Name, in.SecuritySchemeName)
		}
	case "http":
		auth := req.Header.Get("Authorization")
		if !strings.HasPrefix(strings.ToLower(auth), strings.ToLower(s.Scheme)+" ") {
			return fmt.Errorf("no Authorization: %s header for security scheme %s", s.Scheme, in.SecuritySchemeName)
		}
	case "oauth2", "openIdConnect":
		if req.Header.Get("Authorization") == "" {
			return fmt.Errorf("no Authorization header for security scheme %s", in.SecuritySchemeName)
		}
	}
	return nil
}

// flatten turns kin-openapi's (multi) errors into one line each.
func flatten(prefix string, err error) []string {
	if me, ok := err.(openapi3.MultiError); ok {
		var out []string
		for _, e := range me {
			out = append(out, flatten(prefix, e)...)
		}
		return out
	}
	msg := strings.Join(strings.Fields(err.Error()), " ")
	if len(msg) > 300 {
		msg = msg[:300] + "..."
	}
	return []string{prefix + ": " + msg}
}
