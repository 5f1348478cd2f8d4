package stack

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/dome-registry/dome/internal/gittest"
	"github.com/dome-registry/dome/pkg/artifact"
	"github.com/dome-registry/dome/pkg/gitstore"
	"github.com/dome-registry/dome/pkg/patch"
	"github.com/dome-registry/dome/pkg/signing"
)

// fixture is a repository with a base commit and an initialized run.
type fixture struct {
	t      *testing.T
	repo   *gitstore.Repo
	dir    string
	base   string
	layout Layout
	policy *Policy
}

func baseFiles() map[string]string {
	var b strings.Builder
	for i := 1; i <= 40; i++ {
		b.WriteString("line " + string(rune('a'+i%26)) + strings.Repeat("x", i%7) + "\n")
	}
	return map[string]string{
		"README.md":       "# demo\n\nintro\n",
		"src/main.go":     b.String(),
		"src/util.go":     "package src\n\nfunc A() int { return 1 }\n\nfunc B() int { return 2 }\n",
		"docs/guide.md":   "guide\n",
		"go.mod":          "module demo\n\ngo 1.26\n",
		"policy/keep.txt": "policy\n",
	}
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	gittest.Need(t)
	g := gittest.New(t)
	g.Write(baseFiles())
	base := g.Commit("base")
	repo, err := gitstore.Open(g.Dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { repo.Close() })
	f := &fixture{t: t, repo: repo, dir: g.Dir, base: base, layout: NewLayout(t.TempDir(), "run-1"), policy: DefaultPolicy()}
	if _, err := Init(repo, f.layout, InitOptions{Base: base, Policy: f.policy, CreatedAt: ts0, Producer: "test"}); err != nil {
		t.Fatal(err)
	}
	return f
}

// files returns the base files with edits applied ("" deletes).
func edit(changes map[string]string) []patch.NewFile {
	m := baseFiles()
	for k, v := range changes {
		if v == "" {
			delete(m, k)
		} else {
			m[k] = v
		}
	}
	var out []patch.NewFile
	for k, v := range m {
		out = append(out, patch.NewFile{Path: k, Mode: patch.ModeFile, Data: []byte(v)})
	}
	return out
}

type proposeArgs struct {
	id, worker, key string
	changes         map[string]string
	intents         []string
	constraints     DeclaredConstraints
	created         time.Time
	sign            *signing.PrivateKey
}

func (f *fixture) propose(a proposeArgs) []byte {
	f.t.Helper()
	if a.worker == "" {
		a.worker = "w-" + a.id
	}
	if a.created.IsZero() {
		a.created = ts0
	}
	res, err := Propose(f.repo, ProposeOptions{RunID: f.layout.RunID, WaveID: "wave-1", BaseRef: f.base, Files: edit(a.changes), FromFiles: true,
		DiffSource: a.id, ProposalID: a.id, IntentTags: a.intents, Constraints: a.constraints, Worker: WorkerRunMeta{WorkerID: a.worker},
		IdempotencyKey: a.key, Policy: f.policy, CreatedAt: a.created, Producer: "test", Key: a.sign})
	if err != nil {
		f.t.Fatalf("propose %s: %v", a.id, err)
	}
	return res.Doc
}

// reseal changes a proposal's payload (as a JSON map) and its header, and
// seals it again so that its digest checks.
func reseal(t *testing.T, doc []byte, payload func(map[string]any), header func(*artifact.Header)) []byte {
	t.Helper()
	s, err := artifact.Open(doc, artifact.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(s.Payload, &m); err != nil {
		t.Fatal(err)
	}
	if payload != nil {
		payload(m)
	}
	h := s.Header
	if header != nil {
		header(&h)
	}
	b, _ := json.Marshal(m)
	out, _, err := artifact.Seal(h, b, nil)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func (f *fixture) open() *Run {
	f.t.Helper()
	r, err := OpenRun(f.layout, false)
	if err != nil {
		f.t.Fatal(err)
	}
	return r
}
