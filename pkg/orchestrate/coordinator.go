package orchestrate

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/dome-registry/dome/pkg/canonical"
	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/dome-registry/dome/pkg/gateway"
	"github.com/dome-registry/dome/pkg/gitstore"
	"github.com/dome-registry/dome/pkg/grant"
	"github.com/dome-registry/dome/pkg/grant/grantfile"
	"github.com/dome-registry/dome/pkg/ledger"
	"github.com/dome-registry/dome/pkg/readlimit"
	"github.com/dome-registry/dome/pkg/registry"
	"github.com/dome-registry/dome/pkg/runspec"
	"github.com/dome-registry/dome/pkg/sandbox"
	"github.com/dome-registry/dome/pkg/signing"
	"github.com/dome-registry/dome/pkg/spawn"
	"github.com/dome-registry/dome/pkg/stack"
	"github.com/dome-registry/dome/pkg/workflow"
)

// Config is what a run needs. The fields under "a new run" are read only
// when the run does not exist yet; a run that exists resumes from its
// folder and its manifest.
type Config struct {
	Repo     *gitstore.Repo
	Registry *registry.Registry // over Repo
	OpsRuns  string             // <repo>/ops/runs
	RunID    string

	// A new run.
	Queue           *runspec.Queue
	QueueBytes      []byte
	QueueSource     string // where the queue was read (for messages)
	RunPolicy       *runspec.Policy
	RunPolicyBytes  []byte
	RunPolicySource string
	StackPolicy     *stack.Policy // nil: the built-in stack policy
	Base            string        // full commit SHA the first wave reads
	RegistryCommit  string        // full commit SHA the grant inputs are read at
	Target          string        // the ref promotion moves (refs/heads/...)
	Promote         bool
	Seed            string
	MaxConcurrency  int // lowers the policy's (0: as the policy says)
	Environment     runspec.Environment

	// Every session.
	Sandbox     *sandbox.Sandbox // bubblewrap, or NewUnconfined
	SandboxInfo runspec.SandboxInfo
	DomeBinary  string              // bound at /run/dome/bin/dome (the running dome)
	Tools       string              // a folder bound read-only at /run/dome/tools ("": none)
	Key         *signing.PrivateKey // signs the session's grants (nil: a new key per session)
	ApprovedBy  string              // the person approving promotion where the policy wants one
	ValidateEnv []string            // the environment of the stack policy's validation commands
	Now         func() time.Time
	Random      io.Reader // jtis and session keys (nil: crypto/rand)
	Producer    string    // the coordinator's name in artifacts (default dome run)
	Dispatcher  Dispatcher
	// GrantStore keeps the spent and revoked grants (nil: the file store
	// under the run). A PostgreSQL store (pkg/grant/grantpg) is shared by
	// several coordinators. The session closes it.
	GrantStore grant.Store
	Progress   func(Progress) // told what happens (the CLI prints it)
	// PollInterval is how often the cancel request and the budgets are
	// looked at while attempts run (default 200 ms).
	PollInterval time.Duration
}

// Progress is one thing that happened, for people watching.
type Progress struct {
	Kind            string `json:"kind"` // dispatched, running, completed, integrated, wave, validated, stopped, resumed
	WaveID          string `json:"wave_id,omitempty"`
	TaskID          string `json:"task_id,omitempty"`
	NodeID          string `json:"node_id,omitempty"`
	NodeExecutionID string `json:"node_execution_id,omitempty"` // "running": the attempt's, for its task.progress event
	Attempt         int    `json:"attempt,omitempty"`
	Detail          string `json:"detail,omitempty"`
}

// Outcome is how Start ended.
type Outcome struct {
	RunID   string         `json:"run_id"`
	Resumed bool           `json:"resumed"`
	Stop    StoppedPayload `json:"stopped"`
	State   *State         `json:"-"`
}

