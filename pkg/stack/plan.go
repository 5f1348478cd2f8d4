package stack

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/dome-registry/dome/pkg/artifact"
	"github.com/dome-registry/dome/pkg/canonical"
	"github.com/dome-registry/dome/pkg/gitstore"
	"github.com/dome-registry/dome/pkg/patch"
	"github.com/dome-registry/dome/pkg/readlimit"
)

// Priority groups, in plan order:
// critical-path pieces early, then proposals that overlap no other at hunk
// level, then overlapping ones, dependency and lockfile changes last.
const (
	GroupCriticalPath = "critical_path"
	GroupIndependent  = "independent"
	GroupOverlapping  = "overlapping"
	GroupDependencies = "dependencies"
)

var groupOrder = map[string]int{GroupCriticalPath: 0, GroupIndependent: 1, GroupOverlapping: 2, GroupDependencies: 3}

// PlanOptions controls Plan.
type PlanOptions struct {
	Policy   *Policy
	At       time.Time
	Producer string
	Seed     string // "" uses the run's determinism seed
}

// PlanResult is a computed plan and its decision artifacts.
type PlanResult struct {
	Plan      StackPlan                  `json:"plan"`
	Selection SelectionDecision          `json:"selection_decision"`
	Conflicts []ConflictDecision         `json:"conflict_decisions"`
	Doc       []byte                     `json:"-"` // the sealed plan as stored
	Path      string                     `json:"path"`
	Unchanged bool                       `json:"unchanged"` // the run's current plan already is this plan: nothing recorded
	Sequence  int64                      `json:"sequence"`
	Loaded    map[string]*LoadedProposal `json:"-"`
}

// candidate is one pending proposal being planned.
type candidate struct {
	lp        *LoadedProposal
	id        string
	fps       []patch.Fingerprint
	group     string
	degree    int
	score     SelectionScore
	rank      int
	rejection *Rejected
	redundant bool
}

// Plan computes the StackPlan of the run's pending proposals onto the
// integration head, deterministically from the events and the proposal
// files (never from submission order or the clock), writes it and its
// SelectionDecision and ConflictDecisions, and records stack.plan.computed.
// When the run's current plan is already this plan, it records nothing.
func (r *Run) Plan(repo *gitstore.Repo, opts PlanOptions) (PlanResult, error) {
	pol, err := r.usePolicy(opts.Policy)
	if err != nil {
		return PlanResult{}, err
	}
	opts.Policy = pol
	res, err := ComputePlan(repo, r.Layout, &r.State, opts)
	if err != nil {
		return res, err
	}
	st := &r.State
	if st.Plan != nil && st.Plan.StackPlanID == res.Plan.StackPlanID {
		doc, err := readlimit.ReadFile(r.Layout.Abs(st.Plan.Path), MaxProposalBytes)
		if err == nil && canonical.Digest(doc) == st.Plan.ArtifactDigest {
			res.Doc, res.Path, res.Unchanged, res.Sequence = doc, st.Plan.Path, true, st.Plan.Sequence
			return res, nil
		}
	}
	h := NewHeader(KindStackPlan, res.Plan.StackPlanID, st.RunID, st.WaveID, st.BaseRef, opts.At, opts.Producer)
	h.BaseTreeHash, h.DeterminismSeed = st.BaseTreeHash, res.Plan.DeterminismSeed
	var refs []DecisionRef
	// Decisions first: the plan lists them with their digests.
	selDoc, _, err := Seal(withKind(h, KindSelectionDecision, res.Selection.DecisionID), res.Selection, nil)
	if err != nil {
		return res, err
	}
	d, rel, err := r.WriteArtifact(r.Layout.SelectionDecisionPath(res.Selection.DecisionID), selDoc)
	if err != nil {
		return res, err
	}
	refs = append(refs, DecisionRef{Kind: KindSelectionDecision, ID: res.Selection.DecisionID, Digest: d, Path: rel})
	for _, c := range res.Conflicts {
		doc, _, err := Seal(withKind(h, KindConflictDecision, c.DecisionID), c, nil)
		if err != nil {
			return res, err
		}
		d, rel, err := r.WriteArtifact(r.Layout.ConflictDecisionPath(c.DecisionID), doc)
		if err != nil {
			return res, err
		}
		refs = append(refs, DecisionRef{Kind: KindConflictDecision, ID: c.DecisionID, Digest: d, Path: rel, Proposal: c.ProposalID})
	}
	res.Plan.Decisions = refs
	doc, sealed, err := Seal(h, res.Plan, nil)
	if err != nil {
		return res, err
	}
	digest, rel, err := r.WriteArtifact(r.Layout.PlanPath(res.Plan.StackPlanID), doc)
	if err != nil {
		return res, err
	}
	p := res.Plan
	ordered := make([]string, 0, len(p.OrderedProposals))
	for _, o := range p.OrderedProposals {
		ordered = append(ordered, o.ProposalID)
	}
	rejected := make([]RejectedRef, 0, len(p.Rejected))
	for _, x := range p.Rejected {
		rejected = append(rejected, RejectedRef{ProposalID: x.ProposalID, ReasonClass: x.ReasonClass, ReasonCode: x.ReasonCode})
	}
	ev, err := r.Record(TopicPlanComputed, opts.At, PlanComputedPayload{StackPlanID: p.StackPlanID, WaveID: p.WaveID, Path: rel,
		ArtifactDigest: digest, PayloadDigest: sealed.PayloadDigest, StartRef: p.StartRef, OrderedProposals: ordered, Rejected: rejected,
		CheckpointStrategy: p.CheckpointStrategy, ExpectedValidations: p.ExpectedValidations, DeterminismSeed: p.DeterminismSeed,
		FinalTree: p.FinalTree, Decisions: refs})
	if err != nil {
		return res, err
	}
	res.Doc, res.Path, res.Sequence = doc, rel, ev.Sequence
	return res, nil
}

