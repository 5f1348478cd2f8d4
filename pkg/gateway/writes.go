package gateway

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"

	"github.com/dome-registry/dome/internal/lazyre"
	"github.com/dome-registry/dome/pkg/canonical"
	"github.com/dome-registry/dome/pkg/gitpath"
	"github.com/dome-registry/dome/pkg/grant"
	"github.com/dome-registry/dome/pkg/patch"
	"github.com/dome-registry/dome/pkg/stack"
)

var (
	keyPattern    = lazyre.New(`^[A-Za-z0-9][A-Za-z0-9._:@+-]{7,127}$`)
	idPattern     = lazyre.New(`^[A-Za-z0-9][A-Za-z0-9._:@+-]{0,127}$`)
	intentPattern = lazyre.New(`^[a-z0-9][a-z0-9._-]*$`)
	digestPattern = lazyre.New(`^sha256:[0-9a-f]{64}$`)
)

// checkWriteKeys checks what every write carries: the attempt's node
// execution id, and an idempotency key rooted at it (so that one attempt
// can never take another's key).
func (s *Session) checkWriteKeys(key, execID string) *apiError {
	if !idPattern().MatchString(execID) {
		return invalid("node_execution_id %q: want 1 to 128 of A-Z a-z 0-9 . _ : @ + -", execID)
	}
	if execID != s.a.NodeExecutionID {
		return invalid("node_execution_id %q is not this attempt's (%s)", execID, s.a.NodeExecutionID)
	}
	if !keyPattern().MatchString(key) {
		return invalid("idempotency_key %q: want 8 to 128 of A-Z a-z 0-9 . _ : @ + -", key)
	}
	if !strings.HasPrefix(key, execID+":") {
		return invalid("idempotency_key %q must start with the attempt's node_execution_id and ':' (%s:...)", key, execID)
	}
	return nil
}

// write answers a write call: validate, deduplicate on (method,
// idempotency_key, run_id), authorize (spending a single-use grant), do
// it, record it as its own gateway.call event, and only then answer.
// recorded is false for a replay, which is recorded with the other calls.
func (s *Session) write(c *call, op opSpec) (status int, body []byte, recorded bool) {
	s.g.writeMu.Lock()
	defer s.g.writeMu.Unlock()
	wp := WritePayload{TaskID: s.a.TaskID, NodeExecutionID: s.a.NodeExecutionID, WaveID: s.a.WaveID}
	var out any
	var aerr *apiError
	replayed := false
	switch op.method {
	case MethodSubmitPatch:
		out, replayed, aerr = s.submitPatch(c, &wp)
	case MethodSubmitMetadata:
		out, replayed, aerr = s.submitMetadata(c, &wp)
	}
	if aerr != nil {
		status, body = aerr.status, encode(aerr.body())
		c.rec.Code, c.rec.Reason = aerr.code, aerr.reason
	} else {
		status, body = http.StatusOK, encode(out)
	}
	if replayed {
		c.rec.Replayed = true
		return status, body, false
	}
	if wp.IdempotencyKey == "" {
		// Not even a key could be read: an invalid request, recorded with
		// the other calls.
		return status, body, false
	}
	wp.Call = *c.rec
	wp.Call.Status, wp.Call.Bytes = status, int64(len(body))
	wp.Response = body
	if err := s.g.cfg.Run.Record(TopicCall, c.now, wp); err != nil {
		e := &apiError{status: http.StatusServiceUnavailable, code: CodeUnavailable, msg: "the run's ledger did not record the call: " + err.Error(), retryable: true}
		c.rec.Code, c.rec.Reason = e.code, ""
		return e.status, encode(e.body()), false
	}
	if status == http.StatusOK {
		s.g.dedupe[op.method+"\x00"+wp.IdempotencyKey] = &writeEntry{digest: wp.RequestDigest, response: body, taskID: s.a.TaskID, proposalID: wp.ProposalID}
	}
	return status, body, true
}

