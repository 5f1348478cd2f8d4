package stack

import (
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/dome-registry/dome/pkg/canonical"
	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/dome-registry/dome/pkg/gitstore"
	"github.com/dome-registry/dome/pkg/ledger"
	"github.com/dome-registry/dome/pkg/patch"
)

// ApplyOptions controls ApplyPlan.
type ApplyOptions struct {
	// Mode caps the atomicity the conflict policy may split a proposal
	// with: "" uses what each proposal declares; atomic_proposal never
	// splits; atomic_file splits by file (proposals declaring atomic_file
	// or hunk_ok); hunk_ok also by hunk (proposals declaring hunk_ok). The
	// policy must allow splitting (apply.split_allowed) and the atomicity.
	Mode string
	// ThreeWay falls back to a three-way merge for files whose hunks do
	// not apply (also when the policy's apply.three_way is set).
	ThreeWay  bool
	Policy    *Policy
	CreatedAt time.Time // event ts, artifact created_at and commit times
	Producer  string
	Author    gitstore.Signature // of checkpoint commits (When is set from CreatedAt)
	Committer gitstore.Signature
	// Progress, when set, is called after each proposal is decided.
	Progress func(ApplyProgress)
}

// ApplyProgress reports one decided proposal.
type ApplyProgress struct {
	Done, Total int
	ProposalID  string
	Outcome     string // applied, deferred, rejected, split
	HeadRef     string
}

// ApplyReport is what ApplyPlan did.
type ApplyReport struct {
	RunID       string            `json:"run_id"`
	StackPlanID string            `json:"stack_plan_id"`
	StartRef    string            `json:"start_ref"` // integration head before (after reconciliation)
	HeadRef     string            `json:"head_ref"`
	Tree        string            `json:"tree"`
	Reconciled  ReconcileReport   `json:"reconciled"`
	Applied     []AppliedOutcome  `json:"applied"`  // layers added, bottom first
	Deferred    []string          `json:"deferred"` // retried later in the order (reorder), in order of deferral
	Rejected    []RejectedOutcome `json:"rejected"` // dropped by the conflict policy
	Split       []SplitOutcome    `json:"split"`
}

// AppliedOutcome is one layer ApplyPlan added.
type AppliedOutcome struct {
	ProposalID    string `json:"proposal_id"`
	DerivedFrom   string `json:"derived_from,omitempty"`
	Position      int    `json:"position"`
	CheckpointID  string `json:"checkpoint_id"`
	Tree          string `json:"tree"`
	ApplyResultID string `json:"apply_result_id"`
}

// RejectedOutcome is one proposal the conflict policy dropped.
type RejectedOutcome struct {
	ProposalID      string           `json:"proposal_id"`
	ReasonCode      string           `json:"reason_code"`
	ConflictSummary []patch.Conflict `json:"conflict_summary"`
	ApplyResultID   string           `json:"apply_result_id"`
	DecisionID      string           `json:"decision_id"`
}

// SplitOutcome is one proposal split by the conflict policy.
type SplitOutcome struct {
	ProposalID        string   `json:"proposal_id"`
	DerivedProposalID string   `json:"derived_proposal_id"`
	Partitioning      string   `json:"partitioning"`
	Included          []string `json:"included"`
	Excluded          []string `json:"excluded"`
}

var atomicityRank = map[string]int{AtomicProposal: 0, AtomicFile: 1, HunkOK: 2}

// CheckMode checks an --mode value.
func CheckMode(m string) error {
	if _, ok := atomicityRank[m]; !ok && m != "" {
		return &errkind.InputError{Source: "--mode", Field: m, Problem: "unknown atomicity mode", Hint: "use atomic_proposal, atomic_file or hunk_ok"}
	}
	return nil
}

// stacker applies proposals onto the integration ref of one open run.
type stacker struct {
	repo     *gitstore.Repo
	r        *Run
	opts     ApplyOptions
	store    *patch.RepoStore
	cache    *proposalCache
	threeWay bool
	ref      string
	head     gitstore.Hash
	headTree gitstore.Hash
}