func withKind(h artifact.Header, kind, id string) artifact.Header {
	h.ArtifactKind, h.ObjectID = kind, id
	return h
}

// ComputePlan computes the plan without writing anything, under
// opts.Policy (nil: the built-in policy; Run.Plan passes the run's).
func ComputePlan(repo *gitstore.Repo, l Layout, st *State, opts PlanOptions) (PlanResult, error) {
	pol := opts.Policy
	if pol == nil {
		pol = DefaultPolicy()
	}
	seed := opts.Seed
	if seed == "" {
		seed = st.DeterminismSeed
	}
	res := PlanResult{Loaded: map[string]*LoadedProposal{}}
	if st.Promoted != nil {
		return res, fmt.Errorf("run %s was promoted; start a new run", st.RunID)
	}
	// Candidates: every pending proposal, loaded and checked.
	var cs []*candidate
	for _, id := range st.PlannableProposals() {
		lp, err := LoadProposal(repo, l, st, id)
		if err != nil {
			return res, err
		}
		res.Loaded[id] = lp
		cs = append(cs, &candidate{lp: lp, id: id, fps: patch.Fingerprints(lp.Patch, st.BaseRef)})
	}
	// Redundant: the same change (patch id) as an applied layer, or as a
	// candidate before it in the tie-break order.
	applied := map[string]string{}
	for _, a := range st.Applied {
		if q := st.Proposals[a.ProposalID]; q != nil && q.PatchID != "" {
			applied[q.PatchID] = a.ProposalID
		}
	}
	sort.Slice(cs, func(i, j int) bool { return tieLess(cs[i], cs[j]) })
	seenPatch := map[string]string{}
	var live []*candidate
	for _, c := range cs {
		pid := c.lp.State.PatchID
		switch {
		case pid != "" && applied[pid] != "":
			c.redundant = true
			c.rejection = &Rejected{ReasonClass: ClassRedundant, ReasonCode: ReasonAlreadyApplied,
				Detail: fmt.Sprintf("the same change (patch id %s) is already applied as %s", pid[:12], applied[pid])}
		case pid != "" && seenPatch[pid] != "":
			c.redundant = true
			c.rejection = &Rejected{ReasonClass: ClassRedundant, ReasonCode: ReasonDuplicateChange,
				Detail: fmt.Sprintf("the same change (patch id %s) as %s, which comes first in the tie-break order", pid[:12], seenPatch[pid])}
		default:
			if pid != "" {
				seenPatch[pid] = c.id
			}
			live = append(live, c)
		}
	}
	// Overlap graph over the live candidates.
	graph := OverlapGraph{Nodes: []string{}, Edges: []OverlapEdge{}}
	for _, c := range live {
		graph.Nodes = append(graph.Nodes, c.id)
	}
	sort.Strings(graph.Nodes)
	byID := map[string]*candidate{}
	for _, c := range live {
		byID[c.id] = c
	}
	for i, a := range graph.Nodes {
		for _, b := range graph.Nodes[i+1:] {
			ca, cb := byID[a], byID[b]
			ov := patch.ComputeOverlap(ca.lp.Patch, cb.lp.Patch, ca.fps, cb.fps)
			if len(ov.Files) == 0 && !ov.Overlaps {
				continue
			}
			level := "file"
			if ov.Overlaps {
				level = "hunk"
				ca.degree++
				cb.degree++
			}
			graph.Edges = append(graph.Edges, OverlapEdge{A: a, B: b, Level: level, Files: ov.Files, Hunks: ov.Hunks})
		}
	}
	// Rank: priority group, then risk score, then tie-breaks.
	for _, c := range live {
		q := c.lp.State
		switch {
		case q.Constraints.Dependency:
			c.group = GroupDependencies
		case q.Constraints.CriticalPath:
			c.group = GroupCriticalPath
		case c.degree == 0:
			c.group = GroupIndependent
		default:
			c.group = GroupOverlapping
		}
		c.score = SelectionScore{ProposalID: c.id, PriorityGroup: c.group, GroupOrder: groupOrder[c.group], RiskScore: q.Risk.Score,
			OverlapDegree: c.degree, Score: groupOrder[c.group]*1000000 + q.Risk.Score, TieBreak: tieBreak(c)}
	}
	sort.SliceStable(live, func(i, j int) bool {
		a, b := live[i], live[j]
		if a.score.Score != b.score.Score {
			return a.score.Score < b.score.Score
		}
		return tieLess(a, b)
	})
	for i, c := range live {
		c.rank, c.score.Rank = i+1, i+1
	}
	// Simulate the order on the integration head, in memory.
	head, _ := gitstore.ParseHash(st.IntegrationHead)
	headTree, err := repo.CommitTree(head)
	if err != nil {
		return res, fmt.Errorf("integration head %s: %w", st.IntegrationHead, err)
	}
	store := patch.NewMemStore(patch.NewRepoStore(repo))
	empty, err := store.WriteTree(nil)
	if err != nil {
		return res, err
	}
	sim := &simulation{store: store, cur: patch.OID(headTree), empty: empty, pol: pol, st: st}
	var deferred []*candidate
	for _, c := range live {
		if !sim.try(c, 1) {
			deferred = append(deferred, c)
		}
	}
	for _, c := range deferred {
		if !sim.try(c, 2) {
			sim.finalAttempt(c)
		}
	}
	// The plan.
	plan := StackPlan{RunID: st.RunID, WaveID: st.WaveID, BaseRef: st.BaseRef, BaseTreeHash: st.BaseTreeHash, StartRef: st.IntegrationHead,
		OrderedProposals: sim.placed, Rejected: []Rejected{}, CheckpointStrategy: pol.Apply.CheckpointStrategy, DeterminismSeed: seed,
		OverlapGraph: graph, TieBreakOrder: SelectionTieBreakOrder, PolicyDigest: pol.Digest(), FinalTree: sim.cur.String(),
		SelectionScores: []SelectionScore{}, Decisions: []DecisionRef{}}
	if plan.OrderedProposals == nil {
		plan.OrderedProposals = []PlannedProposal{}
	}
	placed := map[string]bool{}
	maxRisk := RiskLow
	for _, o := range plan.OrderedProposals {
		placed[o.ProposalID] = true
		if rc := st.Proposals[o.ProposalID].Risk.Class; riskRank(rc) > riskRank(maxRisk) {
			maxRisk = rc
		}
	}
	plan.ExpectedValidations = pol.ExpectedValidations(maxRisk)
	for _, c := range cs { // redundant ones first, in tie-break order
		if c.redundant {
			x := *c.rejection
			x.ProposalID, x.DiffDigest = c.id, c.lp.State.DiffDigest
			plan.Rejected = append(plan.Rejected, x)
		}
	}
	for _, c := range live {
		c.score.Selected = placed[c.id]
		plan.SelectionScores = append(plan.SelectionScores, c.score)
		if c.rejection != nil {
			x := *c.rejection
			x.ProposalID, x.DiffDigest = c.id, c.lp.State.DiffDigest
			plan.Rejected = append(plan.Rejected, x)
		}
	}
	idBytes, err := canonical.Marshal(plan)
	if err != nil {
		return res, err
	}
	plan.StackPlanID = "plan-" + digestHex(string(idBytes))[:16]
	// Decisions, bound to the plan id.
	sel := SelectionDecision{RunID: st.RunID, WaveID: st.WaveID, StackPlanID: plan.StackPlanID, DeterminismSeed: seed,
		TieBreakOrder: SelectionTieBreakOrder, Entries: []SelectionEntry{}}
	for _, c := range cs {
		if c.redundant {
			sel.Entries = append(sel.Entries, SelectionEntry{ProposalID: c.id, TieBreak: tieBreak(c), ReasonClass: c.rejection.ReasonClass,
				ReasonCode: c.rejection.ReasonCode, Reason: c.rejection.Detail})
		}
	}
	pos := map[string]int{}
	for _, o := range plan.OrderedProposals {
		pos[o.ProposalID] = o.Position
	}
	for _, c := range live {
		e := SelectionEntry{ProposalID: c.id, Accepted: placed[c.id], Rank: c.rank, PriorityGroup: c.group, RiskScore: c.score.RiskScore, TieBreak: c.score.TieBreak}
		if e.Accepted {
			e.Reason = fmt.Sprintf("layer %d: %s, risk %d, overlaps %d", pos[c.id], c.group, c.score.RiskScore, c.degree)
		} else if c.rejection != nil {
			e.ReasonClass, e.ReasonCode, e.Reason = c.rejection.ReasonClass, c.rejection.ReasonCode, c.rejection.Detail
		}
		sel.Entries = append(sel.Entries, e)
	}
	sel.DecisionID = "selection-" + plan.StackPlanID[len("plan-"):]
	for i := range sim.conflicts {
		c := &sim.conflicts[i]
		c.RunID, c.WaveID, c.StackPlanID = st.RunID, st.WaveID, plan.StackPlanID
		c.DecisionID = fmt.Sprintf("conflict-%s-%d", strings.TrimPrefix(c.ConflictFingerprint, "sha256:")[:16], c.Attempt)
	}
	sort.SliceStable(sim.conflicts, func(i, j int) bool { return conflictLess(&sim.conflicts[i], &sim.conflicts[j]) })
	res.Plan, res.Selection, res.Conflicts = plan, sel, sim.conflicts
	if res.Conflicts == nil {
		res.Conflicts = []ConflictDecision{}
	}
	return res, nil
}

