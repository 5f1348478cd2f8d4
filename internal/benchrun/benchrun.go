// Package benchrun measures the benchmarks under bench/ the same way on a
// machine shared with other work: each job (a process, or a function in
// this process) runs in rounds, every job once per round in an order that
// rotates from round to round, so that a burst of load from elsewhere lands
// on dome and its peer alike; it keeps the wall time, the CPU time (user +
// system, which other work moves less) and the peak resident memory of every
// run, and reports medians with their ranges beside the load average. Ratios
// are always peer / dome: above 1 means dome is faster (or smaller).
package benchrun

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Sample is one measured run.
type Sample struct {
	Wall, CPU time.Duration
	MaxRSS    int64 // bytes; 0 when not measured (a function in this process)
}

// Series is the samples of one job.
type Series []Sample

// Dist is a median with the range it comes from.
type Dist struct{ Median, Min, Max float64 }

func dist(xs []float64) Dist {
	if len(xs) == 0 {
		return Dist{}
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	m := s[len(s)/2]
	if len(s)%2 == 0 {
		m = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return Dist{m, s[0], s[len(s)-1]}
}

func (s Series) pick(f func(Sample) float64) Dist {
	xs := make([]float64, len(s))
	for i, x := range s {
		xs[i] = f(x)
	}
	return dist(xs)
}

// Wall, CPU (in seconds) and RSS (in bytes) of the series.
func (s Series) Wall() Dist { return s.pick(func(x Sample) float64 { return x.Wall.Seconds() }) }
func (s Series) CPU() Dist  { return s.pick(func(x Sample) float64 { return x.CPU.Seconds() }) }
func (s Series) RSS() Dist  { return s.pick(func(x Sample) float64 { return float64(x.MaxRSS) }) }

// Job is one thing to measure.
type Job struct {
	Label string
	// Run runs it once and measures it (Command and Func make one).
	Run func() (Sample, error)
}

// Cmd describes a process to run.
type Cmd struct {
	Argv []string
	Dir  string
	Env  []string // added to the environment
	// Stdin, when set, gives each run its input.
	Stdin func() io.Reader
	// Before runs before each run, untimed (reset a repository...).
	Before func() error
	// Stdout receives the output of each run (default: discarded).
	Stdout io.Writer
	// NoMemory skips the peak-memory figure, which GNU time measures at the
	// cost of its own start (about a millisecond of CPU time, counted in the
	// run's): for start-up figures.
	NoMemory bool
}

// Command is a Job running argv.
func Command(label string, argv ...string) Job {
	return CommandWith(label, Cmd{Argv: argv})
}

// CommandWith is a Job running c.
func CommandWith(label string, c Cmd) Job {
	return Job{Label: label, Run: func() (Sample, error) { return Exec(c) }}
}

// gnuTime is GNU time, through which Exec runs commands to read their peak
// memory: the peak the kernel reports for a child counts the memory of the
// process it was started from (Go starts children with vfork, and exec
// carries the high-water mark over), so a child of this program would be
// reported at no less than this program's own peak. GNU time's is about
// 2 MB. Without it, MaxRSS has that bias.
const gnuTime = "/usr/bin/time"

// Exec runs c once and measures it: wall time, the child's CPU time and
// its peak resident memory from the operating system's accounting.
func Exec(c Cmd) (Sample, error) {
	if c.Before != nil {
		if err := c.Before(); err != nil {
			return Sample{}, err
		}
	}
	argv := c.Argv
	var rssFile string
	if _, err := os.Stat(gnuTime); err == nil && !c.NoMemory {
		f, err := os.CreateTemp("", "benchrun-rss-")
		if err != nil {
			return Sample{}, err
		}
		f.Close()
		rssFile = f.Name()
		defer os.Remove(rssFile)
		argv = append([]string{gnuTime, "-f", "%M", "-o", rssFile, "--"}, argv...)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = c.Dir
	if len(c.Env) > 0 {
		cmd.Env = append(os.Environ(), c.Env...)
	}
	if c.Stdin != nil {
		cmd.Stdin = c.Stdin()
	}
	var stderr bytes.Buffer
	cmd.Stdout = c.Stdout
	cmd.Stderr = &stderr
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	if err != nil {
		return Sample{}, fmt.Errorf("%s: %v\n%s", command(c.Argv), err, tail(stderr.String()))
	}
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		return Sample{}, fmt.Errorf("no resource usage on this system")
	}
	s := Sample{
		Wall:   wall,
		CPU:    time.Duration(ru.Utime.Nano() + ru.Stime.Nano()),
		MaxRSS: ru.Maxrss * 1024, // Linux reports KiB
	}
	if rssFile != "" {
		b, err := os.ReadFile(rssFile)
		if err != nil {
			return Sample{}, err
		}
		f := strings.Fields(string(b))
		if len(f) == 0 {
			return Sample{}, fmt.Errorf("%s wrote no memory figure", gnuTime)
		}
		kb, err := strconv.ParseInt(f[len(f)-1], 10, 64)
		if err != nil {
			return Sample{}, fmt.Errorf("%s: %q: %v", gnuTime, b, err)
		}
		s.MaxRSS = kb * 1024
	}
	return s, nil
}

// command shows a command line, shortened when long (a series of 500
// patch files).
func command(argv []string) string {
	s := strings.Join(argv, " ")
	if len(s) > 300 {
		s = s[:300] + fmt.Sprintf("... (%d arguments)", len(argv))
	}
	return s
}

func tail(s string) string {
	if len(s) > 2000 {
		return "..." + s[len(s)-2000:]
	}
	return s
}

// Func is a Job running f in this process: its wall time and the CPU time
// of the whole process meanwhile (the collector's included).
func Func(label string, f func() error) Job {
	return Job{Label: label, Run: func() (Sample, error) {
		before := selfCPU()
		start := time.Now()
		err := f()
		return Sample{Wall: time.Since(start), CPU: selfCPU() - before}, err
	}}
}

func selfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// Interleave runs warm unmeasured rounds, then rounds measured ones; each
// round runs every job once, starting one job further each round. It
// returns the series by label.
func Interleave(rounds, warm int, jobs ...Job) (map[string]Series, error) {
	out := map[string]Series{}
	for r := 0; r < warm+rounds; r++ {
		for i := range jobs {
			j := jobs[(i+r)%len(jobs)]
			s, err := j.Run()
			if err != nil {
				return nil, fmt.Errorf("%s: %w", j.Label, err)
			}
			if r >= warm {
				out[j.Label] = append(out[j.Label], s)
			}
		}
	}
	return out, nil
}

// Load is the load average (1, 5 and 15 minutes) as /proc/loadavg has it.
func Load() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

// Ms renders a Dist of seconds as "12.3 ms [11.9-14.0]".
func Ms(d Dist) string {
	return fmt.Sprintf("%s ms [%s-%s]", num(d.Median*1000), num(d.Min*1000), num(d.Max*1000))
}

// MB renders a Dist of bytes as "35.1 MB [34.9-36.0]".
func MB(d Dist) string {
	return fmt.Sprintf("%.1f MB [%.1f-%.1f]", d.Median/1e6, d.Min/1e6, d.Max/1e6)
}

func num(x float64) string {
	switch {
	case x >= 100:
		return fmt.Sprintf("%.0f", x)
	case x >= 10:
		return fmt.Sprintf("%.1f", x)
	}
	return fmt.Sprintf("%.2f", x)
}

// Ratio is peer / dome of two medians, "3.21x" ("-" when dome is 0).
func Ratio(peer, dome Dist) string {
	if dome.Median == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2fx", peer.Median/dome.Median)
}

// Table prints aligned rows separated by " | ".
type Table struct {
	rows [][]string
}

// Row adds a row.
func (t *Table) Row(cells ...string) { t.rows = append(t.rows, cells) }

// Print writes the table.
func (t *Table) Print(w io.Writer) {
	var widths []int
	for _, r := range t.rows {
		for i, c := range r {
			if i >= len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], len([]rune(c)))
		}
	}
	for _, r := range t.rows {
		var b strings.Builder
		for i, c := range r {
			if i > 0 {
				b.WriteString(" | ")
			}
			b.WriteString(c)
			if i < len(r)-1 {
				b.WriteString(strings.Repeat(" ", widths[i]-len([]rune(c))))
			}
		}
		fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
	}
}

// Binary is a labelled program to measure beside the one under test, such
// as a build from before a change.
type Binary struct{ Label, Path string }

// Binaries is a repeatable LABEL=PATH flag (flag.Var) of Binary values.
type Binaries []Binary

func (b *Binaries) String() string { return fmt.Sprint(*b) }

// Set adds one LABEL=PATH.
func (b *Binaries) Set(s string) error {
	label, path, ok := strings.Cut(s, "=")
	if !ok || label == "" || path == "" {
		return fmt.Errorf("want LABEL=PATH, got %q", s)
	}
	*b = append(*b, Binary{label, path})
	return nil
}
