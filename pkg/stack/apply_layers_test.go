package stack

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dome-registry/dome/internal/gittest"
	"github.com/dome-registry/dome/pkg/canonical"
	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/dome-registry/dome/pkg/gitstore"
	"github.com/dome-registry/dome/pkg/ledger"
	"github.com/dome-registry/dome/pkg/patch"
)

var testAt = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// afix is a repository with a run initialized at its base and a way to
// turn worktree edits into proposals.
type afix struct {
	t    *testing.T
	git  *gittest.Repo
	repo *gitstore.Repo
	l    Layout
	base string
}

func lines(prefix string, n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		b.WriteString(prefix + " line " + string(rune('a'+i%26)) + strings.Repeat("x", i) + "\n")
	}
	return b.String()
}

func newAfix(t *testing.T, files map[string]string) *afix {
	t.Helper()
	g := gittest.New(t)
	g.Write(files)
	base := g.Commit("base")
	repo, err := gitstore.Open(g.Dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { repo.Close() })
	f := &afix{t: t, git: g, repo: repo, l: NewLayout(filepath.Join(t.TempDir(), "runs"), "r1"), base: base}
	if _, err := Init(repo, f.l, InitOptions{Base: base, CreatedAt: testAt, Producer: "test"}); err != nil {
		t.Fatal(err)
	}
	return f
}

// diff edits the worktree, returns git's diff and restores the base.
func (f *afix) diff(edits map[string]string) string {
	f.t.Helper()
	f.git.Write(edits)
	d := f.git.Git("diff", "--full-index") + "\n"
	f.git.Git("checkout", "-q", "--", ".")
	return d
}

func (f *afix) open() *Run {
	f.t.Helper()
	r, err := OpenRun(f.l, false)
	if err != nil {
		f.t.Fatal(err)
	}
	return r
}

// propose records a submitted proposal with diff (as submit would).
func (f *afix) propose(r *Run, id, diff, atomicity string, touched ...string) {
	f.t.Helper()
	st := r.State
	p := PatchProposal{ProposalID: id, BaseRef: st.BaseRef, BaseTreeHash: st.BaseTreeHash, DiffCanonicalization: DiffCanonicalization,
		DiffDigest: canonical.Digest([]byte(diff)), DiffUnified: diff, TouchedFiles: touched, IntentTags: []string{},
		Risk: Risk{Class: RiskLow}, DeclaredConstraints: DeclaredConstraints{Atomicity: atomicity},
		WorkerRunMeta: WorkerRunMeta{WorkerID: "w-" + id, RunID: st.RunID, WaveID: st.WaveID}, IdempotencyKey: "key-" + id}
	doc, h, err := Seal(NewHeader(KindPatchProposal, id, st.RunID, st.WaveID, st.BaseRef, testAt, "test"), p, nil)
	if err != nil {
		f.t.Fatal(err)
	}
	digest, rel, err := r.WriteArtifact(f.l.ProposalPath(id), doc)
	if err != nil {
		f.t.Fatal(err)
	}
	if _, err := r.Record(TopicProposalSubmitted, testAt, ProposalSubmittedPayload{ProposalID: id, WaveID: st.WaveID, Path: rel,
		ArtifactDigest: digest, PayloadDigest: h.PayloadDigest, DiffDigest: p.DiffDigest, BaseRef: st.BaseRef, IdempotencyKey: p.IdempotencyKey,
		WorkerID: p.WorkerRunMeta.WorkerID, CreatedAt: h.CreatedAt, TouchedFiles: touched, IntentTags: []string{}, Risk: p.Risk,
		DeclaredRisk: RiskLow, Constraints: Constraints{Atomicity: atomicity}}); err != nil {
		f.t.Fatal(err)
	}
}

