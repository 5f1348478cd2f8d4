package httpapi_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dome-registry/dome/pkg/action"
	"github.com/dome-registry/dome/pkg/action/httpapi"
	"github.com/dome-registry/dome/pkg/action/storetest"
)

// recorder is a testing.TB that only records failures, to test the checks.
type recorder struct {
	testing.TB
	msgs []string
}

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, args ...any) {
	r.msgs = append(r.msgs, fmt.Sprintf(format, args...))
}
func (r *recorder) Fatalf(format string, args ...any) { r.Errorf(format, args...) }

func TestSpecCheck_CatchesResponsesOffTheSpec(t *testing.T) {
	sp := spec(t)
	hdr := http.Header{"Content-Type": {"application/json"}}
	for _, tc := range []struct {
		method, path string
		status       int
		body         string
		want         string
	}{
		{"GET", "/actions", 200, `{"items":[{"name":"files.move","versions":["1.0.0"]}]}`, "latest_version"},
		{"GET", "/actions/files.move/versions/1.0.0", 200, `{"name":"files.move","version":"1.0.0","schema":{},"hash":"sha256:00","verified":true}`, "does not match"},
		{"GET", "/actions/files.move/versions/1.0.0", 418, `{"error":{"code":"NOT_FOUND","message":"x"}}`, "status is not supported"},
		{"GET", "/actions/files.move/versions/1.0.0", 404, `{"error":{"code":"NO_SUCH_CODE","message":"x"}}`, "NO_SUCH_CODE"},
		{"GET", "/nowhere", 404, `{"message":"x"}`, "Error"},
	} {
		r := &recorder{TB: t}
		sp.checkResponse(r, tc.method, tc.path, tc.status, hdr, []byte(tc.body))
		if !strings.Contains(strings.Join(r.msgs, "\n"), tc.want) {
			t.Errorf("%s %s %d %s: got %q, want a failure naming %q", tc.method, tc.path, tc.status, tc.body, r.msgs, tc.want)
		}
	}
}

func TestAPI_PublishDisabledWithoutAPIKey(t *testing.T) {
	e := newAPIEnv(t, newMemStore(), httpapi.Options{})
	r := e.do("POST", "/actions/files.move/versions/1.0.0", signed(t, "files.move", "1.0.0", "x", nil), map[string]string{"X-API-Key": "anything"})
	wantStatus(t, "publish", r, 405, "PUBLISH_DISABLED")
	if a := r.header.Get("Allow"); a != "GET, HEAD" {
		t.Errorf("Allow %q", a)
	}
}

func TestAPI_RoutingErrorsAreJSON(t *testing.T) {
	e := newAPIEnv(t, newMemStore(), httpapi.Options{APIKey: apiKey})
	for _, tc := range []struct {
		method, path string
		status       int
		code, allow  string
	}{
		{"DELETE", "/actions", 405, "METHOD_NOT_ALLOWED", "GET, HEAD"},
		{"PUT", "/actions/files.move/versions/1.0.0", 405, "METHOD_NOT_ALLOWED", "GET, HEAD, POST"},
		{"POST", "/actions/files.move/versions/1.0.0/verify", 405, "METHOD_NOT_ALLOWED", "GET, HEAD"},
		{"POST", "/healthz", 405, "METHOD_NOT_ALLOWED", "GET, HEAD"},
		{"GET", "/", 404, "NOT_FOUND", ""},
		{"GET", "/actions/files.move", 404, "NOT_FOUND", ""},
		{"GET", "/actions/files.move/versions", 404, "NOT_FOUND", ""},
		{"GET", "/actions/Files.Move/versions/1.0.0", 400, "INVALID_ACTION", ""},
		{"GET", "/actions/files.move/versions/v1.0.0", 400, "INVALID_ACTION", ""},
		{"GET", "/actions/files%2Fmove/versions/1.0.0/verify", 400, "INVALID_ACTION", ""},
		{"GET", "/actions//files.move/versions/1.0.0", 404, "NOT_FOUND", ""},
		{"GET", "/actions/x/../files.move/versions/1.0.0", 404, "NOT_FOUND", ""},
		{"GET", "/actions/./versions/1.0.0", 404, "NOT_FOUND", ""},
	} {
		r := e.do(tc.method, tc.path, nil, nil)
		wantStatus(t, tc.method+" "+tc.path, r, tc.status, tc.code)
		if a := r.header.Get("Allow"); a != tc.allow {
			t.Errorf("%s %s: Allow %q, want %q", tc.method, tc.path, a, tc.allow)
		}
	}
	if r := e.do("HEAD", "/actions", nil, nil); r.status != 200 || len(r.body) != 0 {
		t.Errorf("HEAD /actions: %d %q", r.status, r.body)
	}
}

