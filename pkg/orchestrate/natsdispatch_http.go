package orchestrate

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/dome-registry/dome/pkg/gateway"
	"github.com/dome-registry/dome/pkg/gitstore"
	"github.com/dome-registry/dome/pkg/grant"
	"github.com/dome-registry/dome/pkg/jobwire"
	"github.com/dome-registry/dome/pkg/sandbox"
	"github.com/dome-registry/dome/pkg/stack"
)

// dispatchHandler serves the gateway's /dispatch/ endpoints: what the
// daemons call on an attempt's behalf, each with the attempt's grant and
// its dispatch token.
type dispatchHandler struct{ n *NATS }

func (h dispatchHandler) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	n := h.n
	if req.URL.Path == jobwire.PathInfo {
		if req.Method != http.MethodGet {
			gateway.WriteError(w, http.StatusMethodNotAllowed, gateway.CodeInvalidArgument, "", "GET "+jobwire.PathInfo, false)
			return
		}
		pub := n.env.Key.Public()
		writeJSONAnswer(w, jobwire.Info{RunID: n.env.RunID, Stream: jobwire.StreamTasks, Consumer: jobwire.Consumer(n.env.RunID),
			Subject: jobwire.TaskSubject(n.env.RunID), DeadLetters: jobwire.DeadSubject(n.env.RunID), Cancel: jobwire.CancelPrefix(n.env.RunID),
			AckWaitMS: n.ackWait().Milliseconds(), Keys: []jobwire.KeyEntry{{KID: pub.KID, PublicKey: encodeKey(pub.Key)}}})
		return
	}
	if req.Method != http.MethodPost {
		gateway.WriteError(w, http.StatusMethodNotAllowed, gateway.CodeInvalidArgument, "", req.Method+" "+req.URL.Path+": the dispatch calls are POSTs", false)
		return
	}
	switch req.URL.Path {
	case jobwire.PathClaim, jobwire.PathTree, jobwire.PathResult:
	default:
		gateway.WriteError(w, http.StatusNotFound, gateway.CodeNotFound, "", "no such dispatch call", false)
		return
	}
	r, daemon, ok := n.authorize(w, req)
	if !ok {
		return
	}
	switch req.URL.Path {
	case jobwire.PathClaim:
		n.claim(w, req, r, daemon)
	case jobwire.PathTree:
		n.tree(w, r, daemon)
	case jobwire.PathResult:
		n.result(w, req, r, daemon)
	}
}

func writeJSONAnswer(w http.ResponseWriter, v any) {
	b, _ := json.Marshal(v)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	w.Write(b)
}

// authorize finds the attempt a dispatch call is for and checks its grant
// (signature, time, bindings, revocation) and dispatch token.
func (n *NATS) authorize(w http.ResponseWriter, req *http.Request) (*remote, string, bool) {
	tok, ok := bearerOf(req)
	if !ok {
		gateway.WriteError(w, http.StatusUnauthorized, gateway.CodeUnauthenticated, string(grant.CodeMalformed), "no grant: send Authorization: Bearer <the attempt's grant>", false)
		return nil, "", false
	}
	daemon := req.Header.Get(jobwire.HeaderDaemon)
	if grant.CheckID(daemon) != nil {
		gateway.WriteError(w, http.StatusBadRequest, gateway.CodeInvalidArgument, "", jobwire.HeaderDaemon+": want the daemon's id (letters, digits, . _ : @ + -)", false)
		return nil, "", false
	}
	v := n.env.Gateway.Verifier()
	g, err := v.CheckSignature(tok)
	if err != nil {
		st, code, reason, msg := gateway.GrantRefusal(err)
		gateway.WriteError(w, st, code, reason, msg, false)
		return nil, "", false
	}
	p := g.Payload
	n.mu.Lock()
	r := n.pending[p.NodeExecutionID]
	ended := r != nil && r.ended
	n.mu.Unlock()
	if r == nil || ended && req.URL.Path != jobwire.PathResult {
		gateway.WriteError(w, http.StatusConflict, gateway.CodeConflict, jobwire.CodeAttemptNotRunning,
			fmt.Sprintf("attempt %s is not running at this coordinator (it ended, or was lost with an earlier coordinator session)", p.NodeExecutionID), false)
		return nil, "", false
	}
	if !tokenOK(req.Header.Get(jobwire.HeaderToken), r.token) {
		gateway.WriteError(w, http.StatusUnauthorized, gateway.CodeUnauthenticated, jobwire.CodeBadToken, "the dispatch token is not the attempt's", false)
		return nil, "", false
	}
	a := r.job.Attempt
	if _, err := v.Identify(req.Context(), tok, grant.Request{Audience: gateway.DefaultAudience, RunID: a.RunID, WaveID: a.WaveID, WorkerID: a.WorkerID,
		NodeExecutionID: a.NodeExecutionID, Now: n.env.Now()}); err != nil {
		st, code, reason, msg := gateway.GrantRefusal(err)
		gateway.WriteError(w, st, code, reason, msg, false)
		return nil, "", false
	}
	return r, daemon, true
}

