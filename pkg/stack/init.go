package stack

import (
	"errors"
	"fmt"
	"time"

	"github.com/dome-registry/dome/pkg/canonical"
	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/dome-registry/dome/pkg/gitstore"
)

// InitOptions describes a new run.
type InitOptions struct {
	Base            string // full commit SHA
	TargetRef       string // the ref promotion fast-forwards (refs/heads/main)
	DeterminismSeed string // "" derives one from the run id and the base
	Policy          *Policy
	CreatedAt       time.Time
	Producer        string
}

// InitResult is what Init did.
type InitResult struct {
	RunID          string `json:"run_id"`
	WaveID         string `json:"wave_id"`
	BaseRef        string `json:"base_ref"`
	BaseTreeHash   string `json:"base_tree_hash"`
	TargetRef      string `json:"target_ref"`
	IntegrationRef string `json:"integration_ref"`
	RunDir         string `json:"run_dir"`
	Created        bool   `json:"created"` // false when the run already existed with these inputs
}

// Init starts a run: it checks the base (a full commit SHA of repo),
// creates the integration ref at the base by compare-and-swap and records
// stack.initialized. Running it again with the same inputs is a no-op.
func Init(repo *gitstore.Repo, l Layout, opts InitOptions) (InitResult, error) {
	if !IsFullSHA(opts.Base) {
		return InitResult{}, &errkind.InputError{Source: "--base", Field: opts.Base, Problem: "not a full commit SHA (40 lowercase hex digits)",
			Hint: "pin the base: dome stack init --base $(git rev-parse HEAD)"}
	}
	if opts.TargetRef == "" {
		opts.TargetRef = "refs/heads/main"
	}
	if err := gitstore.CheckRefName(opts.TargetRef); err != nil || len(opts.TargetRef) < 6 || opts.TargetRef[:5] != "refs/" {
		return InitResult{}, &errkind.InputError{Source: "--target", Field: opts.TargetRef, Problem: "not a full ref name", Hint: "write refs/heads/<branch>"}
	}
	base, _ := gitstore.ParseHash(opts.Base)
	tree, err := repo.CommitTree(base)
	if err != nil {
		return InitResult{}, &errkind.InputError{Source: "--base", Field: opts.Base, Problem: "not a commit of the repository: " + err.Error(), Err: err}
	}
	seed := opts.DeterminismSeed
	if seed == "" {
		seed = canonical.Digest([]byte("dome.stack/" + l.RunID + "@" + opts.Base))
	}
	ref := IntegrationRef(l.RunID)
	res := InitResult{RunID: l.RunID, WaveID: WaveIDFor(1), BaseRef: opts.Base, BaseTreeHash: tree.String(), TargetRef: opts.TargetRef,
		IntegrationRef: ref, RunDir: l.Root}
	r, err := OpenRun(l, true)
	if err != nil {
		return res, err
	}
	defer r.Close()
	policy := opts.Policy
	if policy == nil {
		policy = DefaultPolicy()
	}
	if r.State.Initialized {
		st := r.State
		if st.Waves[0].BaseRef == opts.Base && st.TargetRef == opts.TargetRef {
			if opts.Policy != nil && len(st.PolicyChanges) == 0 && st.PolicyDigest != policy.Digest() {
				return res, PolicyMismatch(l, &st, policy)
			}
			return res, nil
		}
		return res, &errkind.InputError{Source: "--run", Field: l.RunID, Problem: fmt.Sprintf("the run exists with base %s and target %s", st.Waves[0].BaseRef, st.TargetRef),
			Hint: "choose another run id"}
	}
	// The ref first: a crash before the event leaves a ref at the base,
	// which a second init accepts. The run's writer lock (held since
	// OpenRun) means no other dome creates this ref: a ref lock file is
	// what a writer killed in the middle of creating it left.
	if _, err := repo.RemoveRefLock(ref); err != nil {
		return res, err
	}
	if err := repo.UpdateRef(ref, base, gitstore.ZeroHash); err != nil {
		cur, rerr := repo.Ref(ref)
		if rerr != nil || cur != base {
			if errors.Is(rerr, gitstore.ErrNotFound) {
				return res, fmt.Errorf("create %s: %w", ref, err)
			}
			return res, &errkind.CheckError{Problem: fmt.Sprintf("%s exists at %s, not at the base %s", ref, cur, opts.Base),
				Hint: "a run of this name was started before; choose another run id or delete the ref"}
		}
	}
	// The policy next: the run keeps the bytes its ledger will name.
	if _, err := keepPolicy(l, policy); err != nil {
		return res, err
	}
	_, err = r.Record(TopicInitialized, opts.CreatedAt, InitializedPayload{RunID: l.RunID, WaveID: res.WaveID, BaseRef: opts.Base,
		BaseTreeHash: res.BaseTreeHash, TargetRef: opts.TargetRef, IntegrationRef: ref, DeterminismSeed: seed,
		PolicyDigest: policy.Digest(), Producer: opts.Producer})
	if err != nil {
		return res, err
	}
	res.Created = true
	return res, nil
}
