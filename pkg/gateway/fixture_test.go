package gateway_test

import (
	"bytes"
	"crypto/ed25519"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/dome-registry/dome/internal/gittest"
	"github.com/dome-registry/dome/pkg/a2a"
	"github.com/dome-registry/dome/pkg/gateway"
	"github.com/dome-registry/dome/pkg/gitstore"
	"github.com/dome-registry/dome/pkg/grant"
	"github.com/dome-registry/dome/pkg/grant/grantfile"
	"github.com/dome-registry/dome/pkg/ledger"
	"github.com/dome-registry/dome/pkg/signing"
	"github.com/dome-registry/dome/pkg/skill"
	"github.com/dome-registry/dome/pkg/specfilter"
	"github.com/dome-registry/dome/pkg/stack"
)

// t0 is the fixed time of the tests.
var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// greetFiles is the small module the golden cases read.
var greetFiles = map[string]string{
	"README.md":       "# greet\n\nA tiny module.\n",
	"go.mod":          "module example.com/greet\n\ngo 1.22\n",
	"greet/greet.go":  "package greet\n\n// Hello greets name.\nfunc Hello(name string) string {\n\treturn \"Hello, \" + name\n}\n",
	"deploy/prod.pem": "-----BEGIN PRIVATE KEY-----\nnot a real key\n-----END PRIVATE KEY-----\n",
	"docs/guide.md":   "# Guide\n\nCall greet.Hello.\n",
}

var (
	inputsOnce sync.Once
	inputs     struct {
		policy *grant.Policy
		index  *grant.Index
		card   *a2a.Card
		err    error
	}
)

// grantInputs reads the repository's policy, resolver, skill contracts and
// worker card (the example registry dome ships).
func grantInputs(t testing.TB) (*grant.Policy, *grant.Index, *a2a.Card) {
	t.Helper()
	inputsOnce.Do(func() {
		read := func(p string) []byte {
			b, err := os.ReadFile(filepath.Join("../..", p))
			if err != nil && inputs.err == nil {
				inputs.err = err
			}
			return b
		}
		var specs grant.Specs
		var err error
		if inputs.policy, err = specs.ParsePolicy("policy/policy_spec.json", read("policy/policy_spec.json")); err != nil {
			inputs.err = err
			return
		}
		res, err := specs.ParseResolver("policy/resolver_spec.json", read("policy/resolver_spec.json"))
		if err != nil {
			inputs.err = err
			return
		}
		cat := &grant.Catalog{Contracts: map[string]*grant.Contract{}}
		ents, _ := os.ReadDir("../../registry/tools")
		for _, e := range ents {
			dir, err := specfilter.OpenDir(filepath.Join("../../registry/tools", e.Name()))
			if err != nil {
				inputs.err = err
				return
			}
			doc, err := specfilter.Load(dir, "spec/openapi.yaml", specfilter.LoadOptions{})
			dir.Close()
			if err != nil {
				inputs.err = err
				return
			}
			c, err := skill.FromDocument(e.Name(), "0123456789abcdef0123456789abcdef01234567", e.Name(), doc)
			if err != nil {
				inputs.err = err
				return
			}
			cat.Contracts[e.Name()] = c
		}
		if inputs.index, err = grant.NewIndex(res, cat); err != nil {
			inputs.err = err
			return
		}
		var as a2a.Schemas
		inputs.card, inputs.err = as.ParseCard("runtime/dome-worker", "runtime", read("registry/a2a/cards/runtime/dome-worker.card.json"))
	})
	if inputs.err != nil {
		t.Fatal(inputs.err)
	}
	return inputs.policy, inputs.index, inputs.card
}

// fixture is a run over the greet module with a gateway serving it.
type fixture struct {
	t        *testing.T
	git      *gittest.Repo
	repo     *gitstore.Repo
	base     string
	layout   stack.Layout
	run      *stack.Run
	sr       *gateway.StackRun
	gw       *gateway.Gateway
	key      signing.PrivateKey
	store    *grantfile.Store
	meter    *grant.Meter
	verifier *grant.Verifier
	mu       sync.Mutex
	now      time.Time
}

func fixedKey(kid string, seed byte) signing.PrivateKey {
	return signing.PrivateKey{KID: kid, Key: ed25519.NewKeyFromSeed(bytes.Repeat([]byte{seed}, ed25519.SeedSize))}
}

type fixtureOptions struct {
	maxRefusals int
	files       map[string]string
}

func newFixture(t *testing.T, o fixtureOptions) *fixture {
	t.Helper()
	f := &fixture{t: t, now: t0.Add(time.Minute)}
	f.git = gittest.New(t)
	files := o.files
	if files == nil {
		files = greetFiles
	}
	f.git.Write(files)
	f.base = f.git.Commit("greet")
	var err error
	if f.repo, err = gitstore.Open(f.git.Dir); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.repo.Close() })
	f.layout = stack.NewLayout(filepath.Join(f.git.Dir, "ops", "runs"), "run-1")
	if _, err := stack.Init(f.repo, f.layout, stack.InitOptions{Base: f.base, CreatedAt: t0, Producer: "test"}); err != nil {
		t.Fatal(err)
	}
	if f.run, err = stack.OpenRun(f.layout, false); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.run.Close() })
	f.sr = gateway.NewStackRun(f.repo, f.run, stack.SubmitOptions{})
	f.key = fixedKey("coordinator-1", 1)
	trusted, err := signing.NewTrustedKeys(f.key.Public())
	if err != nil {
		t.Fatal(err)
	}
	if f.store, err = grantfile.Open(filepath.Join(f.layout.Root, "grants")); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.store.Close() })
	f.meter = grant.NewMeter()
	if f.verifier, err = grant.NewVerifier(trusted, grant.Options{Store: f.store, Meter: f.meter, CacheSize: 64}); err != nil {
		t.Fatal(err)
	}
	if f.gw, err = gateway.New(gateway.Config{Repo: f.repo, Run: f.sr, Verifier: f.verifier, Meter: f.meter, Now: f.clock, MaxRefusals: o.maxRefusals}); err != nil {
		t.Fatal(err)
	}
	return f
}

