package stack

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"
)

// RunSpec is one command of a validation tier, as the runner executes it:
// argv (no shell unless argv names one), a time limit and a name for the
// report.
type RunSpec struct {
	Name    string
	Argv    []string
	Timeout time.Duration
}

// RunOptions are shared by the commands of one validation.
type RunOptions struct {
	Dir string   // working directory (the materialized head)
	Env []string // the commands' whole environment; nil is empty
	// TailBytes is how much of the end of each command's output the
	// result keeps for people (default 4096; the digests cover it all).
	TailBytes int
	// Now is the clock durations are measured with (default time.Now).
	Now func() time.Time
}

// RunResult is what one command did. Durations are measured; everything
// else follows from the command and its output.
type RunResult struct {
	Name         string   `json:"name"`
	Argv         []string `json:"argv"`
	ExitCode     int      `json:"exit_code"` // -1: killed or not started
	Passed       bool     `json:"passed"`
	TimedOut     bool     `json:"timed_out"`
	TimeLimitMS  int64    `json:"time_limit_ms"`
	DurationMS   int64    `json:"duration_ms"`
	StdoutDigest string   `json:"stdout_digest"`
	StderrDigest string   `json:"stderr_digest"`
	StdoutBytes  int64    `json:"stdout_bytes"`
	StderrBytes  int64    `json:"stderr_bytes"`
	OutputDigest string   `json:"output_digest"` // both streams as they arrived
	OutputTail   string   `json:"output_tail,omitempty"`
	Error        string   `json:"error,omitempty"` // why it did not start or was stopped
}

// RunCommands runs specs in order in opts.Dir and returns one result per
// command; it runs them all (a later command's result is evidence too)
// unless ctx is cancelled, which stops the one running and skips the rest.
func RunCommands(ctx context.Context, specs []RunSpec, opts RunOptions) []RunResult {
	out := make([]RunResult, 0, len(specs))
	for _, s := range specs {
		if ctx.Err() != nil {
			out = append(out, RunResult{Name: s.Name, Argv: s.Argv, ExitCode: -1, TimeLimitMS: s.Timeout.Milliseconds(),
				StdoutDigest: emptyDigest, StderrDigest: emptyDigest, OutputDigest: emptyDigest, Error: "not run: " + ctx.Err().Error()})
			continue
		}
		out = append(out, RunCommand(ctx, s, opts))
	}
	return out
}

var emptyDigest = "sha256:" + hex.EncodeToString(sha256.New().Sum(nil))

// RunCommand runs one command in its own process group with the spec's
// time limit. On timeout or cancellation the whole group is killed
// (SIGKILL), so children the command started go too; after a normal exit
// whatever the command left running in its group is killed as well.
func RunCommand(ctx context.Context, s RunSpec, opts RunOptions) (r RunResult) {
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	tailN := opts.TailBytes
	if tailN <= 0 {
		tailN = 4096
	}
	r = RunResult{Name: s.Name, Argv: append([]string(nil), s.Argv...), ExitCode: -1, TimeLimitMS: s.Timeout.Milliseconds()}
	both := &sharedHash{h: sha256.New()}
	so, se := newCapture(tailN, both), newCapture(tailN, both)
	defer func() {
		r.OutputDigest = both.digest()
		r.StdoutDigest, r.StdoutBytes = so.digest(), so.n
		r.StderrDigest, r.StderrBytes = se.digest(), se.n
		r.OutputTail = tailOf(so, se)
	}()
	if len(s.Argv) == 0 {
		r.Error = "empty command"
		return r
	}
	if s.Timeout <= 0 {
		r.Error = "no time limit"
		return r
	}
	bin, err := lookPath(s.Argv[0], envValue(opts.Env, "PATH"), opts.Dir)
	if err != nil {
		r.Error = err.Error()
		return r
	}
	cctx, cancel := context.WithTimeout(ctx, s.Timeout)
	defer cancel()
	cmd := exec.CommandContext(cctx, bin, s.Argv[1:]...)
	cmd.Args[0] = s.Argv[0]
	cmd.Dir = opts.Dir
	cmd.Env = opts.Env
	if cmd.Env == nil {
		cmd.Env = []string{}
	}
	cmd.Stdin = nil
	cmd.Stdout, cmd.Stderr = so, se
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return killGroup(cmd.Process.Pid) }
	// a grandchild holding the pipes open must not keep us waiting
	cmd.WaitDelay = 2 * time.Second
	start := now()
	if err := cmd.Start(); err != nil {
		r.Error = err.Error()
		return r
	}
	werr := cmd.Wait()
	r.DurationMS = now().Sub(start).Milliseconds()
	killGroup(cmd.Process.Pid) // leftovers of a command that exited
	switch {
	case errors.Is(cctx.Err(), context.DeadlineExceeded) && ctx.Err() == nil:
		r.TimedOut = true
		r.Error = fmt.Sprintf("time limit of %s exceeded: process group killed", s.Timeout)
	case ctx.Err() != nil:
		r.Error = "cancelled: " + ctx.Err().Error()
	case werr != nil:
		var ee *exec.ExitError
		if errors.As(werr, &ee) {
			r.ExitCode = ee.ExitCode()
			if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
				r.Error = "killed by signal " + ws.Signal().String()
			}
		} else {
			r.ExitCode = cmd.ProcessState.ExitCode()
			r.Error = werr.Error()
		}
	default:
		r.ExitCode = 0
	}
	r.Passed = r.ExitCode == 0 && !r.TimedOut && r.Error == ""
	return r
}