// replay answers a repeated key: the first answer (replayed true) for the
// same request, IDEMPOTENCY_CONFLICT for another. The grant is checked
// without its spent state: a single-use grant replays its own write.
func (s *Session) replay(c *call, method, key, digest string) (any, bool, *apiError) {
	e, ok := s.g.dedupe[method+"\x00"+key]
	if !ok {
		return nil, false, nil
	}
	if _, err := s.g.cfg.Verifier.Check(c.token, s.request(c.now, &grant.Call{Method: method})); err != nil {
		return nil, false, grantRefusal(err)
	}
	if e.digest != digest {
		return nil, false, &apiError{status: http.StatusConflict, code: CodeIdempotencyConflict,
			msg: fmt.Sprintf("idempotency_key %s was used for another request", key)}
	}
	var r SubmitResult
	if err := json.Unmarshal(e.response, &r); err != nil {
		return nil, false, &apiError{status: http.StatusInternalServerError, code: CodeInternal, msg: "the recorded answer does not read back"}
	}
	r.Replayed = true
	return r, true, nil
}

func (s *Session) submitPatch(c *call, wp *WritePayload) (any, bool, *apiError) {
	var req SubmitPatchRequest
	if e := decodeRequest(c.body, &req); e != nil {
		return nil, false, e
	}
	if e := s.checkWriteKeys(req.IdempotencyKey, req.NodeExecutionID); e != nil {
		return nil, false, e
	}
	wp.IdempotencyKey = req.IdempotencyKey
	canon, _ := canonical.Transform(c.body)
	wp.RequestDigest = canonical.Digest(canon)
	if out, replayed, e := s.replay(c, MethodSubmitPatch, req.IdempotencyKey, wp.RequestDigest); replayed || e != nil {
		return out, replayed, e
	}
	if len(req.Proposal) == 0 || string(req.Proposal) == "null" {
		return nil, false, invalid("proposal: missing")
	}
	pp, rej := stack.ParseProposal(req.Proposal)
	if rej != nil {
		e := invalid("proposal: %s", rej.Detail)
		e.reason = rej.Code
		return nil, false, e
	}
	p := pp.Proposal
	if p.DiffRef != "" {
		return nil, false, invalid("proposal: diff_ref names a blob of the coordinator's repository; a worker sends its diff inline in diff_unified")
	}
	_, parsed, err := patch.CanonicalDiff([]byte(p.DiffUnified), "proposal diff")
	if err != nil {
		e := invalid("proposal: %v", err)
		var ge *gitpath.Error
		if errors.As(err, &ge) {
			e.reason = stack.ReasonInvalidPath
		}
		return nil, false, e
	}
	touched := touchedPaths(parsed)
	g, e := s.authorize(c, &grant.Call{Method: MethodSubmitPatch, WritePaths: touched})
	if e != nil {
		return nil, false, e
	}
	s.mu.Lock()
	id := s.a.TaskID
	if k := len(s.proposals); k > 0 {
		id = fmt.Sprintf("%s-p%d", s.a.TaskID, k+1)
	}
	s.mu.Unlock()
	// The coordinator's facts replace the worker's claims about itself.
	p.ProposalID, p.IdempotencyKey = id, req.IdempotencyKey
	p.WorkerRunMeta = stack.WorkerRunMeta{WorkerID: s.a.WorkerID, ToolProfileID: g.Payload.ProfileID, RunID: s.a.RunID, WaveID: s.a.WaveID,
		NodeID: s.a.NodeID, NodeExecutionID: s.a.NodeExecutionID, BudgetsUsed: s.budgetsUsed(g, c)}
	h := stack.NewHeader(stack.KindPatchProposal, id, s.a.RunID, s.a.WaveID, p.BaseRef, c.now, s.g.cfg.Producer)
	h.BaseTreeHash, h.InputsHash, h.NodeID = p.BaseTreeHash, p.DiffDigest, s.a.NodeID
	doc, _, err := stack.Seal(h, p, s.g.cfg.Key)
	if err != nil {
		return nil, false, invalid("proposal: %v", err)
	}
	o, err := s.g.cfg.Run.Submit("gateway "+s.a.TaskID, doc, c.now)
	if err != nil {
		return nil, false, &apiError{status: http.StatusServiceUnavailable, code: CodeUnavailable, msg: "the stack did not record the proposal: " + err.Error(), retryable: true}
	}
	res := SubmitResult{ProposalID: id, DiffDigest: p.DiffDigest}
	switch o.Outcome {
	case stack.OutcomeAccepted:
		res.Status = StatusSubmitted
	case stack.OutcomeDuplicate:
		res.Status = StatusDeduplicated
	default:
		res.Status, res.ReasonCode = StatusRejected, o.ReasonCode
	}
	wp.ProposalID = id
	s.mu.Lock()
	s.proposals = append(s.proposals, ProposalRef{ProposalID: id, Status: res.Status, DiffDigest: p.DiffDigest, ReasonCode: o.ReasonCode, Path: o.Path})
	s.mu.Unlock()
	return res, false, nil
}