func newStacker(repo *gitstore.Repo, r *Run, opts ApplyOptions) (*stacker, error) {
	pol, err := r.usePolicy(opts.Policy)
	if err != nil {
		return nil, err
	}
	opts.Policy = pol
	if err := CheckMode(opts.Mode); err != nil {
		return nil, err
	}
	opts.Author.When, opts.Committer.When = opts.CreatedAt, opts.CreatedAt
	s := &stacker{repo: repo, r: r, opts: opts, store: patch.NewPackStore(repo), cache: newProposalCache(repo, r.Layout, &r.State),
		threeWay: opts.ThreeWay || opts.Policy.Apply.ThreeWay, ref: IntegrationRef(r.Layout.RunID)}
	if err := s.setHead(r.State.IntegrationHead); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *stacker) setHead(h string) error {
	id, ok := gitstore.ParseHash(h)
	if !ok {
		return fmt.Errorf("run %s: integration head %q is not a full SHA", s.r.Layout.RunID, h)
	}
	t, err := s.repo.CommitTree(id)
	if err != nil {
		return fmt.Errorf("run %s: integration head %s: %w", s.r.Layout.RunID, id.Short(), err)
	}
	s.head, s.headTree = id, t
	return nil
}

// ApplyPlan applies the run's current plan onto its integration ref, layer
// by layer: one checkpoint commit per accepted proposal (trailers name the
// run, the proposal and its diff digest), an ApplyResult and a
// stack.proposal.applied event per layer, and the ref moved by
// compare-and-swap up the checkpoints (once per batch of layers whose
// objects went into one pack, before their events). A proposal that does
// not apply is retried after the rest of the order while the others make
// progress (reorder); when no further progress is possible it is split, if
// the policy and its declared atomicity allow, or dropped with its
// conflict summary. First it reconciles the ledger with
// the ref (see Reconcile), so re-running after a crash finishes the job.
func ApplyPlan(repo *gitstore.Repo, r *Run, opts ApplyOptions) (*ApplyReport, error) {
	s, err := newStacker(repo, r, opts)
	if err != nil {
		return nil, err
	}
	r.DeferState()
	rep, err := s.run()
	if ferr := s.store.Flush(); err == nil {
		err = ferr
	}
	if ferr := r.FlushState(); err == nil {
		err = ferr
	}
	return rep, err
}

// layerBatch is how many layers' objects are written as one pack before
// their refs move: one durable file pair for the batch instead of four
// loose objects per layer.
const layerBatch = 8

