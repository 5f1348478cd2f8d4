package orchestrate

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"crypto/tls"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/dome-registry/dome/pkg/gateway"
	"github.com/dome-registry/dome/pkg/jobwire"
	"github.com/dome-registry/dome/pkg/sandbox"
)

// TopicDeadLetter records a job message a worker daemon refused (from the
// run's dead-letter subject): its reason code, the daemon and what became
// of the message.
const TopicDeadLetter = "run.dispatch.dead_letter"

// DeadLetterPayload is run.dispatch.dead_letter: the daemon's record and
// where the coordinator read it.
type DeadLetterPayload struct {
	jobwire.DeadLetter
	DeadSequence uint64 `json:"dead_sequence"`   // the record's sequence in the dead-letter stream
	Ended        string `json:"ended,omitempty"` // the attempt the refusal ended (its task id)
}

// NATS runs attempts on worker daemons (dome worker --nats) through a NATS
// JetStream work queue: each attempt is a job message signed with the
// session's coordinator key, published on the run's subject of the
// DOME_TASKS stream (WorkQueuePolicy: one daemon gets it) under its node
// execution id as the message id (a repeated publish is dropped). A daemon
// claims it at the coordinator's gateway, which listens on TCP (TLS) and
// routes every call by its grant to the attempt's session; the daemon
// fetches the scratch tree (the files the grant may read), runs the worker
// in its sandbox, posts the result, and acknowledges the message only once
// the coordinator answered that the result is recorded. The consumer's ack
// wait is the longest grant lifetime of the run plus AckGrace: a daemon
// that dies holding a job lets it be redelivered once the grant is spent,
// and the next daemon's refusal (EXPIRED, or SUPERSEDED when it claims)
// ends the attempt as a timeout; the engine's retry is a new attempt with a
// new node execution id and a new grant, and the old grant is revoked.
type NATS struct {
	URL    string      // nats://host:port (user:password@ allowed)
	Listen string      // the gateway's TCP address (host:port)
	TLS    *tls.Config // the gateway's server TLS; nil only with Insecure on a loopback address
	// Insecure serves the gateway without TLS: only on a loopback
	// address (tests, one machine).
	Insecure bool
	// AckGrace is added to the longest grant lifetime for the consumer's
	// ack wait (default 10 s): the time a daemon has to report.
	AckGrace time.Duration
	// Options are extra NATS connection options (credentials, TLS).
	Options []nats.Option

	env    DispatchEnv
	nc     *nats.Conn
	js     jetstream.JetStream
	router *gateway.Router
	ln     net.Listener
	tmp    string
	stop   chan struct{}
	wg     sync.WaitGroup

	mu      sync.Mutex
	pending map[string]*remote // by node execution id
	deadSeq map[uint64]bool    // dead letters already in the ledger
}

// remote is one attempt handed to the queue.
type remote struct {
	job      Job
	token    string
	session  *gateway.Session
	expires  time.Time
	started  func(string)
	done     chan remoteEnd // the attempt ended (a result, a refusal)
	acked    chan struct{}  // closed when the coordinator recorded the result
	claimer  string         // the daemon that claimed it
	delivery uint64         // the delivery it claimed
	ended    bool
}

type remoteEnd struct {
	res    *jobwire.Result
	reason string // timeout or prepare_failed when there is no result
	detail string
}

// NameOf is a NATS URL without its credentials (what the ledger records).
func NameOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return "nats"
	}
	return u.Scheme + "://" + u.Host
}

// Name is the queue's URL without credentials.
func (n *NATS) Name() string { return NameOf(n.URL) }