// coordinator is one session of a run.
type coordinator struct {
	cfg      Config
	l        stack.Layout
	read     []ledger.Event // the run's events startedBefore read, for openLedger
	run      *stack.Run
	sr       *gateway.StackRun
	gw       *gateway.Gateway
	store    grant.Store
	meter    *grant.Meter
	verifier *grant.Verifier
	key      signing.PrivateKey
	inputs   *GrantInputs
	derived  map[string]*grant.Derivation
	q        *runspec.Queue
	rp       *runspec.Policy
	sp       *stack.Policy
	started  StartedPayload
	rep      *replayer
	eng      *workflow.Engine
	folded   int // events folded into rep.v
	disp     Dispatcher
	spawns   spawn.Validator
	tmp      string
	removed  string   // earlier sessions' work folders, removed (space-separated)
	leftDirs []string // earlier sessions' work folders not removed yet: tried again at the end

	running  map[string]*attempt // by node execution id
	results  chan attemptResult
	progress chan Progress
	flooded  chan string
	halting  string // the run is halting for this reason
	stopWith *StoppedPayload
}

// attempt is one running attempt.
type attempt struct {
	a        gateway.Attempt
	attempt  int
	cancel   context.CancelFunc
	mu       sync.Mutex
	killedAs string // why the coordinator killed it (endgame_lost, call_flood, halted)
	grant    *GrantRef
	task     *runspec.Task
}

func (a *attempt) kill(reason string) {
	a.mu.Lock()
	if a.killedAs == "" {
		a.killedAs = reason
	}
	a.mu.Unlock()
	a.cancel()
}

func (a *attempt) killed() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.killedAs
}

type attemptResult struct {
	execID string
	res    Result
}

// Start runs (or resumes) the run cfg.RunID until it stops: its
// constraints met, a node failed for good, a budget spent, a human gate,
// or cancelled. An error is a run that could not go on (its inputs, its
// ledger, the machine); the ledger holds everything done so far, and
// starting again resumes.
func Start(ctx context.Context, cfg Config) (*Outcome, error) {
	if cfg.Repo == nil || cfg.Registry == nil || cfg.Now == nil || cfg.Sandbox == nil {
		return nil, errors.New("orchestrate: a repository, a registry, a clock and a sandbox are required")
	}
	if cfg.Random == nil {
		cfg.Random = rand.Reader
	}
	if cfg.Producer == "" {
		cfg.Producer = "dome run"
	}
	if cfg.PollInterval <= 0 {
		cfg.PollInterval = 200 * time.Millisecond
	}
	c := &coordinator{cfg: cfg, l: stack.NewLayout(cfg.OpsRuns, cfg.RunID), running: map[string]*attempt{},
		results: make(chan attemptResult, 64), progress: make(chan Progress, 64), flooded: make(chan string, 16)}
	if err := ledger.CheckRunID(cfg.RunID); err != nil {
		return nil, &errkind.InputError{Source: "--run", Field: cfg.RunID, Problem: err.Error()}
	}
	var err error
	resumed, read := startedBefore(c.l)
	if resumed {
		c.read = read
		err = c.open()
	} else {
		err = c.create()
	}
	if err != nil {
		return nil, err
	}
	defer c.close()
	out := &Outcome{RunID: cfg.RunID, Resumed: resumed}
	if c.rep.v.st.Stopped != nil {
		// A session killed after the run stopped (while it cleaned up)
		// left its work folder: this session makes none, so it clears
		// what work_dir names now.
		c.sweepWorkDirs()
	}
	if st := c.rep.v.st.Stopped; st != nil && st.Reason == StopHumanGate && cfg.ApprovedBy != "" {
		// Stopped at the human gate, and now approved: promote.
		stop, err := c.approve()
		if err != nil {
			c.writeState()
			return nil, err
		}
		s := c.state()
		out.Stop, out.State = *stop, &s
		return out, nil
	}
	if st := c.rep.v.st.Stopped; st != nil {
		// Stopped before: nothing to do but make its state file current.
		if err := c.writeState(); err != nil {
			return nil, err
		}
		s := c.state()
		out.Stop, out.State = *st, &s
		return out, nil
	}
	if err := c.session(resumed); err != nil {
		return nil, err
	}
	stop, err := c.loop(ctx)
	if err != nil {
		c.killAll(ReasonHalted)
		c.drain()
		c.writeState()
		return nil, err
	}
	s := c.state()
	out.Stop, out.State = stop, &s
	return out, nil
}