func (f *afix) plan(r *Run, ids ...string) {
	f.t.Helper()
	sp := StackPlan{StackPlanID: "plan-test", RunID: r.State.RunID, WaveID: r.State.WaveID, BaseRef: r.State.BaseRef, StartRef: r.State.IntegrationHead}
	doc, h, err := Seal(NewHeader(KindStackPlan, sp.StackPlanID, sp.RunID, sp.WaveID, sp.BaseRef, testAt, "test"), sp, nil)
	if err != nil {
		f.t.Fatal(err)
	}
	digest, rel, err := r.WriteArtifact(f.l.PlanPath(sp.StackPlanID), doc)
	if err != nil {
		f.t.Fatal(err)
	}
	if _, err := r.Record(TopicPlanComputed, testAt, PlanComputedPayload{StackPlanID: "plan-test", WaveID: r.State.WaveID, Path: rel,
		ArtifactDigest: digest, PayloadDigest: h.PayloadDigest, StartRef: r.State.IntegrationHead,
		OrderedProposals: ids, Rejected: []RejectedRef{}, CheckpointStrategy: "per_layer", ExpectedValidations: []ExpectedValidation{},
		DeterminismSeed: "seed", Decisions: []DecisionRef{}}); err != nil {
		f.t.Fatal(err)
	}
}

func (f *afix) applyOpts() ApplyOptions {
	sig := gitstore.Signature{Name: "dome", Email: "dome@localhost"}
	return ApplyOptions{CreatedAt: testAt, Producer: "test", Author: sig, Committer: sig}
}

func (f *afix) ref() gitstore.Hash {
	f.t.Helper()
	h, err := f.repo.Ref(IntegrationRef(f.l.RunID))
	if err != nil {
		f.t.Fatal(err)
	}
	return h
}

func (f *afix) replayEqual() {
	f.t.Helper()
	res, err := Replay(f.l)
	if err != nil || !res.Equal {
		f.t.Fatalf("replay: %+v %v", res, err)
	}
	if _, err := ledger.Validate(f.l.Root, f.l.RunID); err != nil {
		f.t.Fatal(err)
	}
}

func afixFiles() map[string]string {
	return map[string]string{"a.txt": lines("a", 30), "b.txt": lines("b", 30), "c.txt": lines("c", 30)}
}

func TestApplyPlan_Layers(t *testing.T) {
	f := newAfix(t, afixFiles())
	pa := f.diff(map[string]string{"a.txt": strings.Replace(lines("a", 30), "a line k", "A LINE K", 1)})
	pb := f.diff(map[string]string{"b.txt": lines("b", 31)})
	pc := f.diff(map[string]string{"c.txt": "new c\n" + lines("c", 30)})
	r := f.open()
	f.propose(r, "pa", pa, AtomicProposal, "a.txt")
	f.propose(r, "pb", pb, AtomicProposal, "b.txt")
	f.propose(r, "pc", pc, AtomicProposal, "c.txt")
	f.plan(r, "pc", "pa", "pb")
	var seen []string
	opts := f.applyOpts()
	opts.Progress = func(p ApplyProgress) { seen = append(seen, p.ProposalID+":"+p.Outcome) }
	rep, err := ApplyPlan(f.repo, r, opts)
	r.Close()
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Applied) != 3 || rep.Applied[0].ProposalID != "pc" || rep.Applied[2].ProposalID != "pb" || len(rep.Rejected) != 0 {
		t.Fatalf("report %+v", rep)
	}
	if strings.Join(seen, ",") != "pc:applied,pa:applied,pb:applied" {
		t.Errorf("progress %v", seen)
	}
	head := f.ref()
	if head.String() != rep.HeadRef {
		t.Errorf("ref %s, report %s", head, rep.HeadRef)
	}
	// git agrees: the final tree is the three diffs applied by git
	f.git.Git("checkout", "-q", "-b", "check")
	for _, d := range []string{pa, pb, pc} {
		p := filepath.Join(t.TempDir(), "p.diff")
		os.WriteFile(p, []byte(d), 0o644)
		f.git.Git("apply", "--index", p)
	}
	if want := f.git.Git("write-tree"); want != rep.Tree {
		t.Errorf("tree %s, git gives %s", rep.Tree, want)
	}
	// trailers and one parent per checkpoint
	ch, err := Chain(f.repo, mustHash(t, f.base), head, 10)
	if err != nil || len(ch) != 3 {
		t.Fatalf("chain %v %v", ch, err)
	}
	for i, c := range ch {
		if c.Checkpoint.ProposalID != []string{"pc", "pa", "pb"}[i] || c.Checkpoint.RunID != "r1" || !strings.HasPrefix(c.Checkpoint.DiffDigest, "sha256:") {
			t.Errorf("checkpoint %d: %+v", i, c.Checkpoint)
		}
	}
	st, _, err := LoadState(f.l)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(st.AppliedIDs(), ",") != "pc,pa,pb" || st.IntegrationHead != head.String() {
		t.Errorf("state applied %v head %s", st.AppliedIDs(), st.IntegrationHead)
	}
	for _, l := range st.Applied {
		doc, err := os.ReadFile(f.l.Abs(l.Path))
		if err != nil || canonical.Digest(doc) != l.ArtifactDigest {
			t.Errorf("ApplyResult %s: %v", l.Path, err)
		}
	}
	f.replayEqual()

	// applying again does nothing
	r = f.open()
	rep, err = ApplyPlan(f.repo, r, f.applyOpts())
	r.Close()
	if err != nil || len(rep.Applied) != 0 || f.ref() != head {
		t.Fatalf("second apply: %+v %v", rep, err)
	}
}

