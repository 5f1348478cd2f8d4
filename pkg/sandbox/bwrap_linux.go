//go:build linux

package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Options configure a Sandbox.
type Options struct {
	// Bwrap is the bwrap executable; "" looks "bwrap" up in PATH.
	Bwrap string
	// Prlimit is prlimit(1) as the sandbox sees it (the host's /usr is
	// bound there); "" means /usr/bin/prlimit. It is used only where dome
	// may not set a sandbox's limits itself (root without
	// CAP_SYS_RESOURCE, as in many containers).
	Prlimit string
	// ScratchParent is where scratch folders are made; "" means the
	// system's temporary folder. It must be reachable by the sandbox user.
	ScratchParent string
	// UID and GID run the sandbox when dome runs as root (default 65534,
	// "nobody"); ignored otherwise: the sandbox runs as the calling user.
	UID, GID int
	// insideLimits makes the sandbox set limits with prlimit(1) even where
	// dome could set them itself (tests cover both ways with it).
	insideLimits bool
	// ReadOnly are more host paths bound read-only at the same place (a
	// toolchain under /opt, say). /usr, and /bin, /sbin and /lib* as the
	// host has them, are always bound.
	ReadOnly []string
}

// Sandbox runs commands under bubblewrap. It is safe for concurrent use:
// each Run is its own set of namespaces.
type Sandbox struct {
	bwrap, prlimit, version, parent string
	// inside: limits are set by prlimit(1) in the sandbox before the
	// command, instead of by dome with prlimit(2) on the held sandbox.
	inside   bool
	cred     *syscall.Credential // nil: run as the caller
	uid, gid int
	baseArgs []string
	none     bool // NewUnconfined: no namespaces, the command runs on the host
}

// New finds bwrap and runs a probe sandbox, so that a machine
// where the sandbox cannot work is refused before any work starts, with an
// *UnavailableError that says what to install or change.
func New(ctx context.Context, opt Options) (*Sandbox, error) {
	s := &Sandbox{bwrap: opt.Bwrap, prlimit: opt.Prlimit, parent: opt.ScratchParent, uid: os.Getuid(), gid: os.Getgid(), inside: opt.insideLimits}
	if s.prlimit == "" {
		s.prlimit = "/usr/bin/prlimit"
	}
	if s.bwrap == "" {
		p, err := exec.LookPath("bwrap")
		if err != nil {
			return nil, &UnavailableError{Code: "bwrap_missing", Detail: "bwrap (bubblewrap) is not installed or not on PATH",
				Hint: "install the Debian package bubblewrap (apt-get install bubblewrap), or run workers unconfined with dome run start --sandbox=none (the run manifest records it)"}
		}
		s.bwrap = p
	}
	if os.Geteuid() == 0 {
		s.uid, s.gid = 65534, 65534
		if opt.UID > 0 {
			s.uid, s.gid = opt.UID, opt.GID
		}
		s.cred = &syscall.Credential{Uid: uint32(s.uid), Gid: uint32(s.gid), Groups: []uint32{}}
	}
	if s.parent == "" {
		s.parent = os.TempDir()
		if s.cred != nil && !traversable(s.parent) {
			// bwrap runs as the sandbox user and must reach the scratch
			// folder by its path; a private TMPDIR is not reachable.
			for _, p := range []string{"/tmp", "/var/tmp"} {
				if traversable(p) {
					s.parent = p
					break
				}
			}
		}
	}
	if s.cred != nil && !traversable(s.parent) {
		return nil, &UnavailableError{Code: "scratch_unreachable", Detail: fmt.Sprintf("the sandbox user %d cannot reach the scratch folder %s", s.uid, s.parent),
			Hint: "make every folder above it traversable by others (chmod o+x), or choose another folder"}
	}
	out, err := exec.CommandContext(ctx, s.bwrap, "--version").CombinedOutput()
	if err != nil {
		return nil, &UnavailableError{Code: "bwrap_missing", Detail: fmt.Sprintf("%s --version: %v", s.bwrap, err),
			Hint: "install the Debian package bubblewrap, or run workers unconfined with dome run start --sandbox=none (the run manifest records it)"}
	}
	s.version = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(string(out)), "bubblewrap"))
	s.baseArgs = baseArgs(opt.ReadOnly)
	if s.inside {
		if err := s.checkPrlimit(); err != nil {
			return nil, err
		}
	}
	if err := s.probe(ctx); err != nil {
		if !errors.Is(err, errLimitsDenied) {
			return nil, err
		}
		// dome may not touch another user's limits here: let prlimit(1)
		// set them in the sandbox, after its user namespace exists.
		if err := s.checkPrlimit(); err != nil {
			return nil, err
		}
		s.inside = true
		if err := s.probe(ctx); err != nil {
			return nil, err
		}
	}
	return s, nil
}