// openRun opens the stack's run for writing, reading only the events
// appended since startedBefore read them (the run is read once).
func (c *coordinator) openRun() (*stack.Run, error) {
	read := c.read
	c.read = nil
	if len(read) > 0 {
		if st, err := stack.Fold(c.l.RunID, read); err == nil {
			return stack.OpenRunAfter(c.l, st, read)
		}
	}
	return stack.OpenRun(c.l, false)
}

// startedBefore reports whether the run has recorded run.started, with the
// events it read. A run whose coordinator died before that is started
// again by create, whose steps repeat safely.
func startedBefore(l stack.Layout) (bool, []ledger.Event) {
	if _, err := os.Stat(l.EventsDir()); err != nil {
		return false, nil
	}
	evs, err := ledger.Read(l.Root, l.RunID)
	if err != nil {
		return true, nil // open reports it
	}
	for _, e := range evs {
		if e.Topic == TopicStarted {
			return true, evs
		}
	}
	return len(evs) > 0 && !isInitOnly(evs), evs
}

// isInitOnly reports whether a ledger holds nothing but a stack's
// initialization (a wave run that stopped before run.started).
func isInitOnly(evs []ledger.Event) bool {
	return len(evs) == 1 && evs[0].Topic == stack.TopicInitialized
}

// create starts a new run: its folder, the queue and policy it pins, the
// stack's run, the manifest and run.started.
func (c *coordinator) create() error {
	cfg := &c.cfg
	if cfg.Queue == nil || cfg.RunPolicy == nil || !stack.IsFullSHA(cfg.Base) || !stack.IsFullSHA(cfg.RegistryCommit) {
		return &errkind.InputError{Source: "--run", Field: cfg.RunID, Problem: "the run has not started: a new run needs a work queue, a base and a registry commit",
			Hint: "dome run start QUEUE (also for a run whose coordinator stopped before it started)"}
	}
	c.q, c.rp, c.sp = cfg.Queue, cfg.RunPolicy, cfg.StackPolicy
	if c.sp == nil {
		c.sp = stack.DefaultPolicy()
	}
	if err := c.loadInputs(); err != nil {
		return err
	}
	if err := os.MkdirAll(c.l.Root, 0o755); err != nil {
		return err
	}
	for _, f := range []struct {
		name string
		data []byte
	}{{runspec.QueueFile, cfg.QueueBytes}, {RunPolicyFile, cfg.RunPolicyBytes}} {
		p := filepath.Join(c.l.Root, f.name)
		if old, err := readlimit.ReadFile(p, runspec.MaxQueueBytes); err == nil && !bytes.Equal(old, f.data) {
			return &errkind.InputError{Source: p, Problem: "the run folder holds another " + f.name, Hint: "choose another run id (--run)"}
		}
		if err := ledger.WriteFileDurable(p, f.data); err != nil {
			return err
		}
	}
	if _, err := stack.Init(cfg.Repo, c.l, stack.InitOptions{Base: cfg.Base, TargetRef: cfg.Target, DeterminismSeed: cfg.Seed, Policy: c.sp,
		CreatedAt: cfg.Now(), Producer: cfg.Producer}); err != nil {
		return err
	}
	if err := c.openLedger(); err != nil {
		return err
	}
	mdoc, err := c.manifest()
	if err != nil {
		return err
	}
	if _, _, err := c.run.WriteArtifact(filepath.Join(c.l.Root, runspec.ManifestFile), mdoc); err != nil {
		return err
	}
	if err := c.makeWorkDir(); err != nil {
		return err
	}
	c.started = StartedPayload{WorkDir: c.tmp, ManifestDigest: canonical.Digest(mdoc), QueueDigest: c.q.Digest(), RunPolicyDigest: c.rp.Digest(),
		StackPolicyDigest: c.sp.Digest(), BaseRef: cfg.Base, RegistryCommit: cfg.RegistryCommit, TargetRef: cfg.Target, Promote: cfg.Promote,
		Seed: c.run.State.DeterminismSeed, MaxConcurrency: cfg.MaxConcurrency, Sandbox: cfg.SandboxInfo, Dispatcher: c.dispatcherName()}
	if err := c.newKey(); err != nil {
		return err
	}
	c.started.Coordinator = c.keyRef()
	c.rep = newReplayer(c.q, c.rp, cfg.RunID)
	if err := c.replayAll(); err != nil {
		return err
	}
	if err := c.record(TopicStarted, c.started); err != nil {
		return err
	}
	if err := c.rep.start(c.started, cfg.RunID); err != nil {
		return err
	}
	c.eng = c.rep.eng
	return nil
}

