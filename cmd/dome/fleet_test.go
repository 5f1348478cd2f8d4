package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dome-registry/dome/internal/fleetsim"
	"github.com/dome-registry/dome/internal/gittest"
	"github.com/dome-registry/dome/internal/natstest"
	"github.com/dome-registry/dome/pkg/grant"
	"github.com/dome-registry/dome/pkg/orchestrate"
	"github.com/dome-registry/dome/pkg/stack"
)

// fleet is the short fleet simulation: an embedded NATS server in this
// process, worker daemons and a coordinator as processes of this binary.
type fleet struct {
	t       *testing.T
	w       *fleetsim.World
	nats    *natstest.Server
	gateway string // host:port
	coord   *fleetsim.Proc
	workers map[string]*fleetsim.Proc
}

func newFleet(t *testing.T, spec fleetsim.Spec) *fleet {
	t.Helper()
	gittest.Need(t)
	root, _ := filepath.Abs("../..")
	dir := t.TempDir()
	os.Chmod(dir, 0o755)
	w, err := fleetsim.Write(root, dir, spec)
	if err != nil {
		t.Fatal(err)
	}
	ns, err := natstest.Start(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ns.Stop)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	f := &fleet{t: t, w: w, nats: ns, gateway: addr, workers: map[string]*fleetsim.Proc{}}
	t.Cleanup(func() {
		for _, p := range f.workers {
			p.Stop()
		}
		if f.coord != nil {
			f.coord.Stop()
		}
		if t.Failed() {
			if f.coord != nil {
				t.Logf("coordinator:\n%s", tailOf(f.coord.Log(), 6000))
			}
			for id, p := range f.workers {
				t.Logf("%s:\n%s", id, tailOf(p.Log(), 3000))
			}
		}
	})
	return f
}

func tailOf(s string, n int) string {
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}

func (f *fleet) startCoordinator() {
	f.t.Helper()
	cmd := domeCmd(f.t, f.w.Repo, "run", "start", f.w.Queue, "--dispatch", f.nats.URL(), "--gateway-listen", f.gateway, "--insecure-loopback",
		"--ack-grace", "1s", "--no-promote", "--verbose", "-q")
	p, err := fleetsim.Start("coordinator", cmd)
	if err != nil {
		f.t.Fatal(err)
	}
	f.coord = p
}

func (f *fleet) startWorker(id string) {
	f.t.Helper()
	cmd := domeCmd(f.t, f.w.Dir, "worker", "--nats", f.nats.URL(), "--gateway", "http://"+f.gateway, "--insecure-loopback",
		"--sandbox", "none", "--tools", f.w.Tools, "--id", id)
	p, err := fleetsim.Start(id, cmd)
	if err != nil {
		f.t.Fatal(err)
	}
	f.workers[id] = p
}

