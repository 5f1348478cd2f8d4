package runspec

import (
	"errors"
	"testing"
	"time"

	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/dome-registry/dome/pkg/workflow"
)

// FuzzParseQueue: any bytes give a queue with a checked graph or an input
// error; never a panic, and a parsed queue always schedules to the end.
func FuzzParseQueue(f *testing.F) {
	f.Add(readGood(f))
	f.Add([]byte(`{"schema_version":"dome.work.queue/v1","tasks":[{"node_id":"a","containers":[{"container_ref":"sha256:` +
		`0000000000000000000000000000000000000000000000000000000000000000","command":["true"]}],"required_capabilities":["x"],` +
		`"required_outputs":[{"kind":"patch_proposal"}],"dependencies":["a"]}]}`))
	f.Add(bigQueue(3, true))
	f.Add([]byte(`{"schema_version":"dome.work.queue/v1","tasks":[],"tasks":[]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		q, g, err := ParseQueue("fuzz.json", data)
		if err != nil {
			if !errkind.IsInput(err) {
				t.Fatalf("not an input error: %v", err)
			}
			return
		}
		if g.Len() != len(q.Tasks) {
			t.Fatal("graph and queue disagree")
		}
		g2, wp, err := Schedule("fuzz.json", q, DefaultPolicy(), Overrides{})
		if err != nil {
			t.Fatalf("a parsed queue does not schedule: %v", err)
		}
		e, err := workflow.NewEngine(g2, wp, workflow.Options{RunID: "r", Seed: "s"})
		if err != nil {
			t.Fatal(err)
		}
		var running []string
		for steps := 0; !e.Done(); steps++ {
			if steps > 100000 {
				t.Fatal("no end")
			}
			for _, d := range e.Next("w") {
				if d.NodeExecutionID != "" && d.Action != workflow.ActCancel {
					running = append(running, d.NodeExecutionID)
				}
			}
			if len(running) == 0 {
				t.Fatalf("stalled: %+v", e.Summary())
			}
			id := running[0]
			running = running[1:]
			if _, err := e.Report(id, workflow.Outcome{Status: workflow.OutcomeSucceeded}); err != nil && !errors.Is(err, workflow.ErrUnknownExecution) {
				t.Fatal(err)
			}
		}
	})
}

// FuzzParsePolicy: a run policy parses or is an input error.
func FuzzParsePolicy(f *testing.F) {
	f.Add(DefaultPolicyJSON())
	f.Add([]byte(`{"schema_version":"dome.run_policy/v1","scheduling":{"max_concurrency":1}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		if _, err := ParsePolicy("fuzz.json", data); err != nil && !errkind.IsInput(err) {
			t.Fatalf("not an input error: %v", err)
		}
	})
}

// FuzzOpenManifest: a manifest opens or is an input error; what opens
// seals back to the same payload.
func FuzzOpenManifest(f *testing.F) {
	doc, err := manifest().Seal(time.Unix(0, 0), "fuzz")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(doc)
	f.Fuzz(func(t *testing.T, data []byte) {
		m, _, err := OpenManifest("fuzz.json", data)
		if err != nil {
			if !errkind.IsInput(err) {
				t.Fatalf("not an input error: %v", err)
			}
			return
		}
		if _, err := m.Seal(time.Unix(0, 0), "fuzz"); err != nil {
			t.Fatalf("an opened manifest does not seal again: %v", err)
		}
	})
}
