package webui

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"unicode/utf8"

	"github.com/dome-registry/dome/pkg/canonical"
	"github.com/dome-registry/dome/pkg/gateway"
	"github.com/dome-registry/dome/pkg/ledger"
	"github.com/dome-registry/dome/pkg/orchestrate"
	"github.com/dome-registry/dome/pkg/runspec"
	"github.com/dome-registry/dome/pkg/stack"
)

// waveRequest resolves a wave-run page's run and sequence.
func (h *Handler) waveRequest(w http.ResponseWriter, r *http.Request) (stack.Layout, *RunView, bool) {
	l, v, _, ok := h.runRequest(w, r)
	if !ok {
		return l, nil, false
	}
	if v.Wave == nil || v.Wave.State == nil {
		hint := "dome run start makes wave runs; this run's page is " + v.Base
		detail := "Run " + v.RunID + " is not a wave run."
		if v.Wave != nil {
			detail = "Run " + v.RunID + "'s coordinator state cannot be read: " + v.Wave.Error
		}
		h.fail(w, r, "wave run", &inputError{Detail: detail, Hint: hint})
		return l, nil, false
	}
	return l, v, true
}

// --- every attempt

type tasksData struct {
	View *RunView
}

func (h *Handler) tasksPage(w http.ResponseWriter, r *http.Request) {
	_, v, ok := h.waveRequest(w, r)
	if !ok {
		return
	}
	h.render(w, r, http.StatusOK, "tasks.html", page{Title: "Run " + v.RunID + " attempts", Crumbs: runCrumbs(v, "attempts"), Data: tasksData{View: v}})
}

// --- one node

type nodeData struct {
	View     *RunView
	Node     WaveNodeRow
	Task     *runspec.Task
	Params   string // the action's params, indented
	Attempts []attemptView
}

// attemptView is one attempt with what its events and files say.
type attemptView struct {
	orchestrate.TaskView
	Worker       string
	Dispatch     *orchestrate.DispatchData
	Done         *orchestrate.CompletedData
	TimedOut     bool
	Progress     []string
	Acked        int64
	Calls        []callRow
	CallsOmitted int
	Refusals     []refusal // the recorded refused calls by reason
	Result       *orchestrate.TaskResultPayload
	ResultError  string
	Logs         []logTail
	Problems     []string // events of the attempt that do not decode
	// Integrated is what became of the attempt's proposal when its wave
	// was integrated ("applied", "already there", "reopened", "dropped").
	Integrated  string
	IntegratedX string // the checkpoint, or the reason
	IntegratedW string // the wave
}

// callRow is one gateway call of an attempt; a write carries its
// proposal and metadata.
type callRow struct {
	gateway.CallRecord
	Sequence   int64
	ProposalID string
	Meta       *gateway.ProposalMeta
}

// refusal counts an attempt's refused calls of one reason code.
type refusal struct {
	Reason string
	Count  int
}

// logTail is the end of a log an attempt left.
type logTail struct {
	Path  string
	Text  string
	Cut   bool
	Error string
}

// maxCallsShown bounds the calls listed per attempt; maxLogShown the tail
// of a log shown; maxLogRead the log read to check its digest.
const (
	maxCallsShown = 1000
	maxLogShown   = 8 << 10
	maxLogRead    = 16 << 20
)

