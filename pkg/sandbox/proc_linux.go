//go:build linux

package sandbox

import (
	"encoding/json"
	"errors"
	"io"
	"os"
	"strconv"
	"time"

	"golang.org/x/sys/unix"
)

// readChildPID reads bwrap's --info-fd document and returns the pid (in
// dome's pid namespace) of the sandbox's first process, or 0.
func readChildPID(r io.Reader) int {
	var info struct {
		ChildPID int `json:"child-pid"`
	}
	b, _ := io.ReadAll(io.LimitReader(r, 1<<16))
	if json.Unmarshal(b, &info) != nil {
		return 0
	}
	return info.ChildPID
}

// sandboxPID is the pid of the sandbox's first process, which info
// delivers (0 if it does not within a second).
func sandboxPID(info <-chan int) int {
	select {
	case pid := <-info:
		return pid
	case <-time.After(time.Second):
		return 0
	}
}

// peakSandboxTasks is the most tasks countSandboxTasks sees in up to five
// looks 5 ms apart, stopping at want: a fork bomb's count swings as failed
// forks retry and children exit, and one look on a loaded machine can
// catch it low.
func peakSandboxTasks(pid, want int) int {
	peak := 0
	for i := 0; i < 5 && peak < want; i++ {
		if i > 0 {
			time.Sleep(5 * time.Millisecond)
		}
		peak = max(peak, countSandboxTasks(pid))
	}
	return peak
}

// countSandboxTasks counts the tasks (processes and threads: what the
// process limit counts) in the pid namespace of the sandbox whose first
// process is pid. It reads /proc, so it runs only when a run is killed at
// its wall-time limit, to tell a fork bomb from a slow command.
func countSandboxTasks(pid int) int {
	if pid <= 0 {
		return 0
	}
	ns, err := os.Readlink("/proc/" + strconv.Itoa(pid) + "/ns/pid")
	if err != nil {
		return 0
	}
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return 0
	}
	n := 0
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		if l, err := os.Readlink("/proc/" + e.Name() + "/ns/pid"); err != nil || l != ns {
			continue
		}
		tasks, err := os.ReadDir("/proc/" + e.Name() + "/task")
		if err != nil {
			continue
		}
		n += len(tasks)
	}
	return n
}

// setLimits sets the sandbox's resource limits on its first process (soft
// and hard: the worker cannot raise them). A process that is already gone
// (bwrap failed in its setup) is not an error: the run reports bwrap's exit.
func setLimits(pid int, l Limits) error {
	for _, r := range []struct {
		res int
		v   uint64
	}{
		{unix.RLIMIT_NPROC, uint64(l.Processes)}, {unix.RLIMIT_AS, uint64(l.MemoryBytes)},
		{unix.RLIMIT_NOFILE, uint64(l.OpenFiles)}, {unix.RLIMIT_FSIZE, uint64(l.FileBytes)}, {unix.RLIMIT_CORE, 0},
	} {
		lim := unix.Rlimit{Cur: r.v, Max: r.v}
		if err := unix.Prlimit(pid, r.res, &lim, nil); err != nil {
			if errors.Is(err, unix.ESRCH) {
				return nil
			}
			return err
		}
	}
	return nil
}