func (s *stacker) run() (*ApplyReport, error) {
	st := &s.r.State
	rep := &ApplyReport{RunID: st.RunID, Applied: []AppliedOutcome{}, Deferred: []string{}, Rejected: []RejectedOutcome{}, Split: []SplitOutcome{}}
	if st.Promoted != nil {
		return rep, &errkind.CheckError{Problem: fmt.Sprintf("run %s was promoted at %s; nothing more is applied", st.RunID, st.Promoted.FromHeadRef),
			Hint: "start a new run for further work"}
	}
	if st.Plan == nil {
		return rep, &errkind.InputError{Source: "--run", Field: st.RunID, Problem: "the run has no plan for " + st.WaveID,
			Hint: "compute one: dome stack plan --run " + st.RunID}
	}
	if st.Plan.Sequence < st.PolicySequence {
		return rep, &errkind.InputError{Source: "--run", Field: st.RunID,
			Problem: fmt.Sprintf("the plan %s was computed before the run's stack policy changed (event %d)", st.Plan.StackPlanID, st.PolicySequence),
			Hint:    "compute one under the new policy: dome stack plan --run " + st.RunID}
	}
	rec, err := s.reconcile()
	rep.Reconciled = rec
	if err != nil {
		return rep, err
	}
	rep.StackPlanID, rep.StartRef = st.Plan.StackPlanID, st.IntegrationHead
	queue := s.queue()
	total, done := len(queue), 0
	progress := func(id, outcome string) {
		if outcome != "deferred" {
			done++
		}
		if s.opts.Progress != nil {
			s.opts.Progress(ApplyProgress{Done: done, Total: total, ProposalID: id, Outcome: outcome, HeadRef: s.head.String()})
		}
	}
	for len(queue) > 0 {
		var failed []failedAttempt
		moved := false
		// Layers are computed here (apply, objects, checkpoint commit) while
		// a writer moves the ref and records the previous ones, in order.
		// loaded before the writer starts: it owns the state until closed
		lps := make([]*loadedProposal, len(queue))
		for i, id := range queue {
			lp, err := s.cache.get(st.Proposals[id])
			if err != nil {
				return rep, err
			}
			lps[i] = lp
		}
		ci := CheckpointInfo{RunID: st.RunID, WaveID: st.WaveID}
		tipHead, tipTree := s.head, s.headTree
		w := s.startWriter(func(out AppliedOutcome) {
			rep.Applied = append(rep.Applied, out)
			progress(out.ProposalID, "applied")
		})
		// Layers go to the writer in batches, their objects made durable
		// (one pack) before any of their refs moves.
		var batch []pendingLayer
		var flushErr error
		send := func() bool {
			if len(batch) == 0 {
				return true
			}
			if flushErr = s.store.Flush(); flushErr != nil {
				return false
			}
			ok := w.push(batch)
			batch = nil
			return ok
		}
		// finish hands over the layers computed so far (they are sound),
		// waits for the writer and returns err unless writing failed.
		finish := func(err error) (*ApplyReport, error) {
			if flushErr == nil {
				send()
			}
			if cerr := w.close(); cerr != nil {
				return rep, cerr
			}
			if flushErr != nil {
				return rep, flushErr
			}
			return rep, err
		}
		for _, lp := range lps {
			res, conflicts, err := s.tryOn(lp, tipTree, patch.PartialNone)
			if err != nil {
				return finish(err)
			}
			if conflicts != nil {
				failed = append(failed, failedAttempt{lp: lp, parent: tipHead, conflicts: conflicts, files: res.Files})
				continue
			}
			pl, err := s.checkpoint(lp, res, tipHead, ci)
			if err != nil {
				return finish(err)
			}
			batch = append(batch, pl)
			tipHead, tipTree = pl.commit, pl.tree
			moved = true
			if len(batch) == layerBatch && !send() {
				break // the writer failed; close says why
			}
		}
		if _, err := finish(nil); err != nil {
			return rep, err
		}
		if len(failed) == 0 {
			break
		}
		queue = queue[:0]
		if moved {
			// retry later in the order: the layers above may have made room
			for _, f := range failed {
				if _, err := s.fail(f, ActionReorder); err != nil {
					return rep, err
				}
				rep.Deferred = append(rep.Deferred, f.lp.state.ProposalID)
				progress(f.lp.state.ProposalID, "deferred")
				queue = append(queue, f.lp.state.ProposalID)
			}
			continue
		}
		// No progress: split where allowed, otherwise drop. Arbitration
		// order: policy precedence (the plan position), proposal_id,
		// conflict fingerprint.
		sort.SliceStable(failed, func(i, j int) bool {
			a, b := failed[i], failed[j]
			if pa, pb := s.position(a.lp.state), s.position(b.lp.state); pa != pb {
				return pa < pb
			}
			if a.lp.state.ProposalID != b.lp.state.ProposalID {
				return a.lp.state.ProposalID < b.lp.state.ProposalID
			}
			return a.fingerprint(s.r.Layout.RunID) < b.fingerprint(s.r.Layout.RunID)
		})
		for _, f := range failed {
			out, applied, err := s.split(f)
			if err != nil {
				return rep, err
			}
			if out != nil {
				rep.Split = append(rep.Split, *out)
				rep.Applied = append(rep.Applied, applied)
				progress(f.lp.state.ProposalID, "split")
				continue
			}
			// the head may have moved (a split before it): the summary is
			// of the last attempt
			ro, err := s.fail(f, ActionDrop)
			if err != nil {
				return rep, err
			}
			rep.Rejected = append(rep.Rejected, ro)
			progress(f.lp.state.ProposalID, "rejected")
		}
	}
	rep.HeadRef, rep.Tree = s.head.String(), s.headTree.String()
	return rep, nil
}

// queue lists what the plan still has to apply, in plan order: its
// proposals still pending, each followed by pending proposals derived from
// it (a split interrupted before its layer).
func (s *stacker) queue() []string {
	st := &s.r.State
	derived := map[string][]string{}
	for id, q := range st.Proposals {
		if q.DerivedFrom != "" && pending(q.Status) {
			derived[q.DerivedFrom] = append(derived[q.DerivedFrom], id)
		}
	}
	var out []string
	for _, id := range st.Plan.OrderedProposals {
		if q := st.Proposals[id]; q != nil && pending(q.Status) {
			out = append(out, id)
		}
		ds := derived[id]
		sort.Strings(ds)
		out = append(out, ds...)
	}
	return out
}

