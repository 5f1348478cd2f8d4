package webui

import (
	"errors"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strconv"

	"github.com/dome-registry/dome/pkg/ledger"
	"github.com/dome-registry/dome/pkg/runspec"
	"github.com/dome-registry/dome/pkg/stack"
	"github.com/dome-registry/dome/pkg/workflow"
)

// RunView is what a run page shows, and its JSON answer (run.json): the
// state a run's ledger folds to at one sequence. It is built from the
// ledger alone (plus the run's work queue when the folder has one), so it
// is the same for everyone who asks for that sequence. Stack runs fill the
// proposal, plan, layer, validation and promotion parts; ControlEvents
// (task.*) fill Tasks; a run folder with a work.queue.json fills Queue, the
// TaskSpec graph of a wave run, its nodes in topological waves.
type RunView struct {
	RunID     string `json:"run_id"`
	Kind      string `json:"kind"` // "stack", or "wave" when the folder has a work queue
	Sequence  int64  `json:"sequence"`
	EventID   string `json:"event_id"`
	TS        string `json:"ts"`
	Latest    int64  `json:"latest_sequence"` // the ledger's last event when the view was built
	Ended     bool   `json:"ended"`
	EndReason string `json:"ended_because,omitempty"`
	FoldError string `json:"fold_error,omitempty"`

	WaveID          string            `json:"wave_id"`
	Waves           []stack.WaveState `json:"waves"`
	BaseRef         string            `json:"base_ref"`
	BaseTreeHash    string            `json:"base_tree_hash"`
	TargetRef       string            `json:"target_ref"`
	IntegrationRef  string            `json:"integration_ref"`
	IntegrationHead string            `json:"integration_head"`
	PolicyDigest    string            `json:"policy_digest"`
	PolicyChanges   int               `json:"policy_changes"`
	Seed            string            `json:"determinism_seed"`

	Counts      []StatusCount               `json:"proposals_by_status"`
	Proposals   []ProposalRow               `json:"proposals"`
	Plan        *PlanSummary                `json:"plan"`
	Layers      []stack.AppliedLayer        `json:"layers"`
	Rejections  []stack.RejectionState      `json:"rejections"`
	Validations []stack.ValidationState     `json:"validations"`
	Gates       []stack.GateComputedPayload `json:"gates"`
	Promotions  []stack.PromotionState      `json:"promotions"`
	Promoted    *stack.PromotedPayload      `json:"promoted"`
	Tasks       []stack.TaskState           `json:"tasks"`
	Queue       *QueueView                  `json:"queue,omitempty"`

	// Base is the URL of this view (…/at/<sequence>/); not in the JSON.
	Base string `json:"-"`
}

// StatusCount is how many proposals are in one status.
type StatusCount struct {
	Status string `json:"status"`
	Count  int    `json:"count"`
}

// ProposalRow is one proposal as the run knows it.
type ProposalRow struct {
	ID          string   `json:"proposal_id"`
	Status      string   `json:"status"`
	Wave        string   `json:"wave_id"`
	Worker      string   `json:"worker_id"`
	Intent      []string `json:"intent_tags"`
	RiskClass   string   `json:"risk_class"`
	RiskScore   int      `json:"risk_score"`
	Files       int      `json:"files"`
	ReasonCode  string   `json:"reason_code,omitempty"`
	Stage       string   `json:"rejected_stage,omitempty"`
	Checkpoint  string   `json:"checkpoint_id,omitempty"`
	Attempts    int      `json:"attempts"`
	DerivedFrom string   `json:"derived_from,omitempty"`
	Position    int      `json:"position,omitempty"` // in the current plan
}

// PlanSummary is the current plan as the ledger records it; the plan page
// reads the full StackPlan artifact.
type PlanSummary struct {
	StackPlanID string              `json:"stack_plan_id"`
	WaveID      string              `json:"wave_id"`
	StartRef    string              `json:"start_ref"`
	Ordered     []string            `json:"ordered_proposals"`
	Rejected    []stack.RejectedRef `json:"rejected"`
	Strategy    string              `json:"checkpoint_strategy"`
	FinalTree   string              `json:"final_tree"`
	Sequence    int64               `json:"sequence"`
	Path        string              `json:"path"`
	Digest      string              `json:"artifact_digest"`
}

// QueueView is a wave run's TaskSpec graph: its nodes in topological waves,
// each with the last ControlEvent of its task.
type QueueView struct {
	Source  string      `json:"source"`
	Digest  string      `json:"digest"`
	Error   string      `json:"error,omitempty"`
	Waves   [][]NodeRow `json:"waves"`
	Nodes   int         `json:"nodes"`
	Mermaid string      `json:"-"`
	Dot     string      `json:"-"`
}

// NodeRow is one TaskSpec node.
type NodeRow struct {
	NodeID string   `json:"node_id"`
	Deps   []string `json:"dependencies"`
	Group  string   `json:"priority_group,omitempty"`
	Task   string   `json:"task_status,omitempty"` // the last task.* topic for the node
}

func runURL(run string) string { return Prefix + "/runs/" + url.PathEscape(run) + "/" }

func runAtURL(run string, seq int64) string {
	return runURL(run) + "at/" + strconv.FormatInt(seq, 10) + "/"
}

