// Package runtest builds what the tests of the wave run need: the example
// registry's grant inputs (policy, resolver, skill contracts, worker card),
// and a run over a small module with a gateway serving it, grants issued
// for its attempts, and proposals made as a worker makes them.
package runtest

import (
	"bytes"
	"crypto/ed25519"
	"os"
	"path/filepath"
	"runtime"
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
	"github.com/dome-registry/dome/pkg/patch"
	"github.com/dome-registry/dome/pkg/signing"
	"github.com/dome-registry/dome/pkg/skill"
	"github.com/dome-registry/dome/pkg/specfilter"
	"github.com/dome-registry/dome/pkg/stack"
)

// Root is the repository's root folder (this file is internal/runtest).
func Root() string {
	_, here, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(here), "..", "..")
}

// T0 is the fixed time of the tests.
var T0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// GreetFiles is the small module the golden cases read.
var GreetFiles = map[string]string{
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
func GrantInputs(t testing.TB) (*grant.Policy, *grant.Index, *a2a.Card) {
	t.Helper()
	inputsOnce.Do(func() {
		read := func(p string) []byte {
			b, err := os.ReadFile(filepath.Join(Root(), p))
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
		ents, _ := os.ReadDir(filepath.Join(Root(), "registry/tools"))
		for _, e := range ents {
			dir, err := specfilter.OpenDir(filepath.Join(Root(), "registry/tools", e.Name()))
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
type Fixture struct {
	T        testing.TB
	Git      *gittest.Repo
	Repo     *gitstore.Repo
	Base     string // the base commit
	Layout   stack.Layout
	Run      *stack.Run
	SR       *gateway.StackRun
	GW       *gateway.Gateway
	Key      signing.PrivateKey // the coordinator's, trusted by Verifier
	Store    *grantfile.Store
	Meter    *grant.Meter
	Verifier *grant.Verifier
	mu       sync.Mutex
	now      time.Time
}

func FixedKey(kid string, seed byte) signing.PrivateKey {
	return signing.PrivateKey{KID: kid, Key: ed25519.NewKeyFromSeed(bytes.Repeat([]byte{seed}, ed25519.SeedSize))}
}

// Options of New.
type Options struct {
	MaxRefusals int
	Files       map[string]string // the module (default GreetFiles)
}

func New(t testing.TB, o Options) *Fixture {
	t.Helper()
	f := &Fixture{T: t, now: T0.Add(time.Minute)}
	f.Git = gittest.New(t)
	files := o.Files
	if files == nil {
		files = GreetFiles
	}
	f.Git.Write(files)
	f.Base = f.Git.Commit("greet")
	var err error
	if f.Repo, err = gitstore.Open(f.Git.Dir); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Repo.Close() })
	f.Layout = stack.NewLayout(filepath.Join(f.Git.Dir, "ops", "runs"), "run-1")
	if _, err := stack.Init(f.Repo, f.Layout, stack.InitOptions{Base: f.Base, CreatedAt: T0, Producer: "test"}); err != nil {
		t.Fatal(err)
	}
	if f.Run, err = stack.OpenRun(f.Layout, false); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Run.Close() })
	f.SR = gateway.NewStackRun(f.Repo, f.Run, stack.SubmitOptions{})
	f.Key = FixedKey("coordinator-1", 1)
	trusted, err := signing.NewTrustedKeys(f.Key.Public())
	if err != nil {
		t.Fatal(err)
	}
	if f.Store, err = grantfile.Open(filepath.Join(f.Layout.Root, "grants")); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Store.Close() })
	f.Meter = grant.NewMeter()
	if f.Verifier, err = grant.NewVerifier(trusted, grant.Options{Store: f.Store, Meter: f.Meter, CacheSize: 64}); err != nil {
		t.Fatal(err)
	}
	if f.GW, err = gateway.New(gateway.Config{Repo: f.Repo, Run: f.SR, Verifier: f.Verifier, Meter: f.Meter, Now: f.Clock, MaxRefusals: o.MaxRefusals}); err != nil {
		t.Fatal(err)
	}
	return f
}

func (f *Fixture) Clock() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

func (f *Fixture) SetNow(t time.Time) {
	f.mu.Lock()
	f.now = t
	f.mu.Unlock()
}

// attempt is the standard attempt of node "docs".
func (f *Fixture) Attempt(node string, n int) gateway.Attempt {
	exec := "ne-" + node + "-" + string(rune('0'+n))
	return gateway.Attempt{RunID: "run-1", WaveID: "wave-1", NodeID: node, NodeExecutionID: exec, TaskID: node + "." + string(rune('0'+n)),
		WorkerID: "worker-" + node + "-" + string(rune('0'+n)), BaseRef: f.Base}
}