// open resumes a run from its folder: the pinned queue and policies, the
// manifest's registry commit, and every event replayed.
func (c *coordinator) open() error {
	q, rp, err := LoadRunFiles(c.l)
	if err != nil {
		return err
	}
	c.q, c.rp = q, rp
	if c.cfg.Queue != nil && c.cfg.Queue.Digest() != q.Digest() {
		return &errkind.InputError{Source: "QUEUE", Problem: fmt.Sprintf("run %s exists with another work queue (%s)", c.cfg.RunID, q.Digest()),
			Hint: "resume it without a queue (dome run start --run " + c.cfg.RunID + "), or choose another run id"}
	}
	if err := c.openLedger(); err != nil {
		return err
	}
	c.rep = newReplayer(q, rp, c.cfg.RunID)
	if err := c.replayAll(); err != nil {
		return err
	}
	st := c.rep.v.st.Started
	if st == nil {
		return &errkind.InputError{Source: c.l.Root, Problem: "the run's ledger has no " + TopicStarted + " event: it is a stack run, not a wave run",
			Hint: "see it with dome stack status --run " + c.cfg.RunID + ", or start a wave run under another id"}
	}
	if st.QueueDigest != q.Digest() || st.RunPolicyDigest != rp.Digest() {
		return &errkind.CheckError{Problem: fmt.Sprintf("run %s: %s or %s changed since the run started", c.cfg.RunID, runspec.QueueFile, RunPolicyFile)}
	}
	c.started = *st
	c.eng = c.rep.eng
	if sp, err := stack.PinnedPolicy(c.l, &c.run.State); err == nil {
		c.sp = sp
	} else {
		return err
	}
	c.cfg.RegistryCommit = st.RegistryCommit
	return c.loadInputs()
}

func (c *coordinator) loadInputs() error {
	commit, ok := gitstore.ParseHash(c.cfg.RegistryCommit)
	if !ok {
		return &errkind.InputError{Source: "--registry", Field: c.cfg.RegistryCommit, Problem: "not a full commit SHA"}
	}
	in, err := LoadGrantInputs(context.Background(), c.cfg.Registry, commit, c.q)
	if err != nil {
		return err
	}
	c.inputs = in
	src := c.cfg.QueueSource
	if src == "" {
		src = runspec.QueueFile
	}
	c.derived, err = in.DeriveAll(src, c.q)
	return err
}

func (c *coordinator) openLedger() error {
	r, err := c.openRun()
	if err != nil {
		return err
	}
	r.DeferState()
	c.run = r
	c.sr = gateway.NewStackRun(c.cfg.Repo, r, stack.SubmitOptions{Policy: c.sp})
	return nil
}

// replayAll folds the ledger into a fresh engine and view.
func (c *coordinator) replayAll() error {
	evs := c.run.Events()
	for _, e := range evs {
		if err := c.rep.apply(e); err != nil {
			return fmt.Errorf("run %s: the ledger does not replay: %w", c.cfg.RunID, err)
		}
	}
	c.folded = len(evs)
	return nil
}

// catchUp folds the events recorded since the last fold into the view
// (the engine is driven directly while the run goes on).
func (c *coordinator) catchUp() error {
	var evs []ledger.Event
	c.sr.Do(func(r *stack.Run) error {
		all := r.Events()
		evs = append(evs, all[c.folded:]...)
		return nil
	})
	for _, e := range evs {
		if err := c.rep.v.fold(e); err != nil {
			return fmt.Errorf("run %s: event %d (%s): %w", c.cfg.RunID, e.Sequence, e.Topic, err)
		}
	}
	c.folded += len(evs)
	return nil
}

func (c *coordinator) dispatcherName() string {
	if c.cfg.Dispatcher != nil {
		return c.cfg.Dispatcher.Name()
	}
	return "local"
}