// buildView makes the view of st, the state after events[:seq].
func (h *Handler) buildView(l stack.Layout, st *stack.State, events []ledger.Event, seq, latest int64, foldErr error) *RunView {
	v := &RunView{RunID: l.RunID, Kind: "stack", Sequence: seq, Latest: latest, Base: runAtURL(l.RunID, seq),
		WaveID: st.WaveID, Waves: st.Waves, BaseRef: st.BaseRef, BaseTreeHash: st.BaseTreeHash, TargetRef: st.TargetRef,
		IntegrationRef: st.IntegrationRef, IntegrationHead: st.IntegrationHead, PolicyDigest: st.PolicyDigest,
		PolicyChanges: len(st.PolicyChanges), Seed: st.DeterminismSeed, Layers: st.Applied, Rejections: st.Rejections,
		Validations: st.Validations, Gates: st.Gates, Promotions: st.Promotions, Promoted: st.Promoted}
	if seq > 0 {
		e := events[seq-1]
		v.EventID, v.TS = e.EventID, e.TS
	}
	if foldErr != nil {
		v.FoldError = foldErr.Error()
	}
	if st.Promoted != nil {
		v.Ended, v.EndReason = true, "promoted "+short(st.Promoted.FromHeadRef)+" to "+st.Promoted.ToRef
	}
	pos := map[string]int{}
	if p := st.Plan; p != nil {
		v.Plan = &PlanSummary{StackPlanID: p.StackPlanID, WaveID: p.WaveID, StartRef: p.StartRef, Ordered: p.OrderedProposals,
			Rejected: p.Rejected, Strategy: p.CheckpointStrategy, FinalTree: p.FinalTree, Sequence: p.Sequence,
			Path: p.Path, Digest: p.ArtifactDigest}
		for i, id := range p.OrderedProposals {
			pos[id] = i + 1
		}
	}
	ids := make([]string, 0, len(st.Proposals))
	for id := range st.Proposals {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	counts := map[string]int{}
	v.Proposals = make([]ProposalRow, 0, len(ids))
	for _, id := range ids {
		q := st.Proposals[id]
		counts[q.Status]++
		v.Proposals = append(v.Proposals, ProposalRow{ID: id, Status: q.Status, Wave: q.WaveID, Worker: q.WorkerID, Intent: q.IntentTags,
			RiskClass: q.Risk.Class, RiskScore: q.Risk.Score, Files: len(q.TouchedFiles), ReasonCode: q.ReasonCode, Stage: q.RejectedStage,
			Checkpoint: q.CheckpointID, Attempts: q.Attempts, DerivedFrom: q.DerivedFrom, Position: pos[id]})
	}
	for _, s := range sortedKeys(counts) {
		v.Counts = append(v.Counts, StatusCount{s, counts[s]})
	}
	for _, id := range sortedKeys(st.Tasks) {
		v.Tasks = append(v.Tasks, *st.Tasks[id])
	}
	v.Queue = h.loadQueue(l, st)
	if v.Queue != nil {
		v.Kind = "wave"
	}
	return v
}

// loadQueue reads the run folder's work queue, if it has one, and lays its
// nodes out in waves as dome run graph does. The parsed queue is kept by
// the file's size and time (a coordinator writes it once, at the start).
func (h *Handler) loadQueue(l stack.Layout, st *stack.State) *QueueView {
	path := filepath.Join(l.Root, runspec.QueueFile)
	fi, err := os.Stat(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return &QueueView{Source: runspec.QueueFile, Error: err.Error()}
	}
	key := "queue\x00" + path + "\x00" + strconv.FormatInt(fi.Size(), 10) + "\x00" + fi.ModTime().String()
	base, _ := cached(h.cache, key, func() (*QueueView, error) {
		qv := &QueueView{Source: runspec.QueueFile}
		f, err := os.Open(path)
		if err != nil {
			qv.Error = err.Error()
			return qv, nil
		}
		defer f.Close()
		data, err := io.ReadAll(io.LimitReader(f, runspec.MaxQueueBytes+1))
		if err != nil {
			qv.Error = err.Error()
			return qv, nil
		}
		q, g, err := runspec.ParseQueue(runspec.QueueFile, data)
		if err != nil {
			qv.Error = err.Error()
			return qv, nil
		}
		qv.Digest, qv.Nodes = q.Digest(), g.Len()
		for _, level := range g.Levels() {
			var wave []NodeRow
			for _, i := range level {
				nd := g.Node(i)
				deps := nd.Deps
				if deps == nil {
					deps = []string{}
				}
				wave = append(wave, NodeRow{NodeID: nd.ID, Deps: deps, Group: nd.Group})
			}
			qv.Waves = append(qv.Waves, wave)
		}
		qv.Mermaid, qv.Dot = workflow.RenderMermaid(g), workflow.RenderDot(g)
		return qv, nil
	})
	byNode := map[string]string{}
	for _, t := range st.Tasks {
		if t.NodeID != "" {
			byNode[t.NodeID] = t.Status
		}
	}
	qv := *base
	qv.Waves = make([][]NodeRow, len(base.Waves))
	for w, wave := range base.Waves {
		qv.Waves[w] = make([]NodeRow, len(wave))
		for i, n := range wave {
			n.Task = byNode[n.NodeID]
			qv.Waves[w][i] = n
		}
	}
	return &qv
}
