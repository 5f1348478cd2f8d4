package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/dome-registry/dome/pkg/canonical"
	"github.com/dome-registry/dome/pkg/grant"
	"github.com/dome-registry/dome/pkg/schemaval"
)

// apiError is an answer in the error taxonomy.
type apiError struct {
	status    int
	code      string
	reason    string // details.reason
	msg       string
	retryable bool
}

func invalid(format string, a ...any) *apiError {
	return &apiError{status: http.StatusBadRequest, code: CodeInvalidArgument, msg: fmt.Sprintf(format, a...)}
}

func notFound(format string, a ...any) *apiError {
	return &apiError{status: http.StatusNotFound, code: CodeNotFound, msg: fmt.Sprintf(format, a...)}
}

func (e *apiError) body() ErrorBody {
	b := ErrorBody{Error: ErrorInfo{Code: e.code, Message: e.msg, Retryable: e.retryable}}
	if e.reason != "" {
		b.Error.Details = map[string]string{"reason": e.reason}
	}
	return b
}

// grantRefusal maps a refused grant onto the taxonomy: the grant itself
// failed (401), a method or path is not granted (403), a budget is used up
// (429), the spent/revoked store did not answer (503, retryable).
func grantRefusal(err error) *apiError {
	ge, ok := grant.AsError(err)
	if !ok {
		return &apiError{status: http.StatusInternalServerError, code: CodeInternal, msg: "grant check: " + err.Error(), retryable: true}
	}
	e := &apiError{status: http.StatusUnauthorized, code: CodeUnauthenticated, reason: string(ge.Code), msg: ge.Msg}
	switch ge.Code {
	case grant.CodeMethodNotGranted, grant.CodePathOutsideRoots, grant.CodePathDenied, grant.CodeHostNotAllowed:
		e.status, e.code = http.StatusForbidden, CodePermissionDenied
	case grant.CodeBudgetExhausted:
		e.status, e.code = http.StatusTooManyRequests, CodeBudgetExhausted
	case grant.CodeStoreFailed:
		e.status, e.code, e.retryable = http.StatusServiceUnavailable, CodeUnavailable, true
	}
	if e.msg == "" {
		e.msg = ge.Error()
	}
	return e
}

var jsonType = []string{"application/json"}

// call is one request being answered.
type call struct {
	ctx   context.Context
	now   time.Time
	token []byte
	body  []byte
	rec   *CallRecord
}

type opSpec struct {
	method  string
	write   bool
	handler func(*Session, *call) (any, *apiError)
}

var operations = map[string]opSpec{
	"/read_file":       {method: MethodReadFile, handler: (*Session).readFile},
	"/list_tree":       {method: MethodListTree, handler: (*Session).listTree},
	"/grep":            {method: MethodGrep, handler: (*Session).grep},
	"/get_base_ref":    {method: MethodGetBaseRef, handler: (*Session).getBaseRef},
	"/get_diff_stats":  {method: MethodGetDiffStats, handler: (*Session).getDiffStats},
	"/submit_patch":    {method: MethodSubmitPatch, write: true},
	"/submit_metadata": {method: MethodSubmitMetadata, write: true},
}

// serve answers one request: every request is a numbered call with a
// record, whatever its outcome.
func (s *Session) serve(w http.ResponseWriter, r *http.Request) {
	now := s.g.cfg.Now()
	op, known := operations[r.URL.Path]
	n, aerr := s.next()
	rec := CallRecord{N: n, Method: r.URL.Path}
	if known {
		rec.Method = op.method
	}
	if len(rec.Method) > 128 {
		rec.Method = rec.Method[:128]
	}
	var status int
	var body []byte
	recorded := false
	if aerr == nil {
		switch {
		case !known:
			aerr = notFound("%s: no such operation (repo-read: /read_file /list_tree /grep /get_base_ref /get_diff_stats; patch-proposal: /submit_patch /submit_metadata)", trimPath(r.URL.Path))
		case r.Method != http.MethodPost:
			aerr = &apiError{status: http.StatusMethodNotAllowed, code: CodeInvalidArgument, msg: r.Method + " " + r.URL.Path + ": every operation is a POST with a JSON body"}
		}
	}
	if aerr == nil {
		c := &call{ctx: r.Context(), now: now, rec: &rec}
		c.token, aerr = bearer(r)
		if aerr == nil {
			limit := int64(MaxReadRequestBytes)
			if op.write {
				limit = s.g.cfg.MaxProposalBytes
			}
			c.body, aerr = readBody(r, limit)
		}
		if aerr == nil && op.write {
			status, body, recorded = s.write(c, op)
		} else if aerr == nil {
			var out any
			out, aerr = op.handler(s, c)
			if aerr == nil {
				status, body = http.StatusOK, encode(out)
			}
		}
	}
	if aerr != nil {
		status, body = aerr.status, encode(aerr.body())
		rec.Code, rec.Reason = aerr.code, aerr.reason
	}
	rec.Status, rec.Bytes = status, int64(len(body))
	h := w.Header()
	h["Content-Type"] = jsonType
	h["Content-Length"] = []string{strconv.Itoa(len(body))}
	w.WriteHeader(status)
	w.Write(body)
	if s.done(rec, recorded) {
		s.flushLater()
	}
}