func (h *Handler) nodePage(w http.ResponseWriter, r *http.Request) {
	l, v, ok := h.waveRequest(w, r)
	if !ok {
		return
	}
	id := r.PathValue("node")
	d := nodeData{View: v}
	found := false
	for _, n := range v.Wave.Nodes {
		if n.NodeID == id {
			d.Node, found = n, true
		}
	}
	if !found {
		h.fail(w, r, "node", notFoundf("the run's nodes are listed at "+v.Base, "Run %s has no node %q.", v.RunID, id))
		return
	}
	var ids []string
	for _, t := range v.Wave.Attempts {
		if t.NodeID == id {
			ids = append(ids, t.TaskID)
		}
	}
	rl := h.runs.get(l)
	rl.mu.Lock()
	if rl.queue != nil {
		d.Task, _ = rl.queue.Task(id)
	}
	evs := make(map[string][]ledger.Event, len(ids))
	for _, tid := range ids {
		for _, i := range rl.byTask[tid] {
			if e := rl.events[i]; e.Sequence <= v.Sequence {
				evs[tid] = append(evs[tid], e)
			}
		}
	}
	rl.mu.Unlock()
	if d.Task != nil && d.Task.ActionSpec != nil && len(d.Task.ActionSpec.Params) > 0 {
		var buf bytes.Buffer
		if json.Indent(&buf, d.Task.ActionSpec.Params, "", "  ") == nil {
			d.Params = buf.String()
		}
	}
	type fate struct{ what, x, wave string }
	fates := map[string]fate{}
	for _, wr := range v.Wave.Waves {
		if in := wr.Integration; in != nil {
			for _, set := range []struct {
				what string
				tps  []orchestrate.TaskProposal
			}{{"applied", in.Applied}, {"already there", in.Redundant}, {"reopened", in.Reopened}, {"dropped", in.Dropped}} {
				for _, tp := range set.tps {
					x := tp.Reason
					if set.what == "applied" {
						x = tp.Checkpoint
					}
					fates[tp.TaskID] = fate{set.what, x, wr.WaveID}
				}
			}
		}
	}
	for _, t := range v.Wave.Attempts {
		if t.NodeID == id {
			a := attemptOf(l, t, evs[t.TaskID])
			f := fates[t.TaskID]
			a.Integrated, a.IntegratedX, a.IntegratedW = f.what, f.x, f.wave
			d.Attempts = append(d.Attempts, a)
		}
	}
	h.render(w, r, http.StatusOK, "node.html", page{Title: "Node " + id + " of run " + v.RunID, Crumbs: runCrumbs(v, "node "+id), Data: d})
}

// attemptOf reads an attempt's events (task.* and gateway.*, in order) and
// its task result.
func attemptOf(l stack.Layout, t orchestrate.TaskView, evs []ledger.Event) attemptView {
	a := attemptView{TaskView: t}
	bad := func(e ledger.Event, err error) {
		a.Problems = append(a.Problems, "event "+itoa64(e.Sequence)+" ("+e.Topic+"): "+err.Error())
	}
	for _, e := range evs {
		switch e.Topic {
		case stack.TopicTaskDispatched, stack.TopicTaskCompleted, stack.TopicTaskAck, stack.TopicTaskTimeout, stack.TopicTaskProgress:
			var p stack.TaskPayload
			if err := json.Unmarshal(e.Payload, &p); err != nil {
				bad(e, err)
				continue
			}
			switch e.Topic {
			case stack.TopicTaskDispatched:
				var dd orchestrate.DispatchData
				if err := decodeStrict(p.Data, &dd); err != nil {
					bad(e, err)
					continue
				}
				a.Dispatch, a.Worker = &dd, p.WorkerID
			case stack.TopicTaskCompleted:
				var cd orchestrate.CompletedData
				if err := decodeStrict(p.Data, &cd); err != nil {
					bad(e, err)
					continue
				}
				a.Done = &cd
			case stack.TopicTaskAck:
				a.Acked = e.Sequence
			case stack.TopicTaskTimeout:
				a.TimedOut = true
			case stack.TopicTaskProgress:
				if p.Detail != "" && len(a.Progress) < 100 {
					a.Progress = append(a.Progress, p.Detail)
				}
			}
		case gateway.TopicCalls:
			var p gateway.CallsPayload
			if err := decodeStrict(e.Payload, &p); err != nil {
				bad(e, err)
				continue
			}
			a.CallsOmitted += p.Omitted
			for _, c := range p.Calls {
				a.Calls = append(a.Calls, callRow{CallRecord: c, Sequence: e.Sequence})
			}
		case gateway.TopicCall:
			var p gateway.WritePayload
			if err := decodeStrict(e.Payload, &p); err != nil {
				bad(e, err)
				continue
			}
			a.Calls = append(a.Calls, callRow{CallRecord: p.Call, Sequence: e.Sequence, ProposalID: p.ProposalID, Meta: p.Meta})
		}
	}
	sort.SliceStable(a.Calls, func(i, j int) bool { return a.Calls[i].N < a.Calls[j].N })
	byReason := map[string]int{}
	for _, c := range a.Calls {
		if c.Status != http.StatusOK {
			r := c.Reason
			if r == "" {
				r = c.Code
			}
			byReason[r]++
		}
	}
	for _, r := range sortedKeys(byReason) {
		a.Refusals = append(a.Refusals, refusal{r, byReason[r]})
	}
	if len(a.Calls) > maxCallsShown {
		a.CallsOmitted += len(a.Calls) - maxCallsShown
		a.Calls = a.Calls[:maxCallsShown]
	}
	if t.Result != "" {
		var res orchestrate.TaskResultPayload
		if _, err := readArtifact(l, t.Result, t.ResultDigest, orchestrate.TaskResultKind, &res); err != nil {
			a.ResultError = err.Error()
		} else {
			a.Result = &res
		}
	}
	if a.Done != nil {
		for _, o := range a.Done.Outputs {
			if o.Kind == "log" {
				a.Logs = append(a.Logs, readLogTail(l, t.TaskID, o))
			}
		}
	}
	return a
}

