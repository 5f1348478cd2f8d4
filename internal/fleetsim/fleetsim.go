// Package fleetsim runs the fleet simulation of a wave run spread over
// machines, on loopback: an embedded NATS JetStream server, worker daemons
// (dome worker --nats --gateway, each its own process), one coordinator
// (dome run start --dispatch nats://...) with its gateway on TLS, and a
// generated repository whose queue is a layered graph of N nodes. It is
// used by the CLI tests (a short version) and by bench/fleet (make fleet,
// make bench): kill daemons mid-run and check the final tree and the ledger.
package fleetsim

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/dome-registry/dome/pkg/ledger"
	"github.com/dome-registry/dome/pkg/stack"
)

// Spec is a generated run.
type Spec struct {
	Nodes int // tasks
	Width int // tasks per layer: task i depends on task i-Width
	// NoOp workers leave an evidence file and propose nothing; else each
	// writes notes/<node>.md and submits it (dome worker submit).
	NoOp           bool
	TTLSeconds     int // the grants' lifetime (policy default_ttl_seconds)
	MaxConcurrency int
	MaxAttempts    int
	// Slow names nodes whose first attempt sleeps this long before its
	// work (a daemon to kill holds it).
	Slow map[string]time.Duration
	// GrantDir, when set, is where each attempt leaves its grant (workers
	// without a sandbox see it): a test presents it late.
	GrantDir string
}

// World is a generated repository, queue and tools.
type World struct {
	Dir, Repo, Queue, Tools, Base string
	Spec                          Spec
}

// NodeID is node i's id.
func NodeID(i int) string { return fmt.Sprintf("n%04d", i) }