// IsLoopback reports whether a host:port is on a loopback address.
func IsLoopback(hostport string) bool {
	host, _, err := net.SplitHostPort(hostport)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Bind connects to NATS, makes the streams and the run's consumers, drops
// the jobs of earlier sessions (their attempts were reported lost), and
// starts the gateway's listener and the dead-letter reader.
func (n *NATS) Bind(env DispatchEnv) error {
	n.env = env
	if n.AckGrace <= 0 {
		n.AckGrace = 10 * time.Second
	}
	if n.TLS == nil && !(n.Insecure && IsLoopback(n.Listen)) {
		return fmt.Errorf("the gateway on %s needs TLS (a certificate and key), or a loopback address with the insecure flag", n.Listen)
	}
	n.pending, n.deadSeq, n.stop = map[string]*remote{}, map[uint64]bool{}, make(chan struct{})
	for _, e := range env.Events() {
		if e.Topic == TopicDeadLetter {
			var p DeadLetterPayload
			if decodeData(e.Payload, &p) == nil {
				n.deadSeq[p.DeadSequence] = true
			}
		}
	}
	opts := append([]nats.Option{nats.Name("dome run " + env.RunID), nats.MaxReconnects(-1), nats.ReconnectWait(250 * time.Millisecond),
		nats.Timeout(5 * time.Second)}, n.Options...)
	nc, err := nats.Connect(n.URL, opts...)
	if err != nil {
		return fmt.Errorf("NATS at %s: %w", n.Name(), err)
	}
	n.nc = nc
	if n.js, err = jetstream.New(nc); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := n.js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{Name: jobwire.StreamTasks, Subjects: []string{"dome.tasks.>"},
		Retention: jetstream.WorkQueuePolicy, Storage: jetstream.FileStorage, Duplicates: 2 * time.Minute, MaxMsgSize: jobwire.MaxMessageBytes,
		Description: "dome run: job messages for worker daemons"}); err != nil {
		return fmt.Errorf("NATS at %s: stream %s: %w", n.Name(), jobwire.StreamTasks, err)
	}
	if _, err := n.js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{Name: jobwire.StreamDead, Subjects: []string{"dome.dead.>"},
		Retention: jetstream.LimitsPolicy, Storage: jetstream.FileStorage, MaxAge: 7 * 24 * time.Hour, MaxMsgSize: jobwire.MaxDeadLetterBytes,
		Description: "dome run: job messages worker daemons refused"}); err != nil {
		return fmt.Errorf("NATS at %s: stream %s: %w", n.Name(), jobwire.StreamDead, err)
	}
	// The last session's jobs: their attempts are reported lost and run
	// again under new ids.
	if s, err := n.js.Stream(ctx, jobwire.StreamTasks); err == nil {
		s.Purge(ctx, jetstream.WithPurgeSubject(jobwire.TaskSubject(env.RunID)))
	}
	if _, err := n.js.CreateOrUpdateConsumer(ctx, jobwire.StreamTasks, jetstream.ConsumerConfig{Durable: jobwire.Consumer(env.RunID),
		FilterSubject: jobwire.TaskSubject(env.RunID), AckPolicy: jetstream.AckExplicitPolicy, AckWait: n.ackWait(), MaxAckPending: 10000,
		Description: "dome run " + env.RunID + ": worker daemons"}); err != nil {
		return fmt.Errorf("NATS at %s: consumer %s: %w", n.Name(), jobwire.Consumer(env.RunID), err)
	}
	dead, err := n.js.CreateOrUpdateConsumer(ctx, jobwire.StreamDead, jetstream.ConsumerConfig{Durable: jobwire.DeadConsumer(env.RunID),
		FilterSubject: jobwire.DeadSubject(env.RunID), AckPolicy: jetstream.AckExplicitPolicy, AckWait: 30 * time.Second,
		Description: "dome run " + env.RunID + ": the coordinator's dead letters"})
	if err != nil {
		return fmt.Errorf("NATS at %s: consumer %s: %w", n.Name(), jobwire.DeadConsumer(env.RunID), err)
	}
	if n.tmp, err = os.MkdirTemp(env.WorkDir, "dome-nats-"+env.RunID+"-"); err != nil {
		return err
	}
	n.ln, err = net.Listen("tcp", n.Listen)
	if err != nil {
		return fmt.Errorf("the gateway's listener: %w", err)
	}
	n.router = env.Gateway.NewRouter(dispatchHandler{n})
	n.router.Serve(n.ln, n.TLS)
	n.wg.Add(1)
	go n.readDead(dead)
	return nil
}

// Addr is the gateway's listening address (after Bind).
func (n *NATS) Addr() string {
	if n.ln == nil {
		return ""
	}
	return n.ln.Addr().String()
}

func (n *NATS) ackWait() time.Duration { return n.env.MaxTTL + n.AckGrace }

// Close stops the listener and the dead-letter reader and drops the run's
// jobs nobody took.
func (n *NATS) Close() error {
	if n.stop != nil {
		close(n.stop)
	}
	if n.router != nil {
		n.router.Close()
	}
	n.wg.Wait()
	if n.js != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		if s, err := n.js.Stream(ctx, jobwire.StreamTasks); err == nil {
			s.Purge(ctx, jetstream.WithPurgeSubject(jobwire.TaskSubject(n.env.RunID)))
		}
		cancel()
	}
	if n.nc != nil {
		n.nc.Close()
	}
	if n.tmp != "" {
		os.RemoveAll(n.tmp)
	}
	return nil
}