// conflictLess is the arbitration order of conflict decisions
// (ConflictTieBreakOrder): policy precedence (lower first), then proposal
// id, then conflict fingerprint; a proposal's attempts at the same
// conflict last, in order.
func conflictLess(a, b *ConflictDecision) bool {
	if a.PolicyPrecedence != b.PolicyPrecedence {
		return a.PolicyPrecedence < b.PolicyPrecedence
	}
	if a.ProposalID != b.ProposalID {
		return a.ProposalID < b.ProposalID
	}
	if a.ConflictFingerprint != b.ConflictFingerprint {
		return a.ConflictFingerprint < b.ConflictFingerprint
	}
	return a.Attempt < b.Attempt
}

func riskRank(c string) int {
	switch c {
	case RiskHigh:
		return 2
	case RiskMedium:
		return 1
	}
	return 0
}

func tieBreak(c *candidate) TieBreak {
	return TieBreak{ProposalID: c.id, CreatedAt: c.lp.State.CreatedAt, DiffDigest: c.lp.State.DiffDigest}
}

// tieLess is selection tie-break: proposal_id, then created_at,
// then diff_digest.
func tieLess(a, b *candidate) bool {
	x, y := tieBreak(a), tieBreak(b)
	if x.ProposalID != y.ProposalID {
		return x.ProposalID < y.ProposalID
	}
	if x.CreatedAt != y.CreatedAt {
		return x.CreatedAt < y.CreatedAt
	}
	return x.DiffDigest < y.DiffDigest
}