// touchedPaths lists the paths a diff writes: old and new sides, sorted.
func touchedPaths(p *patch.Patch) []string {
	set := map[string]bool{}
	for _, f := range p.Files {
		for _, x := range []string{f.OldPath, f.NewPath} {
			if x != "" {
				set[x] = true
			}
		}
	}
	out := make([]string, 0, len(set))
	for x := range set {
		out = append(out, x)
	}
	sort.Strings(out)
	return out
}

// budgetsUsed is the grant's use so far, by its meter: calls, and wall
// time since its first call.
func (s *Session) budgetsUsed(g *grant.Grant, c *call) stack.BudgetsUsed {
	if s.g.cfg.Meter == nil {
		return stack.BudgetsUsed{}
	}
	u := s.g.cfg.Meter.Usage(g)
	b := stack.BudgetsUsed{Calls: u.Calls}
	if !u.Started.IsZero() {
		b.WallMS = c.now.Sub(u.Started).Milliseconds()
	}
	return b
}

func (s *Session) submitMetadata(c *call, wp *WritePayload) (any, bool, *apiError) {
	var req SubmitMetadataRequest
	if e := decodeRequest(c.body, &req); e != nil {
		return nil, false, e
	}
	if e := s.checkWriteKeys(req.IdempotencyKey, req.NodeExecutionID); e != nil {
		return nil, false, e
	}
	wp.IdempotencyKey = req.IdempotencyKey
	canon, _ := canonical.Transform(c.body)
	wp.RequestDigest = canonical.Digest(canon)
	if out, replayed, e := s.replay(c, MethodSubmitMetadata, req.IdempotencyKey, wp.RequestDigest); replayed || e != nil {
		return out, replayed, e
	}
	m := req.Meta
	for i, t := range m.IntentTags {
		if !intentPattern().MatchString(t) || len(t) > 64 {
			return nil, false, invalid("meta.intent_tags[%d] %q: want a lowercase word (a-z 0-9 . _ -)", i, t)
		}
	}
	if len(m.IntentTags) > 64 || len(m.Evidence) > 256 {
		return nil, false, invalid("meta: at most 64 intent tags and 256 evidence digests")
	}
	if len(m.Notes) > 4000 {
		return nil, false, invalid("meta.notes: at most 4000 characters")
	}
	for i, d := range m.Evidence {
		if !digestPattern().MatchString(d) {
			return nil, false, invalid("meta.evidence[%d] %q: want sha256:<64 hex>", i, d)
		}
	}
	s.mu.Lock()
	var ref *ProposalRef
	for i := range s.proposals {
		if s.proposals[i].ProposalID == req.ProposalID {
			ref = &s.proposals[i]
		}
	}
	s.mu.Unlock()
	if ref == nil {
		return nil, false, notFound("proposal %q was not submitted by this attempt", req.ProposalID)
	}
	if _, e := s.authorize(c, &grant.Call{Method: MethodSubmitMetadata}); e != nil {
		return nil, false, e
	}
	s.mu.Lock()
	s.meta[req.ProposalID] = m
	s.mu.Unlock()
	wp.ProposalID, wp.Meta = req.ProposalID, &m
	return SubmitResult{ProposalID: req.ProposalID, Status: StatusSubmitted}, false, nil
}
