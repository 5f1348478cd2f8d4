package orchestrate_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/dome-registry/dome/internal/natstest"
	"github.com/dome-registry/dome/internal/tlstest"
	"github.com/dome-registry/dome/pkg/jobwire"
	"github.com/dome-registry/dome/pkg/ledger"
	"github.com/dome-registry/dome/pkg/orchestrate"
	"github.com/dome-registry/dome/pkg/signing"
	"github.com/dome-registry/dome/pkg/stack"
	"github.com/dome-registry/dome/pkg/workerd"
)

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

func startNATS(t *testing.T) *natstest.Server {
	t.Helper()
	s, err := natstest.Start(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	return s
}

// fleet is worker daemons running in this process (each attempt is a real
// process: the worker's script and dome worker submit).
type fleet struct {
	wg      sync.WaitGroup
	cancels map[string]context.CancelFunc
}

func (w *world) daemons(t *testing.T, natsURL, gw string, tc *tls.Config, ids ...string) *fleet {
	t.Helper()
	f := &fleet{cancels: map[string]context.CancelFunc{}}
	tmp := t.TempDir()
	binds, err := orchestrate.DomeBinds(dome(t), w.tools, true, tmp)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		d, err := workerd.New(workerd.Config{NATS: natsURL, Gateway: gw, TLS: tc, Insecure: tc == nil, DaemonID: id, Sandbox: w.sb, Binds: binds,
			Log: func(format string, a ...any) { t.Logf(id+": "+format, a...) }})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		f.cancels[id] = cancel
		f.wg.Add(1)
		go func() {
			defer f.wg.Done()
			d.Run(ctx)
		}()
	}
	t.Cleanup(f.stop)
	return f
}

func (f *fleet) stop() {
	for _, c := range f.cancels {
		c()
	}
	f.wg.Wait()
}

func clientTLS(t *testing.T, ca string) *tls.Config {
	t.Helper()
	b, err := os.ReadFile(ca)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(b)
	return &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
}

func serverTLS(t *testing.T, f tlstest.Files) *tls.Config {
	t.Helper()
	c, err := tls.LoadX509KeyPair(f.Cert, f.Key)
	if err != nil {
		t.Fatal(err)
	}
	return &tls.Config{Certificates: []tls.Certificate{c}, MinVersion: tls.VersionTLS12}
}