// simulation applies candidates in order onto an in-memory tree.
type simulation struct {
	store     *patch.MemStore
	cur       patch.OID
	empty     patch.OID
	pol       *Policy
	st        *State
	placed    []PlannedProposal
	placedIDs []string
	touched   map[string][]string // path -> placed proposal ids
	conflicts []ConflictDecision
}

func (s *simulation) apply(c *candidate, partial patch.Partial) (*patch.Result, error) {
	return patch.Apply(s.store, s.cur, c.lp.Patch, patch.Options{ThreeWay: s.pol.Apply.ThreeWay, Fuzz: s.pol.Apply.Fuzz, Partial: partial})
}

func (s *simulation) place(c *candidate, tree patch.OID, mode string) {
	if tree.IsZero() {
		tree = s.empty
	}
	s.cur = tree
	s.placed = append(s.placed, PlannedProposal{Position: len(s.placed) + 1, ProposalID: c.id, DiffDigest: c.lp.State.DiffDigest,
		PriorityGroup: c.group, Mode: mode, ExpectedTree: tree.String()})
	if s.touched == nil {
		s.touched = map[string][]string{}
	}
	for _, p := range c.lp.State.TouchedFiles {
		s.touched[p] = append(s.touched[p], c.id)
	}
}

// try applies c whole; on a conflict it records a reorder decision.
func (s *simulation) try(c *candidate, attempt int) bool {
	res, err := s.apply(c, patch.PartialNone)
	if err == nil {
		s.place(c, res.Tree, AtomicProposal)
		return true
	}
	if attempt == 1 {
		s.decide(c, attempt, ActionReorder, summary(res, err), "")
	}
	return false
}

