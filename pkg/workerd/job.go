package workerd

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/dome-registry/dome/pkg/gateway"
	"github.com/dome-registry/dome/pkg/jobwire"
	"github.com/dome-registry/dome/pkg/sandbox"
	"github.com/dome-registry/dome/pkg/stack"
)

// callError is a dispatch call the gateway refused.
type callError struct {
	status int
	info   gateway.ErrorInfo
}

func (e *callError) Error() string {
	s := fmt.Sprintf("%d %s: %s", e.status, e.info.Code, e.info.Message)
	if r := e.info.Details["reason"]; r != "" {
		s += " (" + r + ")"
	}
	return s
}

func (e *callError) reason() string {
	if r := e.info.Details["reason"]; r != "" {
		return r
	}
	return e.info.Code
}

// handle runs one message to its end: refused (terminated, dead-lettered),
// left for redelivery, or run and acknowledged once its result is recorded.
func (d *Daemon) handle(ctx context.Context, m jetstream.Msg) {
	md, err := m.Metadata()
	if err != nil {
		m.Term()
		return
	}
	data := m.Data()
	d.mu.Lock()
	checker := d.checker
	pinned := d.cfg.Trusted != nil
	d.mu.Unlock()
	op, err := checker.Open(data, d.cfg.Now())
	if r, ok := jobwire.AsRefusal(err); ok && r.Code == jobwire.CodeUnknownKeyID && !pinned {
		// The coordinator may have restarted with a new key.
		if d.loadInfo(ctx, false) == nil {
			d.mu.Lock()
			checker = d.checker
			d.mu.Unlock()
			op, err = checker.Open(data, d.cfg.Now())
		}
	}
	if err != nil {
		r, ok := jobwire.AsRefusal(err)
		if !ok {
			r = &jobwire.Refusal{Code: jobwire.CodeMalformed, Detail: err.Error()}
		}
		d.refuse(m, md, claimed(data), r, jobwire.DispositionTerminated)
		return
	}
	j := op.Job
	d.mu.Lock()
	run := d.info.RunID
	_, again := d.seen[j.NodeExecutionID]
	if !again {
		d.seen[j.NodeExecutionID] = d.cfg.Now()
		d.trimSeen()
	}
	d.mu.Unlock()
	if j.RunID != run {
		d.refuse(m, md, j, &jobwire.Refusal{Code: jobwire.CodeWrongRun, Detail: fmt.Sprintf("the job is for run %s, the gateway serves %s", j.RunID, run)}, jobwire.DispositionTerminated)
		return
	}
	if again && md.NumDelivered == 1 {
		d.refuse(m, md, j, &jobwire.Refusal{Code: jobwire.CodeReplayed, Detail: "this daemon already took attempt " + j.NodeExecutionID + ": a repeated message"}, jobwire.DispositionTerminated)
		return
	}
	cl := jobwire.Claim{NodeExecutionID: j.NodeExecutionID, DaemonID: d.cfg.DaemonID, Delivery: md.NumDelivered}
	if err := d.call(ctx, j, jobwire.PathClaim, cl, nil, 3); err != nil {
		var ce *callError
		if errors.As(err, &ce) {
			d.refuse(m, md, j, &jobwire.Refusal{Code: ce.reason(), Detail: ce.info.Message}, jobwire.DispositionTerminated)
			return
		}
		d.refuse(m, md, j, &jobwire.Refusal{Code: jobwire.CodeGatewayUnreachable, Detail: err.Error()}, jobwire.DispositionRetry)
		return
	}
	d.cfg.Log("%s: running %s (%s, delivery %d)", j.TaskID, strings.Join(j.Argv, " "), j.NodeExecutionID, md.NumDelivered)
	res := d.run(ctx, op, m)
	m.InProgress()
	err = d.call(ctx, j, jobwire.PathResult, res, nil, 8)
	var ce *callError
	switch {
	case err == nil:
		actx, cancel := context.WithTimeout(ctx, 10*time.Second)
		if aerr := m.DoubleAck(actx); aerr != nil {
			d.cfg.Log("%s: recorded, but the message's acknowledgement failed (%v): its redelivery will be refused", j.TaskID, aerr)
		}
		cancel()
		d.cfg.Log("%s: %s (%s), recorded", j.TaskID, res.Sandbox.Reason, orDash(res.Error))
	case errors.As(err, &ce):
		d.refuse(m, md, j, &jobwire.Refusal{Code: ce.reason(), Detail: "the result was not taken: " + ce.info.Message}, jobwire.DispositionTerminated)
	default:
		d.refuse(m, md, j, &jobwire.Refusal{Code: jobwire.CodeGatewayUnreachable, Detail: "the result could not be posted: " + err.Error()}, jobwire.DispositionRetry)
	}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// trimSeen keeps the set of claimed attempts bounded (d.mu held).
func (d *Daemon) trimSeen() {
	if len(d.seen) < 100000 {
		return
	}
	cut := d.cfg.Now().Add(-24 * time.Hour)
	for k, t := range d.seen {
		if t.Before(cut) {
			delete(d.seen, k)
		}
	}
}

// claimed reads what a refused message says it is (unverified: for the
// dead letter only).
func claimed(data []byte) jobwire.Job {
	var m struct {
		Job jobwire.Job `json:"job"`
	}
	if len(data) <= jobwire.MaxMessageBytes {
		json.Unmarshal(data, &m)
	}
	j := m.Job
	clip := func(s string) string {
		if len(s) > 128 {
			return s[:128]
		}
		return s
	}
	return jobwire.Job{RunID: clip(j.RunID), NodeExecutionID: clip(j.NodeExecutionID), TaskID: clip(j.TaskID)}
}

// refuse publishes a dead letter and terminates the message, or leaves it
// for redelivery (a gateway out of reach).
func (d *Daemon) refuse(m jetstream.Msg, md *jetstream.MsgMetadata, j jobwire.Job, r *jobwire.Refusal, disposition string) {
	d.cfg.Log("%s: refused %s: %s (%s)", orDash(j.TaskID), orDash(j.NodeExecutionID), r.Error(), disposition)
	detail := r.Detail
	if len(detail) > 2000 {
		detail = detail[:2000]
	}
	dl := jobwire.DeadLetter{RunID: j.RunID, NodeExecutionID: j.NodeExecutionID, TaskID: j.TaskID, Reason: r.Code, Field: r.Field, Detail: detail,
		DaemonID: d.cfg.DaemonID, Delivery: md.NumDelivered, StreamSequence: md.Sequence.Stream, MessageDigest: jobwire.Digest(m.Data()),
		Disposition: disposition, At: d.cfg.Now().UTC().Format(time.RFC3339Nano)}
	b, _ := json.Marshal(dl)
	d.mu.Lock()
	js, info := d.js, d.info
	d.mu.Unlock()
	subject := info.DeadLetters
	if j.RunID != "" && j.RunID == info.RunID {
		subject = jobwire.DeadSubject(j.RunID)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := js.Publish(ctx, subject, b); err != nil {
		d.cfg.Log("dead letter of %s not published: %v", orDash(j.NodeExecutionID), err)
	}
	if disposition == jobwire.DispositionRetry {
		m.NakWithDelay(5 * time.Second)
		return
	}
	m.TermWithReason(r.Code)
}

// call posts a dispatch call, trying again while the gateway is out of
// reach or busy (at most tries times); an answer in the taxonomy is a
// *callError.
func (d *Daemon) call(ctx context.Context, j jobwire.Job, path string, body any, out io.Writer, tries int) error {
	b, err := json.Marshal(body)
	if err != nil {
		return err
	}
	backoff := 500 * time.Millisecond
	var last error
	for i := 0; i < tries; i++ {
		if i > 0 {
			sleep(ctx, backoff)
			backoff = min(2*backoff, 8*time.Second)
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, d.base.String()+path, bytes.NewReader(b))
		if err != nil {
			return err
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+j.Grant)
		req.Header.Set(jobwire.HeaderToken, j.DispatchToken)
		req.Header.Set(jobwire.HeaderDaemon, d.cfg.DaemonID)
		resp, err := d.hc.Do(req)
		if err != nil {
			last = err
			continue
		}
		if resp.StatusCode == http.StatusOK {
			if out != nil {
				_, err = io.Copy(out, resp.Body)
			}
			resp.Body.Close()
			return err
		}
		ab, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		resp.Body.Close()
		var eb gateway.ErrorBody
		if json.Unmarshal(ab, &eb) != nil || eb.Error.Code == "" {
			last = fmt.Errorf("%s: %d %s", path, resp.StatusCode, strings.TrimSpace(string(ab)))
			continue
		}
		ce := &callError{status: resp.StatusCode, info: eb.Error}
		if !eb.Error.Retryable {
			return ce
		}
		last = ce
	}
	return last
}

// run sets the attempt up and runs it: its scratch tree from the gateway,
// the socket proxied to the gateway, the sandbox.
func (d *Daemon) run(ctx context.Context, op *jobwire.Opened, m jetstream.Msg) jobwire.Result {
	j := op.Job
	res := jobwire.Result{NodeExecutionID: j.NodeExecutionID, DaemonID: d.cfg.DaemonID, Kind: "bubblewrap", Files: []jobwire.File{}}
	if d.cfg.Sandbox.Unconfined() {
		res.Kind = "none"
	}
	fail := func(format string, a ...any) jobwire.Result {
		res.Error = fmt.Sprintf(format, a...)
		return res
	}
	fill := func(dir string) error {
		pr, pw := io.Pipe()
		errc := make(chan error, 1)
		go func() {
			err := d.call(ctx, j, jobwire.PathTree, struct{}{}, pw, 3)
			pw.CloseWithError(err)
			errc <- err
		}()
		_, err := stack.ExtractTreeTar(pr, dir, d.cfg.MaxTreeFiles, d.cfg.MaxTreeBytes)
		pr.CloseWithError(errors.New("stop"))
		if cerr := <-errc; cerr != nil && err == nil {
			err = cerr
		}
		return err
	}
	var sc *sandbox.Scratch
	var err error
	if d.cfg.ScratchParent != "" {
		sc, err = d.cfg.Sandbox.NewScratchIn(d.cfg.ScratchParent, fill)
	} else {
		sc, err = d.cfg.Sandbox.NewScratch(fill)
	}
	if err != nil {
		return fail("the scratch tree: %v", err)
	}
	defer sc.Close()
	stop, err := d.proxy(sc.SocketPath())
	if err != nil {
		return fail("the gateway socket: %v", err)
	}
	defer stop()
	m.InProgress()
	wall := time.Duration(j.Limits.WallMS) * time.Millisecond
	if left := time.Until(op.Grant.ExpiresAt()); left < wall {
		wall = left
	}
	if wall <= 0 {
		return fail("%s: the grant expired before the attempt could start", jobwire.CodeExpired)
	}
	l := sandbox.Limits{WallTime: wall, Processes: j.Limits.Processes, MemoryBytes: j.Limits.MemoryBytes, OpenFiles: j.Limits.OpenFiles,
		FileBytes: j.Limits.FileBytes, OutputBytes: j.Limits.OutputBytes, TmpBytes: j.Limits.TmpBytes}
	rctx, cancel := context.WithCancel(ctx)
	d.mu.Lock()
	d.running[j.NodeExecutionID] = cancel
	d.mu.Unlock()
	defer func() {
		d.mu.Lock()
		delete(d.running, j.NodeExecutionID)
		d.mu.Unlock()
		cancel()
	}()
	sr, err := d.cfg.Sandbox.Run(rctx, sandbox.Spec{Argv: j.Argv, Env: j.Env, Scratch: sc, Socket: sc.SocketPath(), Limits: l, Binds: d.cfg.Binds, Outputs: true})
	if err != nil {
		return fail("the sandbox: %v", err)
	}
	res.Sandbox = jobwire.SandboxResult{Reason: sr.Reason, Detail: sr.Detail, ExitCode: sr.ExitCode, Signal: sr.Signal, WallNS: int64(sr.Wall),
		StdoutBytes: sr.StdoutBytes, StderrBytes: sr.StderrBytes, Processes: sr.Processes}
	res.Stdout, res.Stderr = sr.Stdout, sr.Stderr
	res.Files = collect(sc.OutputsDir(), j.Outputs)
	return res
}

// proxy serves the worker's socket: every skill call is forwarded to the
// coordinator's gateway as it is (the worker's grant in it); the dispatch
// calls are refused, so a worker can never claim or report for itself.
func (d *Daemon) proxy(socket string) (func(), error) {
	ln, err := net.Listen("unix", socket)
	if err != nil {
		return nil, err
	}
	if err := os.Chmod(socket, 0o600); err != nil {
		ln.Close()
		return nil, err
	}
	rp := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(d.base)
			pr.Out.Host = d.base.Host
			pr.Out.Header.Del(jobwire.HeaderToken)
			pr.Out.Header.Del(jobwire.HeaderDaemon)
		},
		Transport: d.hc.Transport,
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			gateway.WriteError(w, http.StatusServiceUnavailable, gateway.CodeUnavailable, jobwire.CodeGatewayUnreachable, "the coordinator's gateway is out of reach: "+err.Error(), true)
		},
	}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, jobwire.PathPrefix) || strings.Contains(r.URL.Path, "..") {
			gateway.WriteError(w, http.StatusNotFound, gateway.CodeNotFound, "", r.URL.Path+": not an operation of the skills", false)
			return
		}
		rp.ServeHTTP(w, r)
	})
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, MaxHeaderBytes: 256 << 10}
	go srv.Serve(ln)
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		srv.Shutdown(ctx)
		cancel()
		srv.Close()
	}, nil
}