func mustHash(t *testing.T, s string) gitstore.Hash {
	h, ok := gitstore.ParseHash(s)
	if !ok {
		t.Fatalf("bad hash %q", s)
	}
	return h
}

func TestApplyPlan_ReorderThenDrop(t *testing.T) {
	f := newAfix(t, afixFiles())
	a := lines("a", 30)
	p1 := f.diff(map[string]string{"a.txt": strings.Replace(a, "a line k", "FIRST", 1)})
	pConflict := f.diff(map[string]string{"a.txt": strings.Replace(a, "a line k", "SECOND", 1)})
	// pDep is written on top of p1: it applies only after p1
	f.git.Write(map[string]string{"a.txt": strings.Replace(a, "a line k", "FIRST", 1)})
	f.git.Commit("tmp")
	pDep := f.diff(map[string]string{"a.txt": strings.Replace(strings.Replace(a, "a line k", "FIRST", 1), "FIRST", "FIRST and more", 1)})
	f.git.Git("reset", "-q", "--hard", f.base)
	pb := f.diff(map[string]string{"b.txt": lines("b", 29)})

	r := f.open()
	f.propose(r, "p1", p1, AtomicProposal, "a.txt")
	f.propose(r, "p2", pConflict, AtomicProposal, "a.txt")
	f.propose(r, "p3", pDep, AtomicProposal, "a.txt")
	f.propose(r, "p4", pb, AtomicProposal, "b.txt")
	f.plan(r, "p3", "p1", "p2", "p4")
	rep, err := ApplyPlan(f.repo, r, f.applyOpts())
	r.Close()
	if err != nil {
		t.Fatal(err)
	}
	var applied []string
	for _, a := range rep.Applied {
		applied = append(applied, a.ProposalID)
	}
	if strings.Join(applied, ",") != "p1,p4,p3" {
		t.Errorf("applied %v, want p1,p4,p3", applied)
	}
	if strings.Join(rep.Deferred, ",") != "p3,p2,p2" { // p2 is retried after each round that moved the head
		t.Errorf("deferred %v, want p3,p2,p2", rep.Deferred)
	}
	if len(rep.Rejected) != 1 || rep.Rejected[0].ProposalID != "p2" || rep.Rejected[0].ReasonCode != ReasonConflict || len(rep.Rejected[0].ConflictSummary) == 0 {
		t.Fatalf("rejected %+v", rep.Rejected)
	}
	if c := rep.Rejected[0].ConflictSummary[0]; c.Path != "a.txt" {
		t.Errorf("conflict %+v", c)
	}
	st, _, _ := LoadState(f.l)
	if q := st.Proposals["p2"]; q.Status != StatusRejected || q.Attempts != 3 {
		t.Errorf("p2 %+v", q)
	}
	if _, err := os.Stat(f.l.ConflictDecisionPath(rep.Rejected[0].DecisionID)); err != nil {
		t.Errorf("conflict decision: %v", err)
	}
	f.replayEqual()
}

