package action

import (
	"container/list"
	"crypto/sha256"
	"encoding/binary"
	"sync"

	"github.com/dome-registry/dome/pkg/signing"
)

// DefaultVerifyCacheSize is the number of results a VerifyCache made with
// size <= 0 keeps.
const DefaultVerifyCacheSize = 4096

// VerifyCache remembers VerifyRecord results, so a server answering many
// reads of the same versions checks each Ed25519 signature once. A result is
// keyed by the SHA-256 of everything it depends on: the record's name,
// version, recorded hash and stored document bytes, and the fingerprint of
// the trusted key set (KeysFingerprint). So changed stored bytes (a tamper)
// or a changed key set never hit an old result; and when a call brings a key
// set with another fingerprint, every entry is dropped at once. It keeps at
// most its size in entries (least recently used evicted) and is safe for
// concurrent use.
type VerifyCache struct {
	size int

	mu      sync.Mutex
	keys    *signing.TrustedKeys // the set the entries were made with
	keysFP  string
	entries map[[32]byte]*list.Element // of *cacheEntry
	lru     list.List                  // most recently used first
	hits    uint64
	misses  uint64
}

type cacheEntry struct {
	key [32]byte
	v   Verification
}

// NewVerifyCache returns a cache holding at most size results
// (DefaultVerifyCacheSize when size <= 0).
func NewVerifyCache(size int) *VerifyCache {
	if size <= 0 {
		size = DefaultVerifyCacheSize
	}
	return &VerifyCache{size: size, entries: make(map[[32]byte]*list.Element)}
}

// VerifyRecord returns VerifyRecord(rec, keys), from the cache when the same
// bytes were verified with the same key set before.
func (c *VerifyCache) VerifyRecord(rec Record, keys *signing.TrustedKeys) Verification {
	fp := c.fingerprint(keys)
	k := cacheKey(rec, fp)
	c.mu.Lock()
	if el, ok := c.entries[k]; ok {
		c.lru.MoveToFront(el)
		c.hits++
		v := el.Value.(*cacheEntry).v
		c.mu.Unlock()
		return v
	}
	c.misses++
	c.mu.Unlock()

	v := VerifyRecord(rec, keys)

	c.mu.Lock()
	defer c.mu.Unlock()
	if c.keysFP != fp { // the key set changed while verifying: do not keep a stale result
		return v
	}
	if el, ok := c.entries[k]; ok {
		c.lru.MoveToFront(el)
		return v
	}
	c.entries[k] = c.lru.PushFront(&cacheEntry{key: k, v: v})
	for c.lru.Len() > c.size {
		last := c.lru.Back()
		c.lru.Remove(last)
		delete(c.entries, last.Value.(*cacheEntry).key)
	}
	return v
}

// fingerprint returns the key set's fingerprint, computing it once per set
// (a *TrustedKeys is immutable), and drops every entry when the set differs
// from the one the entries were made with.
func (c *VerifyCache) fingerprint(keys *signing.TrustedKeys) string {
	c.mu.Lock()
	if keys == c.keys && c.keys != nil {
		fp := c.keysFP
		c.mu.Unlock()
		return fp
	}
	c.mu.Unlock()
	fp := KeysFingerprint(keys)
	c.mu.Lock()
	defer c.mu.Unlock()
	if fp != c.keysFP || c.keys == nil {
		if fp != c.keysFP {
			c.entries = make(map[[32]byte]*list.Element)
			c.lru.Init()
		}
		c.keysFP = fp
	}
	c.keys = keys
	return fp
}

// Len returns the number of cached results.
func (c *VerifyCache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lru.Len()
}

// Stats returns the numbers of hits and misses so far.
func (c *VerifyCache) Stats() (hits, misses uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.hits, c.misses
}

// cacheKey hashes every input of VerifyRecord, each length-prefixed so no
// two different inputs share a key.
func cacheKey(rec Record, keysFP string) [32]byte {
	h := sha256.New()
	var n [8]byte
	for _, part := range [][]byte{[]byte(keysFP), []byte(rec.Name), []byte(rec.Version), []byte(rec.Hash), rec.Document} {
		binary.BigEndian.PutUint64(n[:], uint64(len(part)))
		h.Write(n[:])
		h.Write(part)
	}
	var k [32]byte
	h.Sum(k[:0])
	return k
}
