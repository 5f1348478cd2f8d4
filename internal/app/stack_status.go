package app

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/dome-registry/dome/pkg/canonical"
	"github.com/dome-registry/dome/pkg/gitstore"
	"github.com/dome-registry/dome/pkg/readlimit"
	"github.com/dome-registry/dome/pkg/stack"
	"github.com/urfave/cli/v2"
)

func newStackStatusCommand(env *Env) *cli.Command {
	return &cli.Command{
		Name:  "status",
		Usage: "what a run has applied, pending and rejected, and the evidence present",
		Flags: withGlobal(stackRunFlag(), stackOpsFlag()),
		Action: func(c *cli.Context) error {
			repo, err := openRepo(c.Context, env, c)
			if err != nil {
				return err
			}
			defer repo.Close()
			return runStackStatus(c.Context, env, repo, stackLayout(env, c, repo), globalBool(c, flagJSON))
		},
		Description: help("stack_status"),
	}
}

type stackStatusEvidence struct {
	Kind    string `json:"kind"`
	ID      string `json:"id"`
	Path    string `json:"path"`
	Present bool   `json:"present"` // the file exists and its bytes match the event's digest
}

type stackStatusLayer struct {
	ProposalID   string `json:"proposal_id"`
	CheckpointID string `json:"checkpoint_id"`
	WaveID       string `json:"wave_id"`
}

type stackStatusOutput struct {
	RunID           string                  `json:"run_id"`
	WaveID          string                  `json:"wave_id"`
	BaseRef         string                  `json:"base_ref"`
	IntegrationRef  string                  `json:"integration_ref"`
	IntegrationHead string                  `json:"integration_head"`
	RefHead         string                  `json:"ref_head"` // where the ref really points
	RefInSync       bool                    `json:"ref_in_sync"`
	TargetRef       string                  `json:"target_ref"`
	PolicyDigest    string                  `json:"policy_digest"`
	PolicyChanges   int                     `json:"policy_changes"`
	Sequence        int64                   `json:"sequence"`
	Plan            string                  `json:"stack_plan_id,omitempty"`
	Applied         []stackStatusLayer      `json:"applied"`
	Pending         []string                `json:"pending"`
	Rejected        []stack.RejectionState  `json:"rejected"`
	ByStatus        map[string][]string     `json:"proposals_by_status"`
	Validations     []stack.ValidationState `json:"validations"`
	Promoted        *stack.PromotedPayload  `json:"promoted"`
	Evidence        []stackStatusEvidence   `json:"evidence"`
}

