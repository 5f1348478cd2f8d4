package webui

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dome-registry/dome/internal/gittest"
	"github.com/dome-registry/dome/internal/stacksim"
	"github.com/dome-registry/dome/pkg/gitstore"
	"github.com/dome-registry/dome/pkg/ledger"
	"github.com/dome-registry/dome/pkg/registry"
	"github.com/dome-registry/dome/pkg/stack"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// hostileMarkers are strings the fixtures and the synthetic run plant; a
// page that carries one of them unescaped would run or render it.
var hostileMarkers = []string{"<script>window.__domePwned", "<img src=x", "<svg onload", "<iframe", "<h1>injected", "<b>bold"}

func get(t *testing.T, srv *httptest.Server, path string) (int, string, http.Header) {
	t.Helper()
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Get(srv.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Header
}

func checkEscaped(t *testing.T, path, body string) {
	t.Helper()
	for _, m := range hostileMarkers {
		if strings.Contains(body, m) {
			t.Errorf("%s: %q appears unescaped", path, m)
		}
	}
}

func newRunServer(t *testing.T, opts Options) *httptest.Server {
	t.Helper()
	h, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(func() { h.Shutdown(); srv.Close() })
	return srv
}

func TestRunPages_HostileRunRendersAsText(t *testing.T) {
	runs := t.TempDir()
	last, err := stacksim.Write(runs, stacksim.Options{RunID: "big", Proposals: 40, Tasks: true, Hostile: true, At: t0})
	if err != nil {
		t.Fatal(err)
	}
	srv := newRunServer(t, Options{RunsDir: runs, Poll: 20 * time.Millisecond})
	at := "/ui/runs/big/at/" + strconv.FormatInt(last, 10) + "/"
	for _, tc := range []struct {
		path   string
		status int
		want   []string
	}{
		{"/ui/", 200, []string{"big"}},
		{"/ui/runs/", 200, []string{"big", strconv.FormatInt(last, 10)}},
		{"/ui/runs/big/", 200, []string{"Run big", "p00000", "&lt;script&gt;window.__domePwned", "open", `data-live="/ui/runs/big/live?after=` + strconv.FormatInt(last, 10), "live.js"}},
		{at, 200, []string{"p00039", "conflict&lt;b&gt;bold&lt;/b&gt;", "task-p00000"}},
		{at + "plan/", 200, []string{"<svg", "plan.mmd", "p00008"}},
		{at + "plan.mmd", 200, []string{"flowchart TD", "start --> n1"}},
		{at + "plan.dot", 200, []string{"digraph"}},
		{at + "events/", 200, []string{"stack.proposal.applied", "task.completed"}},
		{at + "evidence/", 200, []string{"No promotion decision yet."}},
		{at + "checkpoints/", 200, []string{"no repository"}},
		{"/ui/runs/big/at/2/", 200, []string{"p00000", "event 2"}},
		{"/ui/runs/big/at/0/", 404, []string{"No event"}},
		{"/ui/runs/big/at/01/", 404, nil},
		{"/ui/runs/big/at/99999/", 404, []string{"has no event 99999"}},
		{"/ui/runs/nosuch/", 404, []string{"No run"}},
		{"/ui/runs/..%2f..%2fetc/", 404, nil},
		{"/ui/runs/big/at/1/validations/nope/", 404, nil},
		{"/ui/registry/HEAD/", 404, []string{"no registry"}},
		{"/ui/actions/", 404, []string{"no action store"}},
		{"/ui/nope", 404, nil},
	} {
		code, body, hdr := get(t, srv, tc.path)
		if code != tc.status {
			t.Errorf("%s: status %d, want %d\n%.500s", tc.path, code, tc.status, body)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(body, w) {
				t.Errorf("%s: no %q in\n%.2000s", tc.path, w, body)
			}
		}
		if ct := hdr.Get("Content-Type"); strings.HasPrefix(ct, "text/html") {
			checkEscaped(t, tc.path, body)
			if !strings.Contains(hdr.Get("Content-Security-Policy"), "script-src 'self'") {
				t.Errorf("%s: no content security policy", tc.path)
			}
		} else if hdr.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("%s: %s without nosniff", tc.path, ct)
		}
	}
	// The stable page of an open run is static: no script, no stream.
	if _, body, _ := get(t, srv, at); strings.Contains(body, "<script") || strings.Contains(body, "data-live") {
		t.Errorf("%s: a pinned page carries the live script", at)
	}
	// run.json is the same view.
	_, body, _ := get(t, srv, at+"run.json")
	var v RunView
	if err := json.Unmarshal([]byte(body), &v); err != nil {
		t.Fatal(err)
	}
	if v.Sequence != last || len(v.Proposals) != 40 || len(v.Layers) != 36 || v.Plan == nil || len(v.Plan.Rejected) != 4 || len(v.Tasks) != 36 {
		t.Errorf("run.json: sequence %d, %d proposals, %d layers, plan %v, %d tasks", v.Sequence, len(v.Proposals), len(v.Layers), v.Plan != nil, len(v.Tasks))
	}
}