func bearerOf(req *http.Request) ([]byte, bool) {
	h := req.Header.Get("Authorization")
	const p = "Bearer "
	if len(h) <= len(p) || h[:len(p)] != p {
		return nil, false
	}
	return []byte(h[len(p):]), true
}

// claim starts an attempt on a daemon. A claim of an attempt another
// daemon holds, on a later delivery, means JetStream redelivered it: its
// first daemon stopped answering, and the attempt ends as a timeout.
func (n *NATS) claim(w http.ResponseWriter, req *http.Request, r *remote, daemon string) {
	body, err := io.ReadAll(io.LimitReader(req.Body, 64<<10))
	var c jobwire.Claim
	if err == nil {
		err = jobwire.DecodeStrict(body, &c)
	}
	if err != nil || c.NodeExecutionID != r.job.Attempt.NodeExecutionID || c.DaemonID != daemon || c.Delivery < 1 {
		gateway.WriteError(w, http.StatusBadRequest, gateway.CodeInvalidArgument, "", "want {node_execution_id, daemon_id, delivery} of this attempt", false)
		return
	}
	n.mu.Lock()
	switch {
	case r.claimer == "":
		r.claimer, r.delivery = daemon, c.Delivery
		n.mu.Unlock()
		if r.started != nil {
			r.started(fmt.Sprintf("on worker daemon %s (delivery %d)", daemon, c.Delivery))
		}
		writeJSONAnswer(w, jobwire.Claimed{Status: "claimed"})
		return
	case r.claimer == daemon && r.delivery == c.Delivery:
		n.mu.Unlock()
		writeJSONAnswer(w, jobwire.Claimed{Status: "claimed"}) // the same claim again
		return
	}
	first, firstDelivery := r.claimer, r.delivery
	n.mu.Unlock()
	if c.Delivery > firstDelivery {
		n.end(r, remoteEnd{reason: sandbox.ReasonTimeout, detail: fmt.Sprintf("worker daemon %s stopped answering: the job was redelivered to %s (delivery %d)",
			first, daemon, c.Delivery)})
		gateway.WriteError(w, http.StatusConflict, gateway.CodeConflict, jobwire.CodeSuperseded,
			fmt.Sprintf("attempt %s was claimed by %s and ended as a timeout when it was redelivered: its retry is a new job", r.job.Attempt.NodeExecutionID, first), false)
		return
	}
	gateway.WriteError(w, http.StatusConflict, gateway.CodeConflict, jobwire.CodeReplayed,
		fmt.Sprintf("attempt %s is claimed by %s (delivery %d): this message is a repeat", r.job.Attempt.NodeExecutionID, first, firstDelivery), false)
}

// claimedBy refuses a call from a daemon that does not hold the attempt.
func (n *NATS) claimedBy(w http.ResponseWriter, r *remote, daemon string) bool {
	n.mu.Lock()
	holder := r.claimer
	n.mu.Unlock()
	if holder != daemon {
		gateway.WriteError(w, http.StatusConflict, gateway.CodeConflict, jobwire.CodeReplayed,
			fmt.Sprintf("attempt %s is not claimed by %s", r.job.Attempt.NodeExecutionID, daemon), false)
		return false
	}
	return true
}

// tree streams the attempt's scratch tree: the wave's base, only what its
// grant may read.
func (n *NATS) tree(w http.ResponseWriter, r *remote, daemon string) {
	if !n.claimedBy(w, r, daemon) {
		return
	}
	base, ok := gitstore.ParseHash(r.job.Attempt.BaseRef)
	if !ok {
		gateway.WriteError(w, http.StatusInternalServerError, gateway.CodeInternal, "", "the attempt's base is not a commit id", false)
		return
	}
	w.Header().Set("Content-Type", "application/x-tar")
	w.WriteHeader(http.StatusOK)
	stack.WriteTreeTar(w, n.env.Repo, base, treeKeep(r.job))
}

