package gateway

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/dome-registry/dome/pkg/gitstore"
	"github.com/dome-registry/dome/pkg/grant"
	"github.com/dome-registry/dome/pkg/ledger"
	"github.com/dome-registry/dome/pkg/signing"
	"github.com/dome-registry/dome/pkg/stack"
)

// Defaults of a Config.
const (
	DefaultAudience         = "worker_runtime"
	DefaultProducer         = "dome-gateway"
	DefaultMaxRefusals      = 256
	DefaultMaxProposalBytes = 16 << 20
	DefaultBlobCacheBytes   = 256 << 20
	MaxReadRequestBytes     = 64 << 10
	MaxRecordedCalls        = 100000 // per session; later calls are counted, not listed
	batchCalls              = 256    // calls per gateway.calls event
)

// Config is what a gateway serves from and writes to.
type Config struct {
	Repo     *gitstore.Repo  // the run's repository: base trees, blobs, commits
	Run      Run             // where proposals and call records go
	Verifier *grant.Verifier // checks every call; built with the run's grant store and Meter
	Meter    *grant.Meter    // the verifier's meter: the budgets a proposal reports as used
	Now      func() time.Time
	Audience string              // the grants' audience (default worker_runtime)
	Producer string              // the producer of re-sealed proposals (default dome-gateway)
	Key      *signing.PrivateKey // signs re-sealed proposals (nil: unsigned)
	// MaxRefusals is how many refused calls a session answers before it is
	// flooded (default 256).
	MaxRefusals      int
	MaxProposalBytes int64 // bound of a submit_patch request (default 16 MiB)
	BlobCacheBytes   int64 // blobs kept in memory across sessions (default 256 MiB)
}

// Gateway serves the skills of one run to its worker sessions. It is safe
// for concurrent use.
type Gateway struct {
	cfg   Config
	blobs *blobCache

	mu    sync.Mutex
	bases map[gitstore.Hash]*baseTree

	writeMu sync.Mutex             // one write at a time: dedupe is check-then-act
	dedupe  map[string]*writeEntry // method + "\x00" + idempotency_key (the run is the gateway's)
}

type writeEntry struct {
	digest     string
	response   []byte
	taskID     string
	proposalID string
}

// New checks cfg and returns a gateway.
func New(cfg Config) (*Gateway, error) {
	if cfg.Repo == nil || cfg.Run == nil || cfg.Verifier == nil || cfg.Now == nil {
		return nil, errors.New("gateway: a repository, a run, a grant verifier and a clock are required")
	}
	if cfg.Audience == "" {
		cfg.Audience = DefaultAudience
	}
	if cfg.Producer == "" {
		cfg.Producer = DefaultProducer
	}
	if cfg.MaxRefusals <= 0 {
		cfg.MaxRefusals = DefaultMaxRefusals
	}
	if cfg.MaxProposalBytes <= 0 {
		cfg.MaxProposalBytes = DefaultMaxProposalBytes
	}
	if cfg.BlobCacheBytes <= 0 {
		cfg.BlobCacheBytes = DefaultBlobCacheBytes
	}
	return &Gateway{cfg: cfg, blobs: newBlobCache(cfg.BlobCacheBytes), bases: map[gitstore.Hash]*baseTree{},
		dedupe: map[string]*writeEntry{}}, nil
}

// Restore rebuilds the deduplication table from the run's gateway.call
// events, so that a write repeated after a coordinator restart gets its
// first answer. Call it before opening sessions, once per event in order.
func (g *Gateway) Restore(e ledger.Event) error {
	if e.Topic != TopicCall {
		return nil
	}
	var p WritePayload
	if err := decodeStrict(e.Payload, &p); err != nil {
		return fmt.Errorf("gateway: event %d (%s): %w", e.Sequence, e.Topic, err)
	}
	if p.Call.Status != 200 {
		return nil // a refused write wrote nothing: its key is free
	}
	g.writeMu.Lock()
	defer g.writeMu.Unlock()
	g.dedupe[p.Call.Method+"\x00"+p.IdempotencyKey] = &writeEntry{digest: p.RequestDigest, response: p.Response, taskID: p.TaskID, proposalID: p.ProposalID}
	return nil
}

// base returns the index of commit's tree, building it once.
func (g *Gateway) base(commit gitstore.Hash) (*baseTree, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if b := g.bases[commit]; b != nil {
		return b, nil
	}
	b, err := indexTree(g.cfg.Repo, commit)
	if err != nil {
		return nil, err
	}
	g.bases[commit] = b
	return b, nil
}

// Forget drops the index of a base no session needs any more (a wave that
// ended).
func (g *Gateway) Forget(commit string) {
	if h, ok := gitstore.ParseHash(commit); ok {
		g.mu.Lock()
		delete(g.bases, h)
		g.mu.Unlock()
	}
}

// Attempt identifies the worker attempt a session serves.
type Attempt struct {
	RunID           string `json:"run_id"`
	WaveID          string `json:"wave_id"`
	NodeID          string `json:"node_id"`
	NodeExecutionID string `json:"node_execution_id"`
	TaskID          string `json:"task_id"`
	WorkerID        string `json:"worker_id"`
	BaseRef         string `json:"base_ref"` // the wave's base commit, full SHA
}

// Open starts a session for one attempt. onFlood, when set, is called
// (once, on its own goroutine) when the session floods.
func (g *Gateway) Open(a Attempt, onFlood func()) (*Session, error) {
	if a.RunID != g.cfg.Run.ID() {
		return nil, fmt.Errorf("gateway: attempt of run %q, the gateway serves %q", a.RunID, g.cfg.Run.ID())
	}
	for _, f := range []struct{ name, v string }{{"wave_id", a.WaveID}, {"node_id", a.NodeID}, {"node_execution_id", a.NodeExecutionID},
		{"task_id", a.TaskID}, {"worker_id", a.WorkerID}} {
		if err := grant.CheckID(f.v); err != nil {
			return nil, fmt.Errorf("gateway: attempt %s: %w", f.name, err)
		}
	}
	commit, ok := gitstore.ParseHash(a.BaseRef)
	if !ok || !stack.IsFullSHA(a.BaseRef) {
		return nil, fmt.Errorf("gateway: attempt base_ref %q: want a full commit SHA", a.BaseRef)
	}
	b, err := g.base(commit)
	if err != nil {
		return nil, fmt.Errorf("gateway: %w", err)
	}
	return &Session{g: g, a: a, base: b, onFlood: onFlood, meta: map[string]ProposalMeta{}}, nil
}

// Verifier is the grant verifier the gateway checks calls with.
func (g *Gateway) Verifier() *grant.Verifier { return g.cfg.Verifier }