// The same sequence gives the same bytes, whenever it is asked for and
// whatever was appended since.
func TestRunPages_StableBySequence(t *testing.T) {
	runs := t.TempDir()
	if _, err := stacksim.Write(runs, stacksim.Options{RunID: "r", Proposals: 12, At: t0}); err != nil {
		t.Fatal(err)
	}
	srv := newRunServer(t, Options{RunsDir: runs})
	view := func(srv *httptest.Server) string {
		_, body, _ := get(t, srv, "/ui/runs/r/at/5/run.json")
		var v RunView
		if err := json.Unmarshal([]byte(body), &v); err != nil {
			t.Fatal(err)
		}
		v.Latest = 0 // the ledger's length when asked: the one field that moves
		b, _ := json.Marshal(v)
		return string(b)
	}
	first := view(srv)
	appendTask(t, runs, "r", "late")
	if again := view(srv); first != again {
		t.Errorf("run.json at 5 changed after an append:\n%s\n---\n%s", first, again)
	}
	// A fresh server (nothing cached) folds the same view.
	if third := view(newRunServer(t, Options{RunsDir: runs})); third != first {
		t.Errorf("another server answers at 5:\n%s", third)
	}
}

func appendTask(t *testing.T, runs, run, id string) int64 {
	t.Helper()
	l, err := ledger.Open(filepath.Join(runs, run), run)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	e, err := l.AppendPayload(stack.TopicTaskProgress, t0.Add(time.Hour), stack.TaskPayload{TaskID: id, Detail: "working"})
	if err != nil {
		t.Fatal(err)
	}
	return e.Sequence
}

