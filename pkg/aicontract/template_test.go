package aicontract

import (
	"os"
	"strings"
	"testing"
)

// The template is the resolver spec's, byte for byte. The golden file is the
// reference and is never rewritten by -update: a change to the template is a
// change of contract version (a new templateId), not an edit.
func TestTemplateV1_IsTheSpecTemplateByteForByte(t *testing.T) {
	want, err := os.ReadFile("testdata/contract-v1.template.golden")
	if err != nil {
		t.Fatal(err)
	}
	if TemplateV1 != string(want) {
		t.Fatalf("templates/contract-v1.txt is not the spec's template:\n%q\nwant\n%q", TemplateV1, want)
	}
	if !strings.HasPrefix(TemplateV1, "You are executing: {INTENT_HUMAN}\n") {
		t.Errorf("line 1 is not the spec's: %q", strings.SplitN(TemplateV1, "\n", 2)[0])
	}
	if !strings.Contains(TemplateV1, "NON\u2011NEGOTIABLE RULES:\n") {
		t.Errorf("the rules heading must keep the non-breaking hyphen U+2011")
	}
	for _, s := range StopConditions() {
		if !strings.Contains(TemplateV1, "\n- "+s+"\n") {
			t.Errorf("StopConditions() has %q, the template does not", s)
		}
	}
}

// The rendered text is the template with its placeholders replaced, then the
// default output requirements word for word; the request and the ids are not
// in it.
func TestRender_TemplateThenDefaults(t *testing.T) {
	cmd := &Command{ID: "create-component", DisplayName: "Create component", IntentID: IntentGenerate, TemplateID: TemplateV1ID}
	preset := &Preset{ID: "next", DisplayName: "Next.js", Stack: []string{"React 19", "{STACK_BULLETS} in a stack item stays as written"}}
	rules := []*Rule{{ID: "r1", Severity: "error", Directive: "Do NOT install new dependencies. {RULES_BULLETS}"}}
	got := Render(cmd, preset, rules, map[string]any{"maxFilesChanged": 3})
	want := "You are executing: Generate new code\n\n" +
		"NON\u2011NEGOTIABLE RULES:\n- [error] Do NOT install new dependencies. {RULES_BULLETS}\n\n" +
		"CONSTRAINTS:\n- maxFilesChanged: 3\n\n" +
		"PROJECT STACK:\n- Preset: Next.js (next)\n- React 19\n- {STACK_BULLETS} in a stack item stays as written\n\n" +
		"STOP CONDITIONS:\n- If any rule must be violated, STOP and ask for explicit permission.\n- If required information is missing, ask instead of guessing.\n\n" +
		"OUTPUT REQUIREMENTS:\n- Keep the solution simple and aligned with the stack.\n- Provide a short file-level plan before code when generating changes.\n" +
		"- Keep changes small and readable\n- If uncertain, ask before assuming\n- Do not invent project conventions beyond provided rules\n"
	if got != want {
		t.Fatalf("Render =\n%s\nwant\n%s", got, want)
	}
	if got := Render(cmd, &Preset{ID: "p", DisplayName: "P"}, nil, nil); !strings.Contains(got, "NON\u2011NEGOTIABLE RULES:\n- (none)\n\nCONSTRAINTS:\n- (none)\n") {
		t.Errorf("empty sections:\n%s", got)
	}
}