// waitClaim waits for a daemon to claim the first attempt of node.
func (f *fleet) waitClaim(node string, within time.Duration) fleetsim.Progress {
	f.t.Helper()
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		cs, _ := f.w.Claims("fleet")
		for _, c := range cs {
			if c.NodeID == node {
				return c
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	f.t.Fatalf("no daemon claimed %s within %s", node, within)
	return fleetsim.Progress{}
}

// TestFleet_WorkerKilledMidTask is the short fleet: 20 nodes on two worker
// daemons; the daemon running one attempt is killed (-9) mid-task. The job
// is redelivered once its grant is spent, the attempt ends as a timeout
// (task.timeout), the node runs again as a new attempt (a new node
// execution id and a new grant) on the other daemon, the old attempt's
// late write is refused, and the final tree holds every node's change
// exactly once.
func TestFleet_WorkerKilledMidTask(t *testing.T) {
	grants := t.TempDir()
	os.Chmod(grants, 0o777)
	f := newFleet(t, fleetsim.Spec{Nodes: 20, Width: 10, TTLSeconds: 6, MaxConcurrency: 2, MaxAttempts: 3,
		Slow: map[string]time.Duration{"n0003": 5 * time.Second, "n0019": 5 * time.Second}, GrantDir: grants})
	f.startWorker("w1")
	f.startWorker("w2")
	f.startCoordinator()
	c := f.waitClaim("n0003", 60*time.Second)
	for i := 0; i < 200; i++ { // the worker runs: it left its grant
		if _, err := os.Stat(filepath.Join(grants, "n0003.1")); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	f.workers[c.Daemon].Kill()
	killed := c.Daemon
	// Once the attempt timed out, its grant presented late is refused (and
	// recorded), while the run goes on.
	deadline := time.Now().Add(2 * time.Minute)
	late := false
	for time.Now().Before(deadline) && !late {
		evs, _ := f.w.Events("fleet")
		for _, e := range evs {
			if e.Topic == stack.TopicTaskTimeout {
				late = true
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	old, err := os.ReadFile(filepath.Join(grants, "n0003.1"))
	if err != nil || !late {
		t.Fatalf("no task.timeout, or no grant of n0003.1: %v", err)
	}
	g, err := grant.Parse(old)
	if err != nil {
		t.Fatal(err)
	}
	status, reason, err := lateWrite(f.gateway, old, g.Payload.NodeExecutionID)
	if err != nil || status != http.StatusUnauthorized || (reason != "EXPIRED" && reason != "REVOKED") {
		t.Fatalf("late write of the killed attempt: %d %s %v", status, reason, err)
	}
	if err := f.coord.Wait(3 * time.Minute); err != nil {
		t.Fatalf("coordinator: %v", err)
	}
	topics, err := f.w.Check("fleet")
	if err != nil {
		t.Fatal(err)
	}
	evs, _ := f.w.Events("fleet")
	var timedOut, retried stack.TaskPayload
	var dead []orchestrate.DeadLetterPayload
	for _, e := range evs {
		var p stack.TaskPayload
		json.Unmarshal(e.Payload, &p)
		switch {
		case e.Topic == stack.TopicTaskTimeout && p.NodeID == "n0003":
			timedOut = p
		case e.Topic == stack.TopicTaskCompleted && p.NodeID == "n0003" && p.Reason == "ok":
			retried = p
		case e.Topic == orchestrate.TopicDeadLetter:
			var d orchestrate.DeadLetterPayload
			json.Unmarshal(e.Payload, &d)
			dead = append(dead, d)
		}
	}
	if timedOut.TaskID != "n0003.1" || !strings.Contains(timedOut.Detail, killed+" stopped answering") {
		t.Fatalf("task.timeout of n0003: %+v (topics %v)", timedOut, topics)
	}
	if retried.TaskID == "" || retried.NodeExecutionID == timedOut.NodeExecutionID || retried.Attempt < 2 {
		t.Fatalf("the retry of n0003: %+v, the timed-out attempt %+v", retried, timedOut)
	}
	found := false
	for _, d := range dead {
		if d.NodeExecutionID == timedOut.NodeExecutionID && d.Ended == "n0003.1" && (d.Reason == "EXPIRED" || d.Reason == "SUPERSEDED") {
			found = true
		}
	}
	if !found {
		t.Fatalf("no dead letter ended n0003.1: %+v", dead)
	}
	if topics["gateway.late_call"] == 0 {
		t.Fatalf("the late write is not in the ledger: %v", topics)
	}
}

// lateWrite presents a grant to the gateway as a late worker would.
func lateWrite(gw string, tok []byte, execID string) (int, string, error) {
	body := fmt.Sprintf(`{"proposal": {}, "node_execution_id": %q, "idempotency_key": %q}`, execID, execID+":late")
	req, _ := http.NewRequest(http.MethodPost, "http://"+gw+"/submit_patch", bytes.NewReader([]byte(body)))
	req.Header.Set("Authorization", "Bearer "+string(tok))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	var eb struct {
		Error struct {
			Details map[string]string `json:"details"`
		} `json:"error"`
	}
	json.NewDecoder(resp.Body).Decode(&eb)
	return resp.StatusCode, eb.Error.Details["reason"], nil
}

// waitClaims waits until n attempts were claimed.
func (f *fleet) waitClaims(n int, within time.Duration) {
	f.t.Helper()
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		if cs, _ := f.w.Claims("fleet"); len(cs) >= n {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	f.t.Fatalf("fewer than %d attempts claimed within %s", n, within)
}

// TestFleet_NATSRestartThenCoordinatorKilled stops the NATS server mid-run
// and starts it again (on the same store): the run goes on. Then the
// coordinator is killed (-9) and started again: it replays the ledger,
// reports the attempts it had running lost, drops their jobs and
// re-subscribes; the run ends with every node's change exactly once and
// replays byte for byte.
func TestFleet_NATSRestartThenCoordinatorKilled(t *testing.T) {
	f := newFleet(t, fleetsim.Spec{Nodes: 30, Width: 10, TTLSeconds: 30, MaxConcurrency: 2, MaxAttempts: 3})
	f.startWorker("w1")
	f.startWorker("w2")
	f.startCoordinator()
	f.waitClaims(4, time.Minute)
	f.nats.Stop()
	time.Sleep(1500 * time.Millisecond)
	if err := f.nats.Restart(); err != nil {
		t.Fatal(err)
	}
	f.waitClaims(14, 2*time.Minute)
	f.coord.Kill()
	f.startCoordinator()
	if err := f.coord.Wait(3 * time.Minute); err != nil {
		t.Fatalf("the resumed coordinator: %v", err)
	}
	topics, err := f.w.Check("fleet")
	if err != nil {
		t.Fatal(err)
	}
	if topics["run.resumed"] != 1 {
		t.Fatalf("run.resumed %d times: %v", topics["run.resumed"], topics)
	}
	out, err := domeCmd(t, f.w.Repo, "run", "replay", "fleet").CombinedOutput()
	if err != nil {
		t.Fatalf("dome run replay: %v\n%s", err, out)
	}
}