// Run publishes the attempt's job and waits for it to end.
func (n *NATS) Run(ctx context.Context, job Job, started func(where string)) Result {
	res := Result{Kind: "remote"}
	var tb [24]byte
	if _, err := rand.Read(tb[:]); err != nil {
		res.Err = err
		return res
	}
	a := job.Attempt
	r := &remote{job: job, token: hex.EncodeToString(tb[:]), expires: job.Parsed.ExpiresAt(), started: started,
		done: make(chan remoteEnd, 1), acked: make(chan struct{})}
	s, err := n.env.Gateway.Open(a, func() {
		if n.env.OnFlood != nil {
			n.env.OnFlood(a.NodeExecutionID)
		}
	})
	if err != nil {
		res.Err = err
		return res
	}
	r.session = s
	n.mu.Lock()
	n.pending[a.NodeExecutionID] = r
	n.mu.Unlock()
	n.router.Add(s)
	end := n.wait(ctx, r)
	n.router.Remove(a.NodeExecutionID)
	sum, cerr := s.Close()
	res.Session = sum
	if end.res == nil {
		// No result: the daemon died, refused, or was cancelled. Its grant
		// is revoked so that nothing it sends later counts.
		n.env.Revoke(job.Parsed.Payload.JTI, r.expires, "attempt ended without its worker: "+end.reason)
		n.forget(a.NodeExecutionID)
		switch end.reason {
		case ReasonPrepareFailed:
			res.Err = errors.New(end.detail)
		default:
			res.Sandbox = sandbox.Result{Reason: end.reason, Detail: end.detail, ExitCode: -1}
		}
		return res
	}
	if cerr != nil {
		res.Err = fmt.Errorf("recording the attempt's calls: %w", cerr)
		return res
	}
	rr := end.res
	if rr.Error != "" {
		res.Err = fmt.Errorf("worker daemon %s: %s", rr.DaemonID, rr.Error)
		return res
	}
	res.Kind = rr.Kind
	res.Sandbox = sandbox.Result{Reason: rr.Sandbox.Reason, Detail: rr.Sandbox.Detail, ExitCode: rr.Sandbox.ExitCode, Signal: rr.Sandbox.Signal,
		Wall: time.Duration(rr.Sandbox.WallNS), Stdout: rr.Stdout, Stderr: rr.Stderr, StdoutBytes: rr.Sandbox.StdoutBytes,
		StderrBytes: rr.Sandbox.StderrBytes, Processes: rr.Sandbox.Processes}
	outs, err := n.keep(job, rr, res.Sandbox)
	if err != nil {
		res.Err = err
		return res
	}
	res.Outputs = outs
	return res
}

// wait publishes the job (again while NATS is away) and waits for its end:
// a result, a refusal, the grant's expiry with no word, or ctx.
func (n *NATS) wait(ctx context.Context, r *remote) remoteEnd {
	a := r.job.Attempt
	msg, err := jobwire.Sign(n.jobOf(r), n.env.Key)
	if err != nil {
		return remoteEnd{reason: ReasonPrepareFailed, detail: err.Error()}
	}
	// The backstop: the message is redelivered ack wait after a daemon
	// took it; when no daemon is left to take it, the coordinator ends it.
	deadline := time.NewTimer(time.Until(r.expires) + 2*n.AckGrace + 5*time.Second)
	defer deadline.Stop()
	published := false
	backoff := 100 * time.Millisecond
	for !published {
		pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		_, err := n.js.Publish(pctx, jobwire.TaskSubject(a.RunID), msg, jetstream.WithMsgID(a.NodeExecutionID))
		cancel()
		if err == nil {
			published = true
			break
		}
		select {
		case e := <-r.done:
			return e
		case <-ctx.Done():
			return remoteEnd{reason: sandbox.ReasonCancelled, detail: "cancelled before the job was published"}
		case <-deadline.C:
			return remoteEnd{reason: ReasonPrepareFailed, detail: "the job could not be published to NATS before its grant expired: " + err.Error()}
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 2*time.Second)
	}
	select {
	case e := <-r.done:
		return e
	case <-deadline.C:
		n.end(r, remoteEnd{reason: sandbox.ReasonTimeout, detail: fmt.Sprintf("no result by the grant's expiry (%s) and %s: no worker daemon reported",
			r.job.Parsed.Payload.ExpiresAt, (2*n.AckGrace + 5*time.Second))})
		return <-r.done
	case <-ctx.Done():
		n.nc.Publish(jobwire.CancelPrefix(a.RunID)+"."+a.NodeExecutionID, []byte("cancel"))
		grace := time.NewTimer(10 * time.Second)
		defer grace.Stop()
		select {
		case e := <-r.done:
			return e
		case <-grace.C:
			n.end(r, remoteEnd{reason: sandbox.ReasonCancelled, detail: "cancelled; its worker daemon did not report within 10s"})
			return <-r.done
		}
	}
}

