package runspec

import (
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/dome-registry/dome/pkg/canonical"
	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/dome-registry/dome/pkg/schemaval"
	"github.com/dome-registry/dome/pkg/spawn"
	"github.com/dome-registry/dome/pkg/workflow"
)

// QueueSchema is the schema_version of a work queue.
const QueueSchema = "dome.work.queue/v1"

// QueueFile is a work queue's name inside its run folder.
const QueueFile = "work.queue.json"

// MaxQueueBytes bounds what ParseQueue reads.
const MaxQueueBytes = 64 << 20

// Output kinds a task may require.
const (
	OutputPatchProposal = "patch_proposal"
	OutputEvidence      = "evidence"
)

//go:embed schemas/work_queue.schema.json schemas/run_policy.schema.json schemas/run_manifest.schema.json default_run_policy.json
var schemaFS embed.FS

// QueueSchemaJSON returns the JSON Schema of work.queue.json.
func QueueSchemaJSON() []byte { b, _ := schemaFS.ReadFile("schemas/work_queue.schema.json"); return b }

var compileQueue = sync.OnceValue(func() *schemaval.Schema {
	return schemaval.MustCompile("work_queue.schema.json", QueueSchemaJSON())
})

// Queue is a parsed work.queue.json.
type Queue struct {
	SchemaVersion  string   `json:"schema_version"`
	RunID          string   `json:"run_id,omitempty"`
	Description    string   `json:"description,omitempty"`
	PriorityGroups []string `json:"priority_groups,omitempty"`
	Budgets        *Budgets `json:"budgets,omitempty"`
	Tasks          []Task   `json:"tasks"`
	Cycles         []Cycle  `json:"cycles,omitempty"`

	digest string
}

// Budgets are the queue's own limits; each narrows the run policy.
type Budgets struct {
	MaxConcurrency   int `json:"max_concurrency,omitempty"`
	MaxAttempts      int `json:"max_attempts,omitempty"`
	MaxTotalAttempts int `json:"max_total_attempts,omitempty"`
	MaxWallSeconds   int `json:"max_wall_seconds,omitempty"`
}

// Task is one TaskSpec node. It declares capabilities and outputs, never
// methods: the resolver maps capabilities to methods when a grant is made.
type Task struct {
	NodeID               string           `json:"node_id"`
	Title                string           `json:"title,omitempty"`
	Containers           []Container      `json:"containers"`
	RequiredCapabilities []string         `json:"required_capabilities"`
	RequiredOutputs      []Output         `json:"required_outputs"`
	Dependencies         []string         `json:"dependencies,omitempty"`
	PriorityGroup        string           `json:"priority_group,omitempty"`
	Resources            []string         `json:"resources,omitempty"`
	Risk                 string           `json:"risk,omitempty"`
	Constraints          *TaskConstraints `json:"constraints,omitempty"`
	ActionSpec           *ActionSpec      `json:"action_spec,omitempty"`

	// Digest is the task_spec_digest: the sha256 of the RFC 8785 canonical
	// bytes of the task object as written in the queue.
	Digest string `json:"-"`
}

// Container is where a task runs: the image digest it is pinned to, the
// runtime card that describes it, and the command the local dispatcher runs.
type Container struct {
	ContainerRef string   `json:"container_ref"`
	RuntimeCard  string   `json:"runtime_card,omitempty"`
	Command      []string `json:"command"`
}

// Output is one typed output a task must produce.
type Output struct {
	Kind         string `json:"kind"`
	EvidenceKind string `json:"evidence_kind,omitempty"`
	Optional     bool   `json:"optional,omitempty"`
}

// TaskConstraints narrow the grant of every attempt of a task. They are
// a narrowing only: roots intersect with what the policy and the resolver
// give, deny globs add up, budgets lower.
type TaskConstraints struct {
	ReadRoots      []string `json:"read_roots,omitempty"`
	WriteRoots     []string `json:"write_roots,omitempty"`
	DenyGlobs      []string `json:"deny_globs,omitempty"`
	MaxCalls       *int64   `json:"max_calls,omitempty"`
	MaxWallSeconds *int64   `json:"max_wall_seconds,omitempty"`
}

// ActionSpec is the intent-level action handed to the worker.
type ActionSpec struct {
	Intent string          `json:"intent"`
	Params json.RawMessage `json:"params,omitempty"`
}

// Cycle declares an intended cycle: its nodes run in iterations.
type Cycle struct {
	LoopID        string   `json:"loop_id"`
	Nodes         []string `json:"nodes"`
	MaxIterations int      `json:"max_iterations"`
	Reason        string   `json:"reason,omitempty"`
}

