package stack

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func testEnv() []string { return []string{"PATH=/usr/local/bin:/usr/bin:/bin", "LC_ALL=C"} }

func digestOf(s string) string {
	h := sha256.Sum256([]byte(s))
	return "sha256:" + hex.EncodeToString(h[:])
}

func TestRunCommand(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "marker"), []byte("here\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name     string
		argv     []string
		timeout  time.Duration
		exit     int
		passed   bool
		timedOut bool
		stdout   string
		errPart  string
	}{
		{name: "pass in dir", argv: []string{"sh", "-c", "cat marker"}, timeout: 10 * time.Second, exit: 0, passed: true, stdout: "here\n"},
		{name: "exit code", argv: []string{"sh", "-c", "echo bad >&2; exit 3"}, timeout: 10 * time.Second, exit: 3, stdout: ""},
		{name: "not found", argv: []string{"no-such-tool-dome"}, timeout: time.Second, exit: -1, errPart: "not found in PATH"},
		{name: "empty", argv: nil, timeout: time.Second, exit: -1, errPart: "empty command"},
		{name: "no limit", argv: []string{"true"}, exit: -1, errPart: "no time limit"},
		{name: "killed by signal", argv: []string{"sh", "-c", "kill -9 $$"}, timeout: 10 * time.Second, exit: -1, errPart: "signal"},
		{name: "env is only what is given", argv: []string{"sh", "-c", "echo ${HOME:-unset}"}, timeout: 10 * time.Second, exit: 0, passed: true, stdout: "unset\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := RunCommand(context.Background(), RunSpec{Name: c.name, Argv: c.argv, Timeout: c.timeout}, RunOptions{Dir: dir, Env: testEnv()})
			if r.ExitCode != c.exit || r.Passed != c.passed || r.TimedOut != c.timedOut {
				t.Errorf("exit %d passed %v timedOut %v (%s), want %d %v %v", r.ExitCode, r.Passed, r.TimedOut, r.Error, c.exit, c.passed, c.timedOut)
			}
			if c.errPart != "" && !strings.Contains(r.Error, c.errPart) {
				t.Errorf("error %q, want it to contain %q", r.Error, c.errPart)
			}
			if c.exit >= 0 && r.StdoutDigest != digestOf(c.stdout) {
				t.Errorf("stdout digest %s, want that of %q", r.StdoutDigest, c.stdout)
			}
			if r.StderrDigest == "" || r.StdoutDigest == "" {
				t.Errorf("digests missing: %+v", r)
			}
		})
	}
}

func TestRunCommand_TimeoutKillsTheProcessGroup(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "child.pid")
	// the shell starts a grandchild that would outlive it, then waits
	start := time.Now()
	r := RunCommand(context.Background(), RunSpec{Name: "slow", Argv: []string{"sh", "-c", "sleep 30 & echo $! > child.pid; echo started; wait"}, Timeout: 300 * time.Millisecond},
		RunOptions{Dir: dir, Env: testEnv()})
	if time.Since(start) > 5*time.Second {
		t.Fatalf("took %s: the runner waited for the grandchild", time.Since(start))
	}
	if !r.TimedOut || r.Passed || r.ExitCode != -1 || !strings.Contains(r.Error, "time limit") {
		t.Fatalf("result %+v, want a timeout", r)
	}
	if r.StdoutDigest != digestOf("started\n") || r.OutputTail != "started\n" {
		t.Errorf("output before the kill: %s %q", r.StdoutDigest, r.OutputTail)
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	deadline := time.Now().Add(3 * time.Second)
	for {
		// a killed child not yet reaped by init is a zombie: read its state
		st, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil || syscall.Kill(pid, 0) != nil || strings.Contains(string(st), ") Z ") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("grandchild %d still alive", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestRunCommands_CancelSkipsTheRest(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	rs := RunCommands(ctx, []RunSpec{{Name: "a", Argv: []string{"true"}, Timeout: time.Second}, {Name: "b", Argv: []string{"true"}, Timeout: time.Second}},
		RunOptions{Dir: t.TempDir(), Env: testEnv()})
	if len(rs) != 2 || rs[0].Passed || rs[1].Passed || !strings.Contains(rs[1].Error, "not run") {
		t.Fatalf("%+v", rs)
	}
}

func TestRunCommand_TailKeepsTheEnd(t *testing.T) {
	r := RunCommand(context.Background(), RunSpec{Name: "big", Argv: []string{"sh", "-c", "i=0; while [ $i -lt 2000 ]; do echo line $i; i=$((i+1)); done"}, Timeout: 10 * time.Second},
		RunOptions{Dir: t.TempDir(), Env: testEnv(), TailBytes: 64})
	if !r.Passed || len(r.OutputTail) != 64 || !strings.HasSuffix(r.OutputTail, "line 1999\n") || r.StdoutBytes < 10000 {
		t.Fatalf("%+v", r)
	}
}

func TestProbeEnvironment(t *testing.T) {
	e := ProbeEnvironment(context.Background(), []string{"sh", "no-such-tool-dome", "sh"}, testEnv(), "sha256:abc")
	if len(e.Tools) != 2 || e.Tools[0].Name != "no-such-tool-dome" || e.Tools[1].Name != "sh" {
		t.Fatalf("tools %+v", e.Tools)
	}
	if e.Tools[0].Error == "" || e.Tools[1].Path == "" || !strings.HasPrefix(e.Tools[1].Digest, "sha256:") {
		t.Errorf("tools %+v", e.Tools)
	}
	if e.ImageDigest != "sha256:abc" || e.OS == "" || e.Arch == "" {
		t.Errorf("%+v", e)
	}
}