// Write makes the world under dir from the registry and policies of the
// dome source tree at root.
func Write(root, dir string, s Spec) (*World, error) {
	if s.Width <= 0 {
		s.Width = s.Nodes
	}
	if s.MaxAttempts <= 0 {
		s.MaxAttempts = 3
	}
	w := &World{Dir: dir, Repo: filepath.Join(dir, "repo"), Queue: filepath.Join(dir, "work.queue.json"), Tools: filepath.Join(dir, "tools"), Spec: s}
	files := map[string]string{}
	for _, top := range []string{"registry", "policy"} {
		err := filepath.WalkDir(filepath.Join(root, top), func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			rel, _ := filepath.Rel(root, p)
			b, err := os.ReadFile(p)
			files[filepath.ToSlash(rel)] = string(b)
			return err
		})
		if err != nil {
			return nil, err
		}
	}
	files["policy/stack_policy.json"] = strings.Replace(files["policy/stack_policy.json"],
		`"required_for_promotion": {"low": ["fast"], "medium": ["fast", "full"], "high": ["fast", "full"]}`,
		`"required_for_promotion": {"low": [], "medium": [], "high": []}`, 1)
	files["policy/policy_spec.json"] = strings.Replace(files["policy/policy_spec.json"], `"default_ttl_seconds": 900`,
		fmt.Sprintf(`"default_ttl_seconds": %d`, s.TTLSeconds), 1)
	files["policy/run_policy.json"] = fmt.Sprintf(`{"schema_version": "dome.run_policy/v1", "scheduling": {"max_concurrency": %d, "max_attempts": %d, "strategy": "continue_on_error"}, "scarce": {}, "risk": {}, "sandbox": {"max_wall_seconds": 120}}`,
		s.MaxConcurrency, s.MaxAttempts)
	files["README.md"] = "# fleet\n"
	if err := os.MkdirAll(w.Repo, 0o755); err != nil {
		return nil, err
	}
	if _, err := git(w.Repo, "init", "-q", "-b", "main"); err != nil {
		return nil, err
	}
	for p, c := range files {
		full := filepath.Join(w.Repo, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			return nil, err
		}
	}
	if _, err := git(w.Repo, "add", "-A"); err != nil {
		return nil, err
	}
	if _, err := git(w.Repo, "-c", "user.name=fleet", "-c", "user.email=fleet@dome.invalid", "commit", "-q", "-m", "base"); err != nil {
		return nil, err
	}
	base, err := git(w.Repo, "rev-parse", "HEAD")
	if err != nil {
		return nil, err
	}
	w.Base = strings.TrimSpace(base)
	if err := os.MkdirAll(w.Tools, 0o755); err != nil {
		return nil, err
	}
	for d := w.Tools; d != "/"; d = filepath.Dir(d) {
		if fi, err := os.Stat(d); err == nil && fi.Mode().Perm()&0o001 == 0 {
			os.Chmod(d, fi.Mode().Perm()|0o011)
		}
	}
	edit := "printf 'edited by %s\\n' \"$1\" > \"notes/$1.md\"\nexec dome worker submit --intent docs\n"
	if s.NoOp {
		edit = "echo ok > \"$DOME_OUTPUTS/noop.txt\"\n"
	}
	slow := "if [ \"$DOME_ATTEMPT\" = 1 ] && [ -n \"$2\" ]; then sleep \"$2\"; fi\n"
	if s.GrantDir != "" {
		// written whole, then renamed: a test reading it the moment it
		// appears (and killing the worker) must not see half of it
		slow = fmt.Sprintf("printf %%s \"$DOME_GRANT\" > %[1]q/.\"$DOME_TASK_ID\" && mv %[1]q/.\"$DOME_TASK_ID\" %[1]q/\"$DOME_TASK_ID\"\n", s.GrantDir) + slow
	}
	if err := os.WriteFile(filepath.Join(w.Tools, "task.sh"), []byte("mkdir -p notes\n"+slow+edit), 0o755); err != nil {
		return nil, err
	}
	var q bytes.Buffer
	q.WriteString(`{"schema_version": "dome.work.queue/v1", "run_id": "fleet", "tasks": [`)
	for i := 0; i < s.Nodes; i++ {
		if i > 0 {
			q.WriteString(",\n")
		}
		id := NodeID(i)
		deps := "[]"
		if i >= s.Width {
			deps = fmt.Sprintf(`[%q]`, NodeID(i-s.Width))
		}
		argv := []string{"sh", "/run/dome/tools/task.sh", id}
		if d := s.Slow[id]; d > 0 {
			argv = append(argv, fmt.Sprint(d.Seconds()))
		}
		cmd, _ := json.Marshal(argv)
		caps, outs := `["repo.read", "repo.propose"]`, `[{"kind": "patch_proposal"}]`
		if s.NoOp {
			caps, outs = `["repo.read"]`, `[{"kind": "evidence", "evidence_kind": "noop"}]`
		}
		fmt.Fprintf(&q, `{"node_id": %q, "containers": [{"container_ref": "sha256:%064d", "command": %s}], "required_capabilities": %s, "required_outputs": %s, "dependencies": %s}`,
			id, 0, cmd, caps, outs, deps)
	}
	q.WriteString("]}\n")
	return w, os.WriteFile(w.Queue, q.Bytes(), 0o644)
}

func git(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("git %s: %v", strings.Join(args, " "), err)
	}
	return string(out), nil
}

// Proc is a dome process of the simulation.
type Proc struct {
	Name string
	Cmd  *exec.Cmd
	mu   sync.Mutex
	log  bytes.Buffer
	done chan struct{}
	err  error
}