func (c *coordinator) newKey() error {
	if c.cfg.Key != nil {
		c.key = *c.cfg.Key
		return nil
	}
	var id [6]byte
	if _, err := io.ReadFull(c.cfg.Random, id[:]); err != nil {
		return err
	}
	k, err := signing.GenerateKey("coordinator-"+c.cfg.RunID+"-"+fmt.Sprintf("%x", id), c.cfg.Random)
	if err != nil {
		return err
	}
	c.key = k
	return nil
}

func (c *coordinator) keyRef() KeyRef {
	return KeyRef{KID: c.key.KID, PublicKey: "base64:" + base64.StdEncoding.EncodeToString(c.key.Public().Key)}
}

// manifest seals the run manifest.
func (c *coordinator) manifest() ([]byte, error) {
	cfg := &c.cfg
	pols := append([]runspec.PinnedFile{{Path: runspec.PolicyPath, Digest: c.rp.Digest(), Source: pinSource(cfg.RunPolicySource)},
		{Path: "policy/stack_policy.json", Digest: c.sp.Digest(), Source: "file"}}, c.inputs.Files...)
	m := runspec.Manifest{RunID: cfg.RunID, BaseCommit: cfg.Base, RegistryCommit: cfg.RegistryCommit, QueueDigest: c.q.Digest(),
		Policies: pols, DeterminismSeed: c.run.State.DeterminismSeed, Environment: cfg.Environment}
	m.Environment.Sandbox = cfg.SandboxInfo
	for _, id := range sortedKeys(c.inputs.Cards) {
		k := c.inputs.Cards[id]
		m.Cards = append(m.Cards, runspec.PinnedCard{CardID: id, Kind: "runtime", Commit: cfg.RegistryCommit, Path: k.Path, Digest: k.Digest})
	}
	return m.Seal(cfg.Now(), cfg.Producer)
}

// pinSource is a manifest's source of a policy: built-in, git:<commit> or
// file.
func pinSource(s string) string {
	switch {
	case s == "" || s == "built-in":
		return "built-in"
	case strings.HasPrefix(s, "git:"):
		return s
	}
	return "file"
}

// session opens what a session needs: the grant store and verifier, the
// gateway (its deduplication restored from the ledger), the dispatcher,
// then recovers what the last session left: decisions not yet recorded,
// attempts lost with it, results not yet acknowledged.
func (c *coordinator) session(resumed bool) error {
	var err error
	if c.cfg.GrantStore != nil {
		c.store = c.cfg.GrantStore
	} else if c.store, err = grantfile.Open(filepath.Join(c.l.Root, "grants")); err != nil {
		return err
	}
	if resumed {
		if err := c.newKey(); err != nil {
			return err
		}
	}
	trusted, err := signing.NewTrustedKeys(c.key.Public())
	if err != nil {
		return err
	}
	c.meter = grant.NewMeter()
	if c.verifier, err = grant.NewVerifier(trusted, grant.Options{Store: c.store, Meter: c.meter, CacheSize: 4096}); err != nil {
		return err
	}
	if c.gw, err = gateway.New(gateway.Config{Repo: c.cfg.Repo, Run: c.sr, Verifier: c.verifier, Meter: c.meter, Now: c.cfg.Now, Key: &c.key}); err != nil {
		return err
	}
	for _, e := range c.run.Events() {
		if err := c.gw.Restore(e); err != nil {
			return err
		}
	}
	if err := c.makeWorkDir(); err != nil {
		return err
	}
	c.disp = c.cfg.Dispatcher
	if c.disp == nil {
		dome := c.cfg.DomeBinary
		if dome != "" && !c.cfg.Sandbox.Unconfined() {
			if dome, err = CopyBinary(dome, filepath.Join(c.tmp, "dome")); err != nil {
				return fmt.Errorf("the dome binary for the workers: %w", err)
			}
		}
		binds, err := DomeBinds(dome, c.cfg.Tools, c.cfg.Sandbox.Unconfined(), c.tmp)
		if err != nil {
			return &errkind.InputError{Source: "--tools", Problem: err.Error()}
		}
		for _, b := range binds {
			if err := c.cfg.Sandbox.CheckBind(b.Src); err != nil {
				return &errkind.InputError{Source: "--tools", Problem: err.Error(), Hint: "the sandbox's user must read the workers' tools: keep them in a folder others may enter"}
			}
		}
		c.disp = &Local{Repo: c.cfg.Repo, Gateway: c.gw, Sandbox: c.cfg.Sandbox, Binds: binds, ScratchParent: c.tmp,
			OnFlood: func(id string) {
				select {
				case c.flooded <- id:
				default:
				}
			}}
	}
	if b, ok := c.disp.(Binder); ok {
		if err := b.Bind(c.dispatchEnv()); err != nil {
			return err
		}
	}
	if resumed {
		return c.recover()
	}
	return nil
}

