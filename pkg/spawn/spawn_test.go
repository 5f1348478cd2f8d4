package spawn_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/dome-registry/dome/pkg/canonical"
	"github.com/dome-registry/dome/pkg/spawn"
)

const (
	sha   = "3f2c1a9e8b7d6c5f4a3b2c1d0e9f8a7b6c5d4e3f"
	digst = "sha256:1111111111111111111111111111111111111111111111111111111111111111"
)

func fields() spawn.Fields {
	return spawn.Fields{
		RunID: "run-1", WaveID: "wave-1", NodeID: "node-3", NodeExecutionID: "ne-3.1",
		TaskSpecRef: "ops/runs/run-1/work.queue.json@" + sha, ToolProfileRef: digst,
		ContainerRef:    "ghcr.io/dome/worker@" + digst,
		ActionSpec:      spawn.ActionSpec{Intent: "docs.update", Summary: "say hello in the README", Inputs: json.RawMessage(`{"files":["README.md"]}`)},
		DeterminismSeed: 42,
	}
}

func valid(t testing.TB) []byte {
	var v spawn.Validator
	s, err := v.New(fields())
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.Canonical()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func code(err error) string {
	var e *spawn.Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

func TestNewAndParse(t *testing.T) {
	var v spawn.Validator
	b := valid(t)
	s, err := v.Parse("spawn.json", b)
	if err != nil {
		t.Fatal(err)
	}
	if !s.Valid() || s.RunID() != "run-1" || !strings.HasPrefix(s.InputsHash(), "sha256:") {
		t.Fatalf("%+v", s.Fields())
	}
	again, _ := s.Canonical()
	if !bytes.Equal(again, b) {
		t.Fatal("not byte-stable")
	}
	var zero spawn.Spec
	if zero.Valid() {
		t.Fatal("the zero Spec is valid")
	}
	if _, err := zero.Canonical(); err == nil {
		t.Fatal("the zero Spec encodes")
	}
}

func TestRefusals(t *testing.T) {
	var v spawn.Validator
	mod := func(f func(*spawn.Fields)) spawn.Fields { x := fields(); f(&x); return x }
	cases := []struct {
		name string
		f    spawn.Fields
		code string
	}{
		{"branch as task spec", mod(func(f *spawn.Fields) { f.TaskSpecRef = "ops/runs/run-1/work.queue.json@main" }), spawn.CodeMutableRef},
		{"short sha", mod(func(f *spawn.Fields) { f.TaskSpecRef = "3f2c1a9" }), spawn.CodeMutableRef},
		{"tag as tool profile", mod(func(f *spawn.Fields) { f.ToolProfileRef = "grant@v1.0.0" }), spawn.CodeMutableRef},
		{"upper-case digest", mod(func(f *spawn.Fields) { f.ToolProfileRef = strings.ToUpper(digst) }), spawn.CodeMutableRef},
		{"container by tag", mod(func(f *spawn.Fields) { f.ContainerRef = "ghcr.io/dome/worker:latest" }), spawn.CodeContainerNotPinned},
		{"container by tag and digest", mod(func(f *spawn.Fields) { f.ContainerRef = "ghcr.io/dome/worker:latest@sha256:abc" }), spawn.CodeContainerNotPinned},
		{"methods in the action", mod(func(f *spawn.Fields) { f.ActionSpec.Inputs = json.RawMessage(`{"method":"repo-admin/promote"}`) }), spawn.CodeBadField},
		{"bad id", mod(func(f *spawn.Fields) { f.RunID = "../run" }), spawn.CodeBadField},
		{"bad intent", mod(func(f *spawn.Fields) { f.ActionSpec.Intent = "Rewrite Everything" }), spawn.CodeBadField},
		{"negative seed", mod(func(f *spawn.Fields) { f.DeterminismSeed = -1 }), spawn.CodeBadField},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := v.New(c.f)
			if code(err) != c.code {
				t.Fatalf("err = %v, want %s", err, c.code)
			}
		})
	}
	good := string(valid(t))
	raw := []struct{ name, doc, code string }{
		{"unknown field", strings.Replace(good, `{"action_spec"`, `{"a":1,"action_spec"`, 1), spawn.CodeUnknownField},
		{"missing field", strings.Replace(good, `"determinism_seed":42,`, ``, 1), spawn.CodeMissingField},
		{"duplicate field", strings.Replace(good, `"determinism_seed":42,`, `"determinism_seed":42,"determinism_seed":43,`, 1), spawn.CodeMalformed},
		{"escaped duplicate", strings.Replace(good, `"determinism_seed":42,`, `"determinism_seed":42,"determinism_see\u0064":43,`, 1), spawn.CodeMalformed},
		{"not an object", `[]`, spawn.CodeMalformed},
		{"trailing data", good + "{}", spawn.CodeMalformed},
	}
	for _, c := range raw {
		t.Run(c.name, func(t *testing.T) {
			_, err := v.Parse("s.json", []byte(c.doc))
			if code(err) != c.code {
				t.Fatalf("err = %v, want %s", err, c.code)
			}
		})
	}
}

// TestEveryFieldTampered changes each member after inputs_hash was
// computed: the recomputed hash (or the field's own check) refuses it.
func TestEveryFieldTampered(t *testing.T) {
	var v spawn.Validator
	var doc map[string]any
	dec := json.NewDecoder(bytes.NewReader(valid(t)))
	dec.UseNumber()
	dec.Decode(&doc)
	changes := map[string]any{
		"run_id": "run-2", "wave_id": "wave-2", "node_id": "node-4", "node_execution_id": "ne-3.2",
		"task_spec_ref": "ops/runs/run-1/work.queue.json@" + strings.Repeat("a", 40), "tool_profile_ref": "sha256:" + strings.Repeat("2", 64),
		"container_ref": "ghcr.io/dome/evil@" + digst, "action_spec": map[string]any{"intent": "docs.delete"},
		"determinism_seed": json.Number("43"), "inputs_hash": "sha256:" + strings.Repeat("3", 64),
	}
	for k, val := range changes {
		c := map[string]any{}
		for kk, vv := range doc {
			c[kk] = vv
		}
		c[k] = val
		b, _ := canonical.Marshal(c)
		_, err := v.Parse("s.json", b)
		if code(err) != spawn.CodeInputsHash {
			t.Errorf("%s changed: %v", k, err)
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add(valid(f))
	f.Add([]byte(`{"run_id":"r"}`))
	var v spawn.Validator
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := v.Parse("f", data)
		if err != nil {
			if code(err) == "" {
				t.Fatalf("refusal without a code: %v", err)
			}
			return
		}
		// Whatever validates re-encodes to a spec that validates again.
		b, err := s.Canonical()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := v.Parse("again", b); err != nil {
			t.Fatalf("re-encoded spec refused: %v", err)
		}
	})
}
