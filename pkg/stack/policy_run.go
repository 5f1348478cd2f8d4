package stack

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/dome-registry/dome/pkg/canonical"
	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/dome-registry/dome/pkg/ledger"
)

// A run is pinned to one stack policy: Init keeps the policy's canonical
// bytes in the run (Layout.PolicyFile, named by its digest) and records the
// digest; every later step works under that policy, whatever --policy, the
// repository's policy/stack_policy.json or the built-in policy say by then.
// A different policy enters a run only through ChangePolicy, which records
// stack.policy.changed with a reason; plans and validations recorded before
// the change do not count after it.

// ErrPolicyNotKept is returned by PinnedPolicy for a run whose policy file
// is absent (a run started by a dome that did not keep it).
var ErrPolicyNotKept = errors.New("the run does not keep its stack policy")

// PinnedPolicy reads the policy st names from the run directory and checks
// it is the policy st records (its canonical bytes hash to the digest).
func PinnedPolicy(l Layout, st *State) (*Policy, error) {
	path := l.PolicyFile(st.PolicyDigest)
	rel := l.Rel(path)
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("run %s: %w (%s, %s)", st.RunID, ErrPolicyNotKept, rel, st.PolicyDigest)
	}
	if err != nil {
		return nil, fmt.Errorf("run %s: read its stack policy: %w", st.RunID, err)
	}
	if d := canonical.Digest(data); d != st.PolicyDigest {
		return nil, &errkind.CheckError{Problem: fmt.Sprintf("run %s: its stack policy %s hashes to %s, the ledger recorded %s", st.RunID, rel, d, st.PolicyDigest),
			Hint: "the file was edited after the run kept it; restore it (the ledger's digest names the bytes)"}
	}
	return ParsePolicy(rel, data)
}

// keepPolicy writes p's canonical bytes to the run, once.
func keepPolicy(l Layout, p *Policy) (string, error) {
	path := l.PolicyFile(p.Digest())
	if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, p.Canonical()) {
		return l.Rel(path), nil
	}
	if err := os.MkdirAll(l.Abs("policy"), 0o755); err != nil {
		return "", err
	}
	if err := ledger.WriteFileDurable(path, p.Canonical()); err != nil {
		return "", fmt.Errorf("write %s: %w", path, err)
	}
	return l.Rel(path), nil
}

// Policy returns the run's pinned policy.
func (r *Run) Policy() (*Policy, error) {
	if r.policy != nil && r.policy.Digest() == r.State.PolicyDigest {
		return r.policy, nil
	}
	p, err := PinnedPolicy(r.Layout, &r.State)
	if err != nil {
		if errors.Is(err, ErrPolicyNotKept) {
			return nil, &errkind.InputError{Source: "--run", Field: r.Layout.RunID, Problem: err.Error(), Err: err,
				Hint: "give the policy the run was started with: --policy FILE"}
		}
		return nil, err
	}
	r.policy = p
	return p, nil
}

// usePolicy returns the policy a step of the run works under: the pinned
// one when p is nil, else p if it is the pinned one. Any other policy is
// refused: a run never silently changes policy.
func (r *Run) usePolicy(p *Policy) (*Policy, error) {
	if p == nil {
		return r.Policy()
	}
	if p.Digest() != r.State.PolicyDigest {
		return nil, PolicyMismatch(r.Layout, &r.State, p)
	}
	return p, nil
}

// PolicyMismatch is the error for a policy that is not the run's.
func PolicyMismatch(l Layout, st *State, p *Policy) error {
	return &errkind.InputError{Source: "--policy", Field: p.Digest(),
		Problem: fmt.Sprintf("run %s works under the stack policy %s (%s), not this one", st.RunID, st.PolicyDigest, l.Rel(l.PolicyFile(st.PolicyDigest))),
		Hint:    fmt.Sprintf("drop --policy to use the run's policy, or change it on purpose: dome stack policy --run %s --policy FILE --reason TEXT", st.RunID)}
}

// PolicyChange is what ChangePolicy did.
type PolicyChange struct {
	RunID      string `json:"run_id"`
	FromDigest string `json:"from_digest"`
	ToDigest   string `json:"to_digest"`
	Path       string `json:"path"`
	Sequence   int64  `json:"sequence"`
	Changed    bool   `json:"changed"` // false: p is already the run's policy
}

// ChangePolicy makes p the run's policy: it keeps p's bytes in the run and
// records stack.policy.changed with the reason. Plans and validations made
// before it no longer count (apply wants a new plan, promotion new
// validations). p being the run's policy already changes nothing.
func (r *Run) ChangePolicy(p *Policy, source, reason string, at time.Time, producer string) (PolicyChange, error) {
	st := &r.State
	res := PolicyChange{RunID: st.RunID, FromDigest: st.PolicyDigest, ToDigest: p.Digest()}
	if st.Promoted != nil {
		return res, &errkind.CheckError{Problem: fmt.Sprintf("run %s was promoted; its policy no longer changes", st.RunID), Hint: "start a new run with the new policy"}
	}
	if strings.TrimSpace(reason) == "" {
		return res, &errkind.InputError{Source: "--reason", Problem: "a policy change needs a reason", Hint: "say why, e.g. --reason 'require the full tier for medium risk'"}
	}
	if p.Digest() == st.PolicyDigest {
		res.Path = r.Layout.Rel(r.Layout.PolicyFile(p.Digest()))
		return res, nil
	}
	rel, err := keepPolicy(r.Layout, p)
	if err != nil {
		return res, err
	}
	e, err := r.Record(TopicPolicyChanged, at, PolicyChangedPayload{FromDigest: st.PolicyDigest, ToDigest: p.Digest(), Path: rel,
		Source: source, Reason: reason, Producer: producer})
	if err != nil {
		return res, err
	}
	r.policy = p
	res.Path, res.Sequence, res.Changed = rel, e.Sequence, true
	return res, nil
}
