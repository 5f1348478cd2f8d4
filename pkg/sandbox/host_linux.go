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
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// NewUnconfined returns a Sandbox that runs commands without bubblewrap:
// on the host, as the calling user, in the scratch folder, with the
// scrubbed environment, the wall-time limit, the process-group kill, the
// output bounds, and (when prlimit(1) is at Options.Prlimit or
// /usr/bin/prlimit) the address-space, open-file and file-size limits. There
// are no namespaces: the command sees the host's files and network, and a
// process that leaves its process group survives the kill. It exists for
// machines without bubblewrap where the user asked for it explicitly (dome
// run start --sandbox=none, which the run manifest records).
func NewUnconfined(opt Options) (*Sandbox, error) {
	s := &Sandbox{none: true, prlimit: opt.Prlimit, parent: opt.ScratchParent, uid: os.Getuid(), gid: os.Getgid(), version: "none"}
	if s.prlimit == "" {
		s.prlimit = "/usr/bin/prlimit"
	}
	if fi, err := os.Stat(s.prlimit); err != nil || !fi.Mode().IsRegular() {
		s.prlimit = ""
	}
	if s.parent == "" {
		s.parent = os.TempDir()
	}
	return s, nil
}

// Unconfined reports whether s runs commands without a sandbox.
func (s *Sandbox) Unconfined() bool { return s.none }

// hostPath maps a path of the sandbox's view (/work, /run/dome/...) to the
// host path that stands for it when there is no sandbox; other paths are
// returned as they are.
func hostPath(spec Spec, p string) string {
	type m struct{ from, to string }
	maps := []m{{WorkDir, spec.Scratch.dir}, {OutputsPath, spec.Scratch.OutputsDir()}}
	if spec.Socket != "" {
		maps = append(maps, m{SocketPath, spec.Socket})
	}
	for _, b := range spec.Binds {
		maps = append(maps, m{b.Dst, b.Src})
	}
	// the longest prefix first
	sort.Slice(maps, func(i, j int) bool { return len(maps[i].from) > len(maps[j].from) })
	for _, x := range maps {
		if p == x.from {
			return x.to
		}
		if strings.HasPrefix(p, x.from+"/") {
			return x.to + p[len(x.from):]
		}
	}
	return p
}

// runHost runs spec on the host (NewUnconfined).
func (s *Sandbox) runHost(ctx context.Context, spec Spec, l Limits) (Result, error) {
	sc := spec.Scratch
	env := map[string]string{"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": sc.root, "TMPDIR": sc.root, "LANG": "C.UTF-8",
		"DOME_WORKDIR": sc.dir}
	if spec.Socket != "" {
		env["DOME_GATEWAY_SOCKET"] = spec.Socket
	}
	if spec.Outputs {
		env["DOME_OUTPUTS"] = sc.OutputsDir()
	}
	for k, v := range spec.Env {
		if k == "PATH" {
			var parts []string
			for _, d := range strings.Split(v, ":") {
				parts = append(parts, hostPath(spec, d))
			}
			env[k] = strings.Join(parts, ":")
			continue
		}
		env[k] = hostPath(spec, v)
	}
	var envList []string
	for _, k := range sortedKeys(env) {
		envList = append(envList, k+"="+env[k])
	}
	argv := make([]string, len(spec.Argv))
	for i, a := range spec.Argv {
		argv[i] = hostPath(spec, a)
	}
	if s.prlimit != "" {
		argv = append([]string{s.prlimit, "--as=" + strconv.FormatInt(l.MemoryBytes, 10), "--nofile=" + strconv.Itoa(l.OpenFiles),
			"--fsize=" + strconv.FormatInt(l.FileBytes, 10), "--core=0", "--"}, argv...)
	}
	bin := argv[0]
	if !strings.Contains(bin, "/") {
		p, err := lookPath(bin, env["PATH"])
		if err != nil {
			// as a shell would: the command could not be found
			return Result{Reason: ReasonExitNonzero, Detail: fmt.Sprintf("%s: command not found", bin), ExitCode: 127,
				Stderr: []byte(bin + ": command not found\n"), StderrBytes: int64(len(bin) + 20)}, nil
		}
		bin = p
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		return Result{}, fmt.Errorf("sandbox: %w", err)
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		outR.Close()
		outW.Close()
		return Result{}, fmt.Errorf("sandbox: %w", err)
	}
	cmd := &exec.Cmd{Path: bin, Args: argv, Env: envList, Dir: sc.dir, Stdout: outW, Stderr: errW,
		SysProcAttr: &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}}
	if spec.Stdin != nil {
		cmd.Stdin = bytes.NewReader(spec.Stdin)
	}
	start := time.Now()
	err = cmd.Start()
	outW.Close()
	errW.Close()
	if err != nil {
		outR.Close()
		errR.Close()
		if errors.Is(err, os.ErrNotExist) || errors.Is(err, os.ErrPermission) {
			return Result{Reason: ReasonExitNonzero, Detail: err.Error(), ExitCode: 127, Wall: time.Since(start)}, nil
		}
		return Result{}, fmt.Errorf("sandbox: start %s: %w", bin, err)
	}
	flood := make(chan struct{}, 2)
	stdout := newCapture(outR, l.OutputBytes, flood)
	stderr := newCapture(errR, l.OutputBytes, flood)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	info := make(chan int, 1)
	info <- 0 // no pid namespace to count
	return s.watch(ctx, cmd, done, stdout, stderr, flood, info, l, start)
}

func lookPath(name, pathList string) (string, error) {
	for _, d := range filepath.SplitList(pathList) {
		p := filepath.Join(d, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0 {
			return p, nil
		}
	}
	return "", exec.ErrNotFound
}
