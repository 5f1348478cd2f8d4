package orchestrate

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/dome-registry/dome/pkg/gateway"
	"github.com/dome-registry/dome/pkg/gitstore"
	"github.com/dome-registry/dome/pkg/ledger"
	"github.com/dome-registry/dome/pkg/stack"
	"github.com/dome-registry/dome/pkg/workflow"
)

// endOfWave runs once nothing runs and nothing more may start in the
// wave: the wave's proposals go onto the canvas, then the run stops, or a
// new wave starts from the integration head.
func (c *coordinator) endOfWave(ctx context.Context) (*StoppedPayload, error) {
	wave := c.waveID()
	w := c.wave(wave)
	if c.halting == StopCancelled {
		return c.stop(c.halting, c.eng.Halted())
	}
	if w == nil || !w.Integrated {
		if err := c.integrate(); err != nil {
			return nil, err
		}
		w = c.wave(wave)
	}
	if c.halting != "" {
		return c.stop(c.halting, c.eng.Halted())
	}
	if c.eng.Done() {
		return c.finish(ctx)
	}
	if w != nil && w.Dispatched == 0 && len(w.Reopened) == 0 && len(c.rep.v.st.Waves) > 1 {
		// A wave that started nothing and reopened nothing: the next would
		// be the same. The engine holds nodes it will never start.
		s := c.eng.Summary()
		return nil, fmt.Errorf("run %s: the scheduler stalled in %s with %d of %d nodes unfinished", c.cfg.RunID, wave, s.Nodes-s.ByStatus[workflow.StatusSucceeded]-
			s.ByStatus[workflow.StatusFailed]-s.ByStatus[workflow.StatusSkipped]-s.ByStatus[workflow.StatusCancelled], s.Nodes)
	}
	if err := c.advance(); err != nil {
		return nil, err
	}
	return nil, nil
}

func (c *coordinator) wave(id string) *WaveView {
	ws := c.rep.v.st.Waves
	for i := range ws {
		if ws[i].WaveID == id {
			return &ws[i]
		}
	}
	return nil
}

func (c *coordinator) applyOptions() stack.ApplyOptions {
	sig := gitstore.Signature{Name: "dome run", Email: "dome-run@" + c.cfg.RunID + ".invalid"}
	return stack.ApplyOptions{Policy: c.sp, CreatedAt: c.cfg.Now(), Producer: c.cfg.Producer, Author: sig, Committer: sig}
}

// redundantReasons are plan and apply rejections that mean the change is
// already on the canvas.
var redundantReasons = map[string]bool{stack.ReasonDuplicateChange: true, stack.ReasonAlreadyApplied: true}

