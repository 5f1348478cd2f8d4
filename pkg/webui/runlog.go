package webui

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/dome-registry/dome/pkg/agent"
	"github.com/dome-registry/dome/pkg/ledger"
	"github.com/dome-registry/dome/pkg/orchestrate"
	"github.com/dome-registry/dome/pkg/readlimit"
	"github.com/dome-registry/dome/pkg/runspec"
	"github.com/dome-registry/dome/pkg/stack"
)

// runCache holds each run's ledger as read so far and the state folded from
// it. The ledger is append-only: an event read once never changes (dome
// stack verify is the audit that re-reads every byte), so a refresh reads
// only the events appended since, and folds only those.
type runCache struct {
	mu   sync.Mutex
	runs map[string]*runLog
}

func newRunCache() *runCache { return &runCache{runs: map[string]*runLog{}} }

// Kinds of run: what folds a run folder's ledger.
const (
	kindStack = "stack" // dome stack: the stack's fold
	kindWave  = "wave"  // dome run start: the stack's fold and the coordinator's (a work queue in the folder)
	kindAgent = "agent" // dome workflow run: the agent run's fold (its first event is agent.run.started)
)

// runLog is one run's events and the state at the last of them.
type runLog struct {
	mu        sync.Mutex
	layout    stack.Layout
	events    []ledger.Event
	kind      string // decided at the first event
	state     stack.State
	foldErr   error     // the first event that did not fold; folding stops there
	readErr   error     // the last refresh's read error
	read      time.Time // when the events folder was last listed
	listedMod time.Time // its modification time then
	// latestView is the view at the last event (see viewAt).
	latestView *RunView

	// A wave run: its pinned queue and run policy, the coordinator's fold,
	// and where each task's events and the plans are in the ledger.
	wave      *orchestrate.Follower
	queue     *runspec.Queue
	policy    *runspec.Policy
	waveErr   error             // the queue or the run policy does not load
	stoppedAt int64             // the sequence of run.stopped (0: not yet)
	byTask    map[string][]int  // task id -> indexes of its task.* and gateway.* events
	plans     []wavePlan        // stack.plan.computed, in order
	integrate []waveIntegration // run.integrated, in order
	// An agent run ends with agent.run.finished.
	finished bool
}

func (c *runCache) get(l stack.Layout) *runLog {
	c.mu.Lock()
	defer c.mu.Unlock()
	rl := c.runs[l.RunID]
	if rl == nil || rl.layout.Root != l.Root {
		rl = &runLog{layout: l, state: stack.NewState(l.RunID)}
		c.runs[l.RunID] = rl
	}
	return rl
}

// refresh reads the events appended since the last call and folds them.
// It holds rl.mu: callers read events and state under the same lock.
func (rl *runLog) refresh() error {
	fi, err := os.Stat(rl.layout.EventsDir())
	if err != nil {
		return &inputError{Detail: fmt.Sprintf("No run %q in the runs folder.", rl.layout.RunID), Hint: "runs are folders with an events/ ledger under the runs folder (dome serve --ops DIR)"}
	}
	// A writer renames each event into the folder, which changes its
	// modification time. When that time is the one seen at the last
	// listing, and was already a second old then (so no later write can
	// share its clock tick), nothing was appended: the folder of a
	// thousand-event run is not listed again on every request.
	now := time.Now()
	if rl.readErr == nil && !rl.listedMod.IsZero() && fi.ModTime().Equal(rl.listedMod) && rl.read.Sub(rl.listedMod) > time.Second {
		return nil
	}
	evs, err := ledger.ReadFrom(rl.layout.Root, rl.layout.RunID, int64(len(rl.events)))
	rl.readErr, rl.read, rl.listedMod = err, now, fi.ModTime()
	if err != nil {
		return err
	}
	if len(evs) > 0 && rl.kind == "" {
		rl.kind = kindOf(rl.layout.Root, evs[0])
		if rl.kind == kindWave {
			rl.queue, rl.policy, rl.waveErr = orchestrate.LoadRunFiles(rl.layout)
			if rl.waveErr == nil {
				rl.wave = orchestrate.NewFollower(rl.queue, rl.policy, rl.layout.RunID)
			}
			rl.byTask = map[string][]int{}
		}
	}
	for _, e := range evs {
		i := len(rl.events)
		rl.events = append(rl.events, e)
		switch rl.kind {
		case kindAgent:
			rl.finished = rl.finished || e.Topic == agent.TopicRunFinished
			continue
		case kindWave:
			rl.index(i, e)
			if rl.wave != nil {
				rl.wave.Apply(e) // its error is the view's to show
			}
			if e.Topic == orchestrate.TopicStopped && rl.stoppedAt == 0 {
				rl.stoppedAt = e.Sequence
			}
		}
		if rl.foldErr == nil {
			if err := rl.state.Apply(e); err != nil {
				rl.foldErr = err
			}
		}
	}
	return nil
}