// The live stream reports appended events and ends with the run.
func TestLive_StreamsLedgerThenEnds(t *testing.T) {
	runs := t.TempDir()
	last, err := stacksim.Write(runs, stacksim.Options{RunID: "live", Proposals: 3, At: t0})
	if err != nil {
		t.Fatal(err)
	}
	srv := newRunServer(t, Options{RunsDir: runs, Poll: 10 * time.Millisecond, Heartbeat: time.Hour})
	resp, err := http.Get(srv.URL + "/ui/runs/live/live?after=" + strconv.FormatInt(last, 10))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("content type %q", ct)
	}
	events := make(chan string, 16)
	go func() {
		sc := bufio.NewScanner(resp.Body)
		var msg strings.Builder
		for sc.Scan() {
			if sc.Text() == "" {
				events <- msg.String()
				msg.Reset()
				continue
			}
			msg.WriteString(sc.Text() + "\n")
		}
		close(events)
	}()
	next := func() string {
		select {
		case m, ok := <-events:
			if !ok {
				t.Fatal("the stream closed")
			}
			return m
		case <-time.After(10 * time.Second):
			t.Fatal("no event within 10 s")
		}
		return ""
	}
	if m := next(); !strings.HasPrefix(m, "retry:") {
		t.Fatalf("first message %q", m)
	}
	seq := appendTask(t, runs, "live", "t1")
	m := next()
	if !strings.Contains(m, "id: "+strconv.FormatInt(seq, 10)+"\n") || !strings.Contains(m, "event: ledger") || !strings.Contains(m, `"topics":["task.progress"]`) {
		t.Fatalf("ledger message %q", m)
	}
	// Promote: the run ends, the stream says so and closes.
	st, _, err := stack.LoadState(stack.NewLayout(runs, "live"))
	if err != nil {
		t.Fatal(err)
	}
	l, err := ledger.Open(filepath.Join(runs, "live"), "live")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.AppendPayload(stack.TopicPromotionComputed, t0.Add(2*time.Hour), stack.PromotionComputedPayload{DecisionID: "d1", FromHeadRef: st.IntegrationHead,
		ToRef: "refs/heads/release", Allowed: true, Missing: []string{}, Path: "promotion/promotion.decision.json", ArtifactDigest: "sha256:" + strings.Repeat("0", 64)}); err != nil {
		t.Fatal(err)
	}
	if _, err := l.AppendPayload(stack.TopicPromoted, t0.Add(2*time.Hour), stack.PromotedPayload{DecisionID: "d1", FromHeadRef: st.IntegrationHead, ToRef: "refs/heads/release"}); err != nil {
		t.Fatal(err)
	}
	l.Close()
	for m = next(); !strings.Contains(m, "event: end"); m = next() {
		if !strings.Contains(m, "event: ledger") {
			t.Fatalf("unexpected message %q", m)
		}
	}
	if _, ok := <-events; ok {
		t.Fatal("the stream stays open after the end")
	}
	// An ended run's page is static.
	if _, body, _ := get(t, srv, "/ui/runs/live/"); strings.Contains(body, "<script") || !strings.Contains(body, "ended") {
		t.Errorf("the page of an ended run:\n%.1500s", body)
	}
}

func TestLive_BoundedStreams(t *testing.T) {
	runs := t.TempDir()
	if _, err := stacksim.Write(runs, stacksim.Options{RunID: "r", Proposals: 1, At: t0}); err != nil {
		t.Fatal(err)
	}
	srv := newRunServer(t, Options{RunsDir: runs, MaxStreams: 1, Poll: 10 * time.Millisecond})
	first, err := http.Get(srv.URL + "/ui/runs/r/live")
	if err != nil {
		t.Fatal(err)
	}
	defer first.Body.Close()
	bufio.NewReader(first.Body).ReadString('\n')
	code, _, hdr := get(t, srv, "/ui/runs/r/live")
	if code != http.StatusServiceUnavailable || hdr.Get("Retry-After") == "" {
		t.Fatalf("second stream: %d", code)
	}
}

