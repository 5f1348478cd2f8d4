package agent

import (
	"errors"
	"fmt"

	"github.com/dome-registry/dome/pkg/workflow"
)

// DefaultStepID is the id of the one step of an agent without a workflow:
// it sends the task as the prompt.
const DefaultStepID = "respond"

// EffectiveWorkflow returns the profile's workflow, or for an agent without
// one a workflow of one prompt step ({{task}}).
func (p *Profile) EffectiveWorkflow() *Workflow {
	if p.Workflow != nil {
		return p.Workflow
	}
	return &Workflow{Steps: []Step{{ID: DefaultStepID, Prompt: "{{task}}"}}}
}

// checkProfile holds a profile to the rules its schema cannot say: abilities
// listed once, tasks not both examples and exclusions, a workflow whose
// graph is sound, placeholders that name steps that run before, delegates
// that are allowed and never the agent itself, tool steps only with a
// grant source.
func checkProfile(source string, p *Profile) error {
	core := map[string]bool{}
	for _, a := range p.CoreAbilities {
		core[a] = true
	}
	for i, a := range p.Abilities {
		if core[a] {
			return fieldErr(source, fmt.Sprintf("/abilities/%d", i), "list it once, in coreAbilities to always inject it", "ability %q is also a core ability", a)
		}
	}
	examples := map[string]int{}
	for i, t := range p.ExampleTasks {
		examples[normalize(t)] = i
	}
	for i, t := range p.NotForTasks {
		if j, ok := examples[normalize(t)]; ok {
			return fieldErr(source, fmt.Sprintf("/notForTasks/%d", i), "remove it from one of the lists", "%q is also exampleTasks[%d]", t, j)
		}
	}
	if p.Delegation != nil {
		for i, d := range p.Delegation.AllowedDelegates {
			if d == p.ID {
				return fieldErr(source, fmt.Sprintf("/delegation/allowedDelegates/%d", i), "an agent cannot delegate to itself", "agent %q lists itself", d)
			}
		}
	}
	if p.Workflow == nil {
		return nil
	}
	g, err := BuildGraph(p.Workflow)
	if err != nil {
		var ie *workflow.IntegrityError
		if errors.As(err, &ie) {
			return integrityInput(source, ie)
		}
		return fieldErr(source, "/workflow", "", "%v", err)
	}
	for i, s := range p.Workflow.Steps {
		f := fmt.Sprintf("/workflow/steps/%d", i)
		anc := ancestors(g, i)
		if err := checkAction(source, f, p, s.Action(), anc, ""); err != nil {
			return err
		}
		if s.Compensate != nil {
			if err := checkAction(source, f+"/compensate", p, *s.Compensate, anc, s.ID); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkAction checks one action's placeholders, delegate and tool. self is
// the step a compensation belongs to (its own output is known then).
func checkAction(source, f string, p *Profile, a Action, anc map[string]bool, self string) error {
	checkText := func(field, text string) error {
		ps, err := placeholders(text)
		if err != nil {
			return fieldErr(source, field, "", "%v", err)
		}
		for _, ph := range ps {
			if ph.name != "steps" || anc[ph.step] || ph.step == self {
				continue
			}
			hint := "a step may read the output of the steps that run before it: list the step in dependsOn"
			if !p.Workflow.Parallel() {
				hint = "a step may read the output of the steps before it in the array"
			}
			return fieldErr(source, field, hint, "{{steps.%s.output}}: %q does not run before this step", ph.step, ph.step)
		}
		return nil
	}
	switch a.Kind() {
	case "prompt":
		return checkText(f+"/prompt", a.Prompt)
	case "delegate":
		if a.Delegate.Agent == p.ID {
			return fieldErr(source, f+"/delegate/agent", "an agent cannot delegate to itself", "agent %q delegates to itself", p.ID)
		}
		if !p.AllowsDelegate(a.Delegate.Agent) {
			return fieldErr(source, f+"/delegate/agent", "add it to delegation.allowedDelegates", "agent %q is not among the allowed delegates", a.Delegate.Agent)
		}
		if p.MaxDepth() < 1 {
			return fieldErr(source, f+"/delegate", "raise delegation.maxDepth", "delegation.maxDepth is 0: this agent may not delegate")
		}
		return checkText(f+"/delegate/task", a.Delegate.Task)
	case "tool":
		if p.Tools == nil {
			return fieldErr(source, f+"/tool", "add tools.card and tools.capabilities: tool calls go through a grant derived from them", "a tool step in an agent without a tools block")
		}
		return jsonStrings(a.Tool.Input, func(ptr, s string) error { return checkText(f+"/tool/input"+ptr, s) })
	}
	return fieldErr(source, f, "", "want exactly one of prompt, tool and delegate")
}

// BuildGraph checks a workflow's steps as a graph: array order (each step
// after the one before it) without maxConcurrency, else the DAG of
// dependsOn. Cycles, unknown and duplicate ids are refused.
func BuildGraph(w *Workflow) (*workflow.Graph, error) {
	nodes := make([]workflow.Node, len(w.Steps))
	for i, s := range w.Steps {
		nodes[i] = workflow.Node{ID: s.ID, Deps: s.DependsOn, Compensable: s.Compensate != nil}
	}
	return workflow.Build(workflow.Spec{Nodes: nodes, Sequential: !w.Parallel()})
}

// integrityInput turns the first graph problem into an input error naming
// the step's field.
func integrityInput(source string, ie *workflow.IntegrityError) error {
	pr := ie.Problems[0]
	field := "/workflow/steps"
	if pr.Node >= 0 {
		field = fmt.Sprintf("/workflow/steps/%d", pr.Node)
		switch {
		case pr.Dep >= 0:
			field += fmt.Sprintf("/dependsOn/%d", pr.Dep)
		case pr.Code == workflow.ProblemEmptyID || pr.Code == workflow.ProblemDuplicateID:
			field += "/id"
		case pr.Code == workflow.ProblemCycle:
			field += "/dependsOn"
		}
	}
	msg := pr.Message
	if pr.Path != "" && pr.Code == workflow.ProblemCycle {
		msg = "the steps' dependencies form a cycle: " + pr.Path
	}
	if n := len(ie.Problems) - 1; n > 0 {
		msg += fmt.Sprintf(" (and %d more problem(s))", n)
	}
	return fieldErr(source, field, "steps must form a DAG: remove a dependency of the cycle", "%s", msg)
}

// ancestors returns the ids of the steps that finish before step i starts.
func ancestors(g *workflow.Graph, i int) map[string]bool {
	out := map[string]bool{}
	stack := append([]int(nil), g.Deps(i)...)
	for len(stack) > 0 {
		d := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		id := g.Node(d).ID
		if out[id] {
			continue
		}
		out[id] = true
		stack = append(stack, g.Deps(d)...)
	}
	return out
}
