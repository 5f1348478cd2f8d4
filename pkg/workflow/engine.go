package workflow

import (
	"container/heap"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// DecisionKind is the artifact kind of a SchedulingDecision.
const DecisionKind = "dome.scheduling_decision/v1"

// TieBreakOrder is the order of the tie-breaks applied when two priorities
// are equal; every decision records it with its values.
var TieBreakOrder = []string{"node_priority_group", "node_id", "task_spec_digest"}

// Actions of a Decision.
const (
	ActDispatch   = "dispatch"   // start a node's first attempt
	ActRetry      = "retry"      // start another attempt after a failed one
	ActDuplicate  = "duplicate"  // endgame: an extra attempt beside a running one
	ActCancel     = "cancel"     // stop a running attempt
	ActSkip       = "skip"       // a node will not run (a dependency failed, or the run halted)
	ActCompensate = "compensate" // rollback: run a completed node's compensating step
	ActReopen     = "reopen"     // a passed node's result did not hold (Reopen): it runs again or fails
)

// Decision is one SchedulingDecision: what the engine decided, with the
// scores and tie-break values that decided it.
type Decision struct {
	Sequence        int       `json:"sequence"`
	Action          string    `json:"action"`
	RunID           string    `json:"run_id"`
	WaveID          string    `json:"wave_id,omitempty"`
	NodeID          string    `json:"node_id"`
	NodeExecutionID string    `json:"node_execution_id,omitempty"`
	Attempt         int       `json:"attempt,omitempty"`
	Iteration       int       `json:"iteration,omitempty"` // 1-based, for a loop's nodes
	Reason          string    `json:"reason"`
	Scores          *Scores   `json:"scores,omitempty"`
	TieBreak        *TieBreak `json:"tie_break,omitempty"`
	TieBreakOrder   []string  `json:"tie_break_order,omitempty"`
	Rank            int       `json:"rank,omitempty"`       // 1-based position among this call's dispatches
	Candidates      int       `json:"candidates,omitempty"` // nodes ready when the call began
	Holds           []string  `json:"holds,omitempty"`      // scarce capacity keys the attempt holds
	Running         int       `json:"running"`              // attempts running after this decision
	MaxConcurrency  int       `json:"max_concurrency"`
	DeterminismSeed string    `json:"determinism_seed"`
}

// Scores are a node's priority and its components. The components are in
// permille; Priority combines them with the policy's Weights.
type Scores struct {
	Priority     int     `json:"priority"`
	CriticalPath int     `json:"critical_path"` // nodes on the longest chain from this one
	Critical     int     `json:"critical"`      // critical_path relative to the longest chain
	Descendants  int     `json:"descendants"`   // nodes this one unblocks, directly or not
	Blocking     int     `json:"blocking"`      // descendants relative to the most
	Rarity       int     `json:"rarity"`        // 1000 / the smallest capacity among its scarce needs
	Confidence   int     `json:"confidence"`    // (successes+1)/(attempts+2) of its class in this run
	Risk         int     `json:"risk"`
	Weights      Weights `json:"weights"`
}

// TieBreak holds the values of the tie-breaks, in TieBreakOrder.
type TieBreak struct {
	NodePriorityGroup string `json:"node_priority_group"`
	GroupRank         int    `json:"group_rank"`
	NodeID            string `json:"node_id"`
	TaskSpecDigest    string `json:"task_spec_digest"`
}

// Options identify the run a engine schedules.
type Options struct {
	RunID string
	Seed  string // the determinism seed, recorded in every decision and in execution ids
}

// Status of a node.
type Status string

// Node statuses. Succeeded, Failed, Skipped and Cancelled are final.
const (
	StatusPending   Status = "pending"   // waiting for dependencies
	StatusReady     Status = "ready"     // may start
	StatusRunning   Status = "running"   // at least one attempt running
	StatusIterated  Status = "iterated"  // a loop's node done for this iteration
	StatusSucceeded Status = "succeeded" // final
	StatusFailed    Status = "failed"    // final: attempts spent, or a loop ran out of iterations
	StatusSkipped   Status = "skipped"   // final: never ran (a dependency failed, or the run halted)
	StatusCancelled Status = "cancelled" // final: was running when the run halted
)

func (s Status) final() bool {
	return s == StatusSucceeded || s == StatusFailed || s == StatusSkipped || s == StatusCancelled
}

// Attempt is one running attempt of a node.
type Attempt struct {
	NodeExecutionID string `json:"node_execution_id"`
	Attempt         int    `json:"attempt"`
	Duplicate       bool   `json:"duplicate,omitempty"`
	Cancelling      bool   `json:"cancelling,omitempty"` // a cancel was decided; its outcome is awaited
	WaveID          string `json:"wave_id,omitempty"`
}

type nodeRT struct {
	status   Status
	reason   string
	attempts int // attempts started
	failures int
	live     []Attempt
	output   json.RawMessage
	retry    bool   // the next start is a retry
	repeat   bool   // loop: asked for another iteration
	held     bool   // ready, held by the wave barrier until the next wave
	comp     string // compensation: "", running, done, failed
	inHeap   bool
}

type classRT struct {
	name      string
	succeeded int
	failed    int
}

// bucket holds the ready nodes of one class that need the same scarce
// keys: within it, the order by static score and tie-breaks is the order by
// priority, and either its keys have room or none of its nodes fits, so a
// scheduling call looks at one node per bucket however many wait.
type bucket struct {
	keys  []string
	ready readyHeap
}

type execRef struct{ node, idx int }

// Engine schedules one graph. It is not safe for concurrent use: the
// coordinator owns it and feeds it outcomes in one order, the order its
// ledger records.
type Engine struct {
	g        *Graph
	p        Policy
	opt      Options
	seq      int
	nodes    []nodeRT
	unmet    []int
	static   []int
	rarity   []int
	scarce   [][]string // needs that Policy.Capacity bounds, sorted
	classOf  []int
	classes  []*classRT // sorted by name
	bucketOf []int
	buckets  []*bucket // in order of first node
	held     map[string]int
	live     int
	execs    map[string]execRef
	halted   string
	done     []int // completion order
	loopIter []int
	open     int    // nodes not final
	wave     string // the wave of the last Next call
	deferred []int  // nodes held by the wave barrier, in the order they became ready
}

// NewEngine starts scheduling g under p.
func NewEngine(g *Graph, p Policy, opt Options) (*Engine, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	e := newEngine(g, p, opt)
	for i := range e.nodes {
		if e.unmet[i] == 0 {
			e.makeReady(i)
		}
	}
	return e, nil
}

func newEngine(g *Graph, p Policy, opt Options) *Engine {
	n := g.Len()
	e := &Engine{g: g, p: p, opt: opt, nodes: make([]nodeRT, n), unmet: make([]int, n), static: make([]int, n),
		rarity: make([]int, n), scarce: make([][]string, n), classOf: make([]int, n), bucketOf: make([]int, n), held: map[string]int{},
		execs: map[string]execRef{}, loopIter: make([]int, len(g.loops)), open: n}
	for i := range e.loopIter {
		e.loopIter[i] = 1
	}
	names := map[string]bool{}
	for i := 0; i < n; i++ {
		names[g.nodes[i].Class] = true
	}
	sorted := make([]string, 0, len(names))
	for k := range names {
		sorted = append(sorted, k)
	}
	sort.Strings(sorted)
	idx := map[string]int{}
	for i, k := range sorted {
		idx[k] = i
		e.classes = append(e.classes, &classRT{name: k})
	}
	bucketIdx := map[string]int{}
	for i := 0; i < n; i++ {
		nd := g.nodes[i]
		e.nodes[i].status = StatusPending
		e.classOf[i] = idx[nd.Class]
		e.unmet[i] = e.initialUnmet(i)
		for _, k := range nd.Needs {
			if c, ok := p.Capacity[k]; ok {
				e.scarce[i] = append(e.scarce[i], k)
				e.rarity[i] = max(e.rarity[i], 1000/c)
			}
		}
		sort.Strings(e.scarce[i])
		key := nd.Class + "\x00" + strings.Join(e.scarce[i], "\x00")
		b, ok := bucketIdx[key]
		if !ok {
			b = len(e.buckets)
			bucketIdx[key] = b
			e.buckets = append(e.buckets, &bucket{keys: e.scarce[i], ready: readyHeap{e: e}})
		}
		e.bucketOf[i] = b
		e.static[i] = p.Weights.Critical*g.critical[i]*1000/max(1, g.maxCrit) +
			p.Weights.Blocking*permille(g.desc[i], g.maxDesc) + p.Weights.Rarity*e.rarity[i] - p.Weights.Risk*nd.Risk
	}
	return e
}

func permille(v, of int) int {
	if of == 0 {
		return 0
	}
	return v * 1000 / of
}

// initialUnmet counts the dependencies node i waits for: every dependency
// outside its loop, and within its loop those earlier in the iteration
// order (a later one feeds the next iteration).
func (e *Engine) initialUnmet(i int) int {
	c := e.g.comps[e.g.comp[i]]
	u := 0
	for _, d := range e.g.deps[i] {
		if c.loop >= 0 && e.g.comp[d] == e.g.comp[i] {
			l := e.g.loops[c.loop]
			if l.pos[d] > l.pos[i] {
				continue
			}
		}
		u++
	}
	return u
}

func (e *Engine) confidence(class int) int {
	c := e.classes[class]
	return (c.succeeded + 1) * 1000 / (c.succeeded + c.failed + 2)
}

func (e *Engine) priority(i int) int {
	return e.static[i] + e.p.Weights.Confidence*e.confidence(e.classOf[i])
}

// less orders two nodes of one class: higher static score first, then the
// tie-breaks.
func (e *Engine) less(a, b int) bool {
	if e.static[a] != e.static[b] {
		return e.static[a] > e.static[b]
	}
	return e.tieLess(a, b)
}

func (e *Engine) tieLess(a, b int) bool {
	if ra, rb := e.g.groupRank[a], e.g.groupRank[b]; ra != rb {
		return ra < rb
	}
	na, nb := e.g.nodes[a], e.g.nodes[b]
	if na.ID != nb.ID {
		return na.ID < nb.ID
	}
	return na.Digest < nb.Digest
}

// better orders two nodes of any classes by full priority, then the tie-breaks.
func (e *Engine) better(a, b int) bool {
	if pa, pb := e.priority(a), e.priority(b); pa != pb {
		return pa > pb
	}
	return e.tieLess(a, b)
}

type readyHeap struct {
	e     *Engine
	nodes []int
}

func (h readyHeap) Len() int           { return len(h.nodes) }
func (h readyHeap) Less(a, b int) bool { return h.e.less(h.nodes[a], h.nodes[b]) }
func (h readyHeap) Swap(a, b int)      { h.nodes[a], h.nodes[b] = h.nodes[b], h.nodes[a] }
func (h *readyHeap) Push(x any)        { h.nodes = append(h.nodes, x.(int)) }
func (h *readyHeap) Pop() any {
	x := h.nodes[len(h.nodes)-1]
	h.nodes = h.nodes[:len(h.nodes)-1]
	return x
}

// release makes node i ready after a success made its dependencies pass:
// held until the next wave under the wave barrier.
func (e *Engine) readyAfterSuccess(i int) {
	if !e.p.WaveBarrier {
		e.makeReady(i)
		return
	}
	rt := &e.nodes[i]
	rt.status = StatusReady
	if !rt.held && !rt.inHeap {
		rt.held = true
		e.deferred = append(e.deferred, i)
	}
}

// flushHeld moves the nodes the wave barrier held into the ready queues.
func (e *Engine) flushHeld() {
	for _, i := range e.deferred {
		if rt := &e.nodes[i]; rt.held {
			rt.held = false
			if rt.status == StatusReady {
				e.makeReady(i)
			}
		}
	}
	e.deferred = e.deferred[:0]
}

// unhold drops node i from the held nodes.
func (e *Engine) unhold(i int) {
	if !e.nodes[i].held {
		return
	}
	e.nodes[i].held = false
	for k, x := range e.deferred {
		if x == i {
			e.deferred = append(e.deferred[:k:k], e.deferred[k+1:]...)
			break
		}
	}
}

func (e *Engine) makeReady(i int) {
	e.nodes[i].status = StatusReady
	if !e.nodes[i].inHeap {
		e.nodes[i].inHeap = true
		heap.Push(&e.buckets[e.bucketOf[i]].ready, i)
	}
}

func (e *Engine) readyCount() int {
	n := 0
	for _, b := range e.buckets {
		n += b.ready.Len()
	}
	return n
}

// popBest removes and returns the best ready node that fits the
// capacities, over all buckets.
func (e *Engine) popBest() (int, bool) {
	best := -1
	var from *bucket
	for _, b := range e.buckets {
		if b.ready.Len() == 0 || !e.keysFit(b.keys) {
			continue
		}
		top := b.ready.nodes[0]
		if best < 0 || e.better(top, best) {
			best, from = top, b
		}
	}
	if best < 0 {
		return 0, false
	}
	heap.Pop(&from.ready)
	e.nodes[best].inHeap = false
	return best, true
}

func (e *Engine) fits(i int) bool { return e.keysFit(e.scarce[i]) }

func (e *Engine) keysFit(keys []string) bool {
	for _, k := range keys {
		if e.held[k] >= e.p.Capacity[k] {
			return false
		}
	}
	return true
}

// ExecutionID returns the node_execution_id of an attempt: derived from the
// seed, the run, the node and the attempt number, so a replay mints the same.
func ExecutionID(seed, runID, nodeID string, attempt int) string {
	h := sha256.New()
	for _, s := range []string{seed, runID, nodeID, strconv.Itoa(attempt)} {
		h.Write([]byte(strconv.Itoa(len(s))))
		h.Write([]byte{':'})
		h.Write([]byte(s))
	}
	return "nx-" + hex.EncodeToString(h.Sum(nil)[:12])
}

func (e *Engine) decision(action string, i int, reason string) Decision {
	e.seq++
	return Decision{Sequence: e.seq, Action: action, RunID: e.opt.RunID, NodeID: e.g.nodes[i].ID, Reason: reason,
		MaxConcurrency: e.p.MaxConcurrency, DeterminismSeed: e.opt.Seed}
}

func (e *Engine) scores(i int) *Scores {
	g := e.g
	return &Scores{
		Priority: e.priority(i), CriticalPath: g.critical[i], Critical: g.critical[i] * 1000 / max(1, g.maxCrit),
		Descendants: g.desc[i], Blocking: permille(g.desc[i], g.maxDesc), Rarity: e.rarity[i],
		Confidence: e.confidence(e.classOf[i]), Risk: g.nodes[i].Risk, Weights: e.p.Weights,
	}
}

func (e *Engine) tieBreak(i int) *TieBreak {
	n := e.g.nodes[i]
	return &TieBreak{NodePriorityGroup: n.Group, GroupRank: e.g.groupRank[i], NodeID: n.ID, TaskSpecDigest: n.Digest}
}

// start records a new attempt of node i and returns its decision.
func (e *Engine) start(i int, action, wave, reason string, duplicate bool) Decision {
	rt := &e.nodes[i]
	rt.attempts++
	a := Attempt{NodeExecutionID: ExecutionID(e.opt.Seed, e.opt.RunID, e.g.nodes[i].ID, rt.attempts), Attempt: rt.attempts,
		Duplicate: duplicate, WaveID: wave}
	rt.live = append(rt.live, a)
	rt.status = StatusRunning
	rt.retry = false
	e.execs[a.NodeExecutionID] = execRef{node: i, idx: rt.attempts}
	for _, k := range e.scarce[i] {
		e.held[k]++
	}
	e.live++
	d := e.decision(action, i, reason)
	d.WaveID, d.NodeExecutionID, d.Attempt = wave, a.NodeExecutionID, a.Attempt
	d.Scores, d.TieBreak, d.TieBreakOrder = e.scores(i), e.tieBreak(i), TieBreakOrder
	d.Holds = e.scarce[i]
	d.Running = e.live
	if _, _, ok := e.g.LoopOf(i); ok {
		d.Iteration = e.loopIter[e.g.comps[e.g.comp[i]].loop]
	}
	return d
}

// Next decides what starts now, stamping the attempts with wave: ready nodes
// in priority order while the concurrency limit and the capacities allow,
// then (in endgame) duplicates of the last running nodes, or (after a
// rollback halt, once nothing runs) the next compensating step. It returns
// nothing when nothing may start.
func (e *Engine) Next(wave string) []Decision {
	if e.halted != "" {
		return e.nextCompensation()
	}
	if wave != e.wave {
		e.wave = wave
		e.flushHeld()
	}
	var out []Decision
	candidates := e.readyCount()
	for e.live < e.p.MaxConcurrency {
		i, ok := e.popBest()
		if !ok {
			break
		}
		action, reason := ActDispatch, "ready: every dependency succeeded"
		if e.nodes[i].retry {
			action = ActRetry
			reason = fmt.Sprintf("retry: attempt %d of %d after %s", e.nodes[i].failures+1, e.p.MaxAttempts, e.nodes[i].reason)
		} else if len(e.g.deps[i]) == 0 {
			reason = "ready: no dependencies"
		}
		if it, ok := e.iterationOf(i); ok && it > 1 {
			reason = fmt.Sprintf("ready: loop iteration %d", it)
		}
		d := e.start(i, action, wave, reason, false)
		d.Rank, d.Candidates = len(out)+1, candidates
		out = append(out, d)
	}
	return append(out, e.endgame(wave, len(out), candidates)...)
}

func (e *Engine) iterationOf(i int) (int, bool) {
	c := e.g.comps[e.g.comp[i]]
	if c.loop < 0 {
		return 0, false
	}
	return e.loopIter[c.loop], true
}

// endgame duplicates the last running nodes when at most
// Policy.Endgame.Remaining nodes are unfinished and nothing is ready.
func (e *Engine) endgame(wave string, rank, candidates int) []Decision {
	eg := e.p.Endgame
	if eg.Remaining == 0 || eg.MaxDuplicates == 0 || e.open > eg.Remaining || e.readyCount() > 0 {
		return nil
	}
	var running []int
	for i := range e.nodes {
		// A node whose failed attempts reached the limit starts nothing
		// more: it fails when its last running attempt fails.
		if rt := &e.nodes[i]; rt.status == StatusRunning && e.liveCount(i) < 1+eg.MaxDuplicates && rt.failures < e.p.MaxAttempts {
			running = append(running, i)
		}
	}
	sort.Slice(running, func(a, b int) bool { return e.better(running[a], running[b]) })
	var out []Decision
	for round := 1; round <= eg.MaxDuplicates; round++ {
		for _, i := range running {
			if e.live >= e.p.MaxConcurrency {
				return out
			}
			if e.liveCount(i) > round || !e.fits(i) {
				continue
			}
			d := e.start(i, ActDuplicate, wave, fmt.Sprintf("endgame: %d node(s) unfinished, nothing else ready; duplicate %d of %d", e.open, round, eg.MaxDuplicates), true)
			rank++
			d.Rank, d.Candidates = rank, candidates
			out = append(out, d)
		}
	}
	return out
}

// liveCount counts node i's running attempts that are not being cancelled.
func (e *Engine) liveCount(i int) int {
	n := 0
	for _, a := range e.nodes[i].live {
		if !a.Cancelling {
			n++
		}
	}
	return n
}

// Score returns node id's current scores and tie-break values (what a
// dispatch of it now would record).
func (e *Engine) Score(id string) (Scores, TieBreak, bool) {
	i, ok := e.g.Index(id)
	if !ok {
		return Scores{}, TieBreak{}, false
	}
	return *e.scores(i), *e.tieBreak(i), true
}
