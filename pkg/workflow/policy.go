package workflow

import (
	"fmt"
	"sort"
)

// Strategy is what happens when a node fails for good (its attempts spent).
type Strategy string

// Failure strategies.
const (
	// FailFast stops on the first failure: running attempts are cancelled
	// and nothing else starts.
	FailFast Strategy = "fail_fast"
	// ContinueOnError skips what depends on the failed node and runs the
	// rest; the failures are aggregated in the Summary.
	ContinueOnError Strategy = "continue_on_error"
	// Rollback stops as FailFast does, then runs the compensating step of
	// every completed compensable node, last completed first.
	Rollback Strategy = "rollback"
)

// Weights combine the priority components (each in permille) into one
// priority: critical*Critical + blocking*Blocking + rarity*Rarity +
// confidence*Confidence - risk*Risk.
type Weights struct {
	Critical   int `json:"critical"`
	Blocking   int `json:"blocking"`
	Rarity     int `json:"rarity"`
	Confidence int `json:"confidence"`
	Risk       int `json:"risk"`
}

// DefaultWeights favour the critical path, then what unblocks the most,
// then scarce capacity, then confidence; risk counts against.
var defaultWeights = Weights{Critical: 4, Blocking: 3, Rarity: 2, Confidence: 1, Risk: 2}

// DefaultWeights returns the weights used when a policy sets none.
func DefaultWeights() Weights { return defaultWeights }

// Endgame sets the endgame mode: once at most Remaining nodes are
// unfinished and nothing else is ready, the nodes still running get up to
// MaxDuplicates extra attempts each (within the concurrency limit); the
// first passing attempt is accepted and the others are cancelled.
type Endgame struct {
	Remaining     int `json:"remaining"`      // 0 turns endgame off
	MaxDuplicates int `json:"max_duplicates"` // extra attempts per node at once
}

// Policy is how the engine schedules.
type Policy struct {
	MaxConcurrency int            `json:"max_concurrency"` // attempts running at once, >= 1
	Capacity       map[string]int `json:"capacity"`        // scarce key -> attempts holding it at once, >= 1
	Weights        Weights        `json:"weights"`
	MaxAttempts    int            `json:"max_attempts"` // failed attempts before a node fails, >= 1
	Strategy       Strategy       `json:"strategy"`
	Endgame        Endgame        `json:"endgame"`
	// WaveBarrier holds a node that a success makes ready until the next
	// wave: Next dispatches it only once it is called with another wave id
	// than the one current when the node became ready. A coordinator whose
	// waves share one base (dome run: workers of a wave read the same
	// commit, and a node must see what its dependencies changed) sets it;
	// retries after a failure are not held.
	WaveBarrier bool `json:"wave_barrier,omitempty"`
}

// DefaultPolicy runs 4 attempts at once, one attempt per node, continuing
// past failures, with the default weights and no endgame.
func DefaultPolicy() Policy {
	return Policy{MaxConcurrency: 4, Weights: defaultWeights, MaxAttempts: 1, Strategy: ContinueOnError}
}

// Limits on policy values, so that a hostile policy cannot make the engine
// loop or overflow a score.
const (
	MaxConcurrencyLimit = 100000
	MaxAttemptsLimit    = 100
	MaxWeight           = 1000
	MaxDuplicatesLimit  = 16
)

// PolicyError names the policy field that is wrong.
type PolicyError struct {
	Field, Problem string
}

func (e *PolicyError) Error() string { return e.Field + ": " + e.Problem }

// Validate checks the policy's ranges.
func (p Policy) Validate() error {
	if p.MaxConcurrency < 1 || p.MaxConcurrency > MaxConcurrencyLimit {
		return &PolicyError{"max_concurrency", fmt.Sprintf("%d is not within 1..%d", p.MaxConcurrency, MaxConcurrencyLimit)}
	}
	if p.MaxAttempts < 1 || p.MaxAttempts > MaxAttemptsLimit {
		return &PolicyError{"max_attempts", fmt.Sprintf("%d is not within 1..%d", p.MaxAttempts, MaxAttemptsLimit)}
	}
	switch p.Strategy {
	case FailFast, ContinueOnError, Rollback:
	default:
		return &PolicyError{"strategy", fmt.Sprintf("%q: want fail_fast, continue_on_error or rollback", p.Strategy)}
	}
	for _, w := range []struct {
		name string
		v    int
	}{{"critical", p.Weights.Critical}, {"blocking", p.Weights.Blocking}, {"rarity", p.Weights.Rarity},
		{"confidence", p.Weights.Confidence}, {"risk", p.Weights.Risk}} {
		if w.v < 0 || w.v > MaxWeight {
			return &PolicyError{"weights." + w.name, fmt.Sprintf("%d is not within 0..%d", w.v, MaxWeight)}
		}
	}
	if p.Endgame.Remaining < 0 {
		return &PolicyError{"endgame.remaining", fmt.Sprintf("%d is negative", p.Endgame.Remaining)}
	}
	if p.Endgame.MaxDuplicates < 0 || p.Endgame.MaxDuplicates > MaxDuplicatesLimit {
		return &PolicyError{"endgame.max_duplicates", fmt.Sprintf("%d is not within 0..%d", p.Endgame.MaxDuplicates, MaxDuplicatesLimit)}
	}
	keys := make([]string, 0, len(p.Capacity))
	for k := range p.Capacity {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if c := p.Capacity[k]; c < 1 || c > MaxConcurrencyLimit {
			return &PolicyError{"capacity." + k, fmt.Sprintf("%d is not within 1..%d", c, MaxConcurrencyLimit)}
		}
	}
	return nil
}