// kindOf tells a run by its first event and its folder.
func kindOf(root string, first ledger.Event) string {
	if first.Topic == agent.TopicRunStarted {
		return kindAgent
	}
	if _, err := os.Stat(filepath.Join(root, runspec.QueueFile)); err == nil {
		return kindWave
	}
	return kindStack
}

// kindOfFolder tells a run by its folder: its first event's topic, read
// alone (bounded), and whether it has a work queue.
func kindOfFolder(root string) string {
	b, err := readlimit.ReadFile(filepath.Join(root, ledger.EventsDir, ledger.FileName(1)), ledger.MaxEventBytes)
	if err != nil {
		return ""
	}
	var first ledger.Event
	if json.Unmarshal(b, &first) != nil {
		return ""
	}
	return kindOf(root, first)
}

// index notes where a wave run's task and gateway events and its plans are.
func (rl *runLog) index(i int, e ledger.Event) {
	switch {
	case strings.HasPrefix(e.Topic, "task.") || strings.HasPrefix(e.Topic, "gateway."):
		var p struct {
			TaskID string `json:"task_id"`
		}
		if json.Unmarshal(e.Payload, &p) == nil && p.TaskID != "" {
			rl.byTask[p.TaskID] = append(rl.byTask[p.TaskID], i)
		}
	case e.Topic == stack.TopicPlanComputed:
		var p stack.PlanComputedPayload
		if json.Unmarshal(e.Payload, &p) == nil {
			rl.plans = append(rl.plans, wavePlan{Sequence: e.Sequence, Plan: p})
		}
	case e.Topic == orchestrate.TopicIntegrated:
		var p orchestrate.IntegratedPayload
		if json.Unmarshal(e.Payload, &p) == nil {
			rl.integrate = append(rl.integrate, waveIntegration{Sequence: e.Sequence, IntegratedPayload: p})
		}
	}
}

// ended reports whether the run has ended at its last event: a stack run
// promoted, a wave run stopped, an agent run finished.
func (rl *runLog) ended() bool {
	switch rl.kind {
	case kindAgent:
		return rl.finished
	case kindWave:
		return rl.stoppedAt > 0
	}
	return rl.foldErr == nil && rl.state.Promoted != nil
}

// runs lists the runs under dir: folders with an events/ ledger, by name.
func listRuns(dir string) ([]runListRow, error) {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []runListRow
	for _, de := range ents {
		if !de.IsDir() || ledger.CheckRunID(de.Name()) != nil {
			continue
		}
		evDir := filepath.Join(dir, de.Name(), ledger.EventsDir)
		evs, err := os.ReadDir(evDir)
		if err != nil {
			continue
		}
		row := runListRow{RunID: de.Name(), URL: runURL(de.Name())}
		for _, e := range evs {
			if filepath.Ext(e.Name()) == ".json" {
				row.Events++
			}
		}
		row.Kind = kindOfFolder(filepath.Join(dir, de.Name()))
		if fi, err := os.Stat(evDir); err == nil {
			row.Modified = fi.ModTime().UTC().Format("2006-01-02 15:04:05 UTC")
		}
		out = append(out, row)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].RunID < out[j].RunID })
	return out, nil
}

type runListRow struct {
	RunID    string
	URL      string
	Events   int
	Modified string
	Kind     string // stack, wave, agent ("": no first event yet)
}