// Start starts dome (argv[0] is the binary, or a test binary running as
// dome with Path set by the caller) in dir.
func Start(name string, cmd *exec.Cmd) (*Proc, error) {
	p := &Proc{Name: name, Cmd: cmd, done: make(chan struct{})}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	pr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if cmd.Stdout == nil {
		cmd.Stdout = procWriter{p}
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	go func() {
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			p.mu.Lock()
			if p.log.Len() < 4<<20 {
				p.log.WriteString(sc.Text() + "\n")
			}
			p.mu.Unlock()
		}
		p.err = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// procWriter appends the process's stdout to its log.
type procWriter struct{ p *Proc }

func (w procWriter) Write(b []byte) (int, error) {
	w.p.mu.Lock()
	defer w.p.mu.Unlock()
	if w.p.log.Len() < 4<<20 {
		w.p.log.Write(b)
	}
	return len(b), nil
}

// Log is what the process wrote on stderr so far.
func (p *Proc) Log() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.log.String()
}

// Kill kills the process's group with SIGKILL and waits for it.
func (p *Proc) Kill() {
	syscall.Kill(-p.Cmd.Process.Pid, syscall.SIGKILL)
	<-p.done
}

// Stop interrupts the process and waits for it (then kills it).
func (p *Proc) Stop() {
	select {
	case <-p.done:
		return
	default:
	}
	syscall.Kill(-p.Cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		p.Kill()
	}
}

// Wait waits for the process to end, at most d.
func (p *Proc) Wait(d time.Duration) error {
	select {
	case <-p.done:
		return p.err
	case <-time.After(d):
		return fmt.Errorf("%s did not end within %s", p.Name, d)
	}
}

// Events reads the run's ledger.
func (w *World) Events(run string) ([]ledger.Event, error) {
	return ledger.Read(filepath.Join(w.Repo, "ops", "runs", run), run)
}

// Progress is a task.progress event: which daemon claimed which attempt.
type Progress struct {
	TaskID, NodeID, Daemon string
	Seq                    int64
	TS                     time.Time
}

// Claims lists the attempts claimed by daemons so far.
func (w *World) Claims(run string) ([]Progress, error) {
	evs, err := w.Events(run)
	if err != nil {
		return nil, err
	}
	var out []Progress
	for _, e := range evs {
		if e.Topic != stack.TopicTaskProgress {
			continue
		}
		var p stack.TaskPayload
		if json.Unmarshal(e.Payload, &p) != nil {
			continue
		}
		const mark = "on worker daemon "
		i := strings.Index(p.Detail, mark)
		if i < 0 {
			continue
		}
		d := strings.Fields(p.Detail[i+len(mark):])
		ts, _ := time.Parse(time.RFC3339Nano, e.TS)
		out = append(out, Progress{TaskID: p.TaskID, NodeID: p.NodeID, Daemon: d[0], Seq: e.Sequence, TS: ts})
	}
	return out, nil
}

// Check checks a finished run: it stopped with constraints_met, every node
// has exactly one passing attempt, and (unless no-op) the integration tree
// holds exactly one note per node with its content. It returns counts of
// the ledger's topics.
func (w *World) Check(run string) (map[string]int, error) {
	evs, err := w.Events(run)
	if err != nil {
		return nil, err
	}
	topics := map[string]int{}
	passed := map[string]int{}
	stopped := ""
	for _, e := range evs {
		topics[e.Topic]++
		switch e.Topic {
		case stack.TopicTaskCompleted:
			var p stack.TaskPayload
			if json.Unmarshal(e.Payload, &p) == nil && p.Reason == "ok" {
				passed[p.NodeID]++
			}
		case "run.stopped":
			var p struct {
				Reason string `json:"reason"`
			}
			json.Unmarshal(e.Payload, &p)
			stopped = p.Reason
		}
	}
	if stopped != "constraints_met" {
		return topics, fmt.Errorf("the run stopped with %q", stopped)
	}
	var problems []string
	for i := 0; i < w.Spec.Nodes; i++ {
		if n := passed[NodeID(i)]; n < 1 {
			problems = append(problems, fmt.Sprintf("%s passed %d times", NodeID(i), n))
		}
	}
	if !w.Spec.NoOp {
		out, err := git(w.Repo, "ls-tree", "-r", "--name-only", "refs/dome/integration/"+run, "notes/")
		if err != nil {
			return topics, err
		}
		names := strings.Fields(out)
		sort.Strings(names)
		if len(names) != w.Spec.Nodes {
			problems = append(problems, fmt.Sprintf("the integration tree holds %d notes, want %d", len(names), w.Spec.Nodes))
		}
		for _, i := range []int{0, w.Spec.Nodes / 2, w.Spec.Nodes - 1} {
			b, err := git(w.Repo, "show", "refs/dome/integration/"+run+":notes/"+NodeID(i)+".md")
			if err != nil || b != "edited by "+NodeID(i)+"\n" {
				problems = append(problems, fmt.Sprintf("notes/%s.md: %q %v", NodeID(i), b, err))
			}
		}
	}
	if len(problems) > 0 {
		if len(problems) > 10 {
			problems = append(problems[:10], fmt.Sprintf("... %d more", len(problems)-10))
		}
		return topics, fmt.Errorf("%s", strings.Join(problems, "; "))
	}
	return topics, nil
}