func TestAPI_HealthAndReadiness(t *testing.T) {
	s := newMemStore()
	e := newAPIEnv(t, s, httpapi.Options{})
	for _, p := range []string{"/healthz", "/readyz"} {
		if r := e.do("GET", p, nil, nil); r.status != 200 || string(r.body) != `{"status":"ok"}`+"\n" {
			t.Errorf("%s: %d %s", p, r.status, r.body)
		}
	}
	s.SetNotReady(errors.New("connection refused"))
	wantStatus(t, "readyz", e.do("GET", "/readyz", nil, nil), 503, "NOT_READY")
	if r := e.do("GET", "/healthz", nil, nil); r.status != 200 {
		t.Errorf("healthz while not ready: %d", r.status)
	}
}

// failingStore fails every call.
type failingStore struct{ memStore }

func (*failingStore) Get(context.Context, string, string) (action.Record, error) {
	return action.Record{}, errors.New("disk on fire at /var/secret/path")
}
func (*failingStore) List(context.Context) ([]action.Summary, error) {
	return nil, errors.New("disk on fire")
}

func TestAPI_StoreFailuresAre500AndLogged(t *testing.T) {
	var logs syncBuffer
	e := newAPIEnv(t, &failingStore{}, httpapi.Options{Logger: slog.New(slog.NewJSONHandler(&logs, nil)), AccessLog: true})
	r := e.do("GET", "/actions/files.move/versions/1.0.0", nil, nil)
	wantStatus(t, "get", r, 500, "INTERNAL")
	if bytes.Contains(r.body, []byte("/var/secret")) {
		t.Errorf("the store's error leaks to the client: %s", r.body)
	}
	wantStatus(t, "list", e.do("GET", "/actions", nil, nil), 500, "INTERNAL")
	out := logs.String()
	for _, want := range []string{`"msg":"store error"`, `disk on fire at /var/secret/path`, `"msg":"request"`, `"method":"GET"`, `"path":"/actions"`, `"status":500`, `"code":"INTERNAL"`, `"dur_us":`} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %s:\n%s", want, out)
		}
	}
}

func TestAPI_UntrustedKeySet_VerifiedFalseWithReason(t *testing.T) {
	s := newMemStore()
	doc := signed(t, "files.move", "1.0.0", "x", nil)
	rec, err := action.Prepare(doc)
	if err != nil {
		t.Fatal(err)
	}
	s.Publish(context.Background(), rec)
	// A server trusting another key: the stored version is served, unverified.
	other, _ := storetest.Key(t)
	other.KID = "another-key"
	otherKeys, err := newKeys(other)
	if err != nil {
		t.Fatal(err)
	}
	e := newAPIEnv(t, s, httpapi.Options{Keys: otherKeys})
	m := e.do("GET", "/actions/files.move/versions/1.0.0/verify", nil, nil).json(t)
	if m["verified"] != false || !strings.HasPrefix(fmt.Sprint(m["reason"]), "UNKNOWN_KEY_ID: ") || m["kid"] != storetest.KID {
		t.Errorf("verify: %v", m)
	}
}

