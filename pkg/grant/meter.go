package grant

import (
	"encoding/base64"
	"errors"
	"sync"
	"time"
)

// Meter counts the calls of grants in memory for a gateway: Authorize
// charges each call atomically against the grant's budgets (max_calls, the
// capability's max_calls_by_capability, max_wall_seconds from the first
// call), so concurrent calls never overrun a budget. Counters are keyed by
// issuer and jti; Prune drops those of expired grants. Safe for concurrent
// use.
type Meter struct {
	mu sync.Mutex
	m  map[meterKey]*usage
}

type meterKey struct{ issuer, jti string }

type usage struct {
	calls   int64
	byCap   map[string]int64
	started time.Time
	expires time.Time
}

// NewMeter returns an empty meter.
func NewMeter() *Meter { return &Meter{m: map[meterKey]*usage{}} }

// Usage returns a grant's use so far.
func (mt *Meter) Usage(g *Grant) Usage {
	mt.mu.Lock()
	defer mt.mu.Unlock()
	u := mt.m[meterKey{g.Payload.Issuer, g.Payload.JTI}]
	if u == nil {
		return Usage{}
	}
	by := make(map[string]int64, len(u.byCap))
	for k, v := range u.byCap {
		by[k] = v
	}
	return Usage{Calls: u.calls, CallsByCapability: by, Started: u.started}
}

// Check reports whether one more call of capability would stay within the
// budgets, without charging it.
func (mt *Meter) Check(g *Grant, capability string, now time.Time) error {
	mt.mu.Lock()
	defer mt.mu.Unlock()
	u := mt.m[meterKey{g.Payload.Issuer, g.Payload.JTI}]
	if u == nil {
		return nil
	}
	if e := checkBudget(g, capability, u.calls, u.byCap[capability], u.started, now); e != nil {
		return e
	}
	return nil
}

// Charge counts one call of capability ("" for none) if the budgets allow
// it, and returns a function that takes the charge back (for a call refused
// later, e.g. by the store).
func (mt *Meter) Charge(g *Grant, capability string, now time.Time) (func(), error) {
	k := meterKey{g.Payload.Issuer, g.Payload.JTI}
	mt.mu.Lock()
	defer mt.mu.Unlock()
	u := mt.m[k]
	if u == nil {
		u = &usage{byCap: map[string]int64{}, expires: g.expiresAt}
		mt.m[k] = u
	}
	if e := checkBudget(g, capability, u.calls, u.byCap[capability], u.started, now); e != nil {
		return nil, e
	}
	first := u.started.IsZero()
	if first {
		u.started = now
	}
	u.calls++
	if capability != "" {
		u.byCap[capability]++
	}
	return func() {
		mt.mu.Lock()
		defer mt.mu.Unlock()
		u.calls--
		if capability != "" {
			u.byCap[capability]--
		}
		if first && u.calls == 0 {
			u.started = time.Time{}
		}
	}, nil
}

// Prune forgets the counters of grants that expired before now.
func (mt *Meter) Prune(now time.Time) int {
	mt.mu.Lock()
	defer mt.mu.Unlock()
	n := 0
	for k, u := range mt.m {
		if !u.expires.After(now) {
			delete(mt.m, k)
			n++
		}
	}
	return n
}

// decodeSignature decodes a header signature, "base64:" and the strict
// standard base64 of 64 bytes, into dst (at least 66 bytes).
func decodeSignature(dst []byte, s string) ([]byte, error) {
	const prefix, encLen = "base64:", 88
	if len(s) != len(prefix)+encLen || s[:len(prefix)] != prefix {
		return nil, errors.New(`want "base64:" and the standard base64 of a 64-byte Ed25519 signature`)
	}
	n, err := base64.StdEncoding.Strict().Decode(dst, []byte(s[len(prefix):]))
	if err != nil || n != 64 {
		return nil, errors.New(`want "base64:" and the standard base64 of a 64-byte Ed25519 signature`)
	}
	return dst[:n], nil
}
