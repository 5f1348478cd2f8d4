package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/dome-registry/dome/internal/gittest"
	"github.com/dome-registry/dome/internal/pgtest"
	"github.com/dome-registry/dome/pkg/action"
	"github.com/dome-registry/dome/pkg/action/actiongit"
	"github.com/dome-registry/dome/pkg/action/storetest"
	"github.com/dome-registry/dome/pkg/signing"
)

const crashAPIKey = "crash-test-publish-key-0123456789"

// servedDome is a "dome serve" process (the test binary, which testscript's
// TestMain puts on PATH as "dome").
type servedDome struct {
	cmd  *exec.Cmd
	base string
	logs *bytes.Buffer
	mu   *sync.Mutex
	read chan struct{} // closed when stderr is read to its end
}

// wait waits for the process to end, after reading all it logged.
func (s *servedDome) wait() error {
	<-s.read
	return s.cmd.Wait()
}

func startServe(t *testing.T, store, trusted string) *servedDome {
	t.Helper()
	cmd := exec.Command("dome", "serve", "--store", store, "--addr", "127.0.0.1:0", "--trusted", trusted, "--access-log=false")
	cmd.Env = append(os.Environ(), "ACTION_REGISTRY_API_KEY="+crashAPIKey)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &servedDome{cmd: cmd, logs: &bytes.Buffer{}, mu: &sync.Mutex{}, read: make(chan struct{})}
	addr := make(chan string, 1)
	go func() {
		defer close(s.read)
		sc := bufio.NewScanner(stderr)
		sent := false
		for sc.Scan() {
			s.mu.Lock()
			s.logs.Write(append(sc.Bytes(), '\n'))
			s.mu.Unlock()
			var rec struct{ Msg, Addr string }
			if !sent && json.Unmarshal(sc.Bytes(), &rec) == nil && rec.Msg == "listening" {
				addr <- rec.Addr
				sent = true
			}
		}
		if !sent {
			close(addr)
		}
	}()
	t.Cleanup(func() { cmd.Process.Kill(); s.wait() })
	select {
	case a, ok := <-addr:
		if !ok {
			s.wait()
			t.Fatalf("dome serve exited:\n%s", s.log())
		}
		s.base = "http://" + a
	case <-time.After(30 * time.Second):
		t.Fatalf("dome serve did not listen within 30 s:\n%s", s.log())
	}
	return s
}

func (s *servedDome) log() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.logs.String()
}

// publishBurst publishes docs from workers goroutines until they run out or
// the server goes away; it kills the server with SIGKILL once killAfter
// publishes were acknowledged. It returns the acknowledged documents.
func publishBurst(t *testing.T, s *servedDome, docs [][]byte, workers, killAfter int) map[int]string {
	t.Helper()
	client := &http.Client{Timeout: 20 * time.Second}
	var next, acks atomic.Int64
	var mu sync.Mutex
	acked := map[int]string{}
	killed := make(chan struct{})
	var once sync.Once
	kill := func() {
		once.Do(func() {
			s.cmd.Process.Signal(syscall.SIGKILL)
			close(killed)
		})
	}
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= len(docs) {
					return
				}
				var d struct{ Name, Version, Hash string }
				json.Unmarshal(docs[i], &d)
				req, _ := http.NewRequest("POST", s.base+"/actions/"+d.Name+"/versions/"+d.Version, bytes.NewReader(docs[i]))
				req.Header.Set("X-API-Key", crashAPIKey)
				req.Header.Set("Content-Type", "application/json")
				resp, err := client.Do(req)
				if err != nil {
					return // the server is gone: this publish was not acknowledged
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusCreated {
					select {
					case <-killed:
					default:
						t.Errorf("publish %s@%s: %d", d.Name, d.Version, resp.StatusCode)
					}
					return
				}
				mu.Lock()
				acked[i] = d.Hash
				mu.Unlock()
				if acks.Add(1) == int64(killAfter) {
					// Somewhere inside the next publishes.
					time.AfterFunc(time.Duration(rand.IntN(20000))*time.Microsecond, kill)
				}
			}
		}()
	}
	wg.Wait()
	kill()
	s.wait()
	if len(acked) < killAfter {
		t.Fatalf("only %d publishes acknowledged before the kill", len(acked))
	}
	if int(next.Load()) >= len(docs) {
		t.Fatalf("the burst ended before the kill: make it longer")
	}
	return acked
}