func runStackStatus(_ context.Context, env *Env, repo *gitstore.Repo, l stack.Layout, asJSON bool) error {
	st, _, err := stack.LoadState(l)
	if err != nil {
		return err
	}
	out := stackStatusOutput{RunID: st.RunID, WaveID: st.WaveID, BaseRef: st.BaseRef, IntegrationRef: st.IntegrationRef,
		IntegrationHead: st.IntegrationHead, TargetRef: st.TargetRef, PolicyDigest: st.PolicyDigest, PolicyChanges: len(st.PolicyChanges),
		Sequence: st.Sequence, Applied: []stackStatusLayer{},
		Pending: st.PendingProposals(), Rejected: st.Rejections, ByStatus: st.ByStatus(), Validations: st.Validations,
		Promoted: st.Promoted, Evidence: []stackStatusEvidence{}}
	if out.Pending == nil {
		out.Pending = []string{}
	}
	if h, err := repo.Ref(st.IntegrationRef); err == nil {
		out.RefHead = h.String()
	}
	out.RefInSync = out.RefHead == st.IntegrationHead
	if st.Plan != nil {
		out.Plan = st.Plan.StackPlanID
	}
	check := func(kind, id, rel, digest string) {
		ok := false
		if data, err := readlimit.ReadFile(l.Abs(rel), readlimit.Proposal); err == nil {
			ok = canonical.Digest(data) == digest
		}
		out.Evidence = append(out.Evidence, stackStatusEvidence{Kind: kind, ID: id, Path: rel, Present: ok})
	}
	ids := make([]string, 0, len(st.Proposals))
	for id := range st.Proposals {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		p := st.Proposals[id]
		if p.Status != stack.StatusRejected && p.Status != stack.StatusSuperseded {
			check(stack.KindPatchProposal, id, p.Path, p.ArtifactDigest)
		}
	}
	if st.Plan != nil {
		check(stack.KindStackPlan, st.Plan.StackPlanID, st.Plan.Path, st.Plan.ArtifactDigest)
		for _, d := range st.Plan.Decisions {
			check(d.Kind, d.ID, d.Path, d.Digest)
		}
	}
	for _, a := range st.Applied {
		out.Applied = append(out.Applied, stackStatusLayer{ProposalID: a.ProposalID, CheckpointID: a.CheckpointID, WaveID: a.WaveID})
		check(stack.KindApplyResult, a.ApplyResultID, a.Path, a.ArtifactDigest)
	}
	for _, v := range st.Validations {
		check(stack.KindValidationReport, v.ReportID, v.Path, v.ArtifactDigest)
	}
	for _, p := range st.Promotions {
		check(stack.KindPromotionDecision, p.DecisionID, p.Path, p.ArtifactDigest)
	}
	if asJSON {
		return writeJSON(env.Stdout, out)
	}
	w := env.Stdout
	fmt.Fprintf(w, "run %s, %s, %d events\n", st.RunID, st.WaveID, st.Sequence)
	fmt.Fprintf(w, "base         %s\n", st.BaseRef)
	changed := ""
	if n := len(st.PolicyChanges); n > 0 {
		changed = fmt.Sprintf("  (changed %d time(s); dome stack policy --run %s)", n, st.RunID)
	}
	fmt.Fprintf(w, "policy       %s%s\n", st.PolicyDigest, changed)
	sync := ""
	if !out.RefInSync {
		sync = fmt.Sprintf("  (the ref is at %s: run the command that was interrupted again)", shortOr(out.RefHead, "nothing"))
	}
	fmt.Fprintf(w, "integration  %s at %s%s\n", st.IntegrationRef, st.IntegrationHead, sync)
	if out.Plan != "" {
		fmt.Fprintf(w, "plan         %s\n", out.Plan)
	}
	if st.Promoted != nil {
		fmt.Fprintf(w, "promoted     %s to %s\n", st.Promoted.FromHeadRef[:12], st.Promoted.ToRef)
	}
	fmt.Fprintf(w, "applied      %d\n", len(st.Applied))
	tw := table(w)
	for i, a := range st.Applied {
		fmt.Fprintf(tw, "  %d\t%s\t%s\n", i+1, a.ProposalID, a.CheckpointID[:12])
	}
	tw.Flush()
	fmt.Fprintf(w, "pending      %d", len(out.Pending))
	if len(out.Pending) > 0 {
		var parts []string
		for _, id := range out.Pending {
			parts = append(parts, id+" ("+st.Proposals[id].Status+")")
		}
		fmt.Fprintf(w, ": %s", strings.Join(parts, ", "))
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "rejected     %d\n", len(st.Rejections))
	tw = table(w)
	for _, r := range st.Rejections {
		id := r.ProposalID
		if id == "" {
			id = "(unreadable)"
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s/%s\n", id, r.Stage, r.ReasonClass, r.ReasonCode)
	}
	tw.Flush()
	fmt.Fprintf(w, "validations  %d\n", len(st.Validations))
	tw = table(w)
	for _, v := range st.Validations {
		verdict := "failed"
		if v.Passed {
			verdict = "passed"
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", v.ReportID, v.Tier, v.HeadRef[:12], verdict)
	}
	tw.Flush()
	missing := 0
	for _, e := range out.Evidence {
		if !e.Present {
			missing++
		}
	}
	fmt.Fprintf(w, "evidence     %d files, %d missing or altered\n", len(out.Evidence), missing)
	tw = table(w)
	for _, e := range out.Evidence {
		if !e.Present {
			fmt.Fprintf(tw, "  missing\t%s\t%s\n", e.Kind, e.Path)
		}
	}
	tw.Flush()
	return nil
}

func shortOr(s, empty string) string {
	if len(s) >= 12 {
		return s[:12]
	}
	if s == "" {
		return empty
	}
	return s
}