// collect reads the attempt's outputs folder within the job's bounds: only
// regular files with plain names, opened without following links.
func collect(dir string, lim jobwire.OutputLimits) []jobwire.File {
	out := []jobwire.File{}
	var total int64
	var walk func(abs, rel string, depth int)
	walk = func(abs, rel string, depth int) {
		ents, err := os.ReadDir(abs)
		if err != nil {
			return
		}
		for _, e := range ents {
			name := e.Name()
			r := name
			if rel != "" {
				r = rel + "/" + name
			}
			full := filepath.Join(abs, name)
			fi, err := os.Lstat(full)
			if err != nil || !plain(name) {
				continue
			}
			switch {
			case fi.IsDir() && depth < lim.Depth:
				walk(full, r, depth+1)
			case fi.Mode().IsRegular() && len(out) < lim.Files && total+fi.Size() <= lim.Bytes:
				f, err := os.OpenFile(full, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
				if err != nil {
					continue
				}
				b, err := io.ReadAll(io.LimitReader(f, fi.Size()))
				f.Close()
				if err != nil {
					continue
				}
				total += int64(len(b))
				out = append(out, jobwire.File{Path: r, Data: b})
			}
		}
	}
	walk(dir, "", 0)
	return out
}

func plain(n string) bool {
	if n == "" || n == "." || n == ".." || len(n) > 128 || n[0] == '_' {
		return false
	}
	for i := 0; i < len(n); i++ {
		c := n[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}