// The writer moves the ref once per batch of layers, then records their
// events: a coordinator killed in between leaves the ref several
// checkpoints ahead of the ledger, with their ApplyResults written. The
// next apply recovers each of them, bottom first, and ends where an
// uninterrupted apply ends.
// planTwo opens the run of a fixture of afixFiles with two planned
// proposals, pa (a.txt) and pb (b.txt), and a stacker on it.
func planTwo(t *testing.T) (*afix, *Run, *stacker) {
	t.Helper()
	f := newAfix(t, afixFiles())
	pa := f.diff(map[string]string{"a.txt": lines("a", 31)})
	pb := f.diff(map[string]string{"b.txt": lines("b", 31)})
	r := f.open()
	f.propose(r, "pa", pa, AtomicProposal, "a.txt")
	f.propose(r, "pb", pb, AtomicProposal, "b.txt")
	f.plan(r, "pa", "pb")
	s, err := newStacker(f.repo, r, f.applyOpts())
	if err != nil {
		t.Fatal(err)
	}
	return f, r, s
}

func TestReconcile_RecoversABatchMovedInOneStep(t *testing.T) {
	f, r, s := planTwo(t)
	ci := CheckpointInfo{RunID: "r1", WaveID: "wave-1"}
	var batch []pendingLayer
	head, tree := s.head, s.headTree
	for _, id := range []string{"pa", "pb"} {
		lp, err := s.cache.get(r.State.Proposals[id])
		if err != nil {
			t.Fatal(err)
		}
		res, conflicts, err := s.tryOn(lp, tree, 0)
		if err != nil || conflicts != nil {
			t.Fatal(err, conflicts)
		}
		pl, err := s.checkpoint(lp, res, head, ci)
		if err != nil {
			t.Fatal(err)
		}
		batch = append(batch, pl)
		head, tree = pl.commit, pl.tree
	}
	if err := s.store.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := s.writeApplyResults(batch); err != nil {
		t.Fatal(err)
	}
	if err := f.repo.UpdateRef(IntegrationRef("r1"), head, s.head); err != nil {
		t.Fatal(err)
	}
	rep, err := ApplyPlan(f.repo, r, f.applyOpts())
	r.Close()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(rep.Reconciled.Recovered, ",") != "pa,pb" || len(rep.Applied) != 0 || rep.HeadRef != head.String() {
		t.Fatalf("report %+v", rep)
	}
	st, _, _ := LoadState(f.l)
	if strings.Join(st.AppliedIDs(), ",") != "pa,pb" || st.IntegrationHead != head.String() {
		t.Errorf("recovered %v at %s, want pa,pb at %s", st.AppliedIDs(), st.IntegrationHead, head)
	}
	for i, l := range st.Applied {
		if l.CheckpointID != batch[i].commit.String() || l.ApplyResultID != batch[i].ar.ApplyResultID {
			t.Errorf("layer %d: %+v, want checkpoint %s and ApplyResult %s", i, l, batch[i].commit, batch[i].ar.ApplyResultID)
		}
	}
	f.replayEqual()
}