// position is the plan layer of q (of its parent for a derived proposal).
func (s *stacker) position(q *ProposalState) int {
	id := q.ProposalID
	if q.DerivedFrom != "" {
		id = q.DerivedFrom
	}
	for i, x := range s.r.State.Plan.OrderedProposals {
		if x == id {
			return i + 1
		}
	}
	return 0
}

// splitMode is the atomicity the conflict policy may split q with.
func (s *stacker) splitMode(q *ProposalState) string {
	p := s.opts.Policy
	m := q.Constraints.Atomicity
	if m == "" || !p.Apply.SplitAllowed || !p.atomicityAllowed(m) {
		return AtomicProposal
	}
	if s.opts.Mode != "" && atomicityRank[s.opts.Mode] < atomicityRank[m] {
		m = s.opts.Mode
	}
	return m
}

// try applies lp onto the head's tree. conflicts is nil when it applied;
// a refused path counts as a conflict (it may apply later); other errors
// are returned.
func (s *stacker) try(lp *loadedProposal, partial patch.Partial) (*patch.Result, []patch.Conflict, error) {
	return s.tryOn(lp, s.headTree, partial)
}

// tryOn is try onto tree.
func (s *stacker) tryOn(lp *loadedProposal, tree gitstore.Hash, partial patch.Partial) (*patch.Result, []patch.Conflict, error) {
	res, err := patch.Apply(s.store, tree, lp.patch, patch.Options{ThreeWay: s.threeWay, Fuzz: s.opts.Policy.Apply.Fuzz, Partial: partial})
	if res == nil {
		res = &patch.Result{}
	}
	var ce *patch.ConflictError
	var ie *errkind.InputError
	switch {
	case err == nil:
		return res, nil, nil
	case errors.As(err, &ce):
		return res, ce.Conflicts, nil
	case errors.As(err, &ie):
		return res, []patch.Conflict{{Path: ie.Field, Reason: ie.Problem}}, nil
	}
	return res, nil, fmt.Errorf("apply %s: %w", lp.state.ProposalID, err)
}

// pendingLayer is a checkpoint commit written, its ref move and record to
// come.
type pendingLayer struct {
	lp           *loadedProposal
	files        []patch.FileResult
	parent       gitstore.Hash
	commit, tree gitstore.Hash
	ar           ApplyResult
	// set when the ApplyResult is written
	arDigest, arRel string
}

// checkpoint writes the checkpoint commit of res on parent.
func (s *stacker) checkpoint(lp *loadedProposal, res *patch.Result, parent gitstore.Hash, ci CheckpointInfo) (pendingLayer, error) {
	q := lp.state
	tree := res.Tree
	if tree.IsZero() {
		var err error
		if tree, err = s.store.WriteTree(nil); err != nil {
			return pendingLayer{}, err
		}
	}
	ci.ProposalID, ci.DiffDigest, ci.ParentProposalID = q.ProposalID, q.DiffDigest, q.DerivedFrom
	commit, err := WriteCheckpoint(s.store.Pack, parent, tree, ci, "", s.opts.Author, s.opts.Committer)
	if err != nil {
		return pendingLayer{}, err
	}
	return pendingLayer{lp: lp, files: res.Files, parent: parent, commit: commit, tree: tree,
		ar: s.applyResult(lp, res.Files, parent, commit, tree)}, nil
}

// layer makes res the new head: checkpoint commit, compare-and-swap of the
// ref, ApplyResult, event.
func (s *stacker) layer(lp *loadedProposal, res *patch.Result) (AppliedOutcome, error) {
	pl, err := s.checkpoint(lp, res, s.head, CheckpointInfo{RunID: s.r.Layout.RunID, WaveID: s.r.State.WaveID})
	if err != nil {
		return AppliedOutcome{}, err
	}
	if err := s.store.Flush(); err != nil {
		return AppliedOutcome{}, err
	}
	return s.commitLayer(pl)
}

