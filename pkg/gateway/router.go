package gateway

import (
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/dome-registry/dome/pkg/grant"
)

// TopicLateCall records a call that reached the router for an attempt
// with no open session (an attempt that ended: timed out, lost, done),
// at most MaxLateCallsRecorded per attempt.
const TopicLateCall = "gateway.late_call"

// MaxLateCallsRecorded bounds the late calls recorded per attempt.
const MaxLateCallsRecorded = 16

// LateCallPayload is gateway.late_call.
type LateCallPayload struct {
	NodeExecutionID string `json:"node_execution_id"`
	WorkerID        string `json:"worker_id,omitempty"`
	Method          string `json:"method"`
	Status          int    `json:"status"`
	Code            string `json:"code"`
	Reason          string `json:"reason"`
}

// Router serves the sessions of attempts that run on other machines on one
// listener (TCP, with TLS): each call is routed to its attempt's session by
// the node execution its grant is bound to, and checked there as on a
// socket. Paths under /dispatch/ go to the dispatcher's handler. A call
// for an attempt with no open session is refused with the grant's reason
// (REVOKED, EXPIRED, ...) or SESSION_CLOSED, and recorded.
type Router struct {
	g        *Gateway
	dispatch http.Handler

	mu       sync.Mutex
	sessions map[string]*Session
	late     map[string]int
	srv      *http.Server
}

// NewRouter returns a router of g's sessions; dispatch serves /dispatch/.
func (g *Gateway) NewRouter(dispatch http.Handler) *Router {
	return &Router{g: g, dispatch: dispatch, sessions: map[string]*Session{}, late: map[string]int{}}
}

// Add routes the calls of s's attempt to s.
func (r *Router) Add(s *Session) {
	r.mu.Lock()
	r.sessions[s.a.NodeExecutionID] = s
	r.mu.Unlock()
}

// Remove stops routing calls to the attempt's session (Close it after).
func (r *Router) Remove(execID string) {
	r.mu.Lock()
	delete(r.sessions, execID)
	r.mu.Unlock()
}

// Serve serves on ln (with TLS when tc is not nil) until Close.
func (r *Router) Serve(ln net.Listener, tc *tls.Config) {
	srv := &http.Server{Handler: r, ReadHeaderTimeout: 10 * time.Second, MaxHeaderBytes: 256 << 10, IdleTimeout: time.Minute, TLSConfig: tc}
	r.mu.Lock()
	r.srv = srv
	r.mu.Unlock()
	if tc != nil {
		go srv.ServeTLS(ln, "", "")
	} else {
		go srv.Serve(ln)
	}
}

// Close stops serving.
func (r *Router) Close() error {
	r.mu.Lock()
	srv := r.srv
	r.mu.Unlock()
	if srv == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	err := srv.Shutdown(ctx)
	srv.Close()
	return err
}

// ServeHTTP routes one request.
func (r *Router) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if strings.HasPrefix(req.URL.Path, "/dispatch/") {
		if r.dispatch == nil {
			writeAPIError(w, notFound("%s: this gateway dispatches nothing", trimPath(req.URL.Path)))
			return
		}
		r.dispatch.ServeHTTP(w, req)
		return
	}
	tok, aerr := bearer(req)
	if aerr != nil {
		writeAPIError(w, aerr)
		return
	}
	g, err := r.g.cfg.Verifier.CheckSignature(tok)
	if err != nil {
		writeAPIError(w, grantRefusal(err))
		return
	}
	execID := g.Payload.NodeExecutionID
	r.mu.Lock()
	s := r.sessions[execID]
	r.mu.Unlock()
	if s != nil {
		s.serve(w, req)
		return
	}
	// No session: the attempt ended. Say why as the grant's checks would.
	p := g.Payload
	now := r.g.cfg.Now()
	_, err = r.g.cfg.Verifier.Identify(req.Context(), tok, grant.Request{Audience: r.g.cfg.Audience, RunID: r.g.cfg.Run.ID(), WaveID: p.WaveID,
		WorkerID: p.WorkerID, NodeExecutionID: execID, Now: now})
	var ae *apiError
	if err != nil {
		ae = grantRefusal(err)
	} else {
		ae = &apiError{status: http.StatusServiceUnavailable, code: CodeUnavailable, reason: "SESSION_CLOSED", msg: "attempt " + execID + " is not running: its session is closed"}
	}
	method := req.URL.Path
	if op, ok := operations[req.URL.Path]; ok {
		method = op.method
	}
	if len(method) > 128 {
		method = method[:128]
	}
	r.mu.Lock()
	n := r.late[execID]
	if n < MaxLateCallsRecorded && len(r.late) < 100000 {
		r.late[execID] = n + 1
	}
	r.mu.Unlock()
	if n < MaxLateCallsRecorded && p.RunID == r.g.cfg.Run.ID() {
		r.g.cfg.Run.Record(TopicLateCall, now, LateCallPayload{NodeExecutionID: execID, WorkerID: p.WorkerID, Method: method, Status: ae.status,
			Code: ae.code, Reason: ae.reason})
	}
	writeAPIError(w, ae)
}

func writeAPIError(w http.ResponseWriter, e *apiError) {
	body := encode(e.body())
	h := w.Header()
	h["Content-Type"] = jsonType
	h["Content-Length"] = []string{strconv.Itoa(len(body))}
	w.WriteHeader(e.status)
	w.Write(body)
}

// WriteError answers a request with an error of the skills' taxonomy: a
// dispatcher's handlers answer as the gateway does.
func WriteError(w http.ResponseWriter, status int, code, reason, msg string, retryable bool) {
	writeAPIError(w, &apiError{status: status, code: code, reason: reason, msg: msg, retryable: retryable})
}

// GrantRefusal maps a refused grant onto the taxonomy: its status, code
// and reason.
func GrantRefusal(err error) (status int, code, reason, msg string) {
	e := grantRefusal(err)
	return e.status, e.code, e.reason, e.msg
}
