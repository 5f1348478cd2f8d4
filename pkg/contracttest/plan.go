package contracttest

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/dome-registry/dome/pkg/codegen"
	"github.com/dome-registry/dome/pkg/netpolicy"
)

// A scenario is what every language's driver runs: make a client (through
// the loader or not), then make calls. The same scenarios go to the Go,
// TypeScript and Python drivers; the expectations stay here.
type scenario struct {
	Name         string            `json:"name"`
	Load         bool              `json:"load"`
	Dir          string            `json:"dir,omitempty"` // a tampered copy, per language (set by the runner)
	Tool         string            `json:"tool,omitempty"`
	Profile      string            `json:"profile,omitempty"`
	ArtifactHash string            `json:"artifact_hash,omitempty"`
	BaseURL      string            `json:"base_url,omitempty"`
	Credentials  map[string]string `json:"credentials"`
	Headers      map[string]string `json:"headers"`
	Steps        []*step           `json:"steps"`

	kind        string // golden, enforcement, errors, loader
	caseName    string // golden: the case
	wantErr     string // a code expected when the client is made
	sameMessage bool   // messages must be identical across languages
	tamper      string // loader: how the copy is tampered with
}

type step struct {
	AdvanceMS int64     `json:"advance_ms,omitempty"`
	Repeat    int       `json:"repeat,omitempty"`
	Go        *goCall   `json:"go"`
	TS        *tsCall   `json:"ts"`
	Py        *pyCall   `json:"py"`
	mock      []mockRes // what the mock answers, attempt by attempt (the last repeats)

	golden       *Case
	route        *route
	wantStatus   int
	wantErr      string // a code
	wantErrorOf  string // the taxonomy code of the response
	wantRetry    bool
	wantRequests int // -1: not checked
	// for repeated steps: the first okCount calls succeed, the rest fail with wantErr
	okCount int
}

type goCall struct {
	Method      string            `json:"method"`
	PathParams  []json.RawMessage `json:"path_params"`
	Params      json.RawMessage   `json:"params,omitempty"`
	Body        json.RawMessage   `json:"body,omitempty"`
	ContentType string            `json:"content_type,omitempty"`
}

type tsCall struct {
	Fn   string            `json:"fn"`
	Args []json.RawMessage `json:"args"`
}

type pyCall struct {
	Fn     string                     `json:"fn"`
	Args   []json.RawMessage          `json:"args"`
	Kwargs map[string]json.RawMessage `json:"kwargs"`
}

// maxTestTimeoutMS is the longest client.timeout_ms the errors:timeout
// scenario waits out (each attempt takes that long).
const maxTestTimeoutMS = 2000

type mockRes struct {
	Status  int
	Headers map[string]string
	Body    []byte
	Close   bool          // drop the connection without an answer
	Delay   time.Duration // answer this late (or when the client gives up)
	// Stall sends the status, the headers and the body's first byte at
	// once, and the rest this late (or when the client gives up).
	Stall time.Duration
	// Cut announces more body than it sends, then closes the connection.
	Cut bool
}

// models are the clients' models by language, for argument names.
type models map[string]*codegen.Model

func (m models) op(lang, id string) *codegen.Operation {
	if md := m[lang]; md != nil {
		for _, o := range md.Operations {
			if o.ID == id {
				return o
			}
		}
	}
	return nil
}

// plan builds the scenarios of one tool and profile: each golden case,
// then the enforcement, error-mapping and loader scenarios.
type planner struct {
	pol     *codegen.Policy
	spec    *specOps
	models  models
	goSyms  map[string]string // operationId -> Go method
	manif   *codegen.Manifest
	base    string // the base URL the golden scenarios use
	probe   *Case  // a usable case for enforcement scenarios (idempotent if any)
	notes   []string
	usable  map[string]bool
	authOut map[string]string // case -> why the auth mode refuses it
}