// crashDocs signs n distinct versions.
func crashDocs(t *testing.T, n int) [][]byte {
	key, _ := storetest.Key(t)
	docs := make([][]byte, n)
	for i := range docs {
		raw, _ := json.Marshal(map[string]any{"name": fmt.Sprintf("crash.a%02d", i%10), "version": fmt.Sprintf("1.%d.0", i/10), "description": fmt.Sprintf("doc %d", i)})
		d, err := action.Sign(key, raw)
		if err != nil {
			t.Fatal(err)
		}
		docs[i] = d
	}
	return docs
}

// checkAfterCrash restarts dome serve on the store and checks that every
// acknowledged publish is there, verified and unchanged, that every version
// the store lists verifies (nothing half-written), and that publishing works
// again.
func checkAfterCrash(t *testing.T, store, trusted string, docs [][]byte, acked map[int]string) *servedDome {
	t.Helper()
	s := startServe(t, store, trusted)
	client := &http.Client{Timeout: 10 * time.Second}
	getJSON := func(path string, v any) int {
		resp, err := client.Get(s.base + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		json.NewDecoder(resp.Body).Decode(v)
		return resp.StatusCode
	}
	type version struct {
		Hash     string `json:"hash"`
		Verified bool   `json:"verified"`
		Reason   string `json:"reason"`
	}
	for i, hash := range acked {
		var d struct{ Name, Version string }
		json.Unmarshal(docs[i], &d)
		var v version
		if st := getJSON("/actions/"+d.Name+"/versions/"+d.Version, &v); st != 200 || !v.Verified || v.Hash != hash {
			t.Errorf("acknowledged %s@%s after the restart: %d %+v", d.Name, d.Version, st, v)
		}
	}
	var list struct {
		Items []struct {
			Name     string   `json:"name"`
			Versions []string `json:"versions"`
		} `json:"items"`
	}
	if st := getJSON("/actions", &list); st != 200 {
		t.Fatalf("list: %d", st)
	}
	stored := 0
	for _, it := range list.Items {
		for _, ver := range it.Versions {
			stored++
			var v version
			if st := getJSON("/actions/"+it.Name+"/versions/"+ver+"/verify", &v); st != 200 || !v.Verified {
				t.Errorf("stored %s@%s does not verify: %d %+v", it.Name, ver, st, v)
			}
		}
	}
	if stored < len(acked) {
		t.Errorf("%d versions stored, %d acknowledged", stored, len(acked))
	}
	t.Logf("%d publishes acknowledged before SIGKILL, %d stored after the restart", len(acked), stored)
	return s
}

func publishOne(t *testing.T, s *servedDome, doc []byte) int {
	var d struct{ Name, Version string }
	json.Unmarshal(doc, &d)
	req, _ := http.NewRequest("POST", s.base+"/actions/"+d.Name+"/versions/"+d.Version, bytes.NewReader(doc))
	req.Header.Set("X-API-Key", crashAPIKey)
	req.Header.Set("Content-Type", "application/json")
	resp, err := (&http.Client{Timeout: 60 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

func TestServe_CrashDuringPublishBurst_GitStore(t *testing.T) {
	if testing.Short() {
		t.Skip("starts dome serve twice")
	}
	repo := gittest.NewBare(t)
	trusted := filepath.Join(t.TempDir(), "trusted.json")
	os.WriteFile(trusted, mustTrusted(t), 0o644)
	docs := crashDocs(t, 400)
	store := "git:" + repo.Dir
	acked := publishBurst(t, startServe(t, store, trusted), docs, 8, 25)

	// A kill inside a ref update leaves the branch's lock file behind, as
	// git does; the restarted server says so at start.
	lock := filepath.Join(repo.Dir, "refs", "heads", "actions.lock")
	_, lockErr := os.Stat(lock)
	t.Logf("lock file left by the kill: %v", lockErr == nil)
	s := checkAfterCrash(t, store, trusted, docs, acked)
	if lockErr == nil {
		deadline := time.Now().Add(5 * time.Second)
		for !strings.Contains(s.log(), "stale lock") && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
		}
		if !strings.Contains(s.log(), "stale lock") {
			t.Errorf("a lock file was left and dome serve did not warn:\n%s", s.log())
		}
		os.Remove(lock) // what the warning tells the operator to do
	}
	// Objects and history are whole, and no published version ever changed.
	if out, err := exec.Command("git", "-C", repo.Dir, "fsck", "--full", "--no-dangling").CombinedOutput(); err != nil {
		t.Errorf("git fsck: %v\n%s", err, out)
	}
	gs, err := actiongit.Open(repo.Dir, actiongit.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer gs.Close()
	rep, err := gs.Audit(context.Background(), actiongit.AuditOptions{})
	if err != nil || !rep.OK() {
		t.Errorf("audit after the crash: %v %+v", err, rep)
	}
	// Publishing works again; a version the burst sent but was not told about
	// is either stored (200, identical) or new (201).
	for i := len(docs) - 3; i < len(docs); i++ {
		if st := publishOne(t, s, docs[i]); st != http.StatusCreated && st != http.StatusOK {
			t.Errorf("publish after the restart: %d", st)
		}
	}
}

func TestServe_CrashDuringPublishBurst_Postgres(t *testing.T) {
	if testing.Short() {
		t.Skip("starts PostgreSQL and dome serve twice")
	}
	url := pgtest.NewDatabase(t)
	trusted := filepath.Join(t.TempDir(), "trusted.json")
	os.WriteFile(trusted, mustTrusted(t), 0o644)
	docs := crashDocs(t, 400)
	acked := publishBurst(t, startServe(t, url, trusted), docs, 8, 25)
	s := checkAfterCrash(t, url, trusted, docs, acked)
	for i := len(docs) - 3; i < len(docs); i++ {
		if st := publishOne(t, s, docs[i]); st != http.StatusCreated && st != http.StatusOK {
			t.Errorf("publish after the restart: %d", st)
		}
	}
}

func TestServe_WarnsAboutAStaleLock(t *testing.T) {
	repo := gittest.NewBare(t)
	trusted := filepath.Join(t.TempDir(), "trusted.json")
	os.WriteFile(trusted, mustTrusted(t), 0o644)
	lock := filepath.Join(repo.Dir, "refs", "heads", "actions.lock")
	if err := os.WriteFile(lock, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	s := startServe(t, "git:"+repo.Dir, trusted)
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(s.log(), `"msg":"stale lock"`) && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if out := s.log(); !strings.Contains(out, `"msg":"stale lock"`) || !strings.Contains(out, "then remove "+lock) {
		t.Errorf("no stale lock warning:\n%s", out)
	}
}

func mustTrusted(t *testing.T) []byte {
	_, keys := storetest.Key(t)
	b, err := json.Marshal(keys.Entries())
	if err != nil {
		t.Fatal(err)
	}
	var check *signing.TrustedKeys
	if check, err = signing.ParseTrustedKeys(b); err != nil || len(check.KIDs()) != 1 {
		t.Fatalf("trusted keys: %v", err)
	}
	return b
}

// slowBody sends its first half, waits for release, then the rest.
type slowBody struct {
	data    []byte
	off     int
	release chan struct{}
	sent    chan struct{}
}

func (b *slowBody) Read(p []byte) (int, error) {
	half := len(b.data) / 2
	if b.off == half {
		close(b.sent)
		<-b.release
	}
	if b.off >= len(b.data) {
		return 0, io.EOF
	}
	end := len(b.data)
	if b.off < half {
		end = half
	}
	n := copy(p, b.data[b.off:end])
	b.off += n
	return n, nil
}

func TestServe_SIGTERM_FinishesTheRequestInFlight(t *testing.T) {
	repo := gittest.NewBare(t)
	trusted := filepath.Join(t.TempDir(), "trusted.json")
	os.WriteFile(trusted, mustTrusted(t), 0o644)
	s := startServe(t, "git:"+repo.Dir, trusted)
	doc := crashDocs(t, 1)[0]
	body := &slowBody{data: doc, release: make(chan struct{}), sent: make(chan struct{})}
	req, _ := http.NewRequest("POST", s.base+"/actions/crash.a00/versions/1.0.0", body)
	req.ContentLength = int64(len(doc))
	req.Header.Set("X-API-Key", crashAPIKey)
	req.Header.Set("Content-Type", "application/json")
	status := make(chan int, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Errorf("the request in flight failed: %v", err)
			status <- 0
			return
		}
		resp.Body.Close()
		status <- resp.StatusCode
	}()
	<-body.sent
	time.Sleep(100 * time.Millisecond) // the server is reading the body
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(s.log(), `"msg":"shutting down"`) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	close(body.release)
	if st := <-status; st != http.StatusCreated {
		t.Errorf("the request in flight got %d, want 201", st)
	}
	if err := s.wait(); err != nil {
		t.Errorf("dome serve after SIGTERM: %v\n%s", err, s.log())
	}
	if out := s.log(); !strings.Contains(out, `"msg":"shutting down"`) || !strings.Contains(out, `"msg":"stopped"`) {
		t.Errorf("logs:\n%s", out)
	}
	// New connections are refused once it stopped.
	if _, err := http.Get(s.base + "/healthz"); err == nil {
		t.Errorf("still serving after SIGTERM")
	}
}

// TestServe_EveryAnswerIsTheErrorShape: what a client of dome serve sees
// for requests the handler refuses (a publish without Content-Type or with
// another JSON media type: 415) and for requests net/http refuses before
// any handler runs (431, 400, 505, 501, 417): JSON with a stable code.
func TestServe_EveryAnswerIsTheErrorShape(t *testing.T) {
	repo := gittest.NewBare(t)
	trusted := filepath.Join(t.TempDir(), "trusted.json")
	os.WriteFile(trusted, mustTrusted(t), 0o644)
	s := startServe(t, "git:"+repo.Dir, trusted)
	doc := crashDocs(t, 1)[0]
	for _, ct := range []string{"", "application/json-patch+json", "text/plain"} {
		req, _ := http.NewRequest("POST", s.base+"/actions/crash.a00/versions/1.0.0", bytes.NewReader(doc))
		req.Header.Set("X-API-Key", crashAPIKey)
		if ct != "" {
			req.Header.Set("Content-Type", ct)
		}
		resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnsupportedMediaType || !strings.Contains(string(body), `"code":"UNSUPPORTED_MEDIA_TYPE"`) {
			t.Errorf("publish with Content-Type %q: %d %s", ct, resp.StatusCode, body)
		}
	}
	addr := strings.TrimPrefix(s.base, "http://")
	for _, tc := range []struct {
		raw    string
		status int
		code   string
	}{
		{"GET /actions HTTP/1.1\r\nHost: x\r\nX-Big: " + strings.Repeat("a", 70<<10) + "\r\n\r\n", 431, "HEADERS_TOO_LARGE"},
		{"GET /actions HTTP/1.1\r\n\r\n", 400, "BAD_REQUEST"},
		{"GET /actions HTTP/9.9\r\nHost: x\r\n\r\n", 505, "HTTP_VERSION_NOT_SUPPORTED"},
		{"POST /actions/a/versions/1.0.0 HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: br\r\n\r\n", 501, "NOT_IMPLEMENTED"},
		{"GET /healthz HTTP/1.1\r\nHost: x\r\nExpect: tea\r\n\r\n", 417, "EXPECTATION_FAILED"},
		{"OPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n", 400, "BAD_REQUEST"},
	} {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		c.SetDeadline(time.Now().Add(10 * time.Second))
		io.WriteString(c, tc.raw)
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			c.Close()
			t.Fatalf("%.40q: %v", tc.raw, err)
		}
		body, _ := io.ReadAll(resp.Body)
		c.Close()
		if resp.StatusCode != tc.status || resp.Header.Get("Content-Type") != "application/json" || !strings.Contains(string(body), `"code":"`+tc.code+`"`) {
			t.Errorf("%.40q: %d %q %s", tc.raw, resp.StatusCode, resp.Header.Get("Content-Type"), body)
		}
	}
}
