package httpapi

import (
	"bytes"
	"encoding/json"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/dome-registry/dome/pkg/action"
	"github.com/dome-registry/dome/pkg/canonical"
	"github.com/dome-registry/dome/pkg/signing"
)

// rendered is the two read responses of one stored record, and what they
// were made from.
type rendered struct {
	version      []byte // GET /actions/{name}/versions/{version}
	verification []byte // GET .../verify
	versionLen   []string
	verifyLen    []string
	doc          []byte        // the record's Document
	hash         string        // the record's Hash
	deprecation  string        // the record's deprecation reason ("" when none)
	fetched      atomic.Int64  // when the store last returned these bytes (Unix ns; Revalidate)
	gen          atomic.Uint64 // the watch generation they were read at (Watch; 0: none)
}

type versionBody struct {
	Name      string             `json:"name"`
	Version   string             `json:"version"`
	Schema    json.RawMessage    `json:"schema"`
	Hash      string             `json:"hash"`
	Signature *signing.Signature `json:"signature,omitempty"`
	Verified  bool               `json:"verified"`
	Reason    string             `json:"reason,omitempty"`
	// Deprecated and DeprecationReason appear only for a deprecated version.
	Deprecated        bool   `json:"deprecated,omitempty"`
	DeprecationReason string `json:"deprecation_reason,omitempty"`
}

type verificationBody struct {
	Name     string `json:"name"`
	Version  string `json:"version"`
	Verified bool   `json:"verified"`
	KID      string `json:"kid"`
	Alg      string `json:"alg"`
	Hash     string `json:"hash"`
	Reason   string `json:"reason,omitempty"`
}

// rendered returns the responses of rec, from the cache when the same
// stored bytes were rendered before: an entry is reused only when the
// record's document and recorded hash are byte for byte those it was made
// from (with this handler's fixed key set), so a changed byte (a tamper) is
// always verified again, through the verification cache (keyed by the
// SHA-256 of the same inputs and the key set).
func (h *Handler) rendered(rec action.Record) *rendered {
	if r := h.renders.get(rec); r != nil {
		return r
	}
	r := render(rec, h.vcache.VerifyRecord(rec, h.keys))
	h.renders.put(rec, r)
	return r
}

// render builds the responses of rec verified as v. A stored document that
// no longer parses as a JSON object is served with an empty schema, its
// verification failure as the reason.
func render(rec action.Record, v action.Verification) *rendered {
	vb := versionBody{Name: rec.Name, Version: rec.Version, Schema: json.RawMessage(`{}`), Hash: v.Hash, Verified: v.Verified, Reason: v.Reason}
	if rec.Deprecation != nil {
		vb.Deprecated, vb.DeprecationReason = true, rec.Deprecation.Reason
	}
	if e, err := signing.SplitEmbedded(rec.Document); err == nil {
		vb.Schema = e.Payload
		vb.Signature = e.Signature
		if vb.Hash == "" {
			vb.Hash = e.Digest
		}
	}
	if vb.Hash == "" {
		vb.Hash = rec.Hash
	}
	if vb.Hash == "" {
		vb.Hash = canonical.Digest(rec.Document)
	}
	if vb.Verified {
		vb.Reason = ""
	} else if vb.Reason == "" {
		vb.Reason = "the document does not verify"
	}
	kid, alg := v.KID, v.Alg
	if vb.Signature != nil && kid == "" && alg == "" {
		kid, alg = vb.Signature.KID, vb.Signature.Alg
	}
	vr := verificationBody{Name: rec.Name, Version: rec.Version, Verified: vb.Verified, KID: kid, Alg: alg, Hash: vb.Hash, Reason: vb.Reason}
	if !vb.Verified {
		if c := v.Code(); c != "" {
			vr.Reason = c + ": " + vb.Reason
			vb.Reason = vr.Reason
		}
	}
	a, err := json.Marshal(vb)
	if err != nil { // the payload is canonical JSON: cannot happen
		vb.Schema, vb.Verified, vb.Reason = json.RawMessage(`{}`), false, "encode the response: "+err.Error()
		a, _ = json.Marshal(vb)
	}
	b, _ := json.Marshal(vr)
	r := &rendered{version: append(a, '\n'), verification: append(b, '\n')}
	r.versionLen = []string{strconv.Itoa(len(r.version))}
	r.verifyLen = []string{strconv.Itoa(len(r.verification))}
	return r
}

// renderCache keeps rendered responses by (name, version), each with the
// exact bytes it was rendered from. When full it starts over (two
// generations: the previous one is still read, so hot entries survive a
// turnover).
type renderCache struct {
	size int

	mu       sync.RWMutex
	cur, old map[refKey]*rendered
}

type refKey struct{ name, version string }

func newRenderCache(size int) *renderCache {
	if size <= 0 {
		size = action.DefaultVerifyCacheSize
	}
	return &renderCache{size: size, cur: map[refKey]*rendered{}}
}

// get returns the entry of rec if it was rendered from rec's very bytes.
func (c *renderCache) get(rec action.Record) *rendered {
	k := refKey{rec.Name, rec.Version}
	c.mu.RLock()
	r := c.cur[k]
	if r == nil && c.old != nil {
		r = c.old[k]
	}
	c.mu.RUnlock()
	if r == nil || r.hash != rec.Hash || !bytes.Equal(r.doc, rec.Document) || r.deprecation != deprecationOf(rec) {
		return nil
	}
	return r
}

// deprecationOf is the reason of a record's deprecation, "" for none (a
// stored deprecation always has a reason: CheckDeprecation).
func deprecationOf(rec action.Record) string {
	if rec.Deprecation == nil {
		return ""
	}
	return rec.Deprecation.Reason
}

// fresh returns the entry of name@version when the store returned its bytes
// less than ttl before now (Unix ns), nil otherwise.
func (c *renderCache) fresh(name, version string, now, ttl int64) *rendered {
	k := refKey{name, version}
	c.mu.RLock()
	r := c.cur[k]
	if r == nil && c.old != nil {
		r = c.old[k]
	}
	c.mu.RUnlock()
	if r == nil {
		return nil
	}
	if f := r.fetched.Load(); f == 0 || now-f >= ttl {
		return nil
	}
	return r
}

// atGen returns the entry of name@version when it was read at watch
// generation gen, nil otherwise.
func (c *renderCache) atGen(name, version string, gen uint64) *rendered {
	k := refKey{name, version}
	c.mu.RLock()
	r := c.cur[k]
	if r == nil && c.old != nil {
		r = c.old[k]
	}
	c.mu.RUnlock()
	if r == nil || r.gen.Load() != gen {
		return nil
	}
	return r
}

func (c *renderCache) put(rec action.Record, r *rendered) {
	r.doc, r.hash, r.deprecation = bytes.Clone(rec.Document), rec.Hash, deprecationOf(rec)
	k := refKey{rec.Name, rec.Version}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.cur) >= c.size {
		c.old, c.cur = c.cur, make(map[refKey]*rendered, c.size)
	}
	c.cur[k] = r
}