func (s *Sandbox) checkPrlimit() error {
	if fi, err := os.Stat(s.prlimit); err != nil || !fi.Mode().IsRegular() || !strings.HasPrefix(s.prlimit, "/usr/") {
		return &UnavailableError{Code: "prlimit_missing", Detail: fmt.Sprintf("dome may not set the limits of the sandbox user %d itself (no CAP_SYS_RESOURCE) and %s is missing", s.uid, s.prlimit),
			Hint: "install util-linux, which provides prlimit, or run dome as a user other than root"}
	}
	return nil
}

// errLimitsDenied is a run whose limits dome was not allowed to set.
var errLimitsDenied = errors.New("not allowed to set the sandbox's limits")

// LimitsBy says how limits are set: "prlimit(2)" by dome on the held
// sandbox, or "prlimit(1)" inside it.
func (s *Sandbox) LimitsBy() string {
	if s.inside {
		return "prlimit(1)"
	}
	return "prlimit(2)"
}

// Version returns bwrap's version, e.g. "0.8.0".
func (s *Sandbox) Version() string { return s.version }

// User returns the uid and gid commands run as.
func (s *Sandbox) User() (uid, gid int) { return s.uid, s.gid }

// baseArgs are the bwrap arguments every run shares: namespaces, the
// read-only system folders, /proc, /dev.
func baseArgs(extra []string) []string {
	a := []string{"--unshare-all", "--unshare-user", "--disable-userns", "--die-with-parent", "--new-session",
		"--hostname", "dome-sandbox", "--ro-bind", "/usr", "/usr"}
	for _, d := range []string{"bin", "sbin", "lib", "lib32", "lib64", "libx32"} {
		p := "/" + d
		fi, err := os.Lstat(p)
		switch {
		case err != nil:
		case fi.Mode()&os.ModeSymlink != 0:
			if t, err := os.Readlink(p); err == nil {
				a = append(a, "--symlink", t, p)
			}
		case fi.IsDir():
			a = append(a, "--ro-bind", p, p)
		}
	}
	// What dynamic linking and Debian's alternatives need from /etc, and
	// nothing else of it.
	for _, p := range []string{"/etc/alternatives", "/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d"} {
		a = append(a, "--ro-bind-try", p, p)
	}
	for _, p := range extra {
		a = append(a, "--ro-bind", p, p)
	}
	return append(a, "--proc", "/proc", "--dev", "/dev")
}

// probe runs "true" in a sandbox built like a real run's.
func (s *Sandbox) probe(ctx context.Context) error {
	sc, err := s.NewScratch(nil)
	if err != nil {
		return &UnavailableError{Code: "probe_failed", Detail: err.Error(), Hint: "check that the scratch folder's parent is writable"}
	}
	defer sc.Close()
	l := DefaultLimits()
	l.WallTime = 30 * time.Second
	res, err := s.Run(ctx, Spec{Argv: []string{"true"}, Scratch: sc, Limits: l})
	if err == nil && res.Reason == ReasonOK {
		return nil
	}
	if errors.Is(err, errLimitsDenied) {
		return err
	}
	detail := ""
	if err != nil {
		detail = err.Error()
	} else {
		detail = strings.TrimSpace(string(res.Stderr))
		if detail == "" {
			detail = res.Reason
		}
	}
	low := strings.ToLower(detail)
	if strings.Contains(low, "can't find source path") {
		return &UnavailableError{Code: "scratch_unreachable", Detail: fmt.Sprintf("bwrap (as uid %d) cannot reach the scratch folder: %s", s.uid, detail),
			Hint: "make every folder above the scratch folder traversable by others (chmod o+x), or choose another folder"}
	}
	if strings.Contains(low, "namespace") || strings.Contains(low, "uid map") || strings.Contains(low, "operation not permitted") ||
		strings.Contains(low, "permission denied") {
		return &UnavailableError{Code: "userns_unavailable", Detail: fmt.Sprintf("bwrap cannot create its namespaces (as uid %d): %s", s.uid, detail),
			Hint: "enable unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1, user.max_user_namespaces > 0; on Ubuntu also kernel.apparmor_restrict_unprivileged_userns=0), or run workers unconfined with dome run start --sandbox=none (the run manifest records it)"}
	}
	return &UnavailableError{Code: "probe_failed", Detail: "a probe sandbox failed: " + detail, Hint: "run bwrap --unshare-all --ro-bind /usr /usr true to see why"}
}