func TestStatus_EveryCode(t *testing.T) {
	want := map[string]int{"ACTION_NOT_FOUND": 404, "VERSION_NOT_FOUND": 404, "UNKNOWN_KEY_ID": 400, "BAD_SIGNATURE": 400,
		"IMMUTABLE_VERSION_CONFLICT": 409, "UNAUTHORIZED": 401, "INVALID_JSON": 400, "INVALID_ACTION": 400, "PAYLOAD_TOO_LARGE": 413,
		"UNSUPPORTED_MEDIA_TYPE": 415, "PUBLISH_DISABLED": 405, "METHOD_NOT_ALLOWED": 405, "NOT_FOUND": 404, "NOT_READY": 503, "INTERNAL": 500,
		"BAD_REQUEST": 400, "HEADERS_TOO_LARGE": 431, "EXPECTATION_FAILED": 417, "NOT_IMPLEMENTED": 501, "HTTP_VERSION_NOT_SUPPORTED": 505}
	codes := httpapi.Codes()
	if len(codes) != len(want) {
		t.Errorf("Codes() = %v", codes)
	}
	for _, c := range codes {
		if httpapi.Status(c) != want[c] {
			t.Errorf("Status(%s) = %d, want %d", c, httpapi.Status(c), want[c])
		}
	}
	// Every code is in the spec's enum.
	enum := spec(t).doc.Components.Schemas["Error"].Value.Properties["error"].Value.Properties["code"].Value.Enum
	if len(enum) != len(codes) {
		t.Errorf("the spec lists %d codes, the API %d", len(enum), len(codes))
	}
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}
func (s *syncBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

func TestAPI_Revalidate_ServesFromMemoryWithinTheWindow(t *testing.T) {
	kit := memKit()
	s := kit.open(t)
	const window = 300 * time.Millisecond
	e := newAPIEnv(t, s, httpapi.Options{APIKey: apiKey, Revalidate: window})
	e.mustPublish(signed(t, "files.move", "1.0.0", "Move a file", nil), http.StatusCreated)
	path := "/actions/files.move/versions/1.0.0"
	if m := e.do("GET", path, nil, nil).json(t); m["verified"] != true {
		t.Fatalf("before: %v", m)
	}
	kit.tamper(t, s, "files.move", "1.0.0", func(doc []byte) []byte {
		return bytes.Replace(doc, []byte("Move a file"), []byte("Move a filE"), 1)
	})
	// Within the window: the published, verified bytes from memory.
	if m := e.do("GET", path, nil, nil).json(t); m["verified"] != true || m["schema"].(map[string]any)["description"] != "Move a file" {
		t.Errorf("within the window: %v", m)
	}
	// A version published behind the server's back is there at once: only
	// versions already read are answered from memory.
	rec, _ := action.Prepare(signed(t, "files.move", "1.1.0", "new", nil))
	s.Publish(context.Background(), rec)
	if r := e.do("GET", "/actions/files.move/versions/1.1.0", nil, nil); r.status != 200 {
		t.Errorf("a new version: %d", r.status)
	}
	time.Sleep(window + 50*time.Millisecond)
	m := e.do("GET", path+"/verify", nil, nil).json(t)
	if m["verified"] != false || !strings.HasPrefix(fmt.Sprint(m["reason"]), "BAD_SIGNATURE: ") {
		t.Errorf("after the window the tamper shows: %v", m)
	}
}

// watchedStore is a memStore that counts reads and reports changes when told.
type watchedStore struct {
	*memStore
	gets    atomic.Int64
	lists   atomic.Int64
	changes chan string // "" + closed ready: see Watch
	feed    chan bool
}

func (w *watchedStore) Get(ctx context.Context, n, v string) (action.Record, error) {
	w.gets.Add(1)
	return w.memStore.Get(ctx, n, v)
}

func (w *watchedStore) List(ctx context.Context) ([]action.Summary, error) {
	w.lists.Add(1)
	return w.memStore.List(ctx)
}

func (w *watchedStore) Watch(ctx context.Context, ready func(bool), changed func(string)) error {
	for {
		select {
		case <-ctx.Done():
			ready(false)
			return nil
		case up := <-w.feed:
			ready(up)
		case c := <-w.changes:
			changed(c)
		}
	}
}

func TestAPI_Watch_ReadsFromMemoryUntilAChange(t *testing.T) {
	ws := &watchedStore{memStore: newMemStore(), changes: make(chan string), feed: make(chan bool)}
	e := newAPIEnv(t, ws, httpapi.Options{APIKey: apiKey})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go e.h.Watch(ctx)
	ws.feed <- true
	if !waitFor(time.Second, e.h.Watching) {
		t.Fatal("not watching")
	}
	e.mustPublish(signed(t, "files.move", "1.0.0", "x", nil), http.StatusCreated)
	path := "/actions/files.move/versions/1.0.0"
	for i := 0; i < 5; i++ {
		e.do("GET", path, nil, nil)
		e.do("GET", path+"/verify", nil, nil)
		e.do("GET", "/actions", nil, nil)
	}
	if g, l := ws.gets.Load(), ws.lists.Load(); g != 1 || l != 1 {
		t.Errorf("while watching: %d store reads, %d listings; want 1 and 1", g, l)
	}
	ws.changes <- "files.move@1.0.0" // e.g. an UPDATE by hand
	ws.changes <- "sync"             // the first change was handled
	e.do("GET", path, nil, nil)
	e.do("GET", "/actions", nil, nil)
	if g, l := ws.gets.Load(), ws.lists.Load(); g != 2 || l != 2 {
		t.Errorf("after a change: %d store reads, %d listings; want 2 and 2", g, l)
	}
	ws.feed <- false // the feed is lost: every read goes to the store
	if !waitFor(time.Second, func() bool { return !e.h.Watching() }) {
		t.Fatal("still watching")
	}
	e.do("GET", path, nil, nil)
	e.do("GET", path, nil, nil)
	if g := ws.gets.Load(); g != 4 {
		t.Errorf("without the feed: %d store reads, want 4", g)
	}
	ws.feed <- true
	if !waitFor(time.Second, e.h.Watching) {
		t.Fatal("not watching again")
	}
	e.do("GET", path, nil, nil)
	e.do("GET", path, nil, nil)
	if g := ws.gets.Load(); g != 5 {
		t.Errorf("feed back: %d store reads, want 5 (one read, then memory)", g)
	}
}

func TestCheckAPIKey(t *testing.T) {
	for _, tc := range []struct {
		key string
		ok  bool
	}{
		{"", true},
		{"0123456789abcdef0123456789abcdef", true},
		{"a key with inner spaces", true},
		{"   ", false},
		{"\t", false},
		{" leading", false},
		{"trailing ", false},
		{"bell\a", false},
		{"line\nbreak", false},
	} {
		if err := httpapi.CheckAPIKey(tc.key); (err == nil) != tc.ok {
			t.Errorf("CheckAPIKey(%q) = %v, want ok=%v", tc.key, err, tc.ok)
		}
		_, keys := storetest.Key(t)
		_, err := httpapi.New(httpapi.Options{Store: storetest.NewMemStore(), Keys: keys, APIKey: tc.key})
		if (err == nil) != tc.ok {
			t.Errorf("New with API key %q: %v, want ok=%v", tc.key, err, tc.ok)
		}
	}
}
