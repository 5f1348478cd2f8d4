package httpapi

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"sync"

	"github.com/dome-registry/dome/pkg/action"
	"github.com/dome-registry/dome/pkg/canonical"
	"github.com/dome-registry/dome/pkg/signing"
)

// rendered is the two read responses of one stored record.
type rendered struct {
	version      []byte // GET /actions/{name}/versions/{version}
	verification []byte // GET .../verify
}

type versionBody struct {
	Name      string             `json:"name"`
	Version   string             `json:"version"`
	Schema    json.RawMessage    `json:"schema"`
	Hash      string             `json:"hash"`
	Signature *signing.Signature `json:"signature,omitempty"`
	Verified  bool               `json:"verified"`
	Reason    string             `json:"reason,omitempty"`
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

// rendered returns the responses of rec, from the cache when the same stored
// bytes were rendered before. The cache key covers every byte the answer
// depends on (name, version, recorded hash, document, and the key set), so
// a changed byte is always verified again.
func (h *Handler) rendered(rec action.Record) *rendered {
	k := h.renders.key(rec)
	if r := h.renders.get(k); r != nil {
		return r
	}
	r := render(rec, h.vcache.VerifyRecord(rec, h.keys))
	h.renders.put(k, r)
	return r
}

// render builds the responses of rec verified as v. A stored document that
// no longer parses as a JSON object is served with an empty schema, its
// verification failure as the reason.
func render(rec action.Record, v action.Verification) *rendered {
	vb := versionBody{Name: rec.Name, Version: rec.Version, Schema: json.RawMessage(`{}`), Hash: v.Hash, Verified: v.Verified, Reason: v.Reason}
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
	return &rendered{version: append(a, '\n'), verification: append(b, '\n')}
}

// renderCache keeps rendered responses by the SHA-256 of their inputs. When
// full it starts over (a two-generation scheme: the previous generation is
// still read, so hot entries survive a turnover).
type renderCache struct {
	size   int
	keysFP string

	mu       sync.RWMutex
	cur, old map[[sha256.Size]byte]*rendered
}

func newRenderCache(size int, keysFP string) *renderCache {
	if size <= 0 {
		size = action.DefaultVerifyCacheSize
	}
	return &renderCache{size: size, keysFP: keysFP, cur: map[[sha256.Size]byte]*rendered{}}
}

func (c *renderCache) key(rec action.Record) [sha256.Size]byte {
	h := sha256.New()
	var n [8]byte
	for _, part := range []string{c.keysFP, rec.Name, rec.Version, rec.Hash} {
		binary.BigEndian.PutUint64(n[:], uint64(len(part)))
		h.Write(n[:])
		h.Write([]byte(part))
	}
	binary.BigEndian.PutUint64(n[:], uint64(len(rec.Document)))
	h.Write(n[:])
	h.Write(rec.Document)
	var k [sha256.Size]byte
	h.Sum(k[:0])
	return k
}

func (c *renderCache) get(k [sha256.Size]byte) *rendered {
	c.mu.RLock()
	r := c.cur[k]
	if r == nil && c.old != nil {
		r = c.old[k]
	}
	c.mu.RUnlock()
	return r
}

func (c *renderCache) put(k [sha256.Size]byte, r *rendered) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.cur) >= c.size {
		c.old, c.cur = c.cur, make(map[[sha256.Size]byte]*rendered, c.size)
	}
	c.cur[k] = r
}

// len returns the number of entries of the current generation.
func (c *renderCache) len() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.cur)
}