func (p *planner) modeAllows(scheme string) bool {
	switch p.pol.AuthMode {
	case "any":
		return true
	case "none":
		return false
	}
	return p.pol.SecuritySchemes[scheme].Type == p.pol.AuthMode
}

// baseURL picks the first server whose host the policy allows, else the
// first allowed host with the first server's path.
func baseURL(pol *codegen.Policy) string {
	for _, s := range pol.Servers {
		h, err := netpolicy.HostOfURL(s)
		if err != nil {
			continue
		}
		if pol.AllowHosts == nil {
			return s
		}
		for _, a := range pol.AllowHosts {
			if a == h {
				return s
			}
		}
	}
	if len(pol.AllowHosts) > 0 {
		path := ""
		if len(pol.Servers) > 0 {
			if i := strings.Index(pol.Servers[0], "://"); i >= 0 {
				rest := pol.Servers[0][i+3:]
				if j := strings.IndexByte(rest, '/'); j >= 0 {
					path = rest[j:]
				}
			}
		}
		return "https://" + pol.AllowHosts[0] + path
	}
	return ""
}

// basePath is the path of a base URL, without a trailing slash.
func basePath(base string) string {
	if i := strings.Index(base, "://"); i >= 0 {
		rest := base[i+3:]
		if j := strings.IndexByte(rest, '/'); j >= 0 {
			return strings.TrimRight(rest[j:], "/")
		}
	}
	return ""
}

// credentials finds the credentials a golden request carries for the first
// security alternative of its operation that the auth mode allows; the
// headers and query parameters they came from are returned as consumed.
func (p *planner) credentials(k *Case) (creds map[string]string, consumed map[string]bool, refused string) {
	op := p.pol.Operations[k.OperationID]
	creds, consumed = map[string]string{}, map[string]bool{}
	if len(op.Security) == 0 {
		return creds, consumed, ""
	}
	allowedSome := false
	for _, alt := range op.Security {
		if len(alt) == 0 {
			return creds, consumed, ""
		}
		ok := true
		for _, n := range alt {
			ok = ok && p.modeAllows(n)
		}
		if !ok {
			continue
		}
		allowedSome = true
		c, used := map[string]string{}, map[string]bool{}
		for _, n := range alt {
			s := p.pol.SecuritySchemes[n]
			switch {
			case s.Type == "apiKey" && s.In == "header":
				if v := headerValue(k.Request.Headers, s.Name); v != "" {
					c[n], used["h:"+strings.ToLower(s.Name)] = v, true
				}
			case s.Type == "apiKey" && s.In == "query":
				if v, ok := k.Request.Query[s.Name]; ok {
					c[n], used["q:"+s.Name] = scalar(v), true
				}
			case s.Type == "http" && s.Scheme == "basic":
				if v, ok := strings.CutPrefix(headerValue(k.Request.Headers, "Authorization"), "Basic "); ok {
					if d, err := base64.StdEncoding.DecodeString(v); err == nil {
						c[n], used["h:authorization"] = string(d), true
					}
				}
			case s.Type == "http" || s.Type == "oauth2" || s.Type == "openIdConnect":
				prefix := "Bearer "
				if s.Type == "http" && s.Scheme != "bearer" {
					prefix = s.Scheme + " "
				}
				if v, ok := strings.CutPrefix(headerValue(k.Request.Headers, "Authorization"), prefix); ok {
					c[n], used["h:authorization"] = v, true
				}
			case s.Type == "mutualTLS":
				c[n] = "client-certificate"
			}
		}
		if len(c) == len(alt) {
			return c, used, ""
		}
	}
	alts := make([]string, 0, len(op.Security))
	for _, a := range op.Security {
		if len(a) == 0 {
			alts = append(alts, "anonymous")
		} else {
			alts = append(alts, strings.Join(a, "+"))
		}
	}
	if allowedSome {
		return creds, consumed, ""
	}
	return nil, nil, fmt.Sprintf("auth.mode %q of the profile allows none of %s's security alternatives (%s): every client must refuse it", p.pol.AuthMode, k.OperationID, strings.Join(alts, ", "))
}

