package sandbox

import (
	"errors"
	"fmt"
	"path"
	"strings"
	"time"
)

// Paths inside the sandbox.
const (
	WorkDir     = "/work"                  // the scratch tree, read-write; the working directory
	SocketPath  = "/run/dome/gateway.sock" // where Spec.Socket appears
	OutputsPath = "/run/dome/outputs"      // the scratch's outputs folder, read-write, when Spec.Outputs
	BindsRoot   = "/run/dome/"             // read-only binds (Spec.Binds) go below it
)

// Reason codes of a Result.
const (
	ReasonOK            = "ok"              // exit status 0
	ReasonExitNonzero   = "exit_nonzero"    // the command exited with another status
	ReasonSignaled      = "signaled"        // the command died of a signal (bwrap reports 128+n)
	ReasonTimeout       = "timeout"         // the wall-time limit passed: killed
	ReasonProcessLimit  = "process_limit"   // killed at the wall-time limit with the process limit reached (a fork bomb)
	ReasonOutputLimit   = "output_limit"    // stdout or stderr passed their bound: killed
	ReasonFileSizeLimit = "file_size_limit" // a file write passed the file size limit (SIGXFSZ)
	ReasonCancelled     = "cancelled"       // the caller's context ended: killed
)

// Limits bound one run. Zero values take DefaultLimits' values.
type Limits struct {
	WallTime    time.Duration // required in effect: the run is killed after it
	Processes   int           // RLIMIT_NPROC: processes and threads of the sandbox user
	MemoryBytes int64         // RLIMIT_AS: address space of each process (a Go program reserves about 1 GiB of it at start: 4 GiB by default)
	OpenFiles   int           // RLIMIT_NOFILE
	FileBytes   int64         // RLIMIT_FSIZE: the largest file a process may write
	OutputBytes int64         // stdout and stderr are each kept up to this; more kills the run
	TmpBytes    int64         // size of the tmpfs on /tmp
}

// DefaultLimits are the limits of a run that sets none.
func DefaultLimits() Limits {
	return Limits{WallTime: 5 * time.Minute, Processes: 128, MemoryBytes: 4 << 30, OpenFiles: 256,
		FileBytes: 64 << 20, OutputBytes: 1 << 20, TmpBytes: 64 << 20}
}

func (l Limits) withDefaults() Limits {
	d := DefaultLimits()
	if l.WallTime <= 0 {
		l.WallTime = d.WallTime
	}
	if l.Processes <= 0 {
		l.Processes = d.Processes
	}
	if l.MemoryBytes <= 0 {
		l.MemoryBytes = d.MemoryBytes
	}
	if l.OpenFiles <= 0 {
		l.OpenFiles = d.OpenFiles
	}
	if l.FileBytes <= 0 {
		l.FileBytes = d.FileBytes
	}
	if l.OutputBytes <= 0 {
		l.OutputBytes = d.OutputBytes
	}
	if l.TmpBytes <= 0 {
		l.TmpBytes = d.TmpBytes
	}
	return l
}

// Spec is one command to run.
type Spec struct {
	Argv    []string          // the command; argv[0] is looked up in PATH inside the sandbox
	Env     map[string]string // added to the scrubbed environment (PATH, HOME, TMPDIR, LANG, DOME_WORKDIR)
	Scratch *Scratch          // bound read-write at /work
	Socket  string            // host path of a Unix socket bound at /run/dome/gateway.sock, or ""
	Stdin   []byte            // the command's stdin (nil: /dev/null)
	Limits  Limits
	// Binds are host paths bound read-only below /run/dome/ (a worker's
	// tools, the dome binary); the caller checks that the sandbox user may
	// read them.
	Binds []Bind
	// Outputs binds the scratch's outputs folder (Scratch.OutputsDir)
	// read-write at /run/dome/outputs (DOME_OUTPUTS): what a worker leaves
	// there is collected by the caller, outside the tree it diffs.
	Outputs bool
}

// Bind is one read-only bind: host path Src at Dst inside the sandbox.
type Bind struct {
	Src string `json:"src"`
	Dst string `json:"dst"`
}

// Result is how a run ended.
type Result struct {
	Reason   string        `json:"reason"`
	Detail   string        `json:"detail,omitempty"`
	ExitCode int           `json:"exit_code"` // bwrap's status: the command's, or 128+n for signal n; -1 when killed
	Signal   string        `json:"signal,omitempty"`
	Wall     time.Duration `json:"wall_ns"`
	Stdout   []byte        `json:"-"`
	Stderr   []byte        `json:"-"`
	// StdoutBytes and StderrBytes count what the command wrote, kept or not.
	StdoutBytes int64 `json:"stdout_bytes"`
	StderrBytes int64 `json:"stderr_bytes"`
	// Processes is how many tasks the sandbox held when it was killed at
	// the wall-time limit (0 otherwise).
	Processes int `json:"processes,omitempty"`
}

// ErrUnavailable is wrapped by every error of New saying the sandbox
// cannot run here (no bwrap, no user namespaces, no reachable scratch folder).
var ErrUnavailable = errors.New("sandbox unavailable")

// UnavailableError says why the sandbox cannot run and what to do.
type UnavailableError struct {
	Code   string // bwrap_missing, userns_unavailable, scratch_unreachable, probe_failed, unsupported_os
	Detail string
	Hint   string
}

func (e *UnavailableError) Error() string {
	return "sandbox unavailable (" + e.Code + "): " + e.Detail
}

// Unwrap makes errors.Is(err, ErrUnavailable) true.
func (e *UnavailableError) Unwrap() error { return ErrUnavailable }

// validEnvName reports whether k is a portable environment variable name.
func validEnvName(k string) bool {
	for i := 0; i < len(k); i++ {
		c := k[i]
		if !(c == '_' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return k != ""
}

func (s Spec) check() error {
	if len(s.Argv) == 0 || s.Argv[0] == "" {
		return fmt.Errorf("sandbox: no command to run")
	}
	for _, a := range s.Argv {
		if strings.IndexByte(a, 0) >= 0 {
			return fmt.Errorf("sandbox: an argument holds a NUL byte")
		}
	}
	if s.Scratch == nil {
		return fmt.Errorf("sandbox: no scratch folder")
	}
	for k, v := range s.Env {
		if !validEnvName(k) || strings.IndexByte(v, 0) >= 0 {
			return fmt.Errorf("sandbox: environment variable %q: want a name of letters, digits and _ and a value without NUL", k)
		}
	}
	targets := []string{SocketPath, OutputsPath}
	for _, b := range s.Binds {
		if !path.IsAbs(b.Src) || strings.IndexByte(b.Src, 0) >= 0 {
			return fmt.Errorf("sandbox: bind source %q: want an absolute host path", b.Src)
		}
		if path.Clean(b.Dst) != b.Dst || !strings.HasPrefix(b.Dst, BindsRoot) || len(b.Dst) == len(BindsRoot) || strings.IndexByte(b.Dst, 0) >= 0 {
			return fmt.Errorf("sandbox: bind target %q: want a clean path below %s", b.Dst, BindsRoot)
		}
		for _, t := range targets {
			if t == b.Dst || strings.HasPrefix(t, b.Dst+"/") || strings.HasPrefix(b.Dst, t+"/") {
				return fmt.Errorf("sandbox: bind target %q overlaps %q", b.Dst, t)
			}
		}
		targets = append(targets, b.Dst)
	}
	return nil
}