// dispatchEnv is what a dispatcher that runs attempts elsewhere gets.
func (c *coordinator) dispatchEnv() DispatchEnv {
	var ttl int64
	for _, d := range c.derived {
		if d != nil && d.TTLSeconds > ttl {
			ttl = d.TTLSeconds
		}
	}
	return DispatchEnv{RunID: c.cfg.RunID, Repo: c.cfg.Repo, Gateway: c.gw, Key: c.key, Now: c.cfg.Now, MaxTTL: time.Duration(ttl) * time.Second, WorkDir: c.tmp,
		Record: func(topic string, payload any) error { return c.sr.Record(topic, c.cfg.Now(), payload) },
		Events: c.events,
		Revoke: func(jti string, until time.Time, reason string) {
			// A verifier accepts a grant up to its clock skew past its
			// expiry: the revocation outlives that.
			until = until.Add(grant.MaxClockSkewSeconds * time.Second)
			now := c.cfg.Now()
			if until.After(now) {
				c.store.Revoke(context.Background(), grant.Revocation{Issuer: "dome-run:" + c.cfg.RunID, Kind: grant.RevokeJTI, Value: jti,
					Reason: reason, Until: until, RevokedAt: now})
			}
		},
		OnFlood: func(id string) {
			select {
			case c.flooded <- id:
			default:
			}
		}}
}

// makeWorkDir makes the session's folder: the local dispatcher's scratch
// folders, the workers' dome and their sockets, the validation checkouts,
// a remote dispatcher's files. Its path is
// written to the run folder's work_dir before the folder is made, so
// that the next session removes what a coordinator killed with -9 left
// there (the run's writer lock is held: no other session of the run
// uses it). A folder that cannot be removed yet (a killed session's
// sandbox still dying) stays named in work_dir beside the new one, so
// that a later session removes it.
func (c *coordinator) makeWorkDir() error {
	if c.tmp != "" {
		return nil
	}
	removed, left := c.removeLastWorkDirs()
	c.removed, c.leftDirs = strings.Join(removed, " "), left
	for i := 0; ; i++ {
		var b [8]byte
		if _, err := rand.Read(b[:]); err != nil {
			return err
		}
		dir := filepath.Join(scratchParent(), workDirPrefix(c.cfg.RunID)+hex.EncodeToString(b[:]))
		if err := ledger.WriteFileDurable(filepath.Join(c.l.Root, WorkDirFile), []byte(strings.Join(append(left, dir), "\n")+"\n")); err != nil {
			return err
		}
		err := os.Mkdir(dir, 0o755)
		if err == nil {
			c.tmp = dir
			return os.Chmod(dir, 0o755)
		}
		if !errors.Is(err, fs.ErrExist) || i == 3 {
			return err
		}
	}
}

// WorkDirFile names, in a run's folder, the work folders of its last
// session and any earlier one not removed yet, one per line.
const WorkDirFile = "work_dir"

func workDirPrefix(runID string) string { return "dome-run-" + runID + "-" }

// maxWorkDirs bounds the folders work_dir names.
const maxWorkDirs = 64

