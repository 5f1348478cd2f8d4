// Package stacksim writes the ledger of a large stack run without running
// one: n proposals submitted, a plan that orders all but every tenth and
// rejects those, a layer applied per planned proposal with a checkpoint id
// of its own, and a passing validation. The events fold (pkg/stack.Fold)
// exactly as a real run's do, so the web view and its benchmark can show a
// 1,000-node run in milliseconds of setup. The commit ids are made up: a
// run written here has no integration ref.
package stacksim

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/dome-registry/dome/pkg/artifact"
	"github.com/dome-registry/dome/pkg/canonical"
	"github.com/dome-registry/dome/pkg/ledger"
	"github.com/dome-registry/dome/pkg/stack"
)

// sha makes a stable 40-hex id from parts.
func sha(parts ...any) string {
	h := sha256.Sum256([]byte(fmt.Sprint(parts...)))
	return hex.EncodeToString(h[:20])
}

// Options shape the run.
type Options struct {
	RunID     string
	Proposals int
	// Tasks adds a task.completed ControlEvent per proposal (a wave run's
	// shape); Hostile puts markup in worker ids, details and reasons.
	Tasks   bool
	Hostile bool
	At      time.Time
}

// Write writes the run under runsDir/<run id> and returns its last sequence.
func Write(runsDir string, o Options) (int64, error) {
	l := stack.NewLayout(runsDir, o.RunID)
	log, err := ledger.Open(l.Root, o.RunID)
	if err != nil {
		return 0, err
	}
	defer log.Close()
	ts := o.At
	step := func() time.Time { ts = ts.Add(time.Millisecond); return ts }
	add := func(topic string, p any) error {
		_, err := log.AppendPayload(topic, step(), p)
		return err
	}
	base := sha("base", o.RunID)
	if err := add(stack.TopicInitialized, stack.InitializedPayload{RunID: o.RunID, WaveID: stack.WaveIDFor(1), BaseRef: base, BaseTreeHash: sha("tree", base),
		TargetRef: "refs/heads/main", IntegrationRef: stack.IntegrationRef(o.RunID), DeterminismSeed: "sha256:" + sha("seed") + "000000000000000000000000",
		PolicyDigest: "sha256:" + sha("policy") + "000000000000000000000000", Producer: "stacksim"}); err != nil {
		return 0, err
	}
	worker := func(i int) string {
		if o.Hostile {
			return fmt.Sprintf(`w%d<script>window.__domePwned=%d</script>`, i, i)
		}
		return fmt.Sprintf("worker-%d", i%16)
	}
	ids := make([]string, o.Proposals)
	for i := range ids {
		ids[i] = fmt.Sprintf("p%05d", i)
		p := stack.ProposalSubmittedPayload{ProposalID: ids[i], WaveID: stack.WaveIDFor(1), Path: "stack/proposals/" + ids[i] + ".patch_proposal.json",
			ArtifactDigest: "sha256:" + sha("a", i) + "000000000000000000000000", PayloadDigest: "sha256:" + sha("p", i) + "000000000000000000000000",
			DiffDigest: "sha256:" + sha("d", i) + "000000000000000000000000", PatchID: sha("patch", i), BaseRef: base, IdempotencyKey: "k-" + ids[i],
			WorkerID: worker(i), CreatedAt: o.At.Format(time.RFC3339), TouchedFiles: []string{fmt.Sprintf("pkg/m%d/f%d.go", i%50, i)},
			IntentTags: []string{"refactor"}, Risk: stack.Risk{Class: "low", Score: i % 40}, DeclaredRisk: "low", Constraints: stack.Constraints{Atomicity: "atomic_proposal"}}
		if err := add(stack.TopicProposalSubmitted, p); err != nil {
			return 0, err
		}
	}
	var ordered []string
	var rejected []stack.RejectedRef
	var planned []stack.PlannedProposal
	var rejDetail []stack.Rejected
	for i, id := range ids {
		if i%10 == 9 {
			code := "conflict"
			if o.Hostile {
				code = "conflict<b>bold</b>"
			}
			rejected = append(rejected, stack.RejectedRef{ProposalID: id, ReasonClass: "conflict", ReasonCode: code})
			rejDetail = append(rejDetail, stack.Rejected{ProposalID: id, DiffDigest: "sha256:" + sha("d", i), ReasonClass: "conflict", ReasonCode: code, Detail: "does not apply after " + ids[i-1]})
			continue
		}
		ordered = append(ordered, id)
		planned = append(planned, stack.PlannedProposal{Position: len(ordered), ProposalID: id, DiffDigest: "sha256:" + sha("d", i), PriorityGroup: "independent", Mode: "atomic_proposal", ExpectedTree: sha("t", i)})
	}
	// The plan artifact, so the plan page can read and draw it.
	plan := stack.StackPlan{StackPlanID: "plan-" + sha("plan")[:16], RunID: o.RunID, WaveID: stack.WaveIDFor(1), BaseRef: base, BaseTreeHash: sha("tree", base),
		StartRef: base, OrderedProposals: planned, Rejected: rejDetail, CheckpointStrategy: "per_layer", ExpectedValidations: []stack.ExpectedValidation{},
		DeterminismSeed: "seed", SelectionScores: []stack.SelectionScore{}, OverlapGraph: stack.OverlapGraph{Nodes: []string{}, Edges: []stack.OverlapEdge{}},
		TieBreakOrder: stack.SelectionTieBreakOrder, PolicyDigest: "policy", Decisions: []stack.DecisionRef{}, FinalTree: sha("final")}
	for i := 0; i+1 < len(ordered) && i < 40; i += 4 {
		plan.OverlapGraph.Edges = append(plan.OverlapGraph.Edges, stack.OverlapEdge{A: ordered[i], B: ordered[i+1], Level: "file", Files: []string{"README.md"}})
	}
	doc, _, err := stack.Seal(artifact.Header{ArtifactKind: stack.KindStackPlan, Version: "1", ObjectID: plan.StackPlanID, RunID: o.RunID,
		CreatedAt: artifact.FormatTime(o.At), Producer: "stacksim"}, plan, nil)
	if err != nil {
		return 0, err
	}
	rel := "stack/plans/" + plan.StackPlanID + ".stack_plan.json"
	if err := os.MkdirAll(filepath.Dir(l.Abs(rel)), 0o755); err != nil {
		return 0, err
	}
	if err := os.WriteFile(l.Abs(rel), doc, 0o644); err != nil {
		return 0, err
	}
	if err := add(stack.TopicPlanComputed, stack.PlanComputedPayload{StackPlanID: plan.StackPlanID, WaveID: stack.WaveIDFor(1), Path: rel,
		ArtifactDigest: canonical.Digest(doc), PayloadDigest: "sha256:" + sha("pd") + "000000000000000000000000", StartRef: base,
		OrderedProposals: ordered, Rejected: rejected, CheckpointStrategy: "per_layer", ExpectedValidations: []stack.ExpectedValidation{},
		DeterminismSeed: "seed", FinalTree: sha("final"), Decisions: []stack.DecisionRef{}}); err != nil {
		return 0, err
	}
	head := base
	for i, id := range ordered {
		cp := sha("checkpoint", i)
		if err := add(stack.TopicProposalApplied, stack.ProposalAppliedPayload{ProposalID: id, DiffDigest: "sha256:" + sha("d", indexOf(ids, id)) + "000000000000000000000000",
			StackPlanID: plan.StackPlanID, Position: i + 1, ParentRef: head, HeadRef: cp, CheckpointID: cp, Tree: sha("t", i), Mode: "atomic_proposal",
			ApplyResultID: "apply-" + sha("ar", i)[:24], Path: "stack/apply/" + id + ".apply_result.json", ArtifactDigest: "sha256:" + sha("ard", i) + "000000000000000000000000"}); err != nil {
			return 0, err
		}
		head = cp
		if o.Tasks {
			detail := "done"
			if o.Hostile {
				detail = `<img src=x onerror="window.__domePwned=3">`
			}
			if err := add(stack.TopicTaskCompleted, stack.TaskPayload{TaskID: "task-" + id, WaveID: stack.WaveIDFor(1), NodeID: "node-" + id,
				NodeExecutionID: "exec-" + sha("x", i)[:16], WorkerID: worker(i), Detail: detail, ArtifactRefs: []string{id}}); err != nil {
				return 0, err
			}
		}
	}
	if err := add(stack.TopicValidationRecorded, stack.ValidationRecordedPayload{ReportID: "validation-fast-" + sha("v")[:16], Tier: "fast", HeadRef: head,
		Tree: sha("t", len(ordered)-1), ProposalIDs: ordered, Passed: true, Path: "stack/validation/v.validation_report.json",
		ArtifactDigest: "sha256:" + sha("vd") + "000000000000000000000000"}); err != nil {
		return 0, err
	}
	return log.Next() - 1, nil
}

func indexOf(ids []string, id string) int {
	for i, x := range ids {
		if x == id {
			return i
		}
	}
	return -1
}