// Scratch is a private folder for one attempt: its Dir is bound read-write
// at /work. Close removes it all.
type Scratch struct {
	root, dir string
	uid, gid  int
	chown     bool
}

// NewScratch makes a scratch folder and fills it with fill (nil: empty),
// then hands it to the sandbox user. The folder holding it is traversable
// but not listable by others (0711); the scratch itself is the sandbox
// user's alone (0700).
func (s *Sandbox) NewScratch(fill func(dir string) error) (*Scratch, error) {
	return s.NewScratchIn(s.parent, fill)
}

// NewScratchIn is NewScratch in the folder parent (which the sandbox user
// must reach): a caller keeps its scratch folders together, to remove
// what a crash left there.
func (s *Sandbox) NewScratchIn(parent string, fill func(dir string) error) (*Scratch, error) {
	root, err := os.MkdirTemp(parent, "dome-sandbox-")
	if err != nil {
		return nil, fmt.Errorf("sandbox scratch: %w", err)
	}
	sc := &Scratch{root: root, dir: filepath.Join(root, "work"), uid: s.uid, gid: s.gid, chown: s.cred != nil}
	fail := func(err error) (*Scratch, error) {
		sc.Close()
		return nil, err
	}
	if err := os.Chmod(root, 0o711); err != nil {
		return fail(fmt.Errorf("sandbox scratch: %w", err))
	}
	if err := os.Mkdir(sc.dir, 0o700); err != nil {
		return fail(fmt.Errorf("sandbox scratch: %w", err))
	}
	if err := os.Mkdir(sc.OutputsDir(), 0o700); err != nil {
		return fail(fmt.Errorf("sandbox scratch: %w", err))
	}
	if sc.chown {
		if err := os.Lchown(sc.OutputsDir(), sc.uid, sc.gid); err != nil {
			return fail(fmt.Errorf("sandbox scratch: %w", err))
		}
	}
	if fill != nil {
		if err := fill(sc.dir); err != nil {
			return fail(fmt.Errorf("sandbox scratch: %w", err))
		}
	}
	if _, err := os.Lstat(filepath.Join(sc.dir, ".git")); err == nil {
		return fail(fmt.Errorf("sandbox scratch: the tree holds a .git entry; a worker gets the files of a commit, never a repository"))
	}
	if sc.chown {
		err := filepath.WalkDir(sc.dir, func(p string, _ os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			return os.Lchown(p, sc.uid, sc.gid)
		})
		if err != nil {
			return fail(fmt.Errorf("sandbox scratch: hand the tree to uid %d: %w", sc.uid, err))
		}
	}
	return sc, nil
}

// Dir is the scratch tree on the host (the sandbox's /work). After a run it
// holds what the worker left: read it as hostile input (symlinks may point
// anywhere).
func (sc *Scratch) Dir() string { return sc.dir }

// OutputsDir is the scratch's outputs folder on the host, bound at
// /run/dome/outputs when Spec.Outputs is set. Like Dir, read what a worker
// left there as hostile input.
func (sc *Scratch) OutputsDir() string { return filepath.Join(sc.root, "outputs") }

// SocketPath is where a gateway for this scratch should listen: a socket
// there is reachable by the sandbox user once Run binds it.
func (sc *Scratch) SocketPath() string { return filepath.Join(sc.root, "gateway.sock") }

// Close removes the scratch folder, including folders a worker made
// read-only. Symlinks are removed, never followed.
func (sc *Scratch) Close() error {
	if sc.root == "" {
		return nil
	}
	err := RemoveAll(sc.root)
	if err == nil {
		sc.root = ""
	}
	return err
}