func TestReconcile_RecoversACheckpointWithoutItsEvent(t *testing.T) {
	// what a coordinator killed after moving the ref leaves: pa's checkpoint
	// on the ref, no event
	f, r, s := planTwo(t)
	lp, _ := s.cache.get(r.State.Proposals["pa"])
	res, conflicts, err := s.try(lp, 0)
	if err != nil || conflicts != nil {
		t.Fatal(err, conflicts)
	}
	sig := gitstore.Signature{Name: "dome", Email: "dome@localhost", When: testAt}
	c, err := WriteCheckpoint(f.repo, s.head, res.Tree, CheckpointInfo{RunID: "r1", WaveID: "wave-1", ProposalID: "pa", DiffDigest: lp.state.DiffDigest}, "", sig, sig)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.repo.UpdateRef(IntegrationRef("r1"), c, s.head); err != nil {
		t.Fatal(err)
	}
	n := len(r.State.Applied)
	rep, err := ApplyPlan(f.repo, r, f.applyOpts())
	r.Close()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(rep.Reconciled.Recovered, ",") != "pa" || len(rep.Applied) != 1 || rep.Applied[0].ProposalID != "pb" || n != 0 {
		t.Fatalf("report %+v", rep)
	}
	st, evs, _ := LoadState(f.l)
	if st.Applied[0].CheckpointID != c.String() {
		t.Errorf("recovered layer %+v, want checkpoint %s", st.Applied[0], c)
	}
	found := false
	for _, e := range evs {
		if e.Topic == TopicProposalApplied && strings.Contains(string(e.Payload), `"recovered":true`) {
			found = true
		}
	}
	if !found {
		t.Error("no recovered applied event")
	}
	f.replayEqual()

	// the ref moved back to the base by hand: recorded as a rollback
	head := f.ref()
	if err := f.repo.UpdateRef(IntegrationRef("r1"), mustHash(t, f.base), head); err != nil {
		t.Fatal(err)
	}
	r = f.open()
	rec, err := Reconcile(f.repo, r, f.applyOpts())
	r.Close()
	if err != nil || rec.RolledBack != f.base {
		t.Fatalf("reconcile %+v %v", rec, err)
	}
	st, _, _ = LoadState(f.l)
	if len(st.Applied) != 0 || st.Proposals["pa"].Status != StatusRolledBack || st.IntegrationHead != f.base {
		t.Errorf("after reconciled rollback: %v %s", st.AppliedIDs(), st.IntegrationHead)
	}

	// a foreign commit on the ref is refused
	tree, _ := f.repo.CommitTree(mustHash(t, f.base))
	foreign, _ := f.repo.WriteCommit(gitstore.CommitSpec{Tree: tree, Parents: []gitstore.Hash{mustHash(t, f.base)}, Author: sig, Committer: sig, Message: "hand made\n"})
	if err := f.repo.UpdateRef(IntegrationRef("r1"), foreign, mustHash(t, f.base)); err != nil {
		t.Fatal(err)
	}
	r = f.open()
	_, err = ApplyPlan(f.repo, r, f.applyOpts())
	r.Close()
	var ce *errkind.CheckError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "not a checkpoint of this run") {
		t.Fatalf("foreign commit: %v", err)
	}
}

func TestApplyPlan_SplitByFileAndHunk(t *testing.T) {
	f := newAfix(t, afixFiles())
	a := lines("a", 30)
	first := f.diff(map[string]string{"a.txt": strings.Replace(strings.Replace(a, "a line c", "FIRST-C", 1), "a line x", "FIRST-X", 1)})
	// conflicts on a.txt with first, applies on b.txt
	byFile := f.diff(map[string]string{"a.txt": strings.Replace(a, "a line c", "OTHER-C", 1), "b.txt": lines("b", 31)})
	// two hunks in c.txt apply, the one in a.txt near line x does not
	cc := strings.Replace(strings.Replace(lines("c", 30), "c line c", "C-ONE", 1), "c line y", "C-TWO", 1)
	byHunk := f.diff(map[string]string{"a.txt": strings.Replace(a, "a line x", "OTHER-X", 1), "c.txt": cc})
	r := f.open()
	f.propose(r, "first", first, AtomicProposal, "a.txt")
	f.propose(r, "byfile", byFile, AtomicFile, "a.txt", "b.txt")
	f.propose(r, "byhunk", byHunk, HunkOK, "a.txt", "c.txt")
	f.propose(r, "whole", f.diff(map[string]string{"a.txt": strings.Replace(a, "a line c", "WHOLE-C", 1)}), AtomicProposal, "a.txt")
	f.plan(r, "first", "byfile", "byhunk", "whole")
	rep, err := ApplyPlan(f.repo, r, f.applyOpts())
	r.Close()
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Split) != 2 || rep.Split[0].ProposalID != "byfile" || rep.Split[1].ProposalID != "byhunk" {
		t.Fatalf("split %+v", rep.Split)
	}
	if s := rep.Split[0]; s.Partitioning != ByFile || strings.Join(s.Included, ",") != "b.txt" || strings.Join(s.Excluded, ",") != "a.txt" {
		t.Errorf("by file %+v", s)
	}
	if s := rep.Split[1]; s.Partitioning != ByHunk || strings.Join(s.Included, ",") != "c.txt" || strings.Join(s.Excluded, ",") != "a.txt" {
		t.Errorf("by hunk %+v", s)
	}
	if len(rep.Rejected) != 1 || rep.Rejected[0].ProposalID != "whole" {
		t.Errorf("rejected %+v", rep.Rejected)
	}
	st, _, _ := LoadState(f.l)
	if strings.Join(st.AppliedIDs(), ",") != "first,byfile.split-2,byhunk.split-2" {
		t.Errorf("applied %v", st.AppliedIDs())
	}
	if st.Proposals["byfile"].Status != StatusSplit || st.Proposals["byfile.split-2"].DerivedFrom != "byfile" {
		t.Errorf("parent %+v", st.Proposals["byfile"])
	}
	// with atomic_proposal as the cap nothing is split
	f2 := newAfix(t, afixFiles())
	r = f2.open()
	f2.propose(r, "first", first, AtomicProposal, "a.txt")
	f2.propose(r, "byfile", byFile, AtomicFile, "a.txt", "b.txt")
	f2.plan(r, "first", "byfile")
	opts := f2.applyOpts()
	opts.Mode = AtomicProposal
	rep, err = ApplyPlan(f2.repo, r, opts)
	r.Close()
	if err != nil || len(rep.Split) != 0 || len(rep.Rejected) != 1 {
		t.Fatalf("capped: %+v %v", rep, err)
	}
	f.replayEqual()
}