// commitLayer records one layer: its ApplyResult, the ref moved to its
// checkpoint, its event.
func (s *stacker) commitLayer(pl pendingLayer) (AppliedOutcome, error) {
	b := []pendingLayer{pl}
	if err := s.writeApplyResults(b); err != nil {
		return AppliedOutcome{}, err
	}
	var out AppliedOutcome
	err := s.commitBatch(b, func(o AppliedOutcome) { out = o })
	return out, err
}

// writeApplyResults writes the ApplyResults of b durably, with one fsync
// of their folder, and notes their digests and paths in b.
func (s *stacker) writeApplyResults(b []pendingLayer) error {
	files := make([]ledger.File, len(b))
	for i, pl := range b {
		f, err := s.applyResultFile(pl.ar)
		if err != nil {
			return err
		}
		files[i] = f
	}
	digests, rels, err := s.r.WriteArtifacts(files)
	if err != nil {
		return err
	}
	for i := range b {
		b[i].arDigest, b[i].arRel = digests[i], rels[i]
	}
	return nil
}

// commitBatch moves the ref from the head to the checkpoint of b's last
// layer (compare and swap) and records each layer's event, bottom first.
// b's ApplyResults are written. The ref moves once for the batch: each
// layer keeps its checkpoint commit, ApplyResult and event, and a crash
// before the events leaves the ref ahead of the ledger, which Reconcile
// recovers layer by layer.
func (s *stacker) commitBatch(b []pendingLayer, applied func(AppliedOutcome)) error {
	parent := s.head
	for _, pl := range b {
		if pl.parent != parent {
			return fmt.Errorf("apply %s: the checkpoint's parent %s is not the head %s", pl.lp.state.ProposalID, pl.parent.Short(), parent.Short())
		}
		parent = pl.commit
	}
	last := b[len(b)-1]
	if err := s.repo.UpdateRef(s.ref, last.commit, s.head); err != nil {
		return &errkind.CheckError{Problem: fmt.Sprintf("move %s to the checkpoint of %s: %v", s.ref, last.lp.state.ProposalID, err),
			Hint: "another process moved the integration ref; run dome stack apply again to reconcile"}
	}
	for _, pl := range b {
		out, err := s.recordEvent(pl.lp, pl.ar, pl.arDigest, pl.arRel, false)
		if err != nil {
			return err
		}
		applied(out)
	}
	return nil
}

// layerWriter records batches of computed layers in order, in two stages
// on their own goroutines: one writes a batch's ApplyResults while the
// other moves the ref and records the events of the batch before it.
type layerWriter struct {
	in   chan []pendingLayer
	done chan struct{}
	mu   sync.Mutex
	err  error
}

func (w *layerWriter) fail(err error) {
	w.mu.Lock()
	if w.err == nil {
		w.err = err
	}
	w.mu.Unlock()
}

func (w *layerWriter) failed() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err != nil
}

// startWriter starts a writer calling applied after each committed layer
// (on the writer's goroutine). Until close returns, the writer owns the
// run's state and the head.
func (s *stacker) startWriter(applied func(AppliedOutcome)) *layerWriter {
	w := &layerWriter{in: make(chan []pendingLayer, 1), done: make(chan struct{})}
	written := make(chan []pendingLayer, 1)
	go func() {
		defer close(written)
		for b := range w.in {
			if w.failed() {
				continue
			}
			if err := s.writeApplyResults(b); err != nil {
				w.fail(err)
				continue
			}
			written <- b
		}
	}()
	go func() {
		defer close(w.done)
		for b := range written {
			if w.failed() {
				continue
			}
			if err := s.commitBatch(b, applied); err != nil {
				w.fail(err)
			}
		}
	}()
	return w
}

// push queues the batch b (the writer keeps it); false when the writer has
// failed (close returns why).
func (w *layerWriter) push(b []pendingLayer) bool {
	if w.failed() {
		return false
	}
	w.in <- b
	return true
}