func (f *fixture) clock() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

func (f *fixture) setNow(t time.Time) {
	f.mu.Lock()
	f.now = t
	f.mu.Unlock()
}

// attempt is the standard attempt of node "docs".
func (f *fixture) attempt(node string, n int) gateway.Attempt {
	exec := "ne-" + node + "-" + string(rune('0'+n))
	return gateway.Attempt{RunID: "run-1", WaveID: "wave-1", NodeID: node, NodeExecutionID: exec, TaskID: node + "." + string(rune('0'+n)),
		WorkerID: "worker-" + node + "-" + string(rune('0'+n)), BaseRef: f.base}
}

type issueOptions struct {
	caps      []string
	narrow    *grant.Template
	jti       string
	at        time.Time
	ttl       int64
	notSingle bool
}

// issue derives and issues a worker grant for attempt a.
func (f *fixture) issue(a gateway.Attempt, o issueOptions) []byte {
	f.t.Helper()
	pol, ix, card := grantInputs(f.t)
	caps := o.caps
	if caps == nil {
		caps = []string{"repo.read", "repo.propose"}
	}
	d, err := grant.Derive(grant.Sources{Policy: pol, Index: ix, Card: card, CardID: "runtime/dome-worker"},
		grant.Need{NodeID: a.NodeID, Capabilities: caps, Role: grant.RoleWorker, Narrow: o.narrow, TTLSeconds: o.ttl})
	if err != nil {
		f.t.Fatal(err)
	}
	if o.notSingle {
		d.Profile.SingleUse = false
	}
	at := o.at
	if at.IsZero() {
		at = t0
	}
	jti := o.jti
	if jti == "" {
		jti = "jti-" + a.NodeExecutionID
	}
	tok, _, err := grant.Issue(d, grant.Binding{RunID: a.RunID, WaveID: a.WaveID, WorkerID: a.WorkerID, NodeExecutionID: a.NodeExecutionID,
		Issuer: "coordinator-1", IssuedAt: at, JTI: jti, BaseRef: a.BaseRef}, f.key, nil)
	if err != nil {
		f.t.Fatal(err)
	}
	return tok
}

// serve opens a session for a and serves it on a Unix socket; it returns
// the session and a client presenting grant.
func (f *fixture) serve(a gateway.Attempt, tok []byte, onFlood func()) (*gateway.Session, *gateway.Client) {
	f.t.Helper()
	s, err := f.gw.Open(a, onFlood)
	if err != nil {
		f.t.Fatal(err)
	}
	sock := filepath.Join(f.t.TempDir(), "gw.sock")
	if err := s.Listen(sock); err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(func() { s.Close() })
	return s, gateway.NewUnixClient(sock, tok)
}

// proposal builds a sealed proposal changing files against the base, as a
// worker claiming to be someone else would.
func (f *fixture) proposal(files map[string]string, id string) []byte {
	return f.proposalAs(files, id, nil)
}

// proposalAs builds it with the worker's claims of attempt a (as dome
// worker submit makes them), or false claims when a is nil.
func (f *fixture) proposalAs(files map[string]string, id string, a *gateway.Attempt) []byte {
	f.t.Helper()
	var nf []gitstoreFile
	all := map[string]string{}
	for k, v := range greetFiles {
		all[k] = v
	}
	for k, v := range files {
		if v == "" {
			delete(all, k)
		} else {
			all[k] = v
		}
	}
	for k, v := range all {
		nf = append(nf, gitstoreFile{k, v})
	}
	sort.Slice(nf, func(i, j int) bool { return nf[i].path < nf[j].path })
	o := proposeOptions(f.base, id, nf)
	if a != nil {
		o.RunID, o.WaveID, o.IdempotencyKey = a.RunID, a.WaveID, a.NodeExecutionID+":submit_patch:1"
		o.Worker = stack.WorkerRunMeta{WorkerID: a.WorkerID, NodeID: a.NodeID, NodeExecutionID: a.NodeExecutionID}
	}
	res, err := stack.Propose(f.repo, o)
	if err != nil {
		f.t.Fatal(err)
	}
	return res.Doc
}

// events returns the run's events of a topic.
func (f *fixture) events(topic string) []ledger.Event {
	f.t.Helper()
	evs, err := ledger.Read(f.layout.Root, "run-1")
	if err != nil {
		f.t.Fatal(err)
	}
	var out []ledger.Event
	for _, e := range evs {
		if e.Topic == topic {
			out = append(out, e)
		}
	}
	return out
}
