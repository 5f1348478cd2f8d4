package stack

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/dome-registry/dome/pkg/ledger"
)

var ts0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func sha(c byte) string { return strings.Repeat(string(c), 40) }

type step struct {
	topic   string
	payload any
	wantErr string
}

func submitted(id, key string) ProposalSubmittedPayload {
	return ProposalSubmittedPayload{ProposalID: id, WaveID: "wave-1", Path: "stack/proposals/" + id + ".patch_proposal.json",
		ArtifactDigest: "sha256:a", DiffDigest: "sha256:d-" + id, BaseRef: sha('b'), IdempotencyKey: key, WorkerID: "w",
		CreatedAt: "2026-01-02T03:04:05Z", Constraints: Constraints{Atomicity: AtomicProposal}}
}

func initPayload() InitializedPayload {
	return InitializedPayload{RunID: "r1", WaveID: "wave-1", BaseRef: sha('b'), BaseTreeHash: sha('a'), TargetRef: "refs/heads/main",
		IntegrationRef: IntegrationRef("r1")}
}

func applied(id, parent, head string) ProposalAppliedPayload {
	return ProposalAppliedPayload{ProposalID: id, DiffDigest: "sha256:d-" + id, StackPlanID: "plan-1", Position: 1, ParentRef: parent,
		HeadRef: head, CheckpointID: head, Tree: sha('e'), Mode: AtomicProposal, ApplyResultID: "ar-" + id}
}

// run records the steps in a fresh run and returns it (closed).
func runSteps(t *testing.T, steps []step) (*Run, Layout) {
	t.Helper()
	l := NewLayout(t.TempDir(), "r1")
	r, err := OpenRun(l, true)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for i, s := range steps {
		_, err := r.Record(s.topic, ts0.Add(time.Duration(i)*time.Second), s.payload)
		if s.wantErr == "" && err != nil {
			t.Fatalf("step %d %s: %v", i, s.topic, err)
		}
		if s.wantErr != "" && (err == nil || !strings.Contains(err.Error(), s.wantErr)) {
			t.Fatalf("step %d %s: error %v, want %q", i, s.topic, err, s.wantErr)
		}
	}
	return r, l
}

