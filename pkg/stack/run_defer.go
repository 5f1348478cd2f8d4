package stack

import (
	"fmt"

	"github.com/dome-registry/dome/pkg/ledger"
)

// DeferState makes Record append events without rewriting state.json each
// time; FlushState writes it. A command that records one event per layer
// (apply) defers: state.json is a view of the events, so a crash that
// leaves it behind loses nothing (OpenRun rewrites a lagging state.json).
func (r *Run) DeferState() { r.deferState = true }

// FlushState writes state.json if Record skipped it, and ends deferral.
func (r *Run) FlushState() error {
	r.deferState = false
	if !r.stateDirty {
		return nil
	}
	data, err := r.State.Marshal()
	if err != nil {
		return err
	}
	if err := ledger.WriteFileDurable(r.Layout.StatePath(), data); err != nil {
		return fmt.Errorf("write %s: %w", r.Layout.StatePath(), err)
	}
	r.stateDirty = false
	return nil
}