// prepareSocket checks the gateway socket and lets the sandbox user
// connect to it: a socket in the scratch folder is handed to that user;
// one elsewhere must already be reachable.
func (s *Sandbox) prepareSocket(sc *Scratch, path string) error {
	fi, err := os.Lstat(path)
	if err != nil {
		return fmt.Errorf("sandbox: gateway socket: %w", err)
	}
	if fi.Mode()&os.ModeSocket == 0 {
		return fmt.Errorf("sandbox: gateway socket %s is not a Unix socket", path)
	}
	if s.cred == nil {
		return nil
	}
	if filepath.Dir(path) == sc.root {
		if err := os.Lchown(path, s.uid, s.gid); err != nil {
			return fmt.Errorf("sandbox: gateway socket: %w", err)
		}
		return nil
	}
	st := fi.Sys().(*syscall.Stat_t)
	if !(int(st.Uid) == s.uid && fi.Mode()&0o200 != 0 || fi.Mode()&0o002 != 0) {
		return fmt.Errorf("sandbox: gateway socket %s cannot be opened by the sandbox user %d: listen at Scratch.SocketPath, or chown it", path, s.uid)
	}
	for d := filepath.Dir(path); d != "/"; d = filepath.Dir(d) {
		if di, err := os.Stat(d); err != nil || di.Mode()&0o001 == 0 {
			return fmt.Errorf("sandbox: gateway socket %s: folder %s is not traversable by the sandbox user %d: listen at Scratch.SocketPath", path, d, s.uid)
		}
	}
	return nil
}

func (s *Sandbox) args(spec Spec, l Limits) []string {
	a := append([]string(nil), s.baseArgs...)
	a = append(a, "--size", strconv.FormatInt(l.TmpBytes, 10), "--tmpfs", "/tmp",
		"--bind", spec.Scratch.dir, WorkDir, "--chdir", WorkDir, "--clearenv")
	env := map[string]string{"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": "/tmp", "TMPDIR": "/tmp", "LANG": "C.UTF-8", "DOME_WORKDIR": WorkDir}
	if spec.Socket != "" {
		a = append(a, "--bind", spec.Socket, SocketPath)
		env["DOME_GATEWAY_SOCKET"] = SocketPath
	}
	if spec.Outputs {
		a = append(a, "--bind", spec.Scratch.OutputsDir(), OutputsPath)
		env["DOME_OUTPUTS"] = OutputsPath
	}
	for _, b := range spec.Binds {
		a = append(a, "--ro-bind", b.Src, b.Dst)
	}
	for k, v := range spec.Env {
		env[k] = v
	}
	for _, k := range sortedKeys(env) {
		a = append(a, "--setenv", k, env[k])
	}
	// fd 3: bwrap tells the sandbox's pid.
	a = append(a, "--info-fd", "3")
	if s.inside {
		a = append(a, "--", s.prlimit, "--nproc="+strconv.Itoa(l.Processes), "--as="+strconv.FormatInt(l.MemoryBytes, 10),
			"--nofile="+strconv.Itoa(l.OpenFiles), "--fsize="+strconv.FormatInt(l.FileBytes, 10), "--core=0", "--")
		return append(a, spec.Argv...)
	}
	// fd 4: the sandbox waits there, set up but not yet running the
	// command, until dome has set its limits.
	a = append(a, "--block-fd", "4", "--")
	return append(a, spec.Argv...)
}

