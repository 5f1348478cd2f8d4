package grant

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/dome-registry/dome/pkg/signing"
)

// Request is what a verifier knows and what the call wants.
type Request struct {
	Audience        string    // required: the verifier's audience
	RunID           string    // required: the run the verifier serves
	WaveID          string    // required: the wave
	WorkerID        string    // the caller's spawn identity; checked when the grant binds one
	NodeExecutionID string    // the caller's node attempt; checked when the grant binds one
	Now             time.Time // required: time is an input
	Call            *Call     // nil: check the credential only
}

// Call is one tool call.
type Call struct {
	Method     string   // "<tool_id>/<operationId>"; "" checks no method
	ReadPaths  []string // repository-relative paths it reads
	WritePaths []string // paths it writes
	Hosts      []string // hosts it reaches
	Usage      *Usage   // the grant's use so far, when the caller counts (else a Meter, or nothing)
}

// Usage is how much of a grant's budgets was used before this call.
type Usage struct {
	Calls             int64
	CallsByCapability map[string]int64
	Started           time.Time // the first call; zero: this is the first
}

// Options configure a Verifier.
type Options struct {
	ClockSkew time.Duration // default 30 s, at most MaxClockSkewSeconds
	Store     Store         // spent and revoked grants; nil checks neither (Check only)
	Meter     *Meter        // budget counters charged by Authorize; nil: Call.Usage only
	CacheSize int           // grants whose signature verified, kept by their exact bytes (0: none)
}

// Verifier checks grants against a trusted key set. It is safe for
// concurrent use.
type Verifier struct {
	keys  *signing.TrustedKeys
	skew  time.Duration
	store Store
	meter *Meter
	cache *sigCache
}

// NewVerifier returns a verifier trusting keys.
func NewVerifier(keys *signing.TrustedKeys, opts Options) (*Verifier, error) {
	if keys == nil {
		return nil, errors.New("grant: a verifier needs trusted keys")
	}
	skew := opts.ClockSkew
	if skew == 0 {
		skew = DefaultClockSkewSeconds * time.Second
	}
	if skew < 0 || skew > MaxClockSkewSeconds*time.Second {
		return nil, fmt.Errorf("grant: clock skew %s: want 0 to %ds", skew, MaxClockSkewSeconds)
	}
	v := &Verifier{keys: keys, skew: skew, store: opts.Store, meter: opts.Meter}
	if opts.CacheSize > 0 {
		v.cache = &sigCache{max: opts.CacheSize, m: make(map[string]*Grant, opts.CacheSize)}
	}
	return v, nil
}

// Check runs every stateless check (structure, signature, validity window,
// bindings, method, constraints, budgets from Call.Usage). It reads no store.
func (v *Verifier) Check(token []byte, req Request) (*Grant, error) {
	g, err := v.credential(token, req)
	if err != nil {
		return g, err
	}
	return g, v.call(g, req, nil)
}

// CheckSignature checks only the grant itself: structure, signature and
// values, no time, binding, store or call (what dome grant inspect shows).
func (v *Verifier) CheckSignature(token []byte) (*Grant, error) { return v.signed(token) }

// Verify runs every check in order, the store's included (revoked, then
// replayed). It spends nothing.
func (v *Verifier) Verify(ctx context.Context, token []byte, req Request) (*Grant, error) {
	g, err := v.credential(token, req)
	if err != nil {
		return g, err
	}
	if err := v.stateful(ctx, g, req); err != nil {
		return g, err
	}
	return g, v.call(g, req, nil)
}

// Identify checks that a grant still identifies its holder: every check of
// Verify but the spent one (a single-use grant that made its write still
// names its attempt), and no call. A dispatcher's calls on an attempt's
// behalf (claiming it, reporting its result) are checked this way.
func (v *Verifier) Identify(ctx context.Context, token []byte, req Request) (*Grant, error) {
	g, err := v.credential(token, req)
	if err != nil {
		return g, err
	}
	if v.store == nil {
		return g, nil
	}
	if err := v.stateful(ctx, g, req); err != nil {
		if ge, ok := AsError(err); ok && ge.Code == CodeReplayed {
			return g, nil
		}
		return g, err
	}
	return g, nil
}

// Spend verifies a single-use grant and spends it, atomically in the store:
// of any number of concurrent spenders exactly one succeeds; the others get
// REPLAYED. Nothing is spent when a check fails.
func (v *Verifier) Spend(ctx context.Context, token []byte, req Request) (*Grant, error) {
	g, err := v.Verify(ctx, token, req)
	if err != nil {
		return g, err
	}
	if !g.Payload.SingleUse {
		return g, refuse(CodeNotSingleUse, "single_use", "grant %s is not single-use: nothing to spend (it stays valid until %s)", g.Payload.JTI, g.Payload.ExpiresAt)
	}
	method := ""
	if req.Call != nil {
		method = req.Call.Method
	}
	return g, v.spend(ctx, g, req, method)
}

