package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/dome-registry/dome/internal/runtest"
	"github.com/dome-registry/dome/pkg/gateway"
	"github.com/dome-registry/dome/pkg/grant"
	"github.com/dome-registry/dome/pkg/orchestrate"
	"github.com/dome-registry/dome/pkg/sandbox"
)

// benchTB is enough of a testing.TB for internal/runtest's fixture outside
// a test: temporary folders, cleanups, and failures that end the program.
type benchTB struct {
	testing.TB
	dirs     []string
	cleanups []func()
}

func (b *benchTB) Helper()                        {}
func (b *benchTB) Name() string                   { return "bench" }
func (b *benchTB) Logf(format string, a ...any)   { fmt.Fprintf(os.Stderr, format+"\n", a...) }
func (b *benchTB) Errorf(format string, a ...any) { fail(format, a...) }
func (b *benchTB) Fatalf(format string, a ...any) { fail(format, a...) }
func (b *benchTB) Fatal(a ...any)                 { fail("%s", fmt.Sprint(a...)) }
func (b *benchTB) Skip(a ...any)                  { fail("skipped: %s", fmt.Sprint(a...)) }
func (b *benchTB) Skipf(format string, a ...any)  { fail("skipped: "+format, a...) }
func (b *benchTB) Cleanup(f func())               { b.cleanups = append(b.cleanups, f) }
func (b *benchTB) Setenv(k, v string)             { os.Setenv(k, v) }
func (b *benchTB) TempDir() string {
	d, err := os.MkdirTemp("", "dome-bench-run-")
	must(err)
	b.dirs = append(b.dirs, d)
	return d
}

func (b *benchTB) close() {
	for i := len(b.cleanups) - 1; i >= 0; i-- {
		b.cleanups[i]()
	}
	for _, d := range b.dirs {
		os.RemoveAll(d)
	}
}

// gatewayReads measures read_file through the gateway: a worker's
// session on a Unix socket, each call an HTTP request presenting the
// grant, verified (signature from the verified-grant cache, bindings,
// method, read roots and deny globs, budget counters), the blob read
// from git objects at base_ref and answered in JSON, calls recorded in
// the ledger in batches. The peer is one "git cat-file --batch" reading
// the same blobs, pipelined (what a script reading a commit's files
// does at best).
func gatewayReads(calls, clients, rounds int) {
	tb := &benchTB{}
	defer tb.close()
	files := map[string]string{}
	var paths []string
	for i := 0; i < 256; i++ {
		p := fmt.Sprintf("pkg%d/file%03d.go", i%8, i)
		files[p] = fmt.Sprintf("package pkg%d\n\n// File %d.\n%s", i%8, i, strings.Repeat(fmt.Sprintf("var X%d = %d // a line of code\n", i, i), 40))
		paths = append(paths, p)
	}
	f := runtest.New(tb, runtest.Options{Files: files})
	a := f.Attempt("reader", 1)
	tok := f.Issue(a, runtest.IssueOptions{Caps: []string{"repo.read"}, MaxCalls: int64(calls) * int64(rounds+3)})
	s, err := f.GW.Open(a, nil)
	must(err)
	sock := filepath.Join(tb.TempDir(), "gw.sock")
	must(s.Listen(sock))
	c := gateway.NewUnixClient(sock, tok)
	ctx := context.Background()
	if _, err := c.ReadFile(ctx, gateway.ReadFileRequest{Path: paths[0]}); err != nil {
		fail("read_file: %v", err)
	}

	// The load: clients on their own keep-alive connections, each sending
	// the next request when the answer to the last one is read (no
	// pipelining), requests prepared beforehand; an answer is checked for
	// its status and read to its Content-Length.
	measure := func() time.Duration {
		var next atomic.Int64
		var wg sync.WaitGroup
		var failed atomic.Value
		reqs := make([][]byte, len(paths))
		for i, p := range paths {
			body := fmt.Sprintf(`{"path":%q}`, p)
			reqs[i] = []byte(fmt.Sprintf("POST /read_file HTTP/1.1\r\nHost: gateway\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", tok, len(body), body))
		}
		t0 := time.Now()
		for w := 0; w < clients; w++ {
			conn, err := net.Dial("unix", sock)
			must(err)
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer conn.Close()
				r := bufio.NewReaderSize(conn, 1<<16)
				for {
					i := next.Add(1) - 1
					if i >= int64(calls) {
						return
					}
					if _, err := conn.Write(reqs[i%int64(len(reqs))]); err != nil {
						failed.Store(err.Error())
						return
					}
					if err := readAnswer(r); err != nil {
						failed.Store(err.Error())
						return
					}
				}
			}()
		}
		wg.Wait()
		if v := failed.Load(); v != nil {
			fail("read_file: %s", v)
		}
		return time.Since(t0)
	}
	measure() // warm
	if p := os.Getenv("DOME_BENCH_CPUPROFILE"); p != "" {
		pf, err := os.Create(p)
		must(err)
		must(pprof.StartCPUProfile(pf))
		defer pprof.StopCPUProfile()
	}
	// The peer: the same blobs by id, one git cat-file --batch.
	blobs := strings.Fields(git(f.Git.Dir, "ls-tree", "-r", "--format=%(objectname)", f.Base))
	peerOnce := func() time.Duration {
		cmd := exec.Command("git", "cat-file", "--batch")
		cmd.Dir = f.Git.Dir
		in, _ := cmd.StdinPipe()
		out, _ := cmd.StdoutPipe()
		must(cmd.Start())
		t0 := time.Now()
		go func() {
			w := bufio.NewWriterSize(in, 1<<16)
			for i := 0; i < calls; i++ {
				w.WriteString(blobs[i%len(blobs)])
				w.WriteByte('\n')
			}
			w.Flush()
			in.Close()
		}()
		r := bufio.NewReaderSize(out, 1<<16)
		for i := 0; i < calls; i++ {
			hdr, err := r.ReadString('\n')
			if err != nil {
				fail("git cat-file: %v", err)
			}
			var id, typ string
			var size int64
			if _, err := fmt.Sscanf(hdr, "%s %s %d", &id, &typ, &size); err != nil {
				fail("git cat-file header %q: %v", hdr, err)
			}
			if _, err := io.CopyN(io.Discard, r, size+1); err != nil {
				fail("git cat-file: %v", err)
			}
		}
		d := time.Since(t0)
		must(cmd.Wait())
		return d
	}
	git(f.Git.Dir, "gc", "-q") // a packed repository, as a real one mostly is
	peerOnce()
	// Rounds alternating dome and the peer.
	var domeT, peerT []time.Duration
	var cpu time.Duration
	for r := 0; r < rounds; r++ {
		cpu0 := cpuTime()
		domeT = append(domeT, measure())
		cpu += cpuTime() - cpu0
		peerT = append(peerT, peerOnce())
	}
	pprof.StopCPUProfile()
	sum, err := s.Close()
	if err != nil {
		fail("session close: %v", err)
	}
	calls *= rounds // CPU per call below
	rate := func(ds []time.Duration) string {
		r := func(d time.Duration) float64 { return float64(calls/rounds) / d.Seconds() }
		return fmt.Sprintf("%.0f/s [%.0f-%.0f]", r(median(ds)), r(slices.Max(ds)), r(slices.Min(ds)))
	}
	fmt.Printf("%-68s | %-28s | %-28s | %.2fx\n", fmt.Sprintf("gateway read_file, grant checked per call (%dk calls, %d conns, %d rounds)", calls/rounds/1000, clients, rounds),
		rate(domeT), rate(peerT)+" peer", float64(median(peerT))/float64(median(domeT)))
	fmt.Printf("  GOMAXPROCS %d; %d calls in the session's summary; peer: git cat-file --batch on the same %d blobs (packed); target >= 20,000 calls/s on 2 cores\n",
		runtime.GOMAXPROCS(0), sum.Calls, len(blobs))
	fmt.Printf("  CPU per call %s (gateway and load generator, this process): %.0f calls/s when both cores are the benchmark's\n",
		(cpu / time.Duration(calls)).Round(100*time.Nanosecond), float64(runtime.GOMAXPROCS(0))*float64(calls)/cpu.Seconds())
}