func killGroup(pid int) error {
	if pid <= 0 {
		return nil
	}
	err := syscall.Kill(-pid, syscall.SIGKILL)
	if errors.Is(err, syscall.ESRCH) {
		return nil
	}
	return err
}

// sharedHash hashes what both streams write, in arrival order.
type sharedHash struct {
	mu sync.Mutex
	h  hash.Hash
}

func (s *sharedHash) write(p []byte) {
	s.mu.Lock()
	s.h.Write(p)
	s.mu.Unlock()
}

func (s *sharedHash) digest() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return "sha256:" + hex.EncodeToString(s.h.Sum(nil))
}

// capture hashes everything written and keeps the last max bytes.
type capture struct {
	h    hash.Hash
	both *sharedHash
	n    int64
	tail []byte
	max  int
}

func newCapture(max int, both *sharedHash) *capture {
	return &capture{h: sha256.New(), both: both, max: max}
}

func (c *capture) Write(p []byte) (int, error) {
	c.h.Write(p)
	c.both.write(p)
	c.n += int64(len(p))
	c.tail = append(c.tail, p...)
	if len(c.tail) > c.max {
		c.tail = append(c.tail[:0], c.tail[len(c.tail)-c.max:]...)
	}
	return len(p), nil
}

func (c *capture) digest() string { return "sha256:" + hex.EncodeToString(c.h.Sum(nil)) }

// tailOf is the kept end of stderr, else of stdout, as valid UTF-8.
func tailOf(so, se *capture) string {
	t := se.tail
	if len(bytes.TrimSpace(t)) == 0 {
		t = so.tail
	}
	return strings.ToValidUTF8(string(t), "\uFFFD")
}

func envValue(env []string, key string) string {
	v := ""
	for _, kv := range env {
		if k, val, ok := strings.Cut(kv, "="); ok && k == key {
			v = val // the last one wins, as in exec
		}
	}
	return v
}

// lookPath finds name as exec.LookPath would, but in the PATH of the
// commands' environment (not this process's); a name with a slash is taken
// relative to dir.
func lookPath(name, path, dir string) (string, error) {
	if strings.Contains(name, "/") {
		p := name
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		if isExecutable(p) {
			return p, nil
		}
		return "", fmt.Errorf("%s: not an executable file", name)
	}
	for _, d := range filepath.SplitList(path) {
		if d == "" || !filepath.IsAbs(d) {
			continue // a relative PATH entry would depend on the materialized tree
		}
		if p := filepath.Join(d, name); isExecutable(p) {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s: not found in PATH", name)
}

func isExecutable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}

// ProbedEnvironment identifies where a validation ran: the platform, the tools
// it used (version line and a digest of the binary) and, when given, the
// container image digest.
type ProbedEnvironment struct {
	OS          string        `json:"os"`
	Arch        string        `json:"arch"`
	Tools       []ToolVersion `json:"tools"`
	ImageDigest string        `json:"image_digest,omitempty"`
}

// ToolVersion is one tool of a ProbedEnvironment.
type ToolVersion struct {
	Name    string `json:"name"`
	Path    string `json:"path,omitempty"`
	Version string `json:"version,omitempty"`
	Digest  string `json:"digest,omitempty"` // sha256 of the binary
	Error   string `json:"error,omitempty"`
}

// ProbeEnvironment records the tools named (deduplicated, sorted) as found
// in the PATH of env: "go version" for go, "<tool> --version" for others,
// the first line of output, each with a 10 s limit.
func ProbeEnvironment(ctx context.Context, tools []string, env []string, imageDigest string) ProbedEnvironment {
	e := ProbedEnvironment{OS: runtime.GOOS, Arch: runtime.GOARCH, Tools: []ToolVersion{}, ImageDigest: imageDigest}
	seen := map[string]bool{}
	var names []string
	for _, t := range tools {
		if t != "" && !seen[t] {
			seen[t] = true
			names = append(names, t)
		}
	}
	sort.Strings(names)
	for _, name := range names {
		e.Tools = append(e.Tools, probeTool(ctx, name, env))
	}
	return e
}

func probeTool(ctx context.Context, name string, env []string) ToolVersion {
	tv := ToolVersion{Name: name}
	bin, err := lookPath(name, envValue(env, "PATH"), "/")
	if err != nil {
		tv.Error = err.Error()
		return tv
	}
	tv.Path = bin
	if d, err := fileDigest(bin); err == nil {
		tv.Digest = d
	}
	arg := "--version"
	if filepath.Base(name) == "go" {
		arg = "version"
	}
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(cctx, bin, arg)
	cmd.Env = env
	if cmd.Env == nil {
		cmd.Env = []string{}
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return killGroup(cmd.Process.Pid) }
	cmd.WaitDelay = time.Second
	out, _ := cmd.CombinedOutput()
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if l := strings.TrimSpace(sc.Text()); l != "" {
			tv.Version = strings.ToValidUTF8(l, "\uFFFD")
			break
		}
	}
	return tv
}

func fileDigest(p string) (string, error) {
	f, err := os.Open(p)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), nil
}