// Authorize is the gateway's per-call check: Verify, charge the call to the
// Meter (if any), and for a single-use grant whose method mutates, spend the
// grant. A call refused for any reason spends and charges nothing.
func (v *Verifier) Authorize(ctx context.Context, token []byte, req Request) (*Grant, error) {
	g, err := v.credential(token, req)
	if err != nil {
		return g, err
	}
	if err := v.stateful(ctx, g, req); err != nil {
		return g, err
	}
	var release func()
	if err := v.call(g, req, &release); err != nil {
		return g, err
	}
	if req.Call == nil || req.Call.Method == "" || !g.Payload.SingleUse {
		return g, nil
	}
	m, _ := g.Method(req.Call.Method)
	if !m.Class.Mutates() {
		return g, nil
	}
	if err := v.spend(ctx, g, req, m.Method); err != nil {
		if release != nil {
			release()
		}
		return g, err
	}
	return g, nil
}

func (v *Verifier) spend(ctx context.Context, g *Grant, req Request, method string) error {
	if v.store == nil {
		return refuse(CodeStoreFailed, "", "no store to spend grant %s in", g.Payload.JTI)
	}
	err := v.store.Spend(ctx, Spend{Issuer: g.Payload.Issuer, JTI: g.Payload.JTI, ProfileID: g.Payload.ProfileID, Grant: g.Digest, Method: method, ExpiresAt: g.expiresAt, SpentAt: req.Now.UTC()})
	switch {
	case err == nil:
		return nil
	case errors.Is(err, ErrSpent):
		return refuse(CodeReplayed, "jti", "single-use grant %s is already spent", g.Payload.JTI)
	case errors.Is(err, ErrRevoked):
		return refuse(CodeRevoked, "jti", "grant %s was revoked", g.Payload.JTI)
	}
	return &Error{Code: CodeStoreFailed, Source: "grant", Msg: "spend " + g.Payload.JTI, Err: err}
}

// credential runs the checks on the grant itself, in order: structure,
// signature, validity window, audience, run, wave, worker, node execution.
func (v *Verifier) credential(token []byte, req Request) (*Grant, error) {
	if req.Audience == "" || req.RunID == "" || req.WaveID == "" || req.Now.IsZero() {
		return nil, refuse(CodeBadRequest, "", "a verifier must know its audience, run, wave and the time (fail closed)")
	}
	g, err := v.signed(token)
	if err != nil {
		return g, err
	}
	p := &g.Payload
	now := req.Now
	if now.Add(v.skew).Before(g.issuedAt) {
		return g, refuse(CodeNotYetValid, "issued_at", "grant %s is valid from %s; it is %s (clock skew %s)", p.JTI, p.IssuedAt, FormatTime(now), v.skew)
	}
	if !now.Add(-v.skew).Before(g.expiresAt) {
		return g, refuse(CodeExpired, "expires_at", "grant %s expired at %s; it is %s (clock skew %s)", p.JTI, p.ExpiresAt, FormatTime(now), v.skew)
	}
	if p.Audience != req.Audience {
		return g, refuse(CodeWrongAudience, "audience", "grant %s is for audience %q, not %q", p.JTI, p.Audience, req.Audience)
	}
	if p.RunID != req.RunID {
		return g, refuse(CodeWrongRun, "run_id", "grant %s is bound to run %q, not %q", p.JTI, p.RunID, req.RunID)
	}
	if p.WaveID != req.WaveID {
		return g, refuse(CodeWrongWave, "wave_id", "grant %s is bound to wave %q, not %q", p.JTI, p.WaveID, req.WaveID)
	}
	if p.WorkerID != "" && p.WorkerID != req.WorkerID {
		return g, refuse(CodeWrongWorker, "worker_id", "grant %s is bound to worker %q, not %q", p.JTI, p.WorkerID, req.WorkerID)
	}
	if p.NodeExecutionID != "" && p.NodeExecutionID != req.NodeExecutionID {
		return g, refuse(CodeWrongNodeExecution, "node_execution_id", "grant %s is bound to node execution %q, not %q", p.JTI, p.NodeExecutionID, req.NodeExecutionID)
	}
	return g, nil
}

// signed parses token and checks its signature (through the cache of
// grants already verified, keyed by their exact bytes) and its values.
func (v *Verifier) signed(token []byte) (*Grant, error) {
	if v.cache != nil {
		if g := v.cache.get(token); g != nil {
			return g, nil
		}
	}
	g, err := Parse(token)
	if err != nil {
		return nil, err
	}
	if err := v.checkSignature(g); err != nil {
		return g, err
	}
	if err := g.validate(); err != nil {
		return g, err
	}
	if v.cache != nil {
		v.cache.put(token, g)
	}
	return g, nil
}

