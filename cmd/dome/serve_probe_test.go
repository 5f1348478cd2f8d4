package main

import (
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dome-registry/dome/internal/gittest"
)

// TestServeProbe: dome serve probe, the container health check, answers 0
// for a ready server (by URL and by listen address, wildcard included), 1
// for a port nobody serves, 2 for a URL that is not http(s).
func TestServeProbe(t *testing.T) {
	repo := gittest.NewBare(t)
	trusted := filepath.Join(t.TempDir(), "trusted.json")
	os.WriteFile(trusted, mustTrusted(t), 0o644)
	s := startServe(t, "git:"+repo.Dir, trusted)
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(s.base, "http://"))
	for _, args := range [][]string{
		{"--url", s.base + "/readyz"},
		{"--addr", "127.0.0.1:" + port},
		{"--addr", "0.0.0.0:" + port},
	} {
		out, err := exec.Command("dome", append([]string{"serve", "probe"}, args...)...).CombinedOutput()
		if err != nil || !strings.Contains(string(out), "ready: http://127.0.0.1:"+port+"/readyz 200 OK") {
			t.Errorf("probe %v: %v\n%s", args, err, out)
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().String()
	l.Close()
	for _, c := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"--addr", closed}, 1, "not ready"},
		{[]string{"--url", "ftp://127.0.0.1/"}, 2, "is not an http(s) URL"},
		{[]string{"--addr", "nohostport"}, 2, "want HOST:PORT"},
	} {
		out, err := exec.Command("dome", append([]string{"serve", "probe"}, c.args...)...).CombinedOutput()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != c.code || !strings.Contains(string(out), c.msg) {
			t.Errorf("probe %v: %v (want exit %d naming %q)\n%s", c.args, err, c.code, c.msg, out)
		}
	}
}
