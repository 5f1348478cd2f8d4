package aicontract

import (
	"strings"
)

// Template contract-v1 is the resolver spec's "Contract Template (MVP v1)",
// section 6, with its six sections in the order of section 8.1. The spec's
// non-breaking hyphen in "NON-NEGOTIABLE" is written as an ASCII hyphen so
// the text is plain ASCII apart from the project's own words; OUTPUT
// REQUIREMENTS lists the template's two lines, then the three MVP defaults
// of section 8.2.

// IntentHuman is how the execution summary names an intent.
func IntentHuman(intent string) string {
	switch intent {
	case IntentGenerate:
		return "generate new code"
	case IntentRefactor:
		return "refactor existing code without changing its behaviour"
	case IntentReview:
		return "review code and report findings"
	}
	return intent
}

// OutputRequirements are the template's output requirements.
func OutputRequirements() []string {
	return []string{
		"Keep the solution simple and aligned with the stack.",
		"Provide a short file-level plan before code when generating changes.",
		"Keep changes small and readable.",
		"If uncertain, ask before assuming.",
		"Do not invent project conventions beyond the rules above.",
	}
}

// Render writes the contract text. It is a pure function of its arguments:
// rules in the order given (severity, then id), constraints by key, stack
// bullets in the preset's order; every line ends with "\n".
func Render(cmd *Command, input string, preset *Preset, rules []*Rule, constraints map[string]any) string {
	var b strings.Builder
	line := func(s string) { b.WriteString(s); b.WriteByte('\n') }
	bullets := func(items []string) {
		if len(items) == 0 {
			line("- (none)")
		}
		for _, it := range items {
			line("- " + it)
		}
	}
	// 1. Execution summary.
	line("You are executing: " + cmd.DisplayName + " (" + cmd.ID + ", intent " + cmd.IntentID + ": " + IntentHuman(cmd.IntentID) + ")")
	if input != "" {
		line("Request: " + input)
	}
	line("")
	// 2. Non-negotiable rules.
	line("NON-NEGOTIABLE RULES:")
	var rs []string
	for _, r := range rules {
		rs = append(rs, "["+r.Severity+"] "+r.Directive)
	}
	bullets(rs)
	line("")
	// 3. Constraints.
	line("CONSTRAINTS:")
	var cs []string
	for _, k := range sortedKeys(constraints) {
		cs = append(cs, k+": "+show(constraints[k]))
	}
	bullets(cs)
	line("")
	// 4. Project stack.
	line("PROJECT STACK:")
	bullets(append([]string{"Preset: " + preset.DisplayName + " (" + preset.ID + ")"}, preset.Stack...))
	line("")
	// 5. Stop conditions.
	line("STOP CONDITIONS:")
	bullets(StopConditions())
	line("")
	// 6. Output requirements.
	line("OUTPUT REQUIREMENTS:")
	bullets(OutputRequirements())
	return b.String()
}
