package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"sort"
	"sync"
	"time"
)

// Session serves one worker attempt. Its calls are numbered in the order
// they arrive; it is safe for concurrent calls.
type Session struct {
	g       *Gateway
	a       Attempt
	base    *baseTree
	onFlood func()

	mu        sync.Mutex
	n         int // calls so far
	charged   int
	refused   int
	flooded   bool
	closed    bool
	pending   []CallRecord // not yet in the ledger
	omitted   int          // calls past MaxRecordedCalls
	recorded  int          // calls listed in the ledger or pending
	proposals []ProposalRef
	meta      map[string]ProposalMeta
	profileID string // of the grant the session's calls presented
	flushing  bool   // a flusher records full batches
	flushErr  error  // the first error recording them
	flushWG   sync.WaitGroup

	srv *http.Server
	ln  net.Listener
}

// ProposalRef is one proposal a session submitted and what the stack made
// of it.
type ProposalRef struct {
	ProposalID string `json:"proposal_id"`
	Status     string `json:"status"` // submitted, deduplicated, rejected
	DiffDigest string `json:"diff_digest,omitempty"`
	ReasonCode string `json:"reason_code,omitempty"`
	Path       string `json:"path,omitempty"` // the stack's copy, relative to the run directory
}

// Summary is what a session did.
type Summary struct {
	Calls     int                     `json:"calls"`   // requests answered
	Charged   int                     `json:"charged"` // calls charged to the grant's budgets
	Refused   int                     `json:"refused"` // calls refused (by the grant, or as invalid)
	Flooded   bool                    `json:"flooded"` // refusals passed the bound: the rest answered at once
	Proposals []ProposalRef           `json:"proposals"`
	Metadata  map[string]ProposalMeta `json:"metadata,omitempty"` // by proposal id
}

// Attempt returns the attempt the session serves.
func (s *Session) Attempt() Attempt { return s.a }

// Handler returns the session's HTTP handler (what Listen serves).
func (s *Session) Handler() http.Handler { return http.HandlerFunc(s.serve) }

// Listen serves the session on a new Unix socket at path (which must not
// exist), mode 0600: the sandbox hands it to its user.
func (s *Session) Listen(path string) error {
	ln, err := net.Listen("unix", path)
	if err != nil {
		return fmt.Errorf("gateway: listen %s: %w", path, err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		return fmt.Errorf("gateway: %w", err)
	}
	s.serveOn(ln)
	return nil
}

// Serve serves the session on ln until Close.
func (s *Session) Serve(ln net.Listener) { s.serveOn(ln) }

func (s *Session) serveOn(ln net.Listener) {
	srv := &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second, MaxHeaderBytes: 256 << 10,
		IdleTimeout: time.Minute, ErrorLog: nil}
	s.mu.Lock()
	s.srv, s.ln = srv, ln
	s.mu.Unlock()
	go srv.Serve(ln)
}

// Close stops serving (connections are closed), records the calls not yet
// in the ledger and returns what the session did. Calls arriving later are
// refused.
func (s *Session) Close() (Summary, error) {
	s.mu.Lock()
	srv := s.srv
	s.closed = true
	s.mu.Unlock()
	if srv != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		srv.Shutdown(ctx)
		cancel()
		srv.Close()
	}
	s.flushWG.Wait()
	err := s.flush(true)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.flushErr != nil {
		err = s.flushErr
	}
	sum := Summary{Calls: s.n, Charged: s.charged, Refused: s.refused, Flooded: s.flooded, Proposals: append([]ProposalRef{}, s.proposals...)}
	if len(s.meta) > 0 {
		sum.Metadata = map[string]ProposalMeta{}
		for k, v := range s.meta {
			sum.Metadata[k] = v
		}
	}
	return sum, err
}

// next numbers a new call, or refuses it at once when the session is
// flooded or closed.
func (s *Session) next() (int, *apiError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.n++
	switch {
	case s.closed:
		s.refused++
		return s.n, &apiError{status: http.StatusServiceUnavailable, code: CodeUnavailable, reason: "SESSION_CLOSED",
			msg: "the attempt's session is closed"}
	case s.flooded:
		s.refused++
		return s.n, &apiError{status: http.StatusTooManyRequests, code: CodeBudgetExhausted, reason: "CALL_FLOOD",
			msg: fmt.Sprintf("more than %d calls were refused: this attempt's calls are no longer answered", s.g.cfg.MaxRefusals)}
	}
	return s.n, nil
}

// done records a call's outcome; it returns whether the pending records
// fill a batch.
func (s *Session) done(rec CallRecord, recordNow bool) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if rec.Charged {
		s.charged++
	}
	if rec.Status >= 400 && rec.Reason != "CALL_FLOOD" && rec.Reason != "SESSION_CLOSED" {
		s.refused++
		if s.refused > s.g.cfg.MaxRefusals && !s.flooded {
			s.flooded = true
			if s.onFlood != nil {
				go s.onFlood()
			}
		}
	}
	if recordNow {
		return false // recorded with its own event
	}
	if rec.Reason == "CALL_FLOOD" || rec.Reason == "SESSION_CLOSED" || s.recorded >= MaxRecordedCalls {
		s.omitted++
		return false
	}
	s.recorded++
	s.pending = append(s.pending, rec)
	return len(s.pending) >= batchCalls
}

// flushLater records full batches off the calls' path: one flusher at a
// time, until less than a batch is pending (Close records the rest).
func (s *Session) flushLater() {
	s.mu.Lock()
	if s.flushing {
		s.mu.Unlock()
		return
	}
	s.flushing = true
	s.flushWG.Add(1)
	s.mu.Unlock()
	go func() {
		defer s.flushWG.Done()
		for {
			err := s.flush(false)
			s.mu.Lock()
			if err != nil && s.flushErr == nil {
				s.flushErr = err
			}
			if err != nil || len(s.pending) < batchCalls {
				s.flushing = false
				s.mu.Unlock()
				return
			}
			s.mu.Unlock()
		}
	}()
}

// flush records the pending call records (all, or full batches only).
func (s *Session) flush(all bool) error {
	for {
		s.mu.Lock()
		if len(s.pending) == 0 || !all && len(s.pending) < batchCalls {
			omitted := s.omitted
			s.mu.Unlock()
			if all && omitted > 0 {
				s.mu.Lock()
				s.omitted = 0
				s.mu.Unlock()
				return s.g.cfg.Run.Record(TopicCalls, s.g.cfg.Now(), CallsPayload{TaskID: s.a.TaskID, NodeExecutionID: s.a.NodeExecutionID,
					WaveID: s.a.WaveID, Calls: []CallRecord{}, Omitted: omitted})
			}
			return nil
		}
		n := min(len(s.pending), batchCalls)
		batch := append([]CallRecord(nil), s.pending[:n]...)
		s.pending = s.pending[n:]
		omitted := 0
		if all && len(s.pending) == 0 {
			omitted, s.omitted = s.omitted, 0
		}
		s.mu.Unlock()
		sort.Slice(batch, func(i, j int) bool { return batch[i].N < batch[j].N })
		if err := s.g.cfg.Run.Record(TopicCalls, s.g.cfg.Now(), CallsPayload{TaskID: s.a.TaskID, NodeExecutionID: s.a.NodeExecutionID,
			WaveID: s.a.WaveID, Calls: batch, Omitted: omitted}); err != nil {
			return err
		}
	}
}

// decodeStrict decodes JSON refusing unknown members and trailing data.
func decodeStrict(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("trailing data after the JSON value")
	}
	return nil
}
