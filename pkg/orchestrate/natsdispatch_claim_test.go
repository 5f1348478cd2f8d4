package orchestrate

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/dome-registry/dome/pkg/gateway"
	"github.com/dome-registry/dome/pkg/jobwire"
	"github.com/dome-registry/dome/pkg/sandbox"
)

// The claim protocol: the first daemon's claim holds the attempt, the same
// claim again is answered the same; another daemon's claim on the same
// delivery is a repeated message (REPLAYED), and its other calls are
// refused (REPLAYED); a claim on a later delivery means JetStream
// redelivered the job because the holder stopped answering: the attempt
// ends as a timeout and the claim is refused (SUPERSEDED), its retry
// being a new job.
func TestNATS_ClaimRefusesRepeatsAndSupersedes(t *testing.T) {
	const exec = "nx-0123456789abcdef01234567"
	n := &NATS{pending: map[string]*remote{}}
	var started []string
	r := &remote{job: Job{Attempt: gateway.Attempt{NodeExecutionID: exec}}, done: make(chan remoteEnd, 1),
		started: func(where string) { started = append(started, where) }}
	n.pending[exec] = r
	claim := func(daemon string, delivery uint64) (int, string) {
		b, _ := json.Marshal(jobwire.Claim{NodeExecutionID: exec, DaemonID: daemon, Delivery: delivery})
		w := httptest.NewRecorder()
		n.claim(w, httptest.NewRequest(http.MethodPost, jobwire.PathClaim, strings.NewReader(string(b))), r, daemon)
		return w.Code, w.Body.String()
	}
	for i, c := range []struct {
		daemon    string
		delivery  uint64
		status    int
		want      string
		claimedBy string
	}{
		{"w1", 1, 200, `"claimed"`, "w1"},
		{"w1", 1, 200, `"claimed"`, "w1"}, // the same claim again
		{"w2", 1, 409, `"reason":"` + jobwire.CodeReplayed + `"`, "w1"},
		{"w1", 0, 400, `want {node_execution_id, daemon_id, delivery}`, "w1"},
		{"w2", 2, 409, `"reason":"` + jobwire.CodeSuperseded + `"`, "w1"},
	} {
		st, body := claim(c.daemon, c.delivery)
		if st != c.status || !strings.Contains(body, c.want) {
			t.Errorf("claim %d (%s, delivery %d): %d %s, want %d with %s", i, c.daemon, c.delivery, st, body, c.status, c.want)
		}
		if r.claimer != c.claimedBy {
			t.Errorf("claim %d: held by %q, want %q", i, r.claimer, c.claimedBy)
		}
	}
	if len(started) != 1 || !strings.Contains(started[0], "w1 (delivery 1)") {
		t.Errorf("started: %q", started)
	}
	select {
	case e := <-r.done:
		if e.reason != sandbox.ReasonTimeout || !strings.Contains(e.detail, "w1 stopped answering") {
			t.Errorf("the superseded attempt ended %+v, want a timeout naming w1", e)
		}
	default:
		t.Fatal("the superseded attempt did not end")
	}
	// A daemon that does not hold the attempt gets nothing of it.
	w := httptest.NewRecorder()
	if n.claimedBy(w, r, "w2") || w.Code != http.StatusConflict || !strings.Contains(w.Body.String(), jobwire.CodeReplayed) {
		t.Errorf("w2's call on w1's attempt: %d %s", w.Code, w.Body.String())
	}
	if w := httptest.NewRecorder(); !n.claimedBy(w, r, "w1") {
		t.Errorf("w1's call on its own attempt refused: %s", w.Body.String())
	}
}