// removeLastWorkDirs removes the folders earlier sessions made, each when
// it is named as a session's folder of this run; it returns those removed
// and those still there. Removal is tried a few times: the sandboxes of a
// session killed with -9 die with it, but not at once.
func (c *coordinator) removeLastWorkDirs() (removed, left []string) {
	b, err := readlimit.ReadFile(filepath.Join(c.l.Root, WorkDirFile), maxWorkDirs*4096)
	if err != nil {
		return nil, nil
	}
	for _, old := range strings.Split(string(b), "\n") {
		old = strings.TrimSpace(old)
		if !filepath.IsAbs(old) || filepath.Clean(old) != old || !strings.HasPrefix(filepath.Base(old), workDirPrefix(c.cfg.RunID)) {
			continue
		}
		if fi, err := os.Lstat(old); err != nil || !fi.IsDir() {
			continue
		}
		gone := false
		for try := 0; try < 5 && !gone; try++ {
			if try > 0 {
				time.Sleep(time.Duration(try) * 100 * time.Millisecond)
			}
			gone = sandbox.RemoveAll(old) == nil
		}
		if gone {
			removed = append(removed, old)
		} else if len(left) < maxWorkDirs-1 {
			left = append(left, old)
		}
	}
	return removed, left
}

// sweepWorkDirs removes the folders earlier sessions made, for a session
// that makes none itself; work_dir keeps naming those it could not remove.
func (c *coordinator) sweepWorkDirs() {
	if c.tmp != "" {
		return
	}
	removed, left := c.removeLastWorkDirs()
	if len(removed) == 0 {
		return
	}
	p := filepath.Join(c.l.Root, WorkDirFile)
	if len(left) == 0 {
		os.Remove(p)
		return
	}
	ledger.WriteFileDurable(p, []byte(strings.Join(left, "\n")+"\n"))
}

func scratchParent() string {
	if os.Geteuid() == 0 {
		return "/tmp" // reachable by the sandbox user
	}
	return os.TempDir()
}

// CopyBinary gives the workers their own copy of dome where the sandbox
// user can read it (a hard link when the file system allows).
func CopyBinary(src, dst string) (string, error) {
	os.Remove(dst)
	if err := os.Link(src, dst); err != nil {
		in, err := os.Open(src)
		if err != nil {
			return "", err
		}
		defer in.Close()
		out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
		if err != nil {
			return "", err
		}
		if _, err := io.Copy(out, in); err != nil {
			out.Close()
			return "", err
		}
		if err := out.Close(); err != nil {
			return "", err
		}
	}
	if fi, err := os.Stat(dst); err == nil && fi.Mode().Perm()&0o005 != 0o005 {
		// a hard link shares the mode: the original must be readable by others
		os.Remove(dst)
		return copyFile(src, dst)
	}
	return dst, nil
}

func copyFile(src, dst string) (string, error) {
	in, err := os.Open(src)
	if err != nil {
		return "", err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	if err != nil {
		return "", err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return "", err
	}
	return dst, out.Close()
}

func (c *coordinator) close() {
	if c.disp != nil {
		c.disp.Close()
	}
	if c.store != nil {
		c.store.Close()
	}
	// The work folder before the run's writer lock goes: a session that
	// starts next must not find it half removed. One that cannot be
	// removed stays named in work_dir for the next session.
	for _, d := range append(c.leftDirs, c.tmp) {
		if d != "" {
			sandbox.RemoveAll(d)
		}
	}
	if c.run != nil {
		c.run.Close()
	}
}

// record appends an event to the run's ledger and folds it into the view.
func (c *coordinator) record(topic string, payload any) error {
	if err := c.sr.Record(topic, c.cfg.Now(), payload); err != nil {
		return err
	}
	return c.catchUp()
}

// state returns the run's state as it stands.
func (c *coordinator) state() State { return c.rep.v.finish(c.eng) }

// writeState writes run.state.json and the stack's state.json.
func (c *coordinator) writeState() error {
	if err := c.catchUp(); err != nil {
		return err
	}
	st := c.state()
	b, err := st.Marshal()
	if err != nil {
		return err
	}
	if err := ledger.WriteFileDurable(filepath.Join(c.l.Root, StateFile), b); err != nil {
		return err
	}
	return c.sr.Do(func(r *stack.Run) error { return r.FlushState() })
}

func (c *coordinator) tell(p Progress) {
	if c.cfg.Progress != nil {
		c.cfg.Progress(p)
	}
}