func TestFold_WholeLoop(t *testing.T) {
	r, l := runSteps(t, []step{
		{TopicInitialized, initPayload(), ""},
		{TopicTaskDispatched, TaskPayload{TaskID: "t1", WaveID: "wave-1", WorkerID: "w1"}, ""},
		{TopicProposalSubmitted, submitted("p1", "k1"), ""},
		{TopicProposalSubmitted, submitted("p2", "k2"), ""},
		{TopicProposalSubmitted, submitted("p3", "k3"), ""},
		{TopicProposalSubmitted, submitted("p4", "k1"), "already used"},
		{TopicProposalDeduplicated, ProposalDeduplicatedPayload{ProposalID: "p1", IdempotencyKey: "k1"}, ""},
		{TopicProposalRejected, ProposalRejectedPayload{ProposalID: "p9", WaveID: "wave-1", Stage: StageSubmit, ReasonClass: ClassPolicy, ReasonCode: ReasonForbiddenPath}, ""},
		{TopicPlanComputed, PlanComputedPayload{StackPlanID: "plan-1", WaveID: "wave-1", StartRef: sha('b'), OrderedProposals: []string{"p1", "p2"},
			Rejected: []RejectedRef{{ProposalID: "p3", ReasonClass: ClassConflict, ReasonCode: ReasonConflict}}}, ""},
		{TopicProposalApplied, applied("p1", sha('c'), sha('1')), "integration head"},
		{TopicProposalApplied, applied("p1", sha('b'), sha('1')), ""},
		{TopicProposalApplyFailed, ProposalApplyFailedPayload{ProposalID: "p2", ReasonCode: ReasonConflict, Action: ActionReorder}, ""},
		{TopicProposalApplied, applied("p2", sha('1'), sha('2')), ""},
		{TopicProposalApplied, applied("p3", sha('2'), sha('3')), "is rejected"},
		{TopicValidationRecorded, ValidationRecordedPayload{ReportID: "v1", Tier: "fast", HeadRef: sha('2'), ProposalIDs: []string{"p1", "p2"}, Passed: true}, ""},
		{TopicRolledBack, RolledBackPayload{FromHeadRef: sha('2'), ToCheckpoint: sha('1'), Removed: []string{"p2"}}, ""},
		{TopicProposalApplied, applied("p2", sha('1'), sha('4')), ""},
		{TopicPromoted, PromotedPayload{DecisionID: "d1", FromHeadRef: sha('4'), ToRef: "refs/heads/main"}, "no promotion.computed"},
		{TopicPromotionComputed, PromotionComputedPayload{DecisionID: "d1", FromHeadRef: sha('4'), ToRef: "refs/heads/main", Allowed: true}, ""},
		{TopicPromoted, PromotedPayload{DecisionID: "d1", FromHeadRef: sha('4'), ToRef: "refs/heads/main", OldTarget: sha('b')}, ""},
		{TopicRolledBack, RolledBackPayload{FromHeadRef: sha('4'), ToCheckpoint: sha('b'), Removed: []string{"p2", "p1"}}, "promoted"},
		{"stack.unknown", map[string]any{}, "unknown topic"},
	})
	st := r.State
	if got := strings.Join(st.AppliedIDs(), ","); got != "p1,p2" {
		t.Errorf("applied = %s", got)
	}
	if st.IntegrationHead != sha('4') || st.Promoted == nil || st.Tasks["t1"].Status != "dispatched" {
		t.Errorf("state: head %s promoted %v", st.IntegrationHead, st.Promoted)
	}
	if st.Proposals["p3"].Status != StatusRejected || len(st.Rejections) != 2 {
		t.Errorf("rejections: %+v", st.Rejections)
	}
	if got := st.ByStatus()[StatusApplied]; strings.Join(got, ",") != "p1,p2" {
		t.Errorf("by status: %v", st.ByStatus())
	}
	// Replay equals the stored state.
	res, err := Replay(l)
	if err != nil || !res.Equal {
		t.Fatalf("replay: %+v %v", res, err)
	}
	// Editing state.json is found, with the field.
	b, _ := os.ReadFile(l.StatePath())
	os.WriteFile(l.StatePath(), []byte(strings.Replace(string(b), `"wave":1`, `"wave":2`, 1)), 0o644)
	res, err = Replay(l)
	if err != nil || res.Equal || res.FirstDiff != "/wave" {
		t.Fatalf("replay after edit: %+v %v", res, err)
	}
	// Reopening repairs state.json (it is a view of the events).
	r2, err := OpenRun(l, false)
	if err != nil {
		t.Fatal(err)
	}
	r2.Close()
	if res, _ := Replay(l); !res.Equal {
		t.Fatalf("state.json not repaired: %+v", res)
	}
}

func TestFold_WaveAdvance(t *testing.T) {
	r, _ := runSteps(t, []step{
		{TopicInitialized, initPayload(), ""},
		{TopicProposalSubmitted, submitted("p1", "k1"), ""},
		{TopicProposalSubmitted, submitted("p2", "k2"), ""},
		{TopicProposalApplied, applied("p1", sha('b'), sha('1')), ""},
		{TopicWaveAdvanced, WaveAdvancedPayload{PreviousWaveID: "wave-1", WaveID: "wave-2", BaseRef: sha('1'), BaseTreeHash: sha('e'), Superseded: []string{}}, "superseded"},
		{TopicWaveAdvanced, WaveAdvancedPayload{PreviousWaveID: "wave-1", WaveID: "wave-2", BaseRef: sha('1'), BaseTreeHash: sha('e'), Superseded: []string{"p2"}}, ""},
		{TopicProposalSubmitted, submitted("p5", "k5"), "is for wave-1"},
		{TopicRolledBack, RolledBackPayload{FromHeadRef: sha('1'), ToCheckpoint: sha('b'), Removed: []string{"p1"}}, "not a checkpoint"},
	})
	if r.State.WaveID != "wave-2" || r.State.BaseRef != sha('1') || r.State.Proposals["p2"].Status != StatusSuperseded {
		t.Fatalf("state after advance: %+v", r.State)
	}
}