// callStep turns a golden case into one call per language.
func (p *planner) callStep(k *Case, consumed map[string]bool) (*step, error) {
	r := p.spec.ops[k.OperationID]
	st := &step{golden: k, route: r, wantStatus: k.Response.Status, wantRequests: 1}
	// Go: the ClientWithResponses method, parameters by their spec names.
	g := &goCall{Method: p.goSyms[k.OperationID]}
	for _, name := range pathParamNames(r.path) {
		b, _ := json.Marshal(k.Request.PathParams[name])
		g.PathParams = append(g.PathParams, b)
	}
	params := map[string]any{}
	for q, v := range k.Request.Query {
		if !consumed["q:"+q] {
			params[q] = v
		}
	}
	headerParams := map[string]any{}
	for h, v := range k.Request.Headers {
		if r.headerPs[strings.ToLower(h)] && !consumed["h:"+strings.ToLower(h)] {
			params[headerParamName(r, h)] = v
			headerParams[headerParamName(r, h)] = v
		}
	}
	if len(params) > 0 {
		g.Params, _ = json.Marshal(params)
	}
	if len(k.Request.Body) > 0 {
		g.Body = k.Request.Body
		g.ContentType = r.bodyContentType()
		if ct := headerValue(k.Request.Headers, "Content-Type"); ct != "" {
			g.ContentType = ct
		}
	}
	st.Go = g
	// TypeScript: fn(client, ...path params, [params], [body]).
	if op := p.models.op("ts", k.OperationID); op != nil {
		t := &tsCall{Fn: op.Name, Args: []json.RawMessage{}}
		for _, pp := range op.PathParams {
			b, _ := json.Marshal(k.Request.PathParams[pp.Name])
			t.Args = append(t.Args, b)
		}
		if len(op.QueryParams)+len(op.HeaderParam) > 0 {
			obj := map[string]any{}
			for _, q := range op.QueryParams {
				if v, ok := params[q.Name]; ok {
					obj[q.Name] = v
				}
			}
			for _, h := range op.HeaderParam {
				if v, ok := headerParams[h.Name]; ok {
					obj[h.Name] = v
				}
			}
			b, _ := json.Marshal(obj)
			t.Args = append(t.Args, b)
		}
		if op.Body != nil && len(k.Request.Body) > 0 {
			t.Args = append(t.Args, json.RawMessage(k.Request.Body))
		}
		st.TS = t
	}
	// Python: fn(client, *path params, [body], **params by variable name).
	if op := p.models.op("python", k.OperationID); op != nil {
		py := &pyCall{Fn: op.Name, Args: []json.RawMessage{}, Kwargs: map[string]json.RawMessage{}}
		for _, pp := range op.PathParams {
			b, _ := json.Marshal(k.Request.PathParams[pp.Name])
			py.Args = append(py.Args, b)
		}
		if op.Body != nil {
			if len(k.Request.Body) > 0 {
				py.Args = append(py.Args, json.RawMessage(k.Request.Body))
			} else {
				py.Args = append(py.Args, json.RawMessage("null"))
			}
		}
		for _, q := range op.QueryParams {
			if v, ok := params[q.Name]; ok {
				py.Kwargs[q.VarName], _ = json.Marshal(v)
			}
		}
		for _, h := range op.HeaderParam {
			if v, ok := headerParams[h.Name]; ok {
				py.Kwargs[h.VarName], _ = json.Marshal(v)
			}
		}
		st.Py = py
	}
	st.mock = []mockRes{{Status: k.Response.Status, Headers: k.Response.Headers, Body: k.Response.Body}}
	if code, retryable, ok := codegen.ClassifyStatus(k.Response.Status); ok {
		st.wantErrorOf, st.wantRetry = code, retryable
		if retryable && domeIdempotent(r.method) && p.pol.Client.MaxRetries > 0 {
			st.wantRequests = 1 + p.pol.Client.MaxRetries
		}
	}
	return st, nil
}