func TestSubsetFile_RecomputesNewStarts(t *testing.T) {
	f := &patch.File{Hunks: []*patch.Hunk{
		{OldStart: 3, OldLines: 2, NewStart: 3, NewLines: 4},
		{OldStart: 10, OldLines: 0, NewStart: 13, NewLines: 1},
		{OldStart: 20, OldLines: 2, NewStart: 24, NewLines: 0},
	}}
	got := subsetFile(f, []int{1, 2})
	if got.Hunks[0].NewStart != 11 || got.Hunks[1].NewStart != 20 {
		t.Errorf("new starts %d %d, want 11 20", got.Hunks[0].NewStart, got.Hunks[1].NewStart)
	}
	if f.Hunks[1].NewStart != 13 {
		t.Error("the original was changed")
	}
}

// A command reads the run to find its policy, then opens it for writing:
// OpenRunAfter reads and folds only what was appended in between, and
// ends with the state OpenRun folds from every event.
func TestOpenRunAfter_FoldsOnlyTheTail(t *testing.T) {
	f := newAfix(t, afixFiles())
	r := f.open()
	f.propose(r, "pa", f.diff(map[string]string{"a.txt": lines("a", 31)}), AtomicProposal, "a.txt")
	r.Close()
	// each case takes over a state and events read before the append
	before := []func() (State, []ledger.Event){}
	for i := 0; i < 3; i++ {
		st, evs, err := LoadState(f.l)
		if err != nil {
			t.Fatal(err)
		}
		before = append(before, func() (State, []ledger.Event) { return st, evs })
	}
	// another command appends between the read and the lock
	r = f.open()
	f.propose(r, "pb", f.diff(map[string]string{"b.txt": lines("b", 31)}), AtomicProposal, "b.txt")
	r.Close()
	full := f.open()
	want, _ := full.State.Marshal()
	full.Close()
	for i, tc := range []struct {
		name   string
		change func(State, []ledger.Event) (State, []ledger.Event)
	}{
		{"read before the append", func(st State, evs []ledger.Event) (State, []ledger.Event) { return st, evs }},
		{"a state that is not of these events: folded whole", func(_ State, evs []ledger.Event) (State, []ledger.Event) { return NewState("r1"), evs }},
		{"more events than the folder holds: read and folded whole", func(st State, evs []ledger.Event) (State, []ledger.Event) {
			evs = append(evs, evs[len(evs)-1], evs[len(evs)-1], evs[len(evs)-1])
			st.Sequence = int64(len(evs))
			return st, evs
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, evs := tc.change(before[i]())
			r, err := OpenRunAfter(f.l, st, evs)
			if err != nil {
				t.Fatal(err)
			}
			got, _ := r.State.Marshal()
			r.Close()
			if string(got) != string(want) || r.State.Proposals["pb"] == nil {
				t.Errorf("state after OpenRunAfter differs from OpenRun's:\n%s\n%s", got, want)
			}
		})
	}
}