// readLogTail reads the end of a log an attempt left, from the task's
// outputs folder, when its bytes have the digest the ledger recorded.
func readLogTail(l stack.Layout, taskID string, o orchestrate.OutputRef) logTail {
	lt := logTail{Path: o.Path}
	rel := filepath.FromSlash(o.Path)
	if !filepath.IsLocal(rel) || !filepath.IsLocal(taskID) {
		lt.Error = "the ledger names a path outside the task's outputs"
		return lt
	}
	f, err := os.Open(filepath.Join(l.Root, "tasks", taskID, orchestrate.OutputsDir, rel))
	if err != nil {
		lt.Error = err.Error()
		return lt
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxLogRead+1))
	switch {
	case err != nil:
		lt.Error = err.Error()
		return lt
	case len(b) > maxLogRead:
		lt.Error = "over " + itoa64(maxLogRead) + " bytes: not shown"
		return lt
	case canonical.Digest(b) != o.Digest:
		lt.Error = "it changed after the attempt: it hashes to " + canonical.Digest(b) + ", the ledger recorded " + o.Digest
		return lt
	}
	if len(b) > maxLogShown {
		b, lt.Cut = b[len(b)-maxLogShown:], true
		for len(b) > 0 && !utf8.RuneStart(b[0]) {
			b = b[1:]
		}
	}
	lt.Text = string(bytes.ToValidUTF8(b, []byte("\uFFFD")))
	return lt
}

// --- one wave

type waveData struct {
	View      *RunView
	Wave      WaveRow
	Attempts  []orchestrate.TaskView
	Proposals []ProposalRow
}

func (h *Handler) wavePage(w http.ResponseWriter, r *http.Request) {
	_, v, ok := h.waveRequest(w, r)
	if !ok {
		return
	}
	id := r.PathValue("wave")
	d := waveData{View: v}
	found := false
	for _, wr := range v.Wave.Waves {
		if wr.WaveID == id {
			d.Wave, found = wr, true
		}
	}
	if !found {
		h.fail(w, r, "wave", notFoundf("the run's waves are listed at "+v.Base, "Run %s has no wave %q at event %d.", v.RunID, id, v.Sequence))
		return
	}
	for _, t := range v.Wave.Attempts {
		if t.WaveID == id {
			d.Attempts = append(d.Attempts, t)
		}
	}
	for _, p := range v.Proposals {
		if p.Wave == id {
			d.Proposals = append(d.Proposals, p)
		}
	}
	h.render(w, r, http.StatusOK, "wave.html", page{Title: "Wave " + id + " of run " + v.RunID, Crumbs: runCrumbs(v, id), Data: d})
}