// TestNATS_WorkerDaemonsRunTheWaves runs the greet queue on two worker
// daemons through JetStream, the gateway on TLS: the same promoted tree as
// the local dispatcher, every attempt claimed by a daemon, the ledger
// replaying.
func TestNATS_WorkerDaemonsRunTheWaves(t *testing.T) {
	w := newWorld(t, greet, tools)
	ns := startNATS(t)
	certs, err := tlstest.Write(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	addr := freeAddr(t)
	w.daemons(t, ns.URL(), "https://"+addr, clientTLS(t, certs.CA), "w1", "w2")
	q := queue(task("docs", "docs.sh", nil, ""), task("tests", "tests.sh", nil, ""), task("changelog", "changelog.sh", []string{"docs"}, ""))
	out := start(t, w.config("n1", q, func(c *orchestrate.Config) {
		c.Dispatcher = &orchestrate.NATS{URL: ns.URL(), Listen: addr, TLS: serverTLS(t, certs), AckGrace: time.Second}
	}))
	if out.Stop.Reason != orchestrate.StopConstraintsMet || !out.Stop.Promoted {
		t.Fatalf("stopped: %+v", out.Stop)
	}
	tree := treeAt(t, w.repo, "refs/heads/waves/n1")
	if !strings.Contains(tree["README.md"], "greets") || tree["CHANGELOG.md"] == "" || tree["greet/greet_test.go"] == "" {
		t.Fatalf("promoted tree: %v", tree)
	}
	l := stack.NewLayout(filepath.Join(w.git.Dir, "ops", "runs"), "n1")
	evs, err := ledger.Read(l.Root, "n1")
	if err != nil {
		t.Fatal(err)
	}
	claimed, dispatched := 0, 0
	for _, e := range evs {
		if e.Topic == stack.TopicTaskDispatched {
			dispatched++
		}
		// an endgame duplicate cancelled while its job was still being
		// published (the original finished first) never reached a daemon
		if e.Topic == stack.TopicTaskCompleted && strings.Contains(string(e.Payload), "cancelled before the job was published") {
			dispatched--
		}
		if e.Topic == stack.TopicTaskProgress && strings.Contains(string(e.Payload), "on worker daemon w") {
			claimed++
		}
		if e.Topic == orchestrate.TopicStarted && !strings.Contains(string(e.Payload), `"dispatcher":"nats://127.0.0.1:`) {
			t.Errorf("run.started names another dispatcher: %s", e.Payload)
		}
	}
	if claimed != dispatched || claimed < 3 {
		t.Errorf("%d attempts claimed by a daemon, %d dispatched", claimed, dispatched)
	}
	rr, err := orchestrate.Replay(l)
	if err != nil {
		t.Fatal(err)
	}
	if !rr.Matches || rr.Unrecorded != 0 {
		t.Fatalf("replay: %+v", rr)
	}
}

// TestNATS_BadJobsAreRefusedDeadLetteredAndRecorded publishes hostile jobs
// on a live run's subject: a message that is not a job, a job signed by a
// key the daemons do not trust, a job signed by the coordinator's key with
// a SpawnSpec that fails validation, one signed by it for another run. Each is refused by a daemon,
// terminated, dead-lettered and recorded in the ledger with its reason
// code; the run goes on and passes.
func TestNATS_BadJobsAreRefusedDeadLetteredAndRecorded(t *testing.T) {
	w := newWorld(t, greet, map[string]string{"slow.sh": "sleep 4\nprintf 'x\\n' > SLOW.md\nexec dome worker submit --intent docs\n"})
	ns := startNATS(t)
	addr := freeAddr(t)
	w.daemons(t, ns.URL(), "http://"+addr, nil, "w1", "w2")
	key, err := signing.GenerateKey("coordinator-test", nil)
	if err != nil {
		t.Fatal(err)
	}
	forger, _ := signing.GenerateKey("coordinator-test", nil) // the same kid, another key
	stranger, _ := signing.GenerateKey("someone-else", nil)
	go func() {
		nc, err := nats.Connect(ns.URL())
		if err != nil {
			return
		}
		defer nc.Close()
		js, _ := jetstream.New(nc)
		// Once the run's first job is claimed, its consumer is live.
		for i := 0; i < 200; i++ {
			if _, err := js.Consumer(context.Background(), jobwire.StreamTasks, jobwire.Consumer("bad")); err == nil {
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		time.Sleep(500 * time.Millisecond)
		job := jobwire.Job{RunID: "bad", WaveID: "wave-1", NodeID: "x", NodeExecutionID: "nx-0123456789abcdef01234567", TaskID: "x.1", WorkerID: "worker-x.1",
			Attempt: 1, BaseRef: w.base, Argv: []string{"true"}, Env: map[string]string{}, Limits: jobwire.Limits{WallMS: 1000},
			Grant: "{}", SpawnSpec: json.RawMessage(`{"run_id": "bad"}`), DispatchToken: strings.Repeat("a", 48), IssuedAt: time.Now().UTC().Format(time.RFC3339Nano)}
		signed := func(k signing.PrivateKey) []byte {
			b, err := jobwire.Sign(job, k)
			if err != nil {
				t.Error(err)
			}
			return b
		}
		msgs := [][]byte{[]byte("not a job"), signed(forger), signed(stranger), signed(key)}
		job.RunID, job.NodeExecutionID = "other", "nx-0123456789abcdef01234568" // signed by the run's key, for another run
		msgs = append(msgs, signed(key))
		for _, m := range msgs {
			js.Publish(context.Background(), jobwire.TaskSubject("bad"), m)
		}
	}()
	out := start(t, w.config("bad", queue(task("slow", "slow.sh", nil, "")), func(c *orchestrate.Config) {
		c.Key = &key
		c.Dispatcher = &orchestrate.NATS{URL: ns.URL(), Listen: addr, Insecure: true, AckGrace: time.Second}
	}))
	if out.Stop.Reason != orchestrate.StopConstraintsMet {
		t.Fatalf("stopped: %+v", out.Stop)
	}
	evs, _ := ledger.Read(stack.NewLayout(filepath.Join(w.git.Dir, "ops", "runs"), "bad").Root, "bad")
	reasons := map[string]bool{}
	for _, e := range evs {
		if e.Topic == orchestrate.TopicDeadLetter {
			var d orchestrate.DeadLetterPayload
			json.Unmarshal(e.Payload, &d)
			if d.Disposition != jobwire.DispositionTerminated || d.DaemonID == "" || d.MessageDigest == "" {
				t.Errorf("dead letter: %+v", d)
			}
			reasons[d.Reason] = true
		}
	}
	for _, want := range []string{jobwire.CodeMalformed, jobwire.CodeBadSignature, jobwire.CodeUnknownKeyID, jobwire.CodeWrongRun} {
		if !reasons[want] {
			t.Errorf("no dead letter %s (got %v)", want, reasons)
		}
	}
	spawnRefused := false
	for r := range reasons {
		spawnRefused = spawnRefused || strings.HasPrefix(r, "SPAWN_")
	}
	if !spawnRefused {
		t.Errorf("the invalid SpawnSpec was not refused with a SPAWN_* code (got %v)", reasons)
	}
}

// TestNATS_GatewayOutOfReachThenBack cuts the network between a worker
// daemon and the coordinator's gateway for the daemon's claim calls (a
// proxy drops the connections): the daemon tries again, then dead-letters
// the job GATEWAY_UNREACHABLE for redelivery without ending it; once the
// gateway is back in reach, the redelivered job is claimed and the run
// passes.
func TestNATS_GatewayOutOfReachThenBack(t *testing.T) {
	w := newWorld(t, greet, tools)
	ns := startNATS(t)
	addr := freeAddr(t)
	target, _ := url.Parse("http://" + addr)
	rp := httputil.NewSingleHostReverseProxy(target)
	var mu sync.Mutex
	dropped := 0
	proxy := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, req *http.Request) {
		mu.Lock()
		drop := req.URL.Path == jobwire.PathClaim && dropped < 3
		if drop {
			dropped++
		}
		mu.Unlock()
		if drop {
			if c, _, err := rw.(http.Hijacker).Hijack(); err == nil {
				c.Close()
			}
			return
		}
		rp.ServeHTTP(rw, req)
	}))
	defer proxy.Close()
	w.daemons(t, ns.URL(), proxy.URL, nil, "w1")
	out := start(t, w.config("unreach", queue(task("docs", "docs.sh", nil, "")), func(c *orchestrate.Config) {
		c.Dispatcher = &orchestrate.NATS{URL: ns.URL(), Listen: addr, Insecure: true, AckGrace: time.Second}
	}))
	if out.Stop.Reason != orchestrate.StopConstraintsMet {
		t.Fatalf("stopped: %+v", out.Stop)
	}
	evs, _ := ledger.Read(stack.NewLayout(filepath.Join(w.git.Dir, "ops", "runs"), "unreach").Root, "unreach")
	var dead []orchestrate.DeadLetterPayload
	redelivered := false
	for _, e := range evs {
		switch e.Topic {
		case orchestrate.TopicDeadLetter:
			var d orchestrate.DeadLetterPayload
			json.Unmarshal(e.Payload, &d)
			dead = append(dead, d)
		case stack.TopicTaskProgress:
			redelivered = redelivered || strings.Contains(string(e.Payload), "on worker daemon w1 (delivery 2)")
		}
	}
	if len(dead) != 1 || dead[0].Reason != jobwire.CodeGatewayUnreachable || dead[0].Disposition != jobwire.DispositionRetry ||
		dead[0].DaemonID != "w1" || dead[0].Ended != "" || dead[0].Delivery != 1 {
		t.Fatalf("dead letters: %+v, want one GATEWAY_UNREACHABLE for redelivery, ending nothing", dead)
	}
	if !redelivered {
		t.Error("the job was not claimed on its second delivery (redelivered, not ended)")
	}
}
