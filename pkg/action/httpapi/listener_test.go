package httpapi_test

import (
	"bufio"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dome-registry/dome/pkg/action/httpapi"
	"github.com/dome-registry/dome/pkg/action/storetest"
)

// rawServer serves the API as dome serve does: the handler behind
// httpapi.Listener, asterisk requests passed to the handler, 1 KiB of
// headers at most. It returns the address and the errors the listener
// reported.
func rawServer(t *testing.T) (string, func() []string) {
	t.Helper()
	_, keys := storetest.Key(t)
	h, err := httpapi.New(httpapi.Options{Store: newMemStore(), Keys: keys})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var reported []string
	srv := &http.Server{
		Handler:                      h,
		MaxHeaderBytes:               1 << 10,
		ReadHeaderTimeout:            5 * time.Second,
		DisableGeneralOptionsHandler: true,
	}
	go srv.Serve(httpapi.Listener(ln, 1<<10, func(status int, code, msg, remote string) {
		mu.Lock()
		reported = append(reported, code)
		mu.Unlock()
	}))
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().String(), func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), reported...)
	}
}

// rawDo writes raw bytes on a new connection and reads one response.
func rawDo(t *testing.T, addr, raw string) (*http.Response, []byte) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(c, raw); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("%q: %v", raw, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, body
}

func TestListener_ServerErrorsAreJSON(t *testing.T) {
	addr, reported := rawServer(t)
	sp := spec(t)
	for _, tc := range []struct {
		name, raw string
		status    int
		code, msg string
	}{
		{"headers too large", "GET /actions HTTP/1.1\r\nHost: x\r\nX-Big: " + strings.Repeat("a", 8<<10) + "\r\n\r\n", 431, "HEADERS_TOO_LARGE", "over the server's limit of 1024 bytes"},
		{"garbage request line", "HELLO\r\n\r\n", 400, "BAD_REQUEST", "malformed request"},
		{"no Host", "GET /actions HTTP/1.1\r\n\r\n", 400, "BAD_REQUEST", "missing required Host header"},
		{"two Hosts", "GET /actions HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400, "BAD_REQUEST", "malformed request"},
		{"bad header line", "GET /actions HTTP/1.1\r\nHost: x\r\nno colon here\r\n\r\n", 400, "BAD_REQUEST", "malformed"},
		{"HTTP/2.0 on HTTP/1", "GET /actions HTTP/2.0\r\nHost: x\r\n\r\n", 505, "HTTP_VERSION_NOT_SUPPORTED", "unsupported protocol version"},
		{"HTTP/3.0", "GET /actions HTTP/3.0\r\nHost: x\r\n\r\n", 505, "HTTP_VERSION_NOT_SUPPORTED", "HTTP/1.1"},
		{"unknown transfer coding", "POST /actions/a/versions/1.0.0 HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n", 501, "NOT_IMPLEMENTED", "transfer encoding"},
		{"Expect other than 100-continue", "GET /healthz HTTP/1.1\r\nHost: x\r\nExpect: coffee\r\n\r\n", 417, "EXPECTATION_FAILED", "100-continue"},
		{"OPTIONS *", "OPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n", 400, "BAD_REQUEST", "asterisk"},
		{"unknown path", "GET /nowhere HTTP/1.1\r\nHost: x\r\n\r\n", 404, "NOT_FOUND", "no such endpoint"},
		{"wrong method", "DELETE /healthz HTTP/1.1\r\nHost: x\r\n\r\n", 405, "METHOD_NOT_ALLOWED", "not allowed"},
		{"CONNECT", "CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n", 404, "NOT_FOUND", "no such endpoint"},
	} {
		resp, body := rawDo(t, addr, tc.raw)
		if resp.StatusCode != tc.status {
			t.Errorf("%s: status %d, want %d\n%s", tc.name, resp.StatusCode, tc.status, body)
			continue
		}
		if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
			t.Errorf("%s: Content-Type %q\n%s", tc.name, ct, body)
		}
		var e struct {
			Error struct{ Code, Message string }
		}
		if err := json.Unmarshal(body, &e); err != nil || e.Error.Code != tc.code || !strings.Contains(e.Error.Message, tc.msg) {
			t.Errorf("%s: body %s, want code %s and a message with %q", tc.name, body, tc.code, tc.msg)
		}
		sp.checkSchema(t, "Error", tc.name, body)
	}
	got := strings.Join(reported(), ",")
	if !strings.Contains(got, "HEADERS_TOO_LARGE") || !strings.Contains(got, "EXPECTATION_FAILED") {
		t.Errorf("reported: %s", got)
	}
}

// TestListener_KeepAliveAnswersUntouched: answers of the handler pass
// through the listener byte for byte, several on one connection.
func TestListener_KeepAliveAnswersUntouched(t *testing.T) {
	addr, reported := rawServer(t)
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	req := "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\nGET /actions HTTP/1.1\r\nHost: x\r\n\r\nGET /nowhere HTTP/1.1\r\nHost: x\r\n\r\n"
	io.WriteString(c, req)
	br := bufio.NewReader(c)
	for i, want := range []int{200, 200, 404} {
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("response %d: %v", i, err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != want || resp.Header.Get("Content-Type") != "application/json" || !json.Valid(body) {
			t.Errorf("response %d: %d %q %s", i, resp.StatusCode, resp.Header.Get("Content-Type"), body)
		}
	}
	if r := reported(); len(r) != 0 {
		t.Errorf("reported %v for well-formed requests", r)
	}
}