// Run runs spec.Argv in a new sandbox and waits for it. Containment is not
// an error: a command that fails, times out, floods its output or forks
// without end gives a Result with its reason code. Errors are for runs that
// could not start.
func (s *Sandbox) Run(ctx context.Context, spec Spec) (Result, error) {
	if err := spec.check(); err != nil {
		return Result{}, err
	}
	l := spec.Limits.withDefaults()
	if s.none {
		return s.runHost(ctx, spec, l)
	}
	for _, b := range spec.Binds {
		if err := s.reachable(b.Src); err != nil {
			return Result{}, err
		}
	}
	if spec.Socket != "" {
		if err := s.prepareSocket(spec.Scratch, spec.Socket); err != nil {
			return Result{}, err
		}
	}
	var closers []*os.File
	closeAll := func() {
		for _, f := range closers {
			f.Close()
		}
	}
	pipe := func() (r, w *os.File, err error) {
		if r, w, err = os.Pipe(); err == nil {
			closers = append(closers, r, w)
		}
		return r, w, err
	}
	infoR, infoW, err1 := pipe()
	blockR, blockW, err2 := pipe()
	outR, outW, err3 := pipe()
	errR, errW, err4 := pipe()
	if err := errors.Join(err1, err2, err3, err4); err != nil {
		closeAll()
		return Result{}, fmt.Errorf("sandbox: %w", err)
	}
	defer infoR.Close()
	defer blockW.Close()
	cmd := &exec.Cmd{Path: s.bwrap, Args: append([]string{"bwrap"}, s.args(spec, l)...), Env: []string{},
		Stdout: outW, Stderr: errW, ExtraFiles: []*os.File{infoW},
		SysProcAttr: &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL, Credential: s.cred}}
	if !s.inside {
		cmd.ExtraFiles = append(cmd.ExtraFiles, blockR)
	}
	if spec.Stdin != nil {
		cmd.Stdin = bytes.NewReader(spec.Stdin)
	}
	start := time.Now()
	err := cmd.Start()
	for _, f := range []*os.File{outW, errW, infoW, blockR} {
		f.Close()
	}
	if err != nil {
		outR.Close()
		errR.Close()
		return Result{}, fmt.Errorf("sandbox: start %s: %w", s.bwrap, err)
	}
	flood := make(chan struct{}, 2)
	stdout := newCapture(outR, l.OutputBytes, flood)
	stderr := newCapture(errR, l.OutputBytes, flood)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	// The limits go on the sandbox's first process while it waits on fd 4,
	// after its user namespace exists (so it counts its own processes) and
	// before anything of the command runs; everything it starts inherits
	// them. bwrap's setup runs meanwhile.
	pidc := make(chan int, 1)
	go func() { pidc <- readChildPID(infoR) }()
	var child int
	select {
	case child = <-pidc:
	case <-time.After(min(l.WallTime, 30*time.Second)):
		child = -1
	case <-ctx.Done():
		child = -1
	}
	if child < 0 {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
		stdout.wait()
		stderr.wait()
		if ctx.Err() != nil {
			return Result{Reason: ReasonCancelled, Detail: killDetail(ReasonCancelled, l, Result{}), ExitCode: -1, Wall: time.Since(start)}, nil
		}
		return Result{}, fmt.Errorf("sandbox: bwrap did not start the sandbox")
	}
	if child > 0 && !s.inside {
		if err := setLimits(child, l); err != nil {
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
			stdout.wait()
			stderr.wait()
			if errors.Is(err, syscall.EPERM) {
				err = fmt.Errorf("%w: %w", errLimitsDenied, err)
			}
			return Result{}, fmt.Errorf("sandbox: set the limits of pid %d: %w", child, err)
		}
		blockW.Write([]byte{1})
	}
	blockW.Close()
	info := make(chan int, 1)
	info <- child
	return s.watch(ctx, cmd, done, stdout, stderr, flood, info, l, start)
}

// watch waits for a started run to end, killing its process group at the
// wall-time limit, on an output flood or when ctx ends, and says how it
// ended. info delivers the pid of the sandbox's first process (for the
// process count of a fork bomb).
func (s *Sandbox) watch(ctx context.Context, cmd *exec.Cmd, done <-chan error, stdout, stderr *capture, flood <-chan struct{}, info <-chan int, l Limits, start time.Time) (Result, error) {
	timer := time.NewTimer(l.WallTime)
	defer timer.Stop()
	res := Result{}
	var werr error
	killed := ""
	select {
	case werr = <-done:
	case <-timer.C:
		killed = ReasonTimeout
		// A fork bomb hovers at its limit as failed forks retry and
		// children exit: count within 10% of it as reaching it.
		want := l.Processes - max(1, l.Processes/10)
		res.Processes = peakSandboxTasks(sandboxPID(info), want)
		if res.Processes >= want {
			killed = ReasonProcessLimit
		}
	case <-flood:
		killed = ReasonOutputLimit
	case <-ctx.Done():
		killed = ReasonCancelled
	}
	if killed != "" {
		// bwrap leads its own process group; killing it kills the
		// sandbox's pid 1 (--die-with-parent), which ends the namespace.
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		werr = <-done
	}
	res.Wall = time.Since(start)
	res.Stdout, res.StdoutBytes = stdout.wait()
	res.Stderr, res.StderrBytes = stderr.wait()
	res.ExitCode = cmd.ProcessState.ExitCode()
	switch {
	case killed != "":
		res.Reason, res.ExitCode = killed, -1
		res.Detail = killDetail(killed, l, res)
	case werr == nil:
		res.Reason = ReasonOK
	default:
		var ee *exec.ExitError
		if !errors.As(werr, &ee) {
			return res, fmt.Errorf("sandbox: wait: %w", werr)
		}
		res.Reason = ReasonExitNonzero
		res.Detail = fmt.Sprintf("exit status %d", res.ExitCode)
		code := res.ExitCode
		if s.none {
			// not through bwrap: a signal is the wait status's own
			if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
				code = 128 + int(ws.Signal())
				res.ExitCode = code
			}
		}
		if code > 128 && code <= 128+64 {
			sig := syscall.Signal(code - 128)
			res.Signal = signalName(sig)
			res.Reason, res.Detail = ReasonSignaled, "killed by "+res.Signal
			if sig == syscall.SIGXFSZ {
				res.Reason, res.Detail = ReasonFileSizeLimit, fmt.Sprintf("a file passed the file size limit of %d bytes (SIGXFSZ)", l.FileBytes)
			}
		}
	}
	return res, nil
}