// result takes an attempt's result and answers once the coordinator has
// recorded it (task.completed, task.result.json, task.ack): only then may
// the daemon acknowledge the message.
func (n *NATS) result(w http.ResponseWriter, req *http.Request, r *remote, daemon string) {
	if !n.claimedBy(w, r, daemon) {
		return
	}
	body, err := io.ReadAll(io.LimitReader(req.Body, jobwire.MaxResultBytes+1))
	if err != nil || len(body) > jobwire.MaxResultBytes {
		gateway.WriteError(w, http.StatusRequestEntityTooLarge, gateway.CodePayloadTooLarge, "", fmt.Sprintf("a result is at most %d bytes", jobwire.MaxResultBytes), false)
		return
	}
	var res jobwire.Result
	if err := jobwire.DecodeStrict(body, &res); err != nil || res.NodeExecutionID != r.job.Attempt.NodeExecutionID || res.DaemonID != daemon {
		gateway.WriteError(w, http.StatusBadRequest, gateway.CodeInvalidArgument, "", "want the Result of this attempt", false)
		return
	}
	if !n.end(r, remoteEnd{res: &res}) {
		gateway.WriteError(w, http.StatusConflict, gateway.CodeConflict, jobwire.CodeAttemptNotRunning,
			fmt.Sprintf("attempt %s already ended (a timeout, a cancel): its result is not taken", r.job.Attempt.NodeExecutionID), false)
		return
	}
	t := time.NewTimer(2 * time.Minute)
	defer t.Stop()
	select {
	case <-r.acked:
		writeJSONAnswer(w, map[string]string{"status": "recorded"})
	case <-t.C:
		gateway.WriteError(w, http.StatusServiceUnavailable, gateway.CodeUnavailable, "", "the result is not recorded yet: the daemon must not acknowledge its message", true)
	case <-req.Context().Done():
	}
}

// readDead records the run's dead letters in the ledger, then
// acknowledges them; a refusal of a job whose attempt still waits ends it.
func (n *NATS) readDead(cons jetstream.Consumer) {
	defer n.wg.Done()
	for {
		select {
		case <-n.stop:
			return
		default:
		}
		batch, err := cons.Fetch(16, jetstream.FetchMaxWait(time.Second))
		if err != nil {
			select {
			case <-n.stop:
				return
			case <-time.After(500 * time.Millisecond):
			}
			continue
		}
		for m := range batch.Messages() {
			n.dead(m)
		}
	}
}

func (n *NATS) dead(m jetstream.Msg) {
	md, err := m.Metadata()
	if err != nil {
		m.Term()
		return
	}
	seq := md.Sequence.Stream
	n.mu.Lock()
	seen := n.deadSeq[seq]
	n.mu.Unlock()
	if seen {
		m.Ack()
		return
	}
	var dl jobwire.DeadLetter
	if len(m.Data()) > jobwire.MaxDeadLetterBytes || jobwire.DecodeStrict(m.Data(), &dl) != nil || dl.Reason == "" {
		dl = jobwire.DeadLetter{Reason: jobwire.CodeMalformed, Detail: "a dead letter that does not read", Disposition: jobwire.DispositionTerminated}
	}
	p := DeadLetterPayload{DeadLetter: dl, DeadSequence: seq}
	n.mu.Lock()
	r := n.pending[dl.NodeExecutionID]
	n.mu.Unlock()
	if r != nil && dl.Disposition == jobwire.DispositionTerminated && dl.NodeExecutionID != "" && dl.RunID == n.env.RunID {
		n.mu.Lock()
		claimer := r.claimer
		n.mu.Unlock()
		var e remoteEnd
		switch {
		case claimer != "" && claimer != dl.DaemonID:
			e = remoteEnd{reason: sandbox.ReasonTimeout, detail: fmt.Sprintf("worker daemon %s stopped answering: the job was redelivered to %s (delivery %d), which refused it %s",
				claimer, dl.DaemonID, dl.Delivery, dl.Reason)}
		case claimer == "":
			e = remoteEnd{reason: ReasonPrepareFailed, detail: fmt.Sprintf("worker daemon %s refused the job: %s %s", dl.DaemonID, dl.Reason, dl.Detail)}
		}
		if e.reason != "" && n.end(r, e) {
			p.Ended = r.job.Attempt.TaskID
		}
	}
	if err := n.env.Record(TopicDeadLetter, p); err != nil {
		return // not acknowledged: read again
	}
	n.mu.Lock()
	n.deadSeq[seq] = true
	n.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	m.DoubleAck(ctx)
	cancel()
}