func (v *Verifier) checkSignature(g *Grant) error {
	h := &g.Header
	var raw [66]byte
	if _, err := decodeSignature(raw[:], h.Signature); err != nil {
		return refuse(CodeBadSignature, "header.signature", "%v", err)
	}
	key, err := v.keys.Key(h.KID)
	if err != nil {
		return &Error{Code: CodeUnknownKeyID, Source: "grant", Field: "header.kid", Msg: fmt.Sprintf("kid %q is not trusted", h.KID), Err: err}
	}
	if !g.payloadDigestOK {
		return refuse(CodeBadSignature, "payload", "the payload changed since it was signed: its digest is not header.payload_digest")
	}
	if err := v.keys.VerifyDigest(ArtifactKind, g.signedDigest, signing.Signature{Alg: key.Alg, KID: h.KID, Sig: h.Signature}); err != nil {
		return &Error{Code: CodeBadSignature, Source: "grant", Field: "header.signature", Msg: "the signature does not verify", Err: err}
	}
	return nil
}

// stateful asks the store whether the grant is revoked or spent.
func (v *Verifier) stateful(ctx context.Context, g *Grant, req Request) error {
	if v.store == nil {
		return nil
	}
	p := &g.Payload
	st, err := v.store.Lookup(ctx, p.Issuer, p.JTI, p.ProfileID)
	if err != nil {
		return &Error{Code: CodeStoreFailed, Source: "grant", Msg: "look up " + p.JTI, Err: err}
	}
	if r := st.Revoked; r != nil && r.Until.After(req.Now) {
		why := ""
		if r.Reason != "" {
			why = ": " + r.Reason
		}
		return refuse(CodeRevoked, r.Kind, "grant %s is revoked by %s %s (at %s)%s", p.JTI, r.Kind, r.Value, FormatTime(r.RevokedAt), why)
	}
	if s := st.Spent; s != nil {
		return refuse(CodeReplayed, "jti", "single-use grant %s was spent at %s; a jti is good for one write", p.JTI, FormatTime(s.SpentAt))
	}
	return nil
}

// call checks the call: method, paths, hosts, budgets. With charge != nil
// and a Meter, the call is charged (and *charge set to undo it).
func (v *Verifier) call(g *Grant, req Request, charge *func()) error {
	c := req.Call
	if c == nil {
		return nil
	}
	p := &g.Payload
	var m Method
	if c.Method != "" {
		var ok bool
		if m, ok = g.Method(c.Method); !ok {
			return refuse(CodeMethodNotGranted, "allowed_methods", "grant %s does not allow %s", p.JTI, c.Method)
		}
	}
	io := &p.Constraints.IO
	for _, path := range c.ReadPaths {
		if e := checkPath(path, io.ReadRoots, io.DenyGlobs, false); e != nil {
			return e
		}
	}
	for _, path := range c.WritePaths {
		if e := checkPath(path, io.WriteRoots, io.DenyGlobs, true); e != nil {
			return e
		}
	}
	for _, h := range c.Hosts {
		if e := checkHost(h, p.Constraints.Net.AllowHosts); e != nil {
			return e
		}
	}
	if u := c.Usage; u != nil {
		if e := checkBudget(g, m.Capability, u.Calls, u.CallsByCapability[m.Capability], u.Started, req.Now); e != nil {
			return e
		}
	}
	if v.meter != nil {
		if charge != nil {
			undo, err := v.meter.Charge(g, m.Capability, req.Now)
			if err != nil {
				return err
			}
			*charge = undo
		} else if err := v.meter.Check(g, m.Capability, req.Now); err != nil {
			return err
		}
	}
	return nil
}

func checkBudget(g *Grant, capability string, calls, capCalls int64, started, now time.Time) *Error {
	b := &g.Payload.Budgets
	if calls+1 > b.MaxCalls {
		return refuse(CodeBudgetExhausted, "budgets.max_calls", "grant %s allows %d calls; %d were made", g.Payload.JTI, b.MaxCalls, calls)
	}
	if capability != "" {
		if max, ok := b.MaxCallsByCapability[capability]; ok && capCalls+1 > max {
			return refuse(CodeBudgetExhausted, "budgets.max_calls_by_capability", "grant %s allows %d calls of %s; %d were made", g.Payload.JTI, max, capability, capCalls)
		}
	}
	if !started.IsZero() && now.Sub(started) > time.Duration(b.MaxWallSeconds)*time.Second {
		return refuse(CodeBudgetExhausted, "budgets.max_wall_seconds", "grant %s allows %d s of wall time from its first call (%s)", g.Payload.JTI, b.MaxWallSeconds, FormatTime(started))
	}
	return nil
}

// sigCache keeps grants whose signature and values verified, by their
// exact bytes, so a gateway checking the same grant on every call pays for
// Ed25519 once. Time, bindings, store and call checks still run per call.
type sigCache struct {
	mu  sync.RWMutex
	max int
	m   map[string]*Grant
}

func (c *sigCache) get(token []byte) *Grant {
	c.mu.RLock()
	g := c.m[string(token)]
	c.mu.RUnlock()
	return g
}

func (c *sigCache) put(token []byte, g *Grant) {
	c.mu.Lock()
	if len(c.m) >= c.max {
		for k := range c.m { // evict an arbitrary entry: bounded, O(1)
			delete(c.m, k)
			break
		}
	}
	c.m[string(token)] = g
	c.mu.Unlock()
}