// IssueOptions shape a grant.
type IssueOptions struct {
	Caps      []string // default repo.read, repo.propose
	Narrow    *grant.Template
	JTI       string // default jti-<node execution>
	At        time.Time
	TTL       int64
	NotSingle bool  // a write grant that is not single-use
	MaxCalls  int64 // raises the grant's call budget (benchmarks)
}

// issue derives and issues a worker grant for attempt a.
func (f *Fixture) Issue(a gateway.Attempt, o IssueOptions) []byte {
	f.T.Helper()
	pol, ix, card := GrantInputs(f.T)
	caps := o.Caps
	if caps == nil {
		caps = []string{"repo.read", "repo.propose"}
	}
	d, err := grant.Derive(grant.Sources{Policy: pol, Index: ix, Card: card, CardID: "runtime/dome-worker"},
		grant.Need{NodeID: a.NodeID, Capabilities: caps, Role: grant.RoleWorker, Narrow: o.Narrow, TTLSeconds: o.TTL})
	if err != nil {
		f.T.Fatal(err)
	}
	if o.NotSingle {
		d.Profile.SingleUse = false
	}
	if o.MaxCalls > 0 {
		d.Profile.Budgets.MaxCalls = o.MaxCalls
		for c := range d.Profile.Budgets.MaxCallsByCapability {
			d.Profile.Budgets.MaxCallsByCapability[c] = o.MaxCalls
		}
	}
	at := o.At
	if at.IsZero() {
		at = T0
	}
	jti := o.JTI
	if jti == "" {
		jti = "jti-" + a.NodeExecutionID
	}
	tok, _, err := grant.Issue(d, grant.Binding{RunID: a.RunID, WaveID: a.WaveID, WorkerID: a.WorkerID, NodeExecutionID: a.NodeExecutionID,
		Issuer: "coordinator-1", IssuedAt: at, JTI: jti, BaseRef: a.BaseRef}, f.Key, nil)
	if err != nil {
		f.T.Fatal(err)
	}
	return tok
}

// serve opens a session for a and serves it on a Unix socket; it returns
// the session and a client presenting grant.
func (f *Fixture) Serve(a gateway.Attempt, tok []byte, onFlood func()) (*gateway.Session, *gateway.Client) {
	f.T.Helper()
	s, err := f.GW.Open(a, onFlood)
	if err != nil {
		f.T.Fatal(err)
	}
	sock := filepath.Join(f.T.TempDir(), "gw.sock")
	if err := s.Listen(sock); err != nil {
		f.T.Fatal(err)
	}
	f.T.Cleanup(func() { s.Close() })
	return s, gateway.NewUnixClient(sock, tok)
}

// proposal builds a sealed proposal changing files against the base, as a
// worker claiming to be someone else would.
func (f *Fixture) Proposal(files map[string]string, id string) []byte {
	return f.ProposalAs(files, id, nil)
}

// proposalAs builds it with the worker's claims of attempt a (as dome
// worker submit makes them), or false claims when a is nil.
func (f *Fixture) ProposalAs(files map[string]string, id string, a *gateway.Attempt) []byte {
	f.T.Helper()
	var nf []patch.NewFile
	all := map[string]string{}
	for k, v := range GreetFiles {
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
		nf = append(nf, patch.NewFile{Path: k, Mode: patch.ModeFile, Data: []byte(v)})
	}
	sort.Slice(nf, func(i, j int) bool { return nf[i].Path < nf[j].Path })
	o := stack.ProposeOptions{RunID: "claimed-run", WaveID: "claimed-wave", BaseRef: f.Base, Files: nf, FromFiles: true, DiffSource: "test",
		ProposalID: id, IntentTags: []string{"docs"}, Worker: stack.WorkerRunMeta{WorkerID: "i-claim-to-be-the-coordinator"},
		IdempotencyKey: "worker-chosen-key", CreatedAt: T0, Producer: "worker"}
	if a != nil {
		o.RunID, o.WaveID, o.IdempotencyKey = a.RunID, a.WaveID, a.NodeExecutionID+":submit_patch:1"
		o.Worker = stack.WorkerRunMeta{WorkerID: a.WorkerID, NodeID: a.NodeID, NodeExecutionID: a.NodeExecutionID}
	}
	res, err := stack.Propose(f.Repo, o)
	if err != nil {
		f.T.Fatal(err)
	}
	return res.Doc
}

// events returns the run's events of a topic.
func (f *Fixture) Events(topic string) []ledger.Event {
	f.T.Helper()
	evs, err := ledger.Read(f.Layout.Root, "run-1")
	if err != nil {
		f.T.Fatal(err)
	}
	var out []ledger.Event
	for _, e := range evs {
		if e.Topic == topic {
			out = append(out, e)
		}
	}
	return out
}
