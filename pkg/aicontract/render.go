package aicontract

import (
	_ "embed"
	"strings"
)

// TemplateV1ID is the id commands name the template by (templateId).
const TemplateV1ID = "contract-v1"

// TemplateV1 is the resolver spec's "Contract Template (MVP v1)" byte for
// byte: its six sections in the fixed order, the non-breaking hyphen
// (U+2011) of "NON‑NEGOTIABLE" included, and the placeholders
// {INTENT_HUMAN}, {RULES_BULLETS}, {CONSTRAINTS_BULLETS} and
// {STACK_BULLETS}. Nothing else goes into the template: the command, the
// user's request and the ids travel in the contract's metadata.
//
//go:embed templates/contract-v1.txt
var TemplateV1 string

// DefaultOutputRequirements are the spec's MVP default output requirements,
// word for word; the rendered contract lists them after the template's own
// two output requirements, at the end of its last section.
func DefaultOutputRequirements() []string {
	return []string{
		"Keep changes small and readable",
		"If uncertain, ask before assuming",
		"Do not invent project conventions beyond provided rules",
	}
}

// IntentHuman is how the execution summary ({INTENT_HUMAN}) names an intent.
func IntentHuman(intent string) string {
	switch intent {
	case IntentGenerate:
		return "Generate new code"
	case IntentRefactor:
		return "Refactor existing code without changing its behaviour"
	case IntentReview:
		return "Review code and report findings"
	}
	return intent
}

// Render writes the contract text: TemplateV1 with its placeholders
// replaced (in one pass, so nothing a rule or a preset says is read as a
// placeholder), then the default output requirements. It is a pure function
// of its arguments: rules in the order given (severity, then id),
// constraints by key, stack bullets in the preset's order; every line ends
// with "\n".
func Render(cmd *Command, preset *Preset, rules []*Rule, constraints map[string]any) string {
	var rs []string
	for _, r := range rules {
		rs = append(rs, "["+r.Severity+"] "+r.Directive)
	}
	var cs []string
	for _, k := range sortedKeys(constraints) {
		cs = append(cs, k+": "+show(constraints[k]))
	}
	stack := append([]string{"Preset: " + preset.DisplayName + " (" + preset.ID + ")"}, preset.Stack...)
	text := strings.NewReplacer(
		"{INTENT_HUMAN}", IntentHuman(cmd.IntentID),
		"{RULES_BULLETS}", bullets(rs),
		"{CONSTRAINTS_BULLETS}", bullets(cs),
		"{STACK_BULLETS}", bullets(stack),
	).Replace(TemplateV1)
	return text + bullets(DefaultOutputRequirements()) + "\n"
}

// bullets renders items as "- item" lines joined by "\n" (no newline after
// the last), or "- (none)".
func bullets(items []string) string {
	if len(items) == 0 {
		return "- (none)"
	}
	return "- " + strings.Join(items, "\n- ")
}
