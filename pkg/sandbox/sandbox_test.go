//go:build linux

package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dome-registry/dome/internal/gittest"
	"github.com/dome-registry/dome/pkg/gitstore"
	"github.com/dome-registry/dome/pkg/stack"
)

// newSandbox returns a real sandbox, or skips when this machine cannot run
// one (and fails under CI=true, where .ci/run installs bubblewrap).
func newSandbox(t *testing.T) *Sandbox {
	t.Helper()
	s, err := New(context.Background(), Options{})
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI=true and the sandbox is unavailable: %v", err)
		}
		t.Skipf("sandbox unavailable: %v", err)
	}
	return s
}

func scratch(t *testing.T, s *Sandbox, files map[string]string) *Scratch {
	t.Helper()
	sc, err := s.NewScratch(func(dir string) error {
		for p, c := range files {
			full := filepath.Join(dir, p)
			if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
				return err
			}
			if err := os.WriteFile(full, []byte(c), 0o755); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := sc.Close(); err != nil {
			t.Errorf("close scratch: %v", err)
		}
	})
	return sc
}

func run(t *testing.T, s *Sandbox, sc *Scratch, l Limits, argv ...string) Result {
	t.Helper()
	res, err := s.Run(context.Background(), Spec{Argv: argv, Scratch: sc, Limits: l})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestRun_OKScrubbedEnvironment(t *testing.T) {
	s := newSandbox(t)
	t.Setenv("DOME_TEST_SECRET", "hunter2")
	sc := scratch(t, s, map[string]string{"hello.txt": "hello from the base tree\n"})
	res, err := s.Run(context.Background(), Spec{Argv: []string{"sh", "-c", "cat hello.txt; pwd; env | sort"}, Scratch: sc,
		Env: map[string]string{"TASK": "docs"}})
	if err != nil {
		t.Fatal(err)
	}
	want := "hello from the base tree\n/work\nDOME_WORKDIR=/work\nHOME=/tmp\nLANG=C.UTF-8\nPATH=/usr/local/bin:/usr/bin:/bin\nPWD=/work\nTASK=docs\nTMPDIR=/tmp\n"
	if res.Reason != ReasonOK || res.ExitCode != 0 || string(res.Stdout) != want {
		t.Fatalf("result %+v\nstdout:\n%s\nstderr:\n%s", res, res.Stdout, res.Stderr)
	}
	// Determinism: the same run twice prints the same bytes.
	res2, _ := s.Run(context.Background(), Spec{Argv: []string{"sh", "-c", "cat hello.txt; pwd; env | sort"}, Scratch: sc,
		Env: map[string]string{"TASK": "docs"}})
	if !bytes.Equal(res.Stdout, res2.Stdout) {
		t.Fatal("two identical runs printed different bytes")
	}
}

func TestRun_ExitStatusAndSignals(t *testing.T) {
	s := newSandbox(t)
	sc := scratch(t, s, nil)
	if r := run(t, s, sc, Limits{}, "sh", "-c", "echo oops >&2; exit 3"); r.Reason != ReasonExitNonzero || r.ExitCode != 3 || string(r.Stderr) != "oops\n" {
		t.Fatalf("exit 3: %+v %q", r, r.Stderr)
	}
	if r := run(t, s, sc, Limits{}, "sh", "-c", "kill -SEGV $$"); r.Reason != ReasonSignaled || r.Signal != "SIGSEGV" {
		t.Fatalf("SIGSEGV: %+v", r)
	}
	if r := run(t, s, sc, Limits{}, "no-such-command"); r.Reason != ReasonExitNonzero {
		t.Fatalf("missing command: %+v", r)
	}
}

// TestRun_ForkBomb: the classic bash fork bomb stays within its process
// limit, the host can still start processes, and the run ends at its wall
// time with reason process_limit.
func TestRun_ForkBomb(t *testing.T) {
	s := newSandbox(t)
	sc := scratch(t, s, nil)
	start := time.Now()
	// The marker tells this bomb's processes from another test process's;
	// the run is killed at its wall time with the limit reached.
	marker := fmt.Sprintf("bomb-%d-%d", os.Getpid(), time.Now().UnixNano())
	r := run(t, s, sc, Limits{Processes: 32, WallTime: 5 * time.Second}, "bash", "-c", ":(){ :|:& };:; sleep 60 # "+marker)
	if r.Reason != ReasonProcessLimit || r.Processes < 28 || r.Processes > 40 {
		t.Fatalf("fork bomb: %s (%s), %d tasks", r.Reason, r.Detail, r.Processes)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Fatalf("took %v", d)
	}
	if err := exec.Command("true").Run(); err != nil {
		t.Fatalf("the host cannot fork after the bomb: %v", err)
	}
	if n := processesMatching(t, marker); n > 0 {
		t.Fatalf("%d bomb processes survived", n)
	}
}

// processesMatching counts host processes whose command line contains s.
func processesMatching(t *testing.T, s string) int {
	t.Helper()
	time.Sleep(200 * time.Millisecond)
	ents, _ := os.ReadDir("/proc")
	n := 0
	for _, e := range ents {
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err == nil && bytes.Contains(b, []byte(s)) && e.Name() != fmt.Sprint(os.Getpid()) {
			n++
		}
	}
	return n
}

// TestRun_Network: there is no network: a listener on the host's loopback
// is unreachable, and so is any other address.
func TestRun_Network(t *testing.T) {
	s := newSandbox(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	got := make(chan struct{}, 1)
	go func() {
		if c, err := ln.Accept(); err == nil {
			got <- struct{}{}
			c.Close()
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	sc := scratch(t, s, nil)
	script := fmt.Sprintf(`exec 3<>/dev/tcp/127.0.0.1/%d && echo CONNECTED-LOOPBACK
exec 4<>/dev/tcp/1.1.1.1/80 && echo CONNECTED-INTERNET
ls /sys/class/net 2>/dev/null; cat /proc/net/dev | tail -n +3 | cut -d: -f1`, port)
	r := run(t, s, sc, Limits{WallTime: 20 * time.Second}, "bash", "-c", script)
	if r.Reason != ReasonOK || bytes.Contains(r.Stdout, []byte("CONNECTED")) {
		t.Fatalf("network attempt: %+v\nstdout %s\nstderr %s", r, r.Stdout, r.Stderr)
	}
	if strings.TrimSpace(string(r.Stdout)) != "lo" {
		t.Fatalf("network devices: %q, want only lo", r.Stdout)
	}
	if !bytes.Contains(r.Stderr, []byte("Connection refused")) || !bytes.Contains(r.Stderr, []byte("Network is unreachable")) {
		t.Fatalf("stderr %s", r.Stderr)
	}
	select {
	case <-got:
		t.Fatal("the host listener got a connection from the sandbox")
	case <-time.After(100 * time.Millisecond):
	}
}

// TestRun_ReadOutsideTheScratchTree: the scratch tree is a git commit's
// files without .git; the repository's .git/config, /etc/shadow and a home
// folder are not visible, by any path.
func TestRun_ReadOutsideTheScratchTree(t *testing.T) {
	s := newSandbox(t)
	repo := gittest.New(t)
	repo.Write(map[string]string{"README.md": "# demo\n", "src/main.sh": "echo main\n"})
	commit := repo.Commit("base")
	repo.Git("config", "user.secret", "GITCONFIG-SECRET-4711")
	home := t.TempDir()
	os.WriteFile(filepath.Join(home, ".netrc"), []byte("machine x password HOME-SECRET-4711\n"), 0o600)
	g, err := gitstore.Open(repo.Dir)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	h, _ := gitstore.ParseHash(commit)
	sc, err := s.NewScratch(func(dir string) error { _, err := stack.Materialize(g, h, dir); return err })
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	script := fmt.Sprintf(`ls -a /work; cat README.md
cat %[1]s/.git/config; cat /work/.git/config; cat ../.git/config; cat /etc/shadow; cat /etc/passwd
ls %[2]s; cat %[2]s/.netrc; ls /root; ls /home; ls /; cat /proc/1/environ | tr '\0' ' '; echo; ls /proc | grep -c '^[0-9]'
true`, repo.Dir, home)
	r := run(t, s, sc, Limits{}, "sh", "-c", script)
	all := string(r.Stdout) + string(r.Stderr)
	for _, secret := range []string{"GITCONFIG-SECRET-4711", "HOME-SECRET-4711", "root:"} {
		if strings.Contains(all, secret) {
			t.Fatalf("%s leaked into the sandbox:\n%s", secret, all)
		}
	}
	if !strings.HasPrefix(string(r.Stdout), ".\n..\nREADME.md\nsrc\n# demo\n") {
		t.Fatalf("the scratch tree is not the commit's files:\n%s", r.Stdout)
	}
	for _, miss := range []string{repo.Dir + "/.git/config: No such file", "/work/.git/config: No such file", "/etc/shadow: No such file",
		home + "': No such file", home + "/.netrc: No such file", "/root': No such file"} {
		if !strings.Contains(all, miss) {
			t.Fatalf("want %q in:\n%s", miss, all)
		}
	}
	if !strings.Contains(string(r.Stdout), "\ndev\netc\n") || !strings.Contains(string(r.Stdout), "\nproc\n") || !strings.Contains(string(r.Stdout), "\ntmp\nusr\nwork\n") {
		t.Fatalf("root folder:\n%s", r.Stdout)
	}
}

func TestRun_SleepForeverIsKilled(t *testing.T) {
	s := newSandbox(t)
	sc := scratch(t, s, nil)
	start := time.Now()
	r := run(t, s, sc, Limits{WallTime: time.Second}, "sh", "-c", "sleep 987654 & sleep 987653")
	if r.Reason != ReasonTimeout || r.ExitCode != -1 || !strings.Contains(r.Detail, "wall-time limit of 1s") {
		t.Fatalf("%+v", r)
	}
	if d := time.Since(start); d > 15*time.Second {
		t.Fatalf("took %v", d)
	}
	if n := processesMatching(t, "98765"); n > 0 {
		t.Fatalf("%d sleepers survived the kill", n)
	}
}

func TestRun_PrintingGigabytesIsCut(t *testing.T) {
	s := newSandbox(t)
	sc := scratch(t, s, nil)
	r := run(t, s, sc, Limits{OutputBytes: 1 << 20, WallTime: 60 * time.Second}, "sh", "-c", "head -c 5000000000 /dev/zero")
	if r.Reason != ReasonOutputLimit || len(r.Stdout) != 1<<20 || r.StdoutBytes <= 1<<20 || r.StdoutBytes > 1<<30 {
		t.Fatalf("%+v (kept %d)", r, len(r.Stdout))
	}
	r = run(t, s, sc, Limits{OutputBytes: 4096}, "sh", "-c", "yes error >&2")
	if r.Reason != ReasonOutputLimit || len(r.Stderr) != 4096 {
		t.Fatalf("stderr flood: %+v", r)
	}
}

func TestRun_FileSizeMemoryTmpAndNestedNamespaces(t *testing.T) {
	s := newSandbox(t)
	sc := scratch(t, s, nil)
	if r := run(t, s, sc, Limits{FileBytes: 1 << 20}, "head", "-c", "10000000", "/dev/zero", "-"); r.Reason != ReasonOK && r.StdoutBytes == 0 {
		t.Fatalf("stdout is not a file: %+v", r)
	}
	r := run(t, s, sc, Limits{FileBytes: 1 << 20}, "sh", "-c", "head -c 10000000 /dev/zero > big.bin")
	if r.Reason != ReasonFileSizeLimit {
		t.Fatalf("file size: %+v %s", r, r.Stderr)
	}
	if fi, err := os.Stat(filepath.Join(sc.Dir(), "big.bin")); err != nil || fi.Size() != 1<<20 {
		t.Fatalf("big.bin: %v %v", fi, err)
	}
	r = run(t, s, sc, Limits{MemoryBytes: 64 << 20}, "python3", "-c", "x = bytearray(512 * 1024 * 1024)")
	if r.Reason != ReasonExitNonzero || !bytes.Contains(r.Stderr, []byte("MemoryError")) {
		t.Fatalf("memory: %+v %s", r, r.Stderr)
	}
	r = run(t, s, sc, Limits{TmpBytes: 1 << 20}, "sh", "-c", "head -c 5000000 /dev/zero > /tmp/x")
	if r.Reason != ReasonExitNonzero || !bytes.Contains(r.Stderr, []byte("No space left on device")) {
		t.Fatalf("tmp: %+v %s", r, r.Stderr)
	}
	r = run(t, s, sc, Limits{}, "unshare", "-U", "-r", "true")
	if r.Reason != ReasonExitNonzero {
		t.Fatalf("a nested user namespace was allowed: %+v", r)
	}
}

func TestRun_CancelledByContext(t *testing.T) {
	s := newSandbox(t)
	sc := scratch(t, s, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	r, err := s.Run(ctx, Spec{Argv: []string{"sleep", "30"}, Scratch: sc})
	if err != nil || r.Reason != ReasonCancelled {
		t.Fatalf("%+v %v", r, err)
	}
}

// TestRun_GatewaySocket: the one way out is the socket bound in.
func TestRun_GatewaySocket(t *testing.T) {
	s := newSandbox(t)
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 not found")
	}
	sc := scratch(t, s, nil)
	ln, err := net.Listen("unix", sc.SocketPath())
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		buf := make([]byte, 64)
		n, _ := c.Read(buf)
		fmt.Fprintf(c, "gateway saw %q", buf[:n])
		c.Close()
	}()
	r, err := s.Run(context.Background(), Spec{Scratch: sc, Socket: sc.SocketPath(), Argv: []string{"python3", "-c",
		`import os, socket
s = socket.socket(socket.AF_UNIX); s.connect(os.environ["DOME_GATEWAY_SOCKET"]); s.sendall(b"read_file"); print(s.recv(100).decode())`}})
	if err != nil || r.Reason != ReasonOK || strings.TrimSpace(string(r.Stdout)) != `gateway saw "read_file"` {
		t.Fatalf("%+v %v\n%s", r, err, r.Stderr)
	}
	if _, err := s.Run(context.Background(), Spec{Scratch: sc, Socket: filepath.Join(sc.Dir(), "nope"), Argv: []string{"true"}}); err == nil {
		t.Fatal("a missing socket was accepted")
	}
}

func TestScratch_CloseRemovesWhatAWorkerLocked(t *testing.T) {
	s := newSandbox(t)
	sc, err := s.NewScratch(nil)
	if err != nil {
		t.Fatal(err)
	}
	r := run(t, s, sc, Limits{}, "sh", "-c", "mkdir -p a/b && echo x > a/b/f && ln -s / a/root && chmod 0500 a/b && chmod 0500 a")
	if r.Reason != ReasonOK {
		t.Fatalf("%+v %s", r, r.Stderr)
	}
	root := filepath.Dir(sc.Dir())
	if err := sc.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(root); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("scratch left behind: %v", err)
	}
	if _, err := os.Stat("/usr/bin"); err != nil {
		t.Fatal("removing the scratch followed a symlink")
	}
}

func TestScratch_RefusesAGitFolder(t *testing.T) {
	s := newSandbox(t)
	_, err := s.NewScratch(func(dir string) error { return os.Mkdir(filepath.Join(dir, ".git"), 0o755) })
	if err == nil || !strings.Contains(err.Error(), ".git") {
		t.Fatalf("got %v", err)
	}
}

func TestNew_Unavailable(t *testing.T) {
	_, err := New(context.Background(), Options{Bwrap: "/nonexistent/bwrap"})
	var ue *UnavailableError
	if !errors.As(err, &ue) || ue.Code != "bwrap_missing" || !errors.Is(err, ErrUnavailable) || !strings.Contains(ue.Hint, "bubblewrap") {
		t.Fatalf("missing bwrap: %v", err)
	}
	// A bwrap that cannot create namespaces, as on a kernel that forbids
	// unprivileged user namespaces (what bwrap prints there).
	fake := filepath.Join(t.TempDir(), "bwrap")
	os.WriteFile(fake, []byte("#!/bin/sh\nif [ \"$1\" = --version ]; then echo 'bubblewrap 0.8.0'; exit 0; fi\n"+
		"echo 'bwrap: No permissions to creating new namespace, likely because the kernel does not allow non-privileged user namespaces.' >&2; exit 1\n"), 0o755)
	_, err = New(context.Background(), Options{Bwrap: fake})
	if !errors.As(err, &ue) || ue.Code != "userns_unavailable" || !strings.Contains(ue.Hint, "unprivileged_userns_clone") {
		t.Fatalf("no user namespaces: %v", err)
	}
}

func TestRun_BadSpec(t *testing.T) {
	s := newSandbox(t)
	sc := scratch(t, s, nil)
	for _, spec := range []Spec{{Scratch: sc}, {Argv: []string{"true"}}, {Argv: []string{"true"}, Scratch: sc, Env: map[string]string{"A=B": "x"}},
		{Argv: []string{"a\x00b"}, Scratch: sc}} {
		if _, err := s.Run(context.Background(), spec); err == nil {
			t.Fatalf("accepted %+v", spec)
		}
	}
}

// TestRun_LimitsEitherWay: limits hold whether dome sets them on the held
// sandbox (prlimit(2)) or prlimit(1) sets them inside it.
func TestRun_LimitsEitherWay(t *testing.T) {
	auto := newSandbox(t)
	t.Logf("this machine: limits by %s", auto.LimitsBy())
	inside, err := New(context.Background(), Options{insideLimits: true})
	if err != nil {
		t.Fatal(err)
	}
	if inside.LimitsBy() != "prlimit(1)" {
		t.Fatalf("limits by %s", inside.LimitsBy())
	}
	for _, s := range []*Sandbox{auto, inside} {
		sc := scratch(t, s, nil)
		r := run(t, s, sc, Limits{Processes: 16, WallTime: 2 * time.Second}, "bash", "-c", ":(){ :|:& };:; sleep 60")
		if r.Reason != ReasonProcessLimit {
			t.Fatalf("%s: fork bomb: %s (%s)", s.LimitsBy(), r.Reason, r.Detail)
		}
		r = run(t, s, sc, Limits{FileBytes: 4096, OpenFiles: 32}, "sh", "-c", "ulimit -n; head -c 10000 /dev/zero > f")
		if r.Reason != ReasonFileSizeLimit || string(r.Stdout) != "32\n" {
			t.Fatalf("%s: %s %q", s.LimitsBy(), r.Reason, r.Stdout)
		}
	}
}

// TestRun_BindsAndOutputs: read-only binds below /run/dome/ are readable
// and not writable; the outputs folder is writable and outside /work.
func TestRun_BindsAndOutputs(t *testing.T) {
	s := newSandbox(t)
	tools := filepath.Join(t.TempDir(), "tools")
	os.Mkdir(tools, 0o755)
	os.Chmod(filepath.Dir(tools), 0o711)
	os.Chmod(filepath.Dir(filepath.Dir(tools)), 0o711)
	os.WriteFile(filepath.Join(tools, "hello.sh"), []byte("echo hello from a bound tool\n"), 0o644)
	sc := scratch(t, s, map[string]string{"a.txt": "a\n"})
	r, err := s.Run(context.Background(), Spec{Scratch: sc, Outputs: true, Binds: []Bind{{Src: tools, Dst: "/run/dome/tools"}},
		Argv: []string{"sh", "-c", `sh /run/dome/tools/hello.sh; echo report > "$DOME_OUTPUTS/test-report.txt"; echo $DOME_OUTPUTS; ls /work; touch /run/dome/tools/x 2>/dev/null && echo WROTE; true`}})
	if err != nil || r.Reason != ReasonOK {
		t.Fatalf("%+v %v\n%s", r, err, r.Stderr)
	}
	if got := string(r.Stdout); got != "hello from a bound tool\n/run/dome/outputs\na.txt\n" {
		t.Fatalf("stdout %q", got)
	}
	if b, err := os.ReadFile(filepath.Join(sc.OutputsDir(), "test-report.txt")); err != nil || string(b) != "report\n" {
		t.Fatalf("outputs: %q %v", b, err)
	}
	private := t.TempDir()
	os.Chmod(private, 0o700)
	if os.Geteuid() == 0 {
		// the sandbox user cannot reach a folder only root may enter
		if _, err := s.Run(context.Background(), Spec{Scratch: sc, Binds: []Bind{{Src: private, Dst: "/run/dome/p"}}, Argv: []string{"true"}}); err == nil || !strings.Contains(err.Error(), "chmod") {
			t.Errorf("unreachable bind: %v", err)
		}
	}
	for _, b := range [][]Bind{{{Src: tools, Dst: "/etc"}}, {{Src: tools, Dst: "/run/dome/gateway.sock"}}, {{Src: "rel", Dst: "/run/dome/x"}},
		{{Src: tools, Dst: "/run/dome/x"}, {Src: tools, Dst: "/run/dome/x/y"}}, {{Src: tools, Dst: "/run/dome/../etc"}}} {
		if _, err := s.Run(context.Background(), Spec{Scratch: sc, Binds: b, Argv: []string{"true"}}); err == nil {
			t.Errorf("binds %v accepted", b)
		}
	}
}

// TestUnconfined: without bubblewrap the command runs on the host in the
// scratch folder with the scrubbed environment, paths of the sandbox's
// view mapped to the host, and the wall-time kill.
func TestUnconfined(t *testing.T) {
	s, err := NewUnconfined(Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !s.Unconfined() || s.Version() != "none" {
		t.Fatalf("%v %s", s.Unconfined(), s.Version())
	}
	tools := t.TempDir()
	os.WriteFile(filepath.Join(tools, "hello.sh"), []byte("echo tool $1\n"), 0o644)
	t.Setenv("DOME_TEST_SECRET", "hunter2")
	sc := scratch(t, s, map[string]string{"a.txt": "a\n"})
	r, err := s.Run(context.Background(), Spec{Scratch: sc, Outputs: true, Binds: []Bind{{Src: tools, Dst: "/run/dome/tools"}},
		Env:  map[string]string{"PATH": "/run/dome/tools:/usr/bin:/bin", "TOOL": "/run/dome/tools/hello.sh"},
		Argv: []string{"sh", "-c", `sh "$1" x; cat a.txt; echo o > "$DOME_OUTPUTS/r"; env | grep -c DOME_TEST_SECRET; echo $TOOL`, "sh", "/run/dome/tools/hello.sh"}})
	if err != nil || r.Reason != ReasonExitNonzero && r.Reason != ReasonOK {
		t.Fatalf("%+v %v", r, err)
	}
	want := "tool x\na\n0\n" + filepath.Join(tools, "hello.sh") + "\n"
	if string(r.Stdout) != want {
		t.Fatalf("stdout %q, want %q (stderr %s)", r.Stdout, want, r.Stderr)
	}
	if b, _ := os.ReadFile(filepath.Join(sc.OutputsDir(), "r")); string(b) != "o\n" {
		t.Fatalf("outputs %q", b)
	}
	if r := run(t, s, sc, Limits{WallTime: 300 * time.Millisecond}, "sleep", "30"); r.Reason != ReasonTimeout {
		t.Fatalf("sleep: %+v", r)
	}
	if r := run(t, s, sc, Limits{}, "sh", "-c", "kill -SEGV $$"); r.Reason != ReasonSignaled || r.Signal != "SIGSEGV" {
		t.Fatalf("SIGSEGV: %+v", r)
	}
	if r := run(t, s, sc, Limits{OutputBytes: 1000}, "sh", "-c", "yes"); r.Reason != ReasonOutputLimit {
		t.Fatalf("yes: %+v", r)
	}
}
