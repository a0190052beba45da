package daemon

import "sync"

// lru keeps the values of the last few jobs looked at (bundle views, normalised series), so
// that clicks on one result do not reread its files while memory stays bounded.
type lru[V any] struct {
	mu    sync.Mutex
	cap   int
	keys  []string // least recently used first
	items map[string]V
}

func newLRU[V any](capacity int) *lru[V] {
	return &lru[V]{cap: capacity, items: map[string]V{}}
}

func (c *lru[V]) get(key string) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.items[key]
	if ok {
		c.touch(key)
	}
	return v, ok
}

func (c *lru[V]) put(key string, v V) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.items[key]; !ok && len(c.keys) >= c.cap {
		delete(c.items, c.keys[0])
		c.keys = c.keys[1:]
	}
	c.items[key] = v
	c.touch(key)
}

// touch moves key to the most recent end.
func (c *lru[V]) touch(key string) {
	for i, k := range c.keys {
		if k == key {
			c.keys = append(c.keys[:i], c.keys[i+1:]...)
			break
		}
	}
	c.keys = append(c.keys, key)
}

// load returns the cached value or builds it with fn (outside the lock: two callers may both
// build it; the second result wins, which is harmless for immutable results).
func (c *lru[V]) load(key string, fn func() (V, error)) (V, error) {
	if v, ok := c.get(key); ok {
		return v, nil
	}
	v, err := fn()
	if err != nil {
		return v, err
	}
	c.put(key, v)
	return v, nil
}

// entry returns the value under key, or puts mk() there first, in one step (so that two
// callers share one value: seedEntry loads once however many ask).
func (c *lru[V]) entry(key string, mk func() V) V {
	c.mu.Lock()
	defer c.mu.Unlock()
	if v, ok := c.items[key]; ok {
		c.touch(key)
		return v
	}
	if len(c.keys) >= c.cap {
		delete(c.items, c.keys[0])
		c.keys = c.keys[1:]
	}
	v := mk()
	c.items[key] = v
	c.touch(key)
	return v
}