func trimPath(p string) string {
	if len(p) > 64 {
		return p[:64] + "..."
	}
	return p
}

// bearer reads the grant from "Authorization: Bearer <grant>".
func bearer(r *http.Request) ([]byte, *apiError) {
	h := r.Header.Get("Authorization")
	tok, ok := strings.CutPrefix(h, "Bearer ")
	if !ok || tok == "" {
		return nil, &apiError{status: http.StatusUnauthorized, code: CodeUnauthenticated, reason: string(grant.CodeMalformed),
			msg: "no grant: send Authorization: Bearer <the attempt's dome.tool_profile/v0.1 grant>"}
	}
	return []byte(tok), nil
}

// readBody reads the request body, at most limit bytes.
func readBody(r *http.Request, limit int64) ([]byte, *apiError) {
	if r.ContentLength > limit {
		return nil, &apiError{status: http.StatusRequestEntityTooLarge, code: CodePayloadTooLarge, msg: fmt.Sprintf("the request is %d bytes, over the limit of %d", r.ContentLength, limit)}
	}
	b, err := io.ReadAll(io.LimitReader(r.Body, limit+1))
	if err != nil {
		return nil, invalid("reading the request: %v", err)
	}
	if int64(len(b)) > limit {
		return nil, &apiError{status: http.StatusRequestEntityTooLarge, code: CodePayloadTooLarge, msg: fmt.Sprintf("the request is over the limit of %d bytes", limit)}
	}
	return b, nil
}

// decodeRequest reads a request body strictly: valid JSON with unique
// keys, no unknown members.
func decodeRequest(body []byte, v any) *apiError {
	if len(bytes.TrimSpace(body)) == 0 {
		return invalid("the request has no JSON body")
	}
	// canonical.Transform refuses what CheckJSON refuses (syntax,
	// duplicate keys also when escaped, invalid UTF-8, trailing data) at a
	// fraction of its cost; CheckJSON only words the refusal.
	if _, err := canonical.Transform(body); err != nil {
		if cerr := schemaval.CheckJSON("request", body); cerr != nil {
			return invalid("%v", cerr)
		}
		return invalid("request: %v", err)
	}
	if err := decodeStrict(body, v); err != nil {
		return invalid("request: %v", err)
	}
	return nil
}

func encode(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return []byte(`{"error":{"code":"INTERNAL","message":"encoding the answer failed","retryable":false}}`)
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// authorize checks the grant for one call (charging and, for a write of a
// single-use grant, spending it); it marks the call charged.
func (s *Session) authorize(c *call, gc *grant.Call) (*grant.Grant, *apiError) {
	g, err := s.g.cfg.Verifier.Authorize(c.ctx, c.token, s.request(c.now, gc))
	if err != nil {
		return nil, grantRefusal(err)
	}
	c.rec.Charged = true
	s.mu.Lock()
	s.profileID = g.Payload.ProfileID
	s.mu.Unlock()
	return g, nil
}

func (s *Session) request(now time.Time, gc *grant.Call) grant.Request {
	return grant.Request{Audience: s.g.cfg.Audience, RunID: s.a.RunID, WaveID: s.a.WaveID, WorkerID: s.a.WorkerID,
		NodeExecutionID: s.a.NodeExecutionID, Now: now, Call: gc}
}

// parsedGrant returns the grant's parsed form when its signature holds
// (nil otherwise: the call's Authorize then refuses it with its reason).
func (s *Session) parsedGrant(token []byte) *grant.Grant {
	g, err := s.g.cfg.Verifier.CheckSignature(token)
	if err != nil {
		return nil
	}
	return g
}