// finalAttempt handles a candidate that failed twice: split it when the
// policy and its atomicity allow and part of it applies, else drop it.
func (s *simulation) finalAttempt(c *candidate) {
	atom := c.lp.State.Constraints.Atomicity
	if s.pol.Apply.SplitAllowed && (atom == AtomicFile || atom == HunkOK) && s.pol.atomicityAllowed(atom) {
		partial := patch.PartialFile
		if atom == HunkOK {
			partial = patch.PartialHunk
		}
		res, err := s.apply(c, partial)
		var ce *patch.ConflictError
		if errors.As(err, &ce) && res != nil && !res.Tree.IsZero() && res.Tree != s.cur {
			s.decide(c, 2, ActionSplit, ce.Conflicts, "")
			s.place(c, res.Tree, atom)
			return
		}
	}
	res, err := s.apply(c, patch.PartialNone)
	sum := summary(res, err)
	s.decide(c, 2, ActionDrop, sum, "")
	c.rejection = &Rejected{ReasonClass: ClassConflict, ReasonCode: ReasonConflict, ConflictSummary: sum,
		Detail: fmt.Sprintf("does not apply after %s: %s", strings.Join(s.against(c), ", "), conflictList(sum))}
}

func summary(res *patch.Result, err error) []patch.Conflict {
	var ce *patch.ConflictError
	if errors.As(err, &ce) {
		return ce.Conflicts
	}
	if res != nil && len(res.Conflicts) > 0 {
		return res.Conflicts
	}
	if err != nil {
		return []patch.Conflict{{Reason: err.Error()}}
	}
	return []patch.Conflict{}
}

// against lists the placed proposals touching the paths c touches.
func (s *simulation) against(c *candidate) []string {
	set := map[string]bool{}
	for _, p := range c.lp.State.TouchedFiles {
		for _, id := range s.touched[p] {
			set[id] = true
		}
	}
	out := []string{}
	for id := range set {
		out = append(out, id)
	}
	sort.Strings(out)
	return out
}

func (s *simulation) decide(c *candidate, attempt int, action string, sum []patch.Conflict, derived string) {
	against := s.against(c)
	fp, _ := canonical.Marshal(struct {
		P string           `json:"proposal_id"`
		A []string         `json:"against"`
		S []patch.Conflict `json:"conflict_summary"`
	}{c.id, against, sum})
	if sum == nil {
		sum = []patch.Conflict{}
	}
	s.conflicts = append(s.conflicts, ConflictDecision{ConflictFingerprint: canonical.Digest(fp), ProposalID: c.id, Against: against,
		PolicyPrecedence: c.rank, TieBreakOrder: ConflictTieBreakOrder, Action: action, Attempt: attempt, ConflictSummary: sum,
		DerivedProposalID: derived})
}