// close waits for the queued layers and returns the writer's error.
func (w *layerWriter) close() error {
	close(w.in)
	<-w.done
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// applyResult is the ApplyResult of a layer at commit on parent.
func (s *stacker) applyResult(lp *loadedProposal, files []patch.FileResult, parent, commit, tree gitstore.Hash) ApplyResult {
	q := lp.state
	st := &s.r.State
	ar := ApplyResult{RunID: st.RunID, WaveID: st.WaveID, StackPlanID: st.Plan.StackPlanID, Position: s.position(q), ProposalID: q.ProposalID,
		DiffDigest: q.DiffDigest, BaseRef: q.BaseRef, ParentRef: parent.String(), Applied: true, HeadRef: commit.String(), CheckpointID: commit.String(),
		Tree: tree.String(), Mode: s.splitModeOf(q), ThreeWay: s.threeWay, Files: nonNil(files), ConflictSummary: []patch.Conflict{},
		DerivedFrom: q.DerivedFrom}
	ar.ApplyResultID = applyResultID(ar, q.Attempts)
	return ar
}

// recordApplied writes the ApplyResult of a layer whose checkpoint the ref
// already points at, and its event.
func (s *stacker) recordApplied(lp *loadedProposal, files []patch.FileResult, commit, tree gitstore.Hash, recovered bool) (AppliedOutcome, error) {
	ar := s.applyResult(lp, files, s.head, commit, tree)
	digest, rel, err := s.writeApplyResult(ar)
	if err != nil {
		return AppliedOutcome{}, err
	}
	return s.recordEvent(lp, ar, digest, rel, recovered)
}

// recordEvent records stack.proposal.applied for ar and makes its
// checkpoint the head.
func (s *stacker) recordEvent(lp *loadedProposal, ar ApplyResult, digest, rel string, recovered bool) (AppliedOutcome, error) {
	q := lp.state
	_, err := s.r.Record(TopicProposalApplied, s.opts.CreatedAt, ProposalAppliedPayload{ProposalID: q.ProposalID, DiffDigest: q.DiffDigest,
		StackPlanID: ar.StackPlanID, Position: ar.Position, ParentRef: ar.ParentRef, HeadRef: ar.HeadRef, CheckpointID: ar.CheckpointID, Tree: ar.Tree,
		Mode: ar.Mode, ApplyResultID: ar.ApplyResultID, Path: rel, ArtifactDigest: digest, Recovered: recovered})
	if err != nil {
		return AppliedOutcome{}, err
	}
	commit, _ := gitstore.ParseHash(ar.CheckpointID)
	tree, _ := gitstore.ParseHash(ar.Tree)
	s.head, s.headTree = commit, tree
	return AppliedOutcome{ProposalID: q.ProposalID, DerivedFrom: q.DerivedFrom, Position: ar.Position, CheckpointID: ar.CheckpointID, Tree: ar.Tree,
		ApplyResultID: ar.ApplyResultID}, nil
}

// splitModeOf is the mode an ApplyResult records: a derived proposal
// applies whole; others record the atomicity the conflict policy allowed.
func (s *stacker) splitModeOf(q *ProposalState) string {
	if q.DerivedFrom != "" {
		return AtomicProposal
	}
	return s.splitMode(q)
}

// applyResultID names an ApplyResult by what it is about, so that writing
// it again (after a crash) gives the same file.
func applyResultID(ar ApplyResult, attempt int) string {
	b, _ := canonical.Marshal(map[string]any{"run_id": ar.RunID, "stack_plan_id": ar.StackPlanID, "proposal_id": ar.ProposalID,
		"parent_ref": ar.ParentRef, "applied": ar.Applied, "attempt": attempt})
	return "apply-" + canonical.Digest(b)[len("sha256:"):][:24]
}

func (s *stacker) writeApplyResult(ar ApplyResult) (digest, rel string, err error) {
	f, err := s.applyResultFile(ar)
	if err != nil {
		return "", "", err
	}
	return s.r.WriteArtifact(f.Path, f.Data)
}

// applyResultFile is the sealed ApplyResult ar and where it goes.
func (s *stacker) applyResultFile(ar ApplyResult) (ledger.File, error) {
	doc, _, err := Seal(NewHeader(KindApplyResult, ar.ApplyResultID, ar.RunID, ar.WaveID, ar.BaseRef, s.opts.CreatedAt, s.opts.Producer), ar, nil)
	return ledger.File{Path: s.r.Layout.ApplyResultPath(ar.ApplyResultID), Data: doc}, err
}

// failedAttempt is a proposal that did not apply onto parent.
type failedAttempt struct {
	lp        *loadedProposal
	parent    gitstore.Hash
	conflicts []patch.Conflict
	files     []patch.FileResult
}

// fingerprint is the conflict's digest: the run, the parent, the proposal
// and the conflicts.
func (f failedAttempt) fingerprint(runID string) string {
	b, _ := canonical.Marshal(map[string]any{"run_id": runID, "parent_ref": f.parent.String(), "proposal_id": f.lp.state.ProposalID,
		"diff_digest": f.lp.state.DiffDigest, "conflicts": f.conflicts})
	return canonical.Digest(b)
}

// against lists the applied proposals touching a path of the conflict.
func (s *stacker) against(f failedAttempt) []string {
	paths := map[string]bool{}
	for _, c := range f.conflicts {
		paths[c.Path] = true
	}
	for _, p := range f.lp.state.TouchedFiles {
		paths[p] = true
	}
	out := []string{}
	for _, l := range s.r.State.Applied {
		q := s.r.State.Proposals[l.ProposalID]
		if q == nil {
			continue
		}
		for _, p := range q.TouchedFiles {
			if paths[p] {
				out = append(out, l.ProposalID)
				break
			}
		}
	}
	return out
}

// fail records a failed attempt: its ApplyResult (applied false), the
// ConflictDecision and stack.proposal.apply_failed with action (reorder or
// drop).
func (s *stacker) fail(f failedAttempt, action string) (RejectedOutcome, error) {
	q := f.lp.state
	st := &s.r.State
	pos := s.position(q)
	ar := ApplyResult{RunID: st.RunID, WaveID: st.WaveID, StackPlanID: st.Plan.StackPlanID, Position: pos, ProposalID: q.ProposalID,
		DiffDigest: q.DiffDigest, BaseRef: q.BaseRef, ParentRef: f.parent.String(), Applied: false, HeadRef: f.parent.String(),
		Mode: s.splitModeOf(q), ThreeWay: s.threeWay, Files: nonNil(f.files), ConflictSummary: f.conflicts, DerivedFrom: q.DerivedFrom}
	ar.ApplyResultID = applyResultID(ar, q.Attempts)
	digest, rel, err := s.writeApplyResult(ar)
	if err != nil {
		return RejectedOutcome{}, err
	}
	fp := f.fingerprint(st.RunID)
	cd := ConflictDecision{RunID: st.RunID, WaveID: st.WaveID, StackPlanID: st.Plan.StackPlanID, ConflictFingerprint: fp,
		ProposalID: q.ProposalID, Against: s.against(f), PolicyPrecedence: pos, TieBreakOrder: ConflictTieBreakOrder, Action: action,
		Attempt: q.Attempts + 1, ConflictSummary: f.conflicts}
	cd.DecisionID = "conflict-" + fp[len("sha256:"):][:16] + "-" + action
	doc, _, err := Seal(NewHeader(KindConflictDecision, cd.DecisionID, st.RunID, st.WaveID, f.parent.String(), s.opts.CreatedAt, s.opts.Producer), cd, nil)
	if err != nil {
		return RejectedOutcome{}, err
	}
	if _, _, err := s.r.WriteArtifact(s.r.Layout.ConflictDecisionPath(cd.DecisionID), doc); err != nil {
		return RejectedOutcome{}, err
	}
	_, err = s.r.Record(TopicProposalApplyFailed, s.opts.CreatedAt, ProposalApplyFailedPayload{ProposalID: q.ProposalID, DiffDigest: q.DiffDigest,
		StackPlanID: ar.StackPlanID, ParentRef: ar.ParentRef, ApplyResultID: ar.ApplyResultID, Path: rel, ArtifactDigest: digest,
		ReasonCode: ReasonConflict, ConflictSummary: f.conflicts, Action: action, DecisionID: cd.DecisionID})
	if err != nil {
		return RejectedOutcome{}, err
	}
	return RejectedOutcome{ProposalID: q.ProposalID, ReasonCode: ReasonConflict, ConflictSummary: f.conflicts, ApplyResultID: ar.ApplyResultID,
		DecisionID: cd.DecisionID}, nil
}
