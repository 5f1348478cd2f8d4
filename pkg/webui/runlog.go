package webui

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"github.com/dome-registry/dome/pkg/ledger"
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

// runLog is one run's events and the state at the last of them.
type runLog struct {
	mu      sync.Mutex
	layout  stack.Layout
	events  []ledger.Event
	state   stack.State
	foldErr error // the first event that did not fold; folding stops there
	readErr error // the last refresh's read error
	read    time.Time
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
	if _, err := os.Stat(rl.layout.EventsDir()); err != nil {
		return &inputError{Detail: fmt.Sprintf("No run %q in the runs folder.", rl.layout.RunID), Hint: "runs are folders with an events/ ledger under the runs folder (dome serve --ops DIR)"}
	}
	evs, err := ledger.ReadFrom(rl.layout.Root, rl.layout.RunID, int64(len(rl.events)))
	rl.readErr = err
	rl.read = time.Now()
	if err != nil {
		return err
	}
	for _, e := range evs {
		rl.events = append(rl.events, e)
		if rl.foldErr == nil {
			if err := rl.state.Apply(e); err != nil {
				rl.foldErr = err
			}
		}
	}
	return nil
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
	Kind     string
	Status   string
}