// integrate plans and applies the proposals of the wave's passing attempts
// (the stack reconciles an apply a crash interrupted), then records
// run.integrated: what landed, what was already there, and the nodes whose
// proposal did not hold, which the engine reopens.
func (c *coordinator) integrate() error {
	wave := c.waveID()
	var mine []TaskView // the wave's passing attempts that proposed
	for _, t := range c.rep.v.st.Tasks {
		if t.WaveID == wave && t.Outcome == workflow.OutcomeSucceeded {
			for _, p := range t.Proposals {
				if p.Status == gateway.StatusSubmitted || p.Status == gateway.StatusDeduplicated {
					mine = append(mine, t)
					break
				}
			}
		}
	}
	sort.Slice(mine, func(i, j int) bool { return mine[i].TaskID < mine[j].TaskID })
	p := IntegratedPayload{WaveID: wave, BaseRef: c.stackState().BaseRef, Applied: []TaskProposal{}, Redundant: []TaskProposal{}, Reopened: []TaskProposal{},
		Dropped: []TaskProposal{}}
	err := c.sr.Do(func(r *stack.Run) error {
		if len(r.State.PlannableProposals()) > 0 {
			pr, err := r.Plan(c.cfg.Repo, stack.PlanOptions{Policy: c.sp, At: c.cfg.Now(), Producer: c.cfg.Producer})
			if err != nil {
				return err
			}
			p.StackPlanID = pr.Plan.StackPlanID
			if _, err := stack.ApplyPlan(c.cfg.Repo, r, c.applyOptions()); err != nil {
				return err
			}
		} else if r.State.Plan != nil && r.State.Plan.WaveID == wave {
			p.StackPlanID = r.State.Plan.StackPlanID
		}
		st := &r.State
		p.HeadRef = st.IntegrationHead
		for _, t := range mine {
			for _, pr := range t.Proposals {
				if pr.Status != gateway.StatusSubmitted && pr.Status != gateway.StatusDeduplicated {
					continue
				}
				tp := TaskProposal{TaskID: t.TaskID, NodeID: t.NodeID, ProposalID: pr.ProposalID}
				q := st.Proposals[pr.ProposalID]
				switch {
				case q == nil:
					tp.Reason = ReasonConflict + ": the stack has no proposal " + pr.ProposalID
					p.Reopened = append(p.Reopened, tp)
				case q.Status == stack.StatusApplied:
					tp.Checkpoint = q.CheckpointID
					p.Applied = append(p.Applied, tp)
				case q.Status == stack.StatusRejected && redundantReasons[q.ReasonCode]:
					tp.Reason = q.ReasonCode
					p.Redundant = append(p.Redundant, tp)
				case q.Status == stack.StatusSplit:
					tp.Reason = ReasonConflict + ": only part of the change applied (split)"
					p.Reopened = append(p.Reopened, tp)
				case q.Status == stack.StatusRejected && q.RejectedStage == stack.StageApply:
					tp.Reason = fmt.Sprintf("%s: %s did not apply after the wave's other layers (%s)", ReasonConflict, pr.ProposalID, q.ReasonCode)
					p.Reopened = append(p.Reopened, tp)
				case q.Status == stack.StatusRejected && q.RejectedStage == stack.StagePlan:
					tp.Reason = fmt.Sprintf("%s: the wave's plan left %s out (%s)", ReasonConflict, pr.ProposalID, q.ReasonCode)
					p.Reopened = append(p.Reopened, tp)
				default:
					tp.Reason = fmt.Sprintf("%s: %s is %s (%s)", ReasonConflict, pr.ProposalID, q.Status, orDefault(q.ReasonCode, "-"))
					p.Reopened = append(p.Reopened, tp)
				}
				break // a task's first accepted proposal stands for it
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	// A loop's node cannot run again out of its iteration: its change is
	// dropped instead.
	var reopen []TaskProposal
	for _, x := range p.Reopened {
		if i, ok := c.rep.g.Index(x.NodeID); ok {
			if _, _, inLoop := c.rep.g.LoopOf(i); inLoop {
				p.Dropped = append(p.Dropped, x)
				continue
			}
		}
		reopen = append(reopen, x)
	}
	p.Reopened = nonNil(reopen)
	if err := c.record(TopicIntegrated, p); err != nil {
		return err
	}
	for _, x := range p.Reopened {
		ds, err := c.eng.Reopen(x.NodeID, x.Reason)
		if err != nil {
			return err
		}
		if err := c.decided(ds); err != nil {
			return err
		}
	}
	c.tell(Progress{Kind: "integrated", WaveID: wave, Detail: fmt.Sprintf("%d applied, %d already there, %d reopened; head %s",
		len(p.Applied), len(p.Redundant), len(p.Reopened), short(p.HeadRef))})
	return c.writeState()
}

// advance starts the next wave from the integration head.
func (c *coordinator) advance() error {
	var res *stack.AdvanceResult
	err := c.sr.Do(func(r *stack.Run) error {
		var err error
		res, err = stack.Advance(c.cfg.Repo, r, c.applyOptions())
		return err
	})
	if err != nil {
		return err
	}
	if err := c.catchUp(); err != nil {
		return err
	}
	c.gw.Forget(res.BaseRef)
	c.tell(Progress{Kind: "wave", WaveID: res.WaveID, Detail: "base " + short(res.BaseRef)})
	return nil
}

// finish ends a run whose nodes are all final: every node passed, then
// the head is validated by the tiers the stack policy requires for its
// risk, then promoted; or it says what is unmet.
func (c *coordinator) finish(ctx context.Context) (*StoppedPayload, error) {
	sum := c.eng.Summary()
	if len(sum.Failures) > 0 {
		var parts []string
		for i, f := range sum.Failures {
			if i == 5 {
				parts = append(parts, fmt.Sprintf("and %d more", len(sum.Failures)-5))
				break
			}
			parts = append(parts, fmt.Sprintf("%s %s (%s)", f.NodeID, f.Status, f.Reason))
		}
		return c.stop(StopConstraintsUnmet, fmt.Sprintf("%d of %d nodes did not pass: %s", len(sum.Failures), sum.Nodes, strings.Join(parts, "; ")))
	}
	if len(c.stackState().Applied) == 0 {
		return c.stop(StopConstraintsMet, "every node passed; no change to promote")
	}
	tiers := c.requiredTiers()
	for _, tier := range tiers {
		var vr *stack.ValidateResult
		err := c.sr.Do(func(r *stack.Run) error {
			var err error
			vr, err = stack.ValidateHead(ctx, c.cfg.Repo, r, stack.ValidateOptions{ApplyOptions: c.applyOptions(), Tier: tier, Env: c.cfg.ValidateEnv,
				TempDir: c.tmp}) // in the session's folder: a killed session's checkout is removed by the next
			return err
		})
		if err != nil {
			return nil, err
		}
		c.tell(Progress{Kind: "validated", Detail: fmt.Sprintf("tier %s on %s: passed %v", tier, short(vr.Report.HeadRef), vr.Report.Passed)})
		if !vr.Report.Passed {
			return c.stop(StopConstraintsUnmet, fmt.Sprintf("the head %s failed validation tier %s: %s", short(vr.Report.HeadRef), tier,
				strings.Join(stack.FailedCommands(vr.Report), ", ")))
		}
	}
	if !c.started.Promote {
		return c.stop(StopConstraintsMet, fmt.Sprintf("every node passed and the head validated (%s); promotion not asked", strings.Join(tiers, ", ")))
	}
	return c.promote(tiers)
}

// approve promotes a run that stopped at the human gate, now that a person
// approved it (Config.ApprovedBy): a new session (its key signs the
// promotion decision, so the ledger names it first), then the promotion
// the gate held, which stops the run again with its outcome. The stack's
// promotion checks the whole evidence chain once more.
func (c *coordinator) approve() (*StoppedPayload, error) {
	if err := c.newKey(); err != nil {
		return nil, err
	}
	p := ResumedPayload{Session: c.rep.v.st.Sessions + 1, Coordinator: c.keyRef(), Lost: []string{}}
	if err := c.record(TopicResumed, p); err != nil {
		return nil, err
	}
	return c.promote(c.requiredTiers())
}

// promote promotes the validated head to the run's target ref, or stops
// at the human gate, or says what is missing.
func (c *coordinator) promote(tiers []string) (*StoppedPayload, error) {
	var pr *stack.PromoteResult
	err := c.sr.Do(func(r *stack.Run) error {
		var err error
		pr, err = stack.Promote(c.cfg.Repo, r, stack.PromoteOptions{ApplyOptions: c.applyOptions(), ToRef: c.started.TargetRef,
			ApprovedBy: c.cfg.ApprovedBy, Key: &c.key})
		return err
	})
	if err := c.catchUp(); err != nil {
		return nil, err
	}
	if pr != nil && pr.Promoted {
		s, err := c.stop(StopConstraintsMet, fmt.Sprintf("every node passed, the head validated (%s) and was promoted to %s", strings.Join(tiers, ", "), c.started.TargetRef))
		if s != nil {
			s.Promoted = true
		}
		return s, err
	}
	if err != nil && !errkind.IsCheck(err) {
		return nil, err
	}
	if pr != nil && pr.Decision.HumanApproval && c.cfg.ApprovedBy == "" {
		return c.stop(StopHumanGate, fmt.Sprintf("promotion of %s to %s needs a person's approval for risk class %s: dome run start --run %s --approved-by NAME",
			short(pr.Decision.FromHeadRef), c.started.TargetRef, pr.Decision.RiskClass, c.cfg.RunID))
	}
	missing := "promotion refused"
	if pr != nil {
		missing = strings.Join(pr.Decision.Missing, "; ")
	}
	return c.stop(StopConstraintsUnmet, missing)
}

// requiredTiers are the validation tiers promotion needs for the head:
// those of its riskiest layer, every tier when a layer came from a split.
func (c *coordinator) requiredTiers() []string {
	st := c.stackState()
	class, split := stack.RiskLow, false
	rank := map[string]int{stack.RiskLow: 0, stack.RiskMedium: 1, stack.RiskHigh: 2}
	for _, l := range st.Applied {
		if q := st.Proposals[l.ProposalID]; q != nil {
			if rank[q.Risk.Class] > rank[class] {
				class = q.Risk.Class
			}
			split = split || q.DerivedFrom != ""
		}
	}
	if split {
		return sortedKeys(c.sp.Validation.Tiers)
	}
	out := append([]string{}, c.sp.Validation.RequiredForPromotion[class]...)
	sort.Strings(out)
	return out
}

// stop records run.stopped and writes the final state.
func (c *coordinator) stop(reason, detail string) (*StoppedPayload, error) {
	if c.halting != "" && reason == c.halting {
		detail = strings.TrimPrefix(detail, reason+": ")
	}
	if err := c.catchUp(); err != nil {
		return nil, err
	}
	p := StoppedPayload{Reason: reason, Detail: detail, HeadRef: c.stackState().IntegrationHead, Summary: c.eng.Summary()}
	if c.started.Promote {
		p.TargetRef = c.started.TargetRef
	}
	if st := c.stackState().Promoted; st != nil {
		p.Promoted = true
	}
	if err := c.record(TopicStopped, p); err != nil {
		return nil, err
	}
	os.Remove(filepath.Join(c.l.Root, CancelFile))
	c.stopWith = &p
	c.tell(Progress{Kind: "stopped", Detail: reason + ": " + detail})
	return &p, c.writeState()
}

// CancelRequest is what dome run cancel leaves for a running coordinator.
type CancelRequest struct {
	Reason string `json:"reason"`
	At     string `json:"at"`
}

// Cancel ends a run: a coordinator running it is asked to halt (it kills
// its attempts and stops with reason cancelled); a run nobody coordinates
// is halted here, from its ledger (its last attempts recorded lost). It
// returns whether a running coordinator was asked.
func Cancel(ctx context.Context, cfg Config, reason string) (asked bool, out *Outcome, err error) {
	l := stack.NewLayout(cfg.OpsRuns, cfg.RunID)
	if _, err := os.Stat(l.EventsDir()); err != nil {
		return false, nil, &errkind.InputError{Source: "RUN", Field: cfg.RunID, Problem: "no such run: " + l.Root + " has no events", Hint: "list runs with dome run status"}
	}
	probe, err := ledger.Open(l.Root, l.RunID)
	if errors.Is(err, ledger.ErrLocked) {
		b := mustJSON(CancelRequest{Reason: reason, At: cfg.Now().UTC().Format("2006-01-02T15:04:05Z")})
		return true, nil, ledger.WriteFileDurable(filepath.Join(l.Root, CancelFile), b)
	}
	if err != nil {
		return false, nil, err
	}
	probe.Close()
	// Nobody coordinates it: halt it here.
	if err := ledger.WriteFileDurable(filepath.Join(l.Root, CancelFile), mustJSON(CancelRequest{Reason: reason,
		At: cfg.Now().UTC().Format("2006-01-02T15:04:05Z")})); err != nil {
		return false, nil, err
	}
	cfg.Dispatcher = noDispatch{}
	out, err = Start(ctx, cfg)
	return false, out, err
}

// noDispatch refuses to run anything: a run cancelled while nobody
// coordinated it halts before anything starts.
type noDispatch struct{}

func (noDispatch) Name() string { return "none" }
func (noDispatch) Close() error { return nil }
func (noDispatch) Run(ctx context.Context, job Job, started func(string)) Result {
	return Result{Err: errors.New("the run is being cancelled")}
}