func domeIdempotent(method string) bool {
	switch strings.ToUpper(method) {
	case "GET", "HEAD", "OPTIONS", "PUT", "DELETE", "TRACE":
		return true
	}
	return false
}

// extraHeaders are the golden headers that are neither credentials nor
// parameters nor the body's Content-Type: sent with every request.
func extraHeaders(k *Case, r *route, consumed map[string]bool) map[string]string {
	out := map[string]string{}
	for h, v := range k.Request.Headers {
		l := strings.ToLower(h)
		if consumed["h:"+l] || r.headerPs[l] || l == "content-type" {
			continue
		}
		out[h] = v
	}
	return out
}

func (p *planner) pin(id, ref string) string {
	if ref == "" {
		return id
	}
	return id + "@" + ref
}

func (p *planner) build(cases []*Case) ([]*scenario, map[string]string) {
	var out []*scenario
	p.usable, p.authOut = map[string]bool{}, map[string]string{}
	load := func(s *scenario) *scenario {
		s.Load = true
		s.Tool = p.pin(p.manif.Inputs.ToolID, p.manif.Inputs.SpecRef)
		s.Profile = p.pin(p.manif.Inputs.ProfileID, p.manif.Inputs.ProfileRef)
		s.ArtifactHash = p.manif.ClientArtifactHash
		return s
	}
	var probe *Case
	var probeCreds map[string]string
	var probeConsumed map[string]bool
	for _, k := range cases {
		creds, consumed, refused := p.credentials(k)
		r := p.spec.ops[k.OperationID]
		if refused != "" {
			p.authOut[k.Name] = refused
			st, _ := p.callStep(k, consumed)
			st.wantErr, st.wantRequests, st.wantStatus = "auth_not_allowed", 0, 0
			st.mock = nil
			out = append(out, load(&scenario{Name: "golden:" + k.Name, kind: "golden", caseName: k.Name, BaseURL: p.base, Credentials: map[string]string{}, Headers: map[string]string{}, Steps: []*step{st}, sameMessage: true}))
			continue
		}
		st, _ := p.callStep(k, consumed)
		out = append(out, load(&scenario{Name: "golden:" + k.Name, kind: "golden", caseName: k.Name, BaseURL: p.base, Credentials: creds, Headers: extraHeaders(k, r, consumed), Steps: []*step{st}}))
		p.usable[k.Name] = true
		_, retryable, isErr := codegen.ClassifyStatus(k.Response.Status)
		if isErr && retryable {
			continue
		}
		if probe == nil || (!domeIdempotent(p.spec.ops[probe.OperationID].method) && domeIdempotent(r.method)) {
			probe, probeCreds, probeConsumed = k, creds, consumed
		}
	}
	p.probe = probe
	if probe == nil {
		p.notes = append(p.notes, "no golden case the profile lets through: the enforcement, error-mapping and loader scenarios need one")
		return out, p.authOut
	}
	r := p.spec.ops[probe.OperationID]
	probeStep := func() *step {
		st, _ := p.callStep(probe, probeConsumed)
		return st
	}
	mk := func(name, kind string, creds map[string]string, steps ...*step) *scenario {
		if creds == nil {
			creds = probeCreds
		}
		return &scenario{Name: name, kind: kind, BaseURL: p.base, Credentials: creds, Headers: extraHeaders(probe, r, probeConsumed), Steps: steps, sameMessage: true}
	}
	// Hosts: a base URL outside net.allow_hosts is refused when the client is made.
	if p.pol.AllowHosts != nil {
		s := mk("enforce:host-refused", "enforcement", nil, probeStep())
		s.BaseURL = "https://refused.dome.invalid" + basePath(p.base)
		s.wantErr = "host_not_allowed"
		out = append(out, s)
		s = mk("enforce:host-userinfo", "enforcement", nil, probeStep())
		if i := strings.Index(p.base, "://"); i >= 0 {
			s.BaseURL = p.base[:i+3] + "user@" + p.base[i+3:]
		}
		s.wantErr = "host_not_allowed"
		out = append(out, s)
	}
	// Budgets: the smallest budget a usable case counts against.
	fam, lim := "", -1
	for _, f := range p.pol.Operations[probe.OperationID].Families {
		if l, ok := p.pol.Budgets.MaxCallsByFamily[f]; ok && (lim < 0 || l < lim) {
			fam, lim = f, l
		}
	}
	if lim >= 0 && lim <= 2000 {
		st := probeStep()
		st.Repeat, st.okCount, st.wantErr, st.wantRequests = lim+1, lim, "budget_exceeded", lim
		out = append(out, mk("enforce:budget-"+fam, "enforcement", nil, st))
	} else if lim > 2000 {
		p.notes = append(p.notes, fmt.Sprintf("budget of family %s (%d calls) is too large to exhaust in a test", fam, lim))
	}
	// Wall time: one call passes, then the clock reaches max_wall_seconds.
	if w := p.pol.Budgets.MaxWallSeconds; w != nil {
		first, second := probeStep(), probeStep()
		second.AdvanceMS, second.wantErr, second.wantRequests = int64(*w)*1000, "wall_time_exceeded", 0
		out = append(out, mk("enforce:wall-time", "enforcement", nil, first, second))
	}
	// Auth: no credentials; credentials of a type the mode refuses; an unknown scheme.
	if len(probeCreds) > 0 {
		st := probeStep()
		st.wantErr, st.wantRequests = "auth_missing", 0
		out = append(out, mk("enforce:auth-missing", "enforcement", map[string]string{}, st))
	}
	names := make([]string, 0, len(p.pol.SecuritySchemes))
	for n := range p.pol.SecuritySchemes {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if !p.modeAllows(n) {
			s := mk("enforce:auth-mode", "enforcement", map[string]string{n: "not-allowed"}, probeStep())
			s.wantErr = "auth_not_allowed"
			out = append(out, s)
			break
		}
	}
	s := mk("enforce:unknown-scheme", "enforcement", map[string]string{"no-such-scheme": "x"}, probeStep())
	s.wantErr = "config_invalid"
	out = append(out, s)
	// Error mapping: the mock answers each status to every attempt.
	idem := domeIdempotent(r.method)
	var steps []*step
	for _, status := range []int{400, 401, 403, 404, 408, 409, 410, 412, 413, 415, 418, 422, 429, 500, 501, 502, 503, 504, 599} {
		st := probeStep()
		code, retryable, _ := codegen.ClassifyStatus(status)
		st.mock = []mockRes{{Status: status}}
		st.golden = nil
		st.wantStatus, st.wantErrorOf, st.wantRetry, st.wantRequests = status, code, retryable, 1
		if retryable && idem {
			st.wantRequests = 1 + p.pol.Client.MaxRetries
		}
		steps = append(steps, st)
	}
	// One client counts every call against the probe's budgets: a tight
	// budget (highrisk's 10 calls a family) splits the statuses over
	// several clients, each within the budget, so every status is mapped.
	chunk := len(steps)
	if lim > 0 && lim < chunk {
		chunk = lim
	}
	for i := 0; i < len(steps); i += chunk {
		name := "errors:http-statuses"
		if i > 0 {
			name = fmt.Sprintf("errors:http-statuses-%d", i/chunk+1)
		}
		out = append(out, mk(name, "errors", nil, steps[i:min(i+chunk, len(steps))]...))
	}
	st := probeStep()
	st.mock = []mockRes{{Close: true}}
	st.golden, st.wantStatus, st.wantErr, st.wantRetry, st.wantRequests = nil, 0, "network_error", true, 1
	if idem {
		st.wantRequests = 1 + p.pol.Client.MaxRetries
	}
	s = mk("errors:network", "errors", nil, st)
	s.sameMessage = false // the transport's words differ by language
	out = append(out, s)
	// The answer begins, then its connection closes mid-body: a response
	// that has begun is not sent again.
	st = probeStep()
	st.mock = []mockRes{{Status: 200, Body: []byte(`{"dome": "cut`), Cut: true}}
	st.golden, st.wantStatus, st.wantErr, st.wantRetry, st.wantRequests = nil, 0, "network_error", true, 1
	s = mk("errors:body-cut", "errors", nil, st)
	s.sameMessage = false
	out = append(out, s)
	// Timeouts: the mock answers every attempt a second after the
	// profile's timeout_ms; a long timeout is too slow to wait for here.
	if to := p.pol.Client.TimeoutMS; to > 0 && to <= maxTestTimeoutMS {
		st := probeStep()
		st.mock = []mockRes{{Status: 200, Delay: time.Duration(to)*time.Millisecond + time.Second}}
		st.golden, st.wantStatus, st.wantErr, st.wantRetry, st.wantRequests = nil, 0, "timeout", true, 1
		if idem {
			st.wantRequests = 1 + p.pol.Client.MaxRetries
		}
		out = append(out, mk("errors:timeout", "errors", nil, st))
		// The answer begins in time but its body stops: the attempt's
		// timeout covers reading the body, and a response that has begun
		// is not sent again.
		st = probeStep()
		st.mock = []mockRes{{Status: 200, Body: []byte(`{"dome": "stalled"}`), Stall: time.Duration(to)*time.Millisecond + time.Second}}
		st.golden, st.wantStatus, st.wantErr, st.wantRetry, st.wantRequests = nil, 0, "timeout", true, 1
		out = append(out, mk("errors:body-timeout", "errors", nil, st))
	}
	if p.pol.Client.MaxRetries > 0 && idem {
		st := probeStep()
		st.mock = append([]mockRes{{Status: 503}}, st.mock...)
		st.wantRequests = 2
		out = append(out, mk("errors:retry-then-ok", "errors", nil, st))
	}
	// The loader: pins, and copies of the client tampered with.
	ok := load(mk("loader:pinned", "loader", nil, probeStep()))
	out = append(out, ok)
	for _, t := range []struct{ name, tamper, code string }{
		{"loader:wrong-tool-pin", "pin-tool", "pin_mismatch"},
		{"loader:wrong-profile-pin", "pin-profile", "pin_mismatch"},
		{"loader:artifact-hash-pin", "pin-hash", "pin_mismatch"},
		{"loader:file-changed", "file", "file_modified"},
		{"loader:file-missing", "missing", "file_missing"},
		{"loader:manifest-reformatted", "manifest-space", "manifest_invalid"},
		{"loader:manifest-digest-edited", "manifest-digest", "file_modified"},
		{"loader:manifest-input-edited", "manifest-input", "client_mismatch"},
		{"loader:manifest-hash-edited", "manifest-hash", "artifact_hash_mismatch"},
	} {
		s := load(mk(t.name, "loader", nil, probeStep()))
		s.tamper, s.wantErr = t.tamper, t.code
		s.sameMessage = t.tamper != "file" && t.tamper != "missing" && t.tamper != "manifest-digest" && t.tamper != "manifest-hash" && t.tamper != "pin-hash"
		switch t.tamper {
		case "pin-tool":
			s.Tool = p.manif.Inputs.ToolID + "@0000000"
		case "pin-profile":
			s.Profile = "not-" + p.manif.Inputs.ProfileID
		case "pin-hash":
			s.ArtifactHash = "sha256:" + strings.Repeat("0", 64)
		}
		out = append(out, s)
	}
	return out, p.authOut
}
