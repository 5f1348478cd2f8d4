package agent

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Delegation error codes.
const (
	CodeDelegationDepth    = "DELEGATION_DEPTH_EXCEEDED" // the chain would be deeper than maxDepth
	CodeDelegationCycle    = "DELEGATION_CYCLE"          // the delegate is the agent itself or an ancestor
	CodeDelegateNotAllowed = "DELEGATE_NOT_ALLOWED"      // not among the delegator's allowedDelegates
	CodeDelegateNotFound   = "DELEGATE_NOT_FOUND"        // no such agent
	CodeDelegateDisabled   = "DELEGATE_DISABLED"         // the agent is disabled
	CodeDelegateFailed     = "DELEGATE_FAILED"           // the delegate ran and failed
)

// Chain is the delegation chain of a running agent: the root first, the
// running agent last. It is a value: Delegate returns a longer chain and
// leaves this one as it was.
type Chain struct {
	ids   []string
	limit int // the smallest maxDepth of the agents in the chain
}

// NewChain starts a chain at the root agent with its maxDepth.
func NewChain(root string, maxDepth int) Chain {
	return Chain{ids: []string{root}, limit: maxDepth}
}

// IDs returns the agents of the chain, root first.
func (c Chain) IDs() []string { return append([]string(nil), c.ids...) }

// Current returns the running agent.
func (c Chain) Current() string { return c.ids[len(c.ids)-1] }

// Depth is the number of delegations from the root (0 at the root).
func (c Chain) Depth() int { return len(c.ids) - 1 }

// MaxDepth is the chain's limit: the smallest maxDepth of its agents.
func (c Chain) MaxDepth() int { return c.limit }

// IsInChain reports whether id is the running agent or one of its
// ancestors.
func (c Chain) IsInChain(id string) bool {
	for _, x := range c.ids {
		if x == id {
			return true
		}
	}
	return false
}

// CanDelegate reports whether one more delegation stays within maxDepth.
func (c Chain) CanDelegate() bool { return c.Depth()+1 <= c.limit }

func (c Chain) String() string { return strings.Join(c.ids, " -> ") }

// DelegationError is why a delegation was refused.
type DelegationError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

func (e *DelegationError) Error() string { return e.Message + " (" + e.Code + ")" }

// Delegate checks a delegation from the running agent to the agent to (with
// its own maxDepth) and returns the longer chain. It never panics: a
// delegation to the agent itself or an ancestor is DELEGATION_CYCLE, one
// beyond the smallest maxDepth of the chain and of to is
// DELEGATION_DEPTH_EXCEEDED.
func (c Chain) Delegate(to string, toMaxDepth int) (Chain, *DelegationError) {
	if len(c.ids) == 0 {
		return c, &DelegationError{Code: CodeDelegationCycle, Message: "no running agent to delegate from"}
	}
	if c.IsInChain(to) {
		what := "an ancestor"
		if to == c.Current() {
			what = "itself"
		}
		return c, &DelegationError{Code: CodeDelegationCycle,
			Message: fmt.Sprintf("agent %q cannot delegate to %q, %s in the chain %s", c.Current(), to, what, c)}
	}
	limit := min(c.limit, toMaxDepth)
	if c.Depth()+1 > limit {
		return c, &DelegationError{Code: CodeDelegationDepth,
			Message: fmt.Sprintf("delegating from %q to %q would make the chain %s -> %s %d deep, over maxDepth %d", c.Current(), to, c, to, c.Depth()+1, limit)}
	}
	return Chain{ids: append(c.IDs(), to), limit: limit}, nil
}

// DelegationResult is the outcome of a delegation: an output, or an error
// with a code. Delegation failures are results, not panics or Go errors.
type DelegationResult struct {
	Success bool             `json:"success"`
	Agent   string           `json:"agent"`
	Chain   []string         `json:"chain"`
	Output  json.RawMessage  `json:"output,omitempty"`
	Error   *DelegationError `json:"error,omitempty"`
}
