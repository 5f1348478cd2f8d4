package agent

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzParseProfile: any bytes, as JSON or YAML, give a validated profile or
// an error, never a panic; a profile that parses passes Check too.
func FuzzParseProfile(f *testing.F) {
	paths, _ := filepath.Glob(filepath.Join("..", "..", "registry", "agents", "*.agent.json"))
	for _, p := range paths {
		data, _ := os.ReadFile(p)
		f.Add(data, false)
	}
	f.Add([]byte("schemaVersion: dome.agent/v1\nid: z\nname: Z\ndescription: d\nsystemPrompt: s\nenabled: true\nprovider: {runtime: r, model: m}\n"), true)
	f.Add([]byte(`{"workflow":{"steps":[{"id":"a","prompt":"{{steps.a.output}}"}]}}`), false)
	v := NewValidator()
	f.Fuzz(func(t *testing.T, data []byte, yaml bool) {
		name := "x.agent.json"
		if yaml {
			name = "x.agent.yaml"
		}
		p, err := v.Parse(name, data)
		if err != nil {
			return
		}
		if err := v.Check(name, p); err != nil {
			t.Fatalf("parsed but fails Check: %v", err)
		}
		if p.Clone().Digest() != p.Digest() {
			t.Fatal("a clone digests differently")
		}
	})
}

func FuzzParseAbility(f *testing.F) {
	paths, _ := filepath.Glob(filepath.Join("..", "..", "registry", "abilities", "*.md"))
	for _, p := range paths {
		data, _ := os.ReadFile(p)
		f.Add(data)
	}
	f.Add([]byte("---\n---\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		a, err := ParseAbility("registry/abilities/x.md", data)
		if err == nil && (a.Body == "" || a.Title == "") {
			t.Fatalf("an ability without text or title: %+v", a)
		}
	})
}

// FuzzPlaceholders: rendering never panics, and text without placeholders
// renders to itself.
func FuzzPlaceholders(f *testing.F) {
	for _, s := range []string{"{{task}}", "a {{ steps.x.output }} b", "{{steps.}}", "{{ .Name }}", "{{agent", "}}{{", "{{task}}{{task}}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		vars := templateVars{task: "T", agent: "A", output: func(id string) (json.RawMessage, bool) { return json.RawMessage(`"o"`), true }}
		out, err := render(s, vars)
		if err == nil && !strings.Contains(s, "{{") && out != s {
			t.Fatalf("%q rendered to %q", s, out)
		}
		in, _ := json.Marshal(map[string]string{"k": s})
		renderJSON(in, vars)
	})
}

func FuzzDecodeCheckpoint(f *testing.F) {
	f.Add([]byte(`{"stepIndex":0,"completedStepId":"a","stepOutputs":{"a":"x"},"context":{},"memorySnapshot":{}}`))
	f.Add([]byte(`{"stepIndex":"0"}`))
	g, _ := BuildGraph(steps("a", "b", "c"))
	f.Fuzz(func(t *testing.T, data []byte) {
		cp, err := decodeCheckpoint(data)
		if err != nil {
			return
		}
		cp.Validate(g)
	})
}