// Digest returns the digest of the queue file's canonical bytes.
func (q *Queue) Digest() string { return q.digest }

// ParseQueue reads a work queue: strict JSON (no duplicate keys), the
// schema, id rules, then graph integrity. Errors are *errkind.InputError
// naming source and the JSON pointer of the field; an integrity failure
// lists every problem (nodes, the cycle's path) in a *GraphError.
func ParseQueue(source string, data []byte) (*Queue, *workflow.Graph, error) {
	if len(data) > MaxQueueBytes {
		return nil, nil, &errkind.InputError{Source: source, Problem: fmt.Sprintf("%d bytes: a work queue is at most %d bytes", len(data), MaxQueueBytes),
			Hint: "split the work into several runs"}
	}
	if err := compileQueue().Validate(source, data); err != nil {
		var ie *errkind.InputError
		if errors.As(err, &ie) && namesMethods(ie.Field) {
			ie.Hint = "a task declares required_capabilities, never methods: the resolver (policy/resolver_spec.json) maps capabilities to methods when a grant is made"
		}
		return nil, nil, err
	}
	// One decoding pass: the queue with its tasks kept raw, then each task
	// from its own bytes (which its digest is taken over).
	var top struct {
		Queue
		Tasks []json.RawMessage `json:"tasks"`
	}
	if err := json.Unmarshal(data, &top); err != nil {
		return nil, nil, &errkind.InputError{Source: source, Problem: err.Error()}
	}
	q := top.Queue
	q.Tasks = make([]Task, len(top.Tasks))
	for i, raw := range top.Tasks {
		if err := json.Unmarshal(raw, &q.Tasks[i]); err != nil {
			return nil, nil, &errkind.InputError{Source: source, Field: fmt.Sprintf("/tasks/%d", i), Problem: err.Error()}
		}
		d, err := canonical.DigestJSON(raw)
		if err != nil {
			return nil, nil, &errkind.InputError{Source: source, Field: fmt.Sprintf("/tasks/%d", i), Problem: err.Error()}
		}
		q.Tasks[i].Digest = d
	}
	canon, err := canonical.Transform(data)
	if err != nil {
		return nil, nil, &errkind.InputError{Source: source, Problem: err.Error()}
	}
	q.digest = canonical.Digest(canon)
	if err := q.checkIDs(source); err != nil {
		return nil, nil, err
	}
	g, err := workflow.Build(q.GraphSpec(nil))
	if err != nil {
		return nil, nil, graphError(source, err)
	}
	return &q, g, nil
}

// checkIDs refuses ids the schema's pattern lets through but a run folder
// or a ref cannot hold, output lists that ask for one thing twice, and
// action params a spawn spec would refuse (a method named).
func (q *Queue) checkIDs(source string) error {
	check := func(field, id string) error {
		if strings.Contains(id, "..") || strings.HasSuffix(id, ".lock") {
			return &errkind.InputError{Source: source, Field: field, Problem: fmt.Sprintf("%q: an id must not contain '..' or end with .lock", id)}
		}
		return nil
	}
	if q.RunID != "" {
		if err := check("/run_id", q.RunID); err != nil {
			return err
		}
	}
	for i, t := range q.Tasks {
		if err := check(fmt.Sprintf("/tasks/%d/node_id", i), t.NodeID); err != nil {
			return err
		}
		if t.ActionSpec != nil {
			if field, problem := spawn.CheckActionInputs(t.ActionSpec.Params); problem != "" {
				return &errkind.InputError{Source: source, Field: fmt.Sprintf("/tasks/%d/action_spec/params%s", i, field),
					Problem: fmt.Sprintf("task %q: %s", t.NodeID, problem), Hint: "describe the work in intent and params; the worker's grant says which methods it may call"}
			}
		}
		seen := map[string]bool{}
		for j, o := range t.RequiredOutputs {
			k := o.Kind + "/" + o.EvidenceKind
			if seen[k] {
				return &errkind.InputError{Source: source, Field: fmt.Sprintf("/tasks/%d/required_outputs/%d", i, j),
					Problem: fmt.Sprintf("task %q requires the output %s twice", t.NodeID, strings.TrimSuffix(k, "/"))}
			}
			seen[k] = true
		}
	}
	return nil
}

// GraphError is a queue whose graph does not hold: every problem, each with
// the JSON pointer of the field it is reported at.
type GraphError struct {
	Source   string
	Problems []workflow.Problem
	Fields   []string
}

