package orchestrate

import (
	"maps"
	"slices"

	"github.com/dome-registry/dome/pkg/ledger"
	"github.com/dome-registry/dome/pkg/runspec"
)

// Follower folds a run's events one at a time, as Replay does (every
// recorded decision re-derived by the engine), for a reader that follows
// a ledger while it grows (the web view): State gives the run's state
// after the events applied so far, the same run.state.json Replay derives
// from them. The first event that does not fold stops the fold: Apply
// returns its error and every later call the same one.
type Follower struct {
	r   *replayer
	err error
}

// NewFollower starts the fold of run runID, whose pinned queue and run
// policy are q and rp (LoadRunFiles reads them).
func NewFollower(q *runspec.Queue, rp *runspec.Policy, runID string) *Follower {
	return &Follower{r: newReplayer(q, rp, runID)}
}

// Apply folds the next event.
func (f *Follower) Apply(e ledger.Event) error {
	if f.err != nil {
		return f.err
	}
	f.err = f.r.apply(e)
	return f.err
}

// Err is the error of the event that stopped the fold (nil: none did).
func (f *Follower) Err() error { return f.err }

// State returns the state after the events folded so far: a copy that
// later events leave as it is.
func (f *Follower) State() State {
	st := f.r.v.finish(f.r.eng)
	st.Tasks = maps.Clone(st.Tasks)
	st.Waves = slices.Clone(st.Waves)
	return st
}

// Unrecorded is how many decisions the engine derived after the last event
// folded that the ledger does not hold yet (a coordinator is recording
// them, or stopped while it did).
func (f *Follower) Unrecorded() int { return len(f.r.pending) }