func TestFold_RequiresInit(t *testing.T) {
	runSteps(t, []step{
		{TopicProposalSubmitted, submitted("p1", "k1"), "no stack.initialized"},
		{TopicTaskProgress, TaskPayload{TaskID: "t"}, ""},
		{TopicInitialized, initPayload(), ""},
		{TopicInitialized, initPayload(), "already initialized"},
	})
}

func TestFold_StrictPayload(t *testing.T) {
	runSteps(t, []step{
		{TopicInitialized, map[string]any{"run_id": "r1", "surprise": 1}, "unknown field"},
	})
}

func TestOpenRun_Locked(t *testing.T) {
	l := NewLayout(t.TempDir(), "r1")
	r, err := OpenRun(l, true)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, err := OpenRun(l, true); err == nil || !strings.Contains(err.Error(), ledger.ErrLocked.Error()) {
		t.Fatalf("second open: %v", err)
	}
}

func TestRun_DeferState(t *testing.T) {
	l := NewLayout(t.TempDir(), "r1")
	r, err := OpenRun(l, true)
	if err != nil {
		t.Fatal(err)
	}
	r.DeferState()
	if _, err := r.Record(TopicInitialized, ts0, initPayload()); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Record(TopicProposalSubmitted, ts0, submitted("p1", "k1")); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(l.StatePath()); !os.IsNotExist(err) {
		t.Fatalf("state.json written while deferred: %v", err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if res, err := Replay(l); err != nil || !res.Equal || res.Sequence != 2 {
		t.Fatalf("replay after Close: %+v %v", res, err)
	}
}

func TestFold_WithdrawnAndForeignTopics(t *testing.T) {
	r, _ := runSteps(t, []step{
		{topic: TopicInitialized, payload: initPayload()},
		{topic: "run.started", payload: map[string]any{"anything": []int{1, 2}}},
		{topic: TopicProposalSubmitted, payload: submitted("p1", "k1")},
		{topic: TopicProposalSubmitted, payload: submitted("p2", "k2")},
		{topic: "gateway.call", payload: map[string]string{"method": "patch-proposal/submit_patch"}},
		{topic: TopicProposalWithdrawn, payload: ProposalWithdrawnPayload{ProposalID: "p1", Reason: "lost"}},
		{topic: TopicProposalWithdrawn, payload: ProposalWithdrawnPayload{ProposalID: "p1", Reason: "lost"}, wantErr: "is withdrawn"},
		{topic: TopicProposalWithdrawn, payload: ProposalWithdrawnPayload{ProposalID: "p9", Reason: "lost"}, wantErr: "unknown proposal"},
		{topic: TopicProposalWithdrawn, payload: ProposalWithdrawnPayload{ProposalID: "p2"}, wantErr: "reason is required"},
		{topic: "runner.x", payload: map[string]string{}, wantErr: "unknown topic"},
		{topic: TopicTaskCompleted, payload: TaskPayload{TaskID: "t.1", NodeID: "t", Attempt: 1, Reason: "ok", Data: []byte(`{"status":"succeeded"}`)}},
	})
	st := r.State
	if st.Proposals["p1"].Status != StatusWithdrawn || st.Proposals["p2"].Status != StatusSubmitted {
		t.Fatalf("statuses: %s %s", st.Proposals["p1"].Status, st.Proposals["p2"].Status)
	}
	if got := st.PlannableProposals(); strings.Join(got, ",") != "p2" {
		t.Fatalf("plannable %v", got)
	}
	if tk := st.Tasks["t.1"]; tk == nil || tk.Attempt != 1 || tk.Reason != "ok" || tk.Status != "completed" {
		t.Fatalf("task: %+v", tk)
	}
	if st.Sequence != 7 {
		t.Fatalf("sequence %d", st.Sequence)
	}
}
