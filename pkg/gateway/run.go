package gateway

import (
	"encoding/json"
	"sync"
	"time"

	"github.com/dome-registry/dome/pkg/gitstore"
	"github.com/dome-registry/dome/pkg/stack"
)

// Ledger topics of the gateway's records.
const (
	TopicCall  = "gateway.call"  // one write call, recorded before it is answered
	TopicCalls = "gateway.calls" // other calls of one attempt, in batches
)

// CallRecord is one call as the ledger records it.
type CallRecord struct {
	N        int    `json:"n"`      // the call's number in its session, from 1
	Method   string `json:"method"` // <tool>/<operationId>, or the request path when it names no operation
	Status   int    `json:"status"`
	Code     string `json:"code,omitempty"`   // the taxonomy code of an error answer
	Reason   string `json:"reason,omitempty"` // the grant's reason code, or the gateway's (CALL_FLOOD, ...)
	Path     string `json:"path,omitempty"`   // the path a read names
	Bytes    int64  `json:"bytes"`            // of the answer's body
	Charged  bool   `json:"charged"`          // counted against the grant's budgets
	Replayed bool   `json:"replayed,omitempty"`
}

// CallsPayload is gateway.calls: calls of one attempt.
type CallsPayload struct {
	TaskID          string       `json:"task_id"`
	NodeExecutionID string       `json:"node_execution_id"`
	WaveID          string       `json:"wave_id"`
	Calls           []CallRecord `json:"calls"`
	Omitted         int          `json:"omitted,omitempty"` // calls past the session's record bound: counted, not listed
}

// WritePayload is gateway.call: one write, with what was answered (a
// repeat of the same request is answered from it, also after a restart).
type WritePayload struct {
	TaskID          string          `json:"task_id"`
	NodeExecutionID string          `json:"node_execution_id"`
	WaveID          string          `json:"wave_id"`
	Call            CallRecord      `json:"call"`
	IdempotencyKey  string          `json:"idempotency_key"`
	RequestDigest   string          `json:"request_digest"` // sha256 of the request body's canonical JSON
	ProposalID      string          `json:"proposal_id,omitempty"`
	Meta            *ProposalMeta   `json:"meta,omitempty"` // submit_metadata's
	Response        json.RawMessage `json:"response"`       // the body answered
}

// Run is the run a gateway writes into: the coordinator's open stack run,
// whose other writers (the coordinator's own steps) it shares.
type Run interface {
	// ID is the run id.
	ID() string
	// Submit hands a sealed proposal to the stack's verification and
	// records the decision.
	Submit(source string, doc []byte, at time.Time) (stack.SubmitOutcome, error)
	// Record appends one event to the run's ledger.
	Record(topic string, at time.Time, payload any) error
	// KnownCommit reports whether sha is a commit of the run (a wave base,
	// a checkpoint of the integration head): what get_diff_stats may name.
	KnownCommit(sha string) bool
}

// StackRun is a Run over an open stack.Run: every use, the gateway's and
// the coordinator's (through Do), is serialized by its lock.
type StackRun struct {
	mu   sync.Mutex
	run  *stack.Run
	repo *gitstore.Repo
	opts stack.SubmitOptions
}

// NewStackRun wraps r; opts are the stack's submit options (policy,
// trusted keys); opts.At is set per submission.
func NewStackRun(repo *gitstore.Repo, r *stack.Run, opts stack.SubmitOptions) *StackRun {
	return &StackRun{run: r, repo: repo, opts: opts}
}

// Do runs f with the run locked.
func (s *StackRun) Do(f func(r *stack.Run) error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return f(s.run)
}

// ID is the run id.
func (s *StackRun) ID() string { return s.run.Layout.RunID }

// Submit submits doc to the stack.
func (s *StackRun) Submit(source string, doc []byte, at time.Time) (stack.SubmitOutcome, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	o := s.opts
	o.At = at
	return s.run.Submit(s.repo, source, doc, o)
}

// Record appends an event.
func (s *StackRun) Record(topic string, at time.Time, payload any) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, err := s.run.Record(topic, at, payload)
	return err
}

// KnownCommit reports whether sha is a wave base or a layer of the run.
func (s *StackRun) KnownCommit(sha string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := &s.run.State
	if sha == st.IntegrationHead {
		return true
	}
	for _, w := range st.Waves {
		if w.BaseRef == sha {
			return true
		}
	}
	for _, l := range st.Applied {
		if l.CheckpointID == sha {
			return true
		}
	}
	return false
}