// end ends an attempt once (the first end wins).
func (n *NATS) end(r *remote, e remoteEnd) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	if r.ended {
		return false
	}
	r.ended = true
	r.done <- e
	return true
}

// forget drops an attempt that ended without a result.
func (n *NATS) forget(execID string) {
	n.mu.Lock()
	delete(n.pending, execID)
	n.mu.Unlock()
}

// Acked is told that the attempt's result is recorded: its daemon's
// result call is answered, and the daemon acknowledges the message.
func (n *NATS) Acked(execID string) {
	n.mu.Lock()
	r := n.pending[execID]
	delete(n.pending, execID)
	n.mu.Unlock()
	if r != nil {
		close(r.acked)
	}
}

// jobOf is the job message of an attempt.
func (n *NATS) jobOf(r *remote) jobwire.Job {
	j := r.job
	a := j.Attempt
	env := map[string]string{}
	for k, v := range j.Env {
		env[k] = v
	}
	l := j.Limits
	o := n.env.MaxOutputs.withDefaults()
	return jobwire.Job{RunID: a.RunID, WaveID: a.WaveID, NodeID: a.NodeID, NodeExecutionID: a.NodeExecutionID, TaskID: a.TaskID, WorkerID: a.WorkerID,
		Attempt: attemptOf(j), BaseRef: a.BaseRef, Argv: j.Argv, Env: env,
		Limits: jobwire.Limits{WallMS: l.WallTime.Milliseconds(), Processes: l.Processes, MemoryBytes: l.MemoryBytes, OpenFiles: l.OpenFiles,
			FileBytes: l.FileBytes, OutputBytes: l.OutputBytes, TmpBytes: l.TmpBytes},
		Outputs: jobwire.OutputLimits{Files: o.Files, Bytes: o.Bytes, Depth: o.Depth},
		Grant:   string(j.Grant), SpawnSpec: j.SpawnSpec, DispatchToken: r.token,
		IssuedAt: n.env.Now().UTC().Format(time.RFC3339Nano), ExpiresAt: j.Parsed.Payload.ExpiresAt}
}

func attemptOf(j Job) int {
	var n int
	fmt.Sscan(j.Env["DOME_ATTEMPT"], &n)
	if n < 1 {
		n = 1
	}
	return n
}

// keep writes what the daemon sent of the attempt's outputs folder into a
// folder of its own, then keeps it as the local dispatcher keeps a
// sandbox's (the same hostile-folder rules and bounds).
func (n *NATS) keep(job Job, rr *jobwire.Result, sr sandbox.Result) ([]OutputRef, error) {
	dir, err := os.MkdirTemp(n.tmp, "outputs-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	lim := n.env.MaxOutputs.withDefaults()
	var total int64
	for i, f := range rr.Files {
		if i >= lim.Files*2 {
			break
		}
		parts := strings.Split(f.Path, "/")
		ok := len(parts) <= lim.Depth+1
		for _, p := range parts {
			ok = ok && plainName(p)
		}
		total += int64(len(f.Data))
		if !ok || total > lim.Bytes*2 {
			continue // keepOutputs would leave it out too
		}
		p := filepath.Join(dir, filepath.FromSlash(f.Path))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			continue
		}
		os.WriteFile(p, f.Data, 0o644)
	}
	return keepOutputs(job.OutputsDir, dir, sr, lim)
}

// decodeKey reads a base64: public key for Info.
func encodeKey(b []byte) string { return "base64:" + base64.StdEncoding.EncodeToString(b) }

// tokenOK compares a presented dispatch token in constant time.
func tokenOK(have, want string) bool {
	return len(have) == len(want) && subtle.ConstantTimeCompare([]byte(have), []byte(want)) == 1
}

// treeKeep is the filter of the scratch tree an attempt's grant allows.
func treeKeep(job Job) func(string, bool) bool {
	return func(p string, isDir bool) bool {
		if isDir {
			return job.Parsed.CanList(p)
		}
		return job.Parsed.CheckRead(p) == nil
	}
}