// readAnswer reads one HTTP answer: 200, then the body by Content-Length.
func readAnswer(r *bufio.Reader) error {
	line, err := r.ReadSlice('\n')
	if err != nil {
		return err
	}
	if !bytes.HasPrefix(line, []byte("HTTP/1.1 200 ")) {
		return fmt.Errorf("answer %q", bytes.TrimSpace(line))
	}
	n := -1
	for {
		line, err = r.ReadSlice('\n')
		if err != nil {
			return err
		}
		if len(line) <= 2 {
			break
		}
		if k, v, ok := bytes.Cut(line, []byte(":")); ok && bytes.EqualFold(k, []byte("Content-Length")) {
			n, err = strconv.Atoi(string(bytes.TrimSpace(v)))
			if err != nil {
				return err
			}
		}
	}
	if n < 0 {
		return fmt.Errorf("no Content-Length")
	}
	_, err = r.Discard(n)
	return err
}

// cpuTime is the CPU time this process used so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// localAttempts runs attempts of "true" through orchestrate.Local, the
// dispatcher dome run uses: a scratch tree of the grant's readable files
// made from git objects, a gateway session listening on its socket, the
// sandbox with the read-only binds and the outputs folder, the session
// closed and its calls recorded, the outputs collected.
type localAttempts struct {
	tb    *benchTB
	f     *runtest.Fixture
	local *orchestrate.Local
	tok   []byte
	g     *grant.Grant
	outs  string
	n     int
}

func newLocalAttempts(sb *sandbox.Sandbox, files map[string]string) *localAttempts {
	tb := &benchTB{}
	f := runtest.New(tb, runtest.Options{Files: files})
	la := &localAttempts{tb: tb, f: f, local: &orchestrate.Local{Repo: f.Repo, Gateway: f.GW, Sandbox: sb}, outs: tb.TempDir()}
	return la
}

func (la *localAttempts) run(ctx context.Context) time.Duration {
	la.n++
	a := la.f.Attempt(fmt.Sprintf("n%d", la.n), 1)
	tok := la.f.Issue(a, runtest.IssueOptions{})
	g, err := grant.Parse(tok)
	must(err)
	t0 := time.Now()
	res := la.local.Run(ctx, orchestrate.Job{Attempt: a, Argv: []string{"true"}, Grant: tok, Parsed: g,
		OutputsDir: filepath.Join(la.outs, a.TaskID)}, nil)
	d := time.Since(t0)
	if res.Err != nil || res.Sandbox.Reason != sandbox.ReasonOK {
		fail("orchestrate.Local: %v %+v", res.Err, res.Sandbox)
	}
	return d
}

func (la *localAttempts) close() { la.tb.close() }