func killDetail(reason string, l Limits, r Result) string {
	switch reason {
	case ReasonTimeout:
		return fmt.Sprintf("killed after the wall-time limit of %s", l.WallTime)
	case ReasonProcessLimit:
		return fmt.Sprintf("killed after the wall-time limit of %s with %d tasks running, at the process limit of %d", l.WallTime, r.Processes, l.Processes)
	case ReasonOutputLimit:
		return fmt.Sprintf("killed after writing more than %d bytes to stdout or stderr", l.OutputBytes)
	}
	return "killed: the run was cancelled"
}

func signalName(s syscall.Signal) string {
	names := map[syscall.Signal]string{syscall.SIGHUP: "SIGHUP", syscall.SIGINT: "SIGINT", syscall.SIGQUIT: "SIGQUIT",
		syscall.SIGILL: "SIGILL", syscall.SIGTRAP: "SIGTRAP", syscall.SIGABRT: "SIGABRT", syscall.SIGBUS: "SIGBUS",
		syscall.SIGFPE: "SIGFPE", syscall.SIGKILL: "SIGKILL", syscall.SIGSEGV: "SIGSEGV", syscall.SIGPIPE: "SIGPIPE",
		syscall.SIGALRM: "SIGALRM", syscall.SIGTERM: "SIGTERM", syscall.SIGXCPU: "SIGXCPU", syscall.SIGXFSZ: "SIGXFSZ",
		syscall.SIGSYS: "SIGSYS"}
	if n, ok := names[s]; ok {
		return n
	}
	return "signal " + strconv.Itoa(int(s))
}

// CheckBind says whether the sandbox user can read a bind's source (nil
// when it can): a caller checks its binds once, before it runs anything.
func (s *Sandbox) CheckBind(src string) error {
	if s.none {
		_, err := os.Stat(src)
		return err
	}
	return s.reachable(src)
}

// reachable checks that the sandbox user can reach a bind's source: every
// folder above it traversable by others, and the source itself readable
// (and, for a folder, traversable) by others.
func (s *Sandbox) reachable(src string) error {
	fi, err := os.Stat(src)
	if err != nil {
		return fmt.Errorf("sandbox: bind source: %w", err)
	}
	if s.cred == nil {
		return nil
	}
	want := os.FileMode(0o004)
	if fi.IsDir() {
		want |= 0o001
	}
	if !traversable(filepath.Dir(src)) || fi.Mode().Perm()&want != want {
		return fmt.Errorf("sandbox: bind source %s is out of reach of the sandbox user %d: chmod o+rx it and o+x every folder above it", src, s.uid)
	}
	return nil
}

// traversable reports whether every folder from / down to dir (dir
// included) lets others through (o+x), as a different user needs.
func traversable(dir string) bool {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return false
	}
	for d := abs; ; d = filepath.Dir(d) {
		fi, err := os.Stat(d)
		if err != nil || fi.Mode().Perm()&0o001 == 0 {
			return false
		}
		if d == "/" {
			return true
		}
	}
}