func (e *GraphError) Error() string {
	if len(e.Problems) == 1 {
		return fmt.Sprintf("%s: %s: %s", e.Source, e.Fields[0], e.Problems[0].Message)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %d graph problems", e.Source, len(e.Problems))
	for i, p := range e.Problems {
		if i == 20 {
			fmt.Fprintf(&b, "\n  ... and %d more", len(e.Problems)-20)
			break
		}
		fmt.Fprintf(&b, "\n  %s: %s", e.Fields[i], p.Message)
	}
	return b.String()
}

// Unwrap makes a GraphError an *errkind.InputError for exit codes.
func (e *GraphError) Unwrap() error {
	return &errkind.InputError{Source: e.Source, Problem: "graph integrity", Hint: "fix the dependencies named above; a cycle that is meant to be passes only when declared under \"cycles\" with max_iterations"}
}

func graphError(source string, err error) error {
	var ie *workflow.IntegrityError
	if !errors.As(err, &ie) {
		return &errkind.InputError{Source: source, Problem: err.Error()}
	}
	ge := &GraphError{Source: source, Problems: ie.Problems}
	for _, p := range ie.Problems {
		f := "(document root)"
		switch {
		case p.Code == workflow.ProblemUnknownGroup:
			f = fmt.Sprintf("/tasks/%d/priority_group", p.Node)
		case p.Node >= 0 && p.Dep >= 0:
			f = fmt.Sprintf("/tasks/%d/dependencies/%d", p.Node, p.Dep)
		case p.Node >= 0:
			f = fmt.Sprintf("/tasks/%d/node_id", p.Node)
		case p.LoopIdx >= 0:
			f = fmt.Sprintf("/cycles/%d", p.LoopIdx)
		case p.GroupIdx >= 0:
			f = fmt.Sprintf("/priority_groups/%d", p.GroupIdx)
		}
		ge.Fields = append(ge.Fields, f)
	}
	return ge
}

// Capacity key prefixes: a task's needs as the workflow engine sees them.
const (
	NeedResource   = "resource:"
	NeedCapability = "capability:"
	NeedCard       = "card:"
)

// GraphSpec maps the queue onto the workflow engine's graph: a node per
// task (its needs are its resources, capabilities and runtime card, its
// confidence class its first container, its risk from p), a loop per cycle.
// p may be nil (no risk penalties).
func (q *Queue) GraphSpec(p *Policy) workflow.Spec {
	spec := workflow.Spec{Groups: q.PriorityGroups, Nodes: make([]workflow.Node, len(q.Tasks))}
	for i, t := range q.Tasks {
		n := workflow.Node{ID: t.NodeID, Deps: t.Dependencies, Group: t.PriorityGroup, Digest: t.Digest}
		for _, r := range t.Resources {
			n.Needs = append(n.Needs, NeedResource+r)
		}
		for _, c := range t.RequiredCapabilities {
			n.Needs = append(n.Needs, NeedCapability+c)
		}
		c := t.Containers[0]
		if c.RuntimeCard != "" {
			n.Needs = append(n.Needs, NeedCard+c.RuntimeCard)
			n.Class = NeedCard + c.RuntimeCard
		} else {
			n.Class = c.ContainerRef
		}
		sort.Strings(n.Needs)
		if p != nil {
			n.Risk = p.RiskOf(t)
		}
		spec.Nodes[i] = n
	}
	for _, c := range q.Cycles {
		spec.Loops = append(spec.Loops, workflow.Loop{ID: c.LoopID, Nodes: c.Nodes, MaxIterations: c.MaxIterations})
	}
	return spec
}

// CheckCapabilities refuses capabilities that known (the resolver's
// capability names) does not list, naming the task and the field.
func (q *Queue) CheckCapabilities(source string, known []string) error {
	set := make(map[string]bool, len(known))
	for _, k := range known {
		set[k] = true
	}
	for i, t := range q.Tasks {
		for j, c := range t.RequiredCapabilities {
			if !set[c] {
				return &errkind.InputError{Source: source, Field: fmt.Sprintf("/tasks/%d/required_capabilities/%d", i, j),
					Problem: fmt.Sprintf("task %q requires capability %q, which the resolver does not define", t.NodeID, c),
					Hint:    "use one of: " + strings.Join(known, ", ")}
			}
		}
	}
	return nil
}

// Task returns the task with node id, if any.
func (q *Queue) Task(id string) (*Task, bool) {
	for i := range q.Tasks {
		if q.Tasks[i].NodeID == id {
			return &q.Tasks[i], true
		}
	}
	return nil, false
}

// namesMethods reports whether a schema error's field is a task trying to
// name methods or operations.
func namesMethods(field string) bool {
	rest, ok := strings.CutPrefix(field, "/tasks/")
	if !ok {
		return false
	}
	_, name, ok := strings.Cut(rest, "/")
	switch name {
	case "methods", "allowed_methods", "operations", "operation_ids", "tools":
		return ok
	}
	return false
}
