package workerd

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dome-registry/dome/pkg/jobwire"
)

// The worker's socket forwards the skills' calls as they are and refuses
// the dispatch calls: a worker can never claim or report for itself, nor
// see the daemon's token.
func TestProxy_ForwardsSkillsRefusesDispatch(t *testing.T) {
	var got []string
	back := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = append(got, r.URL.Path+" "+r.Header.Get("Authorization")+" token="+r.Header.Get(jobwire.HeaderToken))
		io.WriteString(w, `{}`)
	}))
	defer back.Close()
	u, _ := url.Parse(back.URL)
	d := &Daemon{hc: back.Client(), base: u}
	sock := filepath.Join(t.TempDir(), "gateway.sock")
	stop, err := d.proxy(sock)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	hc := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "unix", sock)
	}}}
	post := func(path string) int {
		req, _ := http.NewRequest(http.MethodPost, "http://gateway.invalid"+path, strings.NewReader(`{}`))
		req.Header.Set("Authorization", "Bearer g")
		req.Header.Set(jobwire.HeaderToken, "stolen")
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if st := post("/read_file"); st != 200 {
		t.Fatalf("read_file: %d", st)
	}
	for _, p := range []string{jobwire.PathClaim, jobwire.PathResult, jobwire.PathTree, "/dispatch/../dispatch/claim"} {
		if st := post(p); st != http.StatusNotFound {
			t.Errorf("%s: %d, want 404", p, st)
		}
	}
	if len(got) != 1 || got[0] != "/read_file Bearer g token=" {
		t.Fatalf("the gateway saw %q", got)
	}
}

func TestDefaultID(t *testing.T) {
	for host, want := range map[string]string{"worker-1.example": "worker-1.example-7", "": "worker-7", "../x y": "xy-7", "_a": "a-7"} {
		if got := DefaultID(host, 7); got != want {
			t.Errorf("DefaultID(%q) = %q, want %q", host, got, want)
		}
	}
}
