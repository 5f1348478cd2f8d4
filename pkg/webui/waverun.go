package webui

import (
	"net/url"
	"slices"
	"sort"
	"strconv"

	"github.com/dome-registry/dome/pkg/ledger"
	"github.com/dome-registry/dome/pkg/orchestrate"
	"github.com/dome-registry/dome/pkg/stack"
	"github.com/dome-registry/dome/pkg/workflow"
)

// WaveRun is a wave run's own part of a RunView (dome run start): the
// coordinator's state at the view's sequence, as Replay folds it from the
// ledger with every scheduling decision re-derived (the run.state.json
// dome run status --json prints), and what the pages draw from it.
type WaveRun struct {
	State *orchestrate.State `json:"state"`
	// Error: the pinned queue or run policy does not load, or an event does
	// not fold (the state is then the one before it).
	Error string `json:"error,omitempty"`
	// Unrecorded are decisions the engine derives that the ledger does not
	// hold yet (the coordinator is recording them).
	Unrecorded int `json:"unrecorded_decisions"`

	Nodes    []WaveNodeRow          `json:"-"` // in queue order
	Attempts []orchestrate.TaskView `json:"-"` // in the order they were dispatched
	Waves    []WaveRow              `json:"-"`
}

// WaveNodeRow is one node on the run page.
type WaveNodeRow struct {
	orchestrate.NodeView
	Level int    // its wave in the graph (1-based; 0: not in the graph)
	Group string // priority group
	Last  *orchestrate.TaskView
	URL   string // its page
	Class string // statusClass of its status
	// LastText is the last attempt's id and outcome; Calls its gateway
	// calls and Refused the refused ones.
	LastText string
	Calls    string
	Refused  int
}

// WaveRow is one wave with its plans and its integration.
type WaveRow struct {
	orchestrate.WaveView
	Started     int64 // the sequence of the event that opened it
	Plans       []wavePlan
	Integration *waveIntegration
}

// wavePlan is a stack.plan.computed event.
type wavePlan struct {
	Sequence int64
	Plan     stack.PlanComputedPayload
}

// waveIntegration is a run.integrated event.
type waveIntegration struct {
	Sequence int64
	orchestrate.IntegratedPayload
}

// addWave fills v's wave-run part from rl (whose lock the caller holds):
// the follower's state at the latest event, or a fold of evs otherwise.
func (h *Handler) addWave(v *RunView, rl *runLog, evs []ledger.Event, latest bool) {
	w := &WaveRun{}
	v.Wave, v.Kind = w, kindWave
	if rl.waveErr != nil {
		w.Error = rl.waveErr.Error()
		if v.Ended = rl.stoppedAt > 0 && rl.stoppedAt <= v.Sequence; v.Ended {
			v.EndReason = "stopped"
		}
		return
	}
	var st orchestrate.State
	var err error
	if latest {
		st, err, w.Unrecorded = rl.wave.State(), rl.wave.Err(), rl.wave.Unrecorded()
	} else {
		f := orchestrate.NewFollower(rl.queue, rl.policy, v.RunID)
		for _, e := range evs {
			if f.Apply(e) != nil {
				break
			}
		}
		st, err, w.Unrecorded = f.State(), f.Err(), f.Unrecorded()
	}
	w.State = &st
	if err != nil {
		w.Error = err.Error()
	}
	// A wave run has ended when it stopped (its promotion, if any, came
	// before), even if its ledger does not fold that far.
	v.Ended, v.EndReason = false, ""
	if s := st.Stopped; s != nil {
		v.Ended, v.EndReason = true, "stopped: "+s.Reason
	} else if rl.stoppedAt > 0 && rl.stoppedAt <= v.Sequence {
		v.Ended, v.EndReason = true, "stopped (its run.stopped event does not fold)"
	}

	level, group := map[string]int{}, map[string]string{}
	if q := v.Queue; q != nil {
		for i, wave := range q.Waves {
			for _, n := range wave {
				level[n.NodeID], group[n.NodeID] = i+1, n.Group
			}
		}
	}
	w.Attempts = make([]orchestrate.TaskView, 0, len(st.Tasks))
	for _, t := range st.Tasks {
		w.Attempts = append(w.Attempts, t)
	}
	sort.Slice(w.Attempts, func(i, j int) bool {
		a, b := w.Attempts[i], w.Attempts[j]
		if a.Dispatched != b.Dispatched {
			return a.Dispatched < b.Dispatched
		}
		return a.TaskID < b.TaskID
	})
	last := map[string]int{}
	for i, t := range w.Attempts {
		last[t.NodeID] = i
	}
	w.Nodes = make([]WaveNodeRow, 0, len(st.Nodes))
	for _, n := range st.Nodes {
		row := WaveNodeRow{NodeView: n, Level: level[n.NodeID], Group: group[n.NodeID], URL: nodeURL(v.Base, n.NodeID), Class: statusClass(n.Status)}
		if i, ok := last[n.NodeID]; ok {
			t := &w.Attempts[i]
			row.Last, row.Calls, row.Refused = t, strconv.Itoa(t.Calls), t.Refused
			if t.Outcome != "" {
				row.LastText = t.TaskID + " " + t.Outcome + " " + t.Reason
			} else {
				row.LastText = t.TaskID + " " + t.Status
			}
		}
		w.Nodes = append(w.Nodes, row)
	}
	started := map[string]int64{}
	for _, ws := range v.Waves {
		started[ws.WaveID] = ws.Sequence
	}
	for _, wv := range st.Waves {
		row := WaveRow{WaveView: wv, Started: started[wv.WaveID]}
		for _, p := range rl.plans {
			if p.Sequence <= v.Sequence && p.Plan.WaveID == wv.WaveID {
				row.Plans = append(row.Plans, p)
			}
		}
		for i := range rl.integrate {
			if in := rl.integrate[i]; in.Sequence <= v.Sequence && in.WaveID == wv.WaveID {
				row.Integration = &in
			}
		}
		w.Waves = append(w.Waves, row)
	}
}

// statusClass is the graph's class of a node status (a fixed set: the
// class attribute never carries text from the ledger).
func statusClass(s string) string {
	switch workflow.Status(s) {
	case workflow.StatusSucceeded, workflow.StatusIterated:
		return "succeeded"
	case workflow.StatusFailed:
		return "failed"
	case workflow.StatusRunning:
		return "running"
	case workflow.StatusSkipped, workflow.StatusCancelled:
		return "skipped"
	}
	return "pending"
}

// colorGraph returns a copy of the queue's drawing with each box classed
// by its node's status and linked to the node's page.
func colorGraph(d *Drawing, order []string, w *WaveRun, base string) *Drawing {
	if d == nil || w == nil || w.State == nil || len(order) != len(d.Boxes) {
		return d
	}
	status := make(map[string]string, len(w.Nodes))
	for _, n := range w.Nodes {
		status[n.NodeID] = n.Status
	}
	cp := *d
	cp.Boxes = slices.Clone(d.Boxes)
	for i := range cp.Boxes {
		if id := order[i]; id != "" {
			cp.Boxes[i].Class = statusClass(status[id])
			cp.Boxes[i].URL = nodeURL(base, id)
		}
	}
	return &cp
}

// nodeURL is a node's page in the view at base.
func nodeURL(base, node string) string { return base + "nodes/" + url.PathEscape(node) + "/" }

// waveURL is a wave's page in the view at base.
func waveURL(base, wave string) string { return base + "waves/" + url.PathEscape(wave) + "/" }

func itoa64(n int64) string { return strconv.FormatInt(n, 10) }
