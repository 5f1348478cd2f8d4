package webui

import (
	"container/list"
	"sync"
)

// lru is a small bounded cache of computed page data keyed by what pins it
// (a commit, a tree, a tag object): such data never changes, so it needs no
// invalidation, only a bound.
type lru struct {
	mu    sync.Mutex
	max   int
	order *list.List // front: most recent; values are *lruEntry
	items map[string]*list.Element
}

type lruEntry struct {
	key string
	val any
}

func newLRU(max int) *lru {
	return &lru{max: max, order: list.New(), items: map[string]*list.Element{}}
}

func (c *lru) get(key string) (any, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.items[key]; ok {
		c.order.MoveToFront(e)
		return e.Value.(*lruEntry).val, true
	}
	return nil, false
}

func (c *lru) put(key string, val any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.items[key]; ok {
		e.Value.(*lruEntry).val = val
		c.order.MoveToFront(e)
		return
	}
	c.items[key] = c.order.PushFront(&lruEntry{key, val})
	for c.order.Len() > c.max {
		last := c.order.Back()
		c.order.Remove(last)
		delete(c.items, last.Value.(*lruEntry).key)
	}
}

// cached returns the value under key, computing and keeping it on a miss.
// Errors are not kept.
func cached[T any](c *lru, key string, compute func() (T, error)) (T, error) {
	if v, ok := c.get(key); ok {
		return v.(T), nil
	}
	v, err := compute()
	if err != nil {
		return v, err
	}
	c.put(key, v)
	return v, nil
}