// registryRepo commits the hostile fixture registry and releases nothing.
func registryRepo(t *testing.T) (*gittest.Repo, string) {
	t.Helper()
	gittest.Need(t)
	r := gittest.New(t)
	files := map[string]string{}
	root := filepath.Join("testdata", "registry")
	err := filepath.Walk(root, func(p string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(root, p)
		files[filepath.ToSlash(rel)] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	r.Write(files)
	return r, r.Commit("registry")
}

func TestRegistryPages_HostileSpecRendersAsText(t *testing.T) {
	r, c1 := registryRepo(t)
	v2, _ := os.ReadFile(filepath.Join("testdata", "openapi-v2.yaml"))
	r.Write(map[string]string{"registry/tools/demo/spec/openapi.yaml": string(v2)})
	c2 := r.Commit("demo v2 drops deletePet")
	repo, err := gitstore.Open(r.Dir)
	if err != nil {
		t.Fatal(err)
	}
	srv := newRunServer(t, Options{Registry: registry.New(repo)})
	for _, tc := range []struct {
		path   string
		status int
		want   []string
	}{
		{"/ui/registry/" + c2 + "/", 200, []string{"demo", "evil", "&lt;script&gt;window.__domePwned=&#39;title&#39;&lt;/script&gt;Evil"}},
		{"/ui/registry/" + c2 + "/tools/evil/", 200, []string{"&lt;img src=x onerror=", "&lt;script&gt;window.__domePwned=&#39;operationId&#39;&lt;/script&gt;", "kept"}},
		{"/ui/registry/" + c2 + "/tools/evil/profiles/default/", 200, []string{"&lt;/title&gt;&lt;script&gt;", "&lt;iframe", "{{.Title}}", "&lt;b&gt;tag&lt;/b&gt;"}},
		{"/ui/registry/" + c2 + "/tools/evil/profiles/readonly/", 200, []string{"POST", "not allowed"}},
		{"/ui/registry/" + c2 + "/tools/demo/diff/" + c1 + "/", 200, []string{"removed_operation", "deletePet", "breaking change"}},
		{"/ui/registry/" + c2 + "/tools/demo/releases/v1.0.0/", 404, []string{"demo has no releases"}},
		{"/ui/registry/" + c2 + "/tools/nosuch/", 404, []string{"nosuch"}},
		{"/ui/registry/" + c2 + "/tools/demo/profiles/nosuch/", 404, []string{"default, readonly"}},
		{"/ui/registry/" + strings.Repeat("0", 40) + "/", 404, nil},
		{"/ui/registry/no-such-branch/", 404, []string{"No commit"}},
	} {
		code, body, _ := get(t, srv, tc.path)
		if code != tc.status {
			t.Errorf("%s: status %d, want %d\n%.800s", tc.path, code, tc.status, body)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(body, w) {
				t.Errorf("%s: no %q in\n%.3000s", tc.path, w, body)
			}
		}
		checkEscaped(t, tc.path, body)
		if strings.Contains(body, "javascript:") && strings.Contains(body, `href="javascript:`) {
			t.Errorf("%s: a javascript: link", tc.path)
		}
	}
	// Names that move redirect to the commit they name now.
	for _, tc := range []struct{ path, want string }{
		{"/ui/registry/HEAD/", "/ui/registry/" + c2 + "/"},
		{"/ui/registry/main/tools/demo/", "/ui/registry/" + c2 + "/tools/demo/"},
		{"/ui/registry/" + c2 + "/tools/demo/diff/HEAD~1/", "/ui/registry/" + c2 + "/tools/demo/diff/" + c1 + "/"},
		{"/ui/registry/" + c2[:10] + "/", "/ui/registry/" + c2 + "/"},
	} {
		code, _, hdr := get(t, srv, tc.path)
		if code != http.StatusFound || hdr.Get("Location") != tc.want {
			t.Errorf("%s: %d to %q, want 302 to %q", tc.path, code, hdr.Get("Location"), tc.want)
		}
	}
	r.Write(map[string]string{"README.md": "moved on\n"})
	c3 := r.Commit("later")
	if _, _, hdr := get(t, srv, "/ui/registry/HEAD/"); hdr.Get("Location") != "/ui/registry/"+c3+"/" {
		t.Errorf("HEAD moved to %s, the redirect says %s", c3, hdr.Get("Location"))
	}
}

func TestReadOnly_MethodsAndPaths(t *testing.T) {
	srv := newRunServer(t, Options{})
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/ui/", strings.NewReader("x"))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST /ui/: %d", resp.StatusCode)
	}
	for _, p := range []string{"/ui/static/dome.css", "/ui/static/live.js"} {
		if code, _, hdr := get(t, srv, p); code != 200 || hdr.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("%s: %d", p, code)
		}
	}
	for _, p := range []string{"/ui/static/../server.go", "/ui/static/nope.css", "/ui//runs/"} {
		if code, _, _ := get(t, srv, p); code != 404 {
			t.Errorf("%s: %d, want 404", p, code)
		}
	}
	if code, _, hdr := get(t, srv, "/ui/runs"); code/100 != 3 || hdr.Get("Location") != "/ui/runs/" {
		t.Errorf("/ui/runs: %d %s", code, hdr.Get("Location"))
	}
}
