package slices

import (
	"container/list"
	"context"
	"fmt"
	"sync"

	"github.com/hubscope/hubscope/ipc"
)

// DefaultCacheBytes bounds the volumes a VolumeCache keeps: about 70 volumes of a 2 mm MNI
// grid (3.6 MB each), enough for the maps of a few jobs and a dynamic analysis's windows.
const DefaultCacheBytes = 256 << 20

// VolumeCache is an ipc.Service that keeps the volumes it fetched, per job and name, so that
// the slice viewer, the inspector and the Dynamics tab fetch each volume once. Every other call
// goes straight to the wrapped Service.
//
// Concurrent requests for the same volume share one fetch. A fetch runs under its own context
// and is cancelled when every caller waiting for it has given up (their contexts ended), so a
// user who scrubs past a window does not leave its download running. Least recently used
// volumes are dropped when the cache exceeds its byte budget.
type VolumeCache struct {
	ipc.Service
	budget int64

	mu      sync.Mutex
	entries map[cacheKey]*cacheEntry
	lru     *list.List // of cacheKey, most recent at the front; only completed entries
	bytes   int64
}

type cacheKey struct{ job, name string }

type cacheEntry struct {
	done    chan struct{} // closed when vol/err are set
	vol     *ipc.Volume
	err     error
	waiters int
	cancel  context.CancelFunc
	elem    *list.Element
}

// NewVolumeCache wraps svc with a volume cache of at most budget bytes (≤ 0: DefaultCacheBytes).
func NewVolumeCache(svc ipc.Service, budget int64) *VolumeCache {
	if budget <= 0 {
		budget = DefaultCacheBytes
	}
	return &VolumeCache{Service: svc, budget: budget, entries: map[cacheKey]*cacheEntry{}, lru: list.New()}
}

// cached returns svc itself when it is already a *VolumeCache, else a new cache around it.
func cached(svc ipc.Service) *VolumeCache {
	if c, ok := svc.(*VolumeCache); ok {
		return c
	}
	return NewVolumeCache(svc, 0)
}

// Volume returns the job's named volume, from the cache when it was fetched before. Callers
// must not modify the returned volume: it is shared.
func (c *VolumeCache) Volume(ctx context.Context, job, name string) (*ipc.Volume, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	k := cacheKey{job, name}
	c.mu.Lock()
	e, ok := c.entries[k]
	if ok && e.elem != nil {
		c.lru.MoveToFront(e.elem)
		c.mu.Unlock()
		return e.vol, nil
	}
	if !ok {
		fctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
		e = &cacheEntry{done: make(chan struct{}), cancel: cancel}
		c.entries[k] = e
		go c.fetch(fctx, k, e)
	}
	e.waiters++
	c.mu.Unlock()

	select {
	case <-e.done:
		c.mu.Lock()
		e.waiters--
		c.mu.Unlock()
		return e.vol, e.err
	case <-ctx.Done():
		c.mu.Lock()
		e.waiters--
		if e.waiters == 0 && c.entries[k] == e && e.elem == nil {
			// Nobody wants it any more: stop the download and forget it, so a later request
			// starts afresh.
			e.cancel()
			delete(c.entries, k)
		}
		c.mu.Unlock()
		return nil, ctx.Err()
	}
}

func (c *VolumeCache) fetch(ctx context.Context, k cacheKey, e *cacheEntry) {
	vol, err := c.Service.Volume(ctx, k.job, k.name)
	if err == nil && vol == nil {
		err = fmt.Errorf("volume %q of job %s: the helper sent no volume", k.name, k.job)
	}
	e.cancel()
	c.mu.Lock()
	defer c.mu.Unlock()
	e.vol, e.err = vol, err
	close(e.done)
	if c.entries[k] != e {
		return // abandoned while in flight
	}
	if err != nil {
		delete(c.entries, k) // errors are not cached: the job may not be finished yet
		return
	}
	e.elem = c.lru.PushFront(k)
	c.bytes += volumeBytes(vol)
	for c.bytes > c.budget && c.lru.Len() > 1 {
		c.evict(c.lru.Back())
	}
}

func (c *VolumeCache) evict(el *list.Element) {
	k := c.lru.Remove(el).(cacheKey)
	c.bytes -= volumeBytes(c.entries[k].vol)
	delete(c.entries, k)
}

// Forget drops every cached volume of a job (after the job was deleted or re-run).
func (c *VolumeCache) Forget(job string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for el := c.lru.Front(); el != nil; {
		next := el.Next()
		if el.Value.(cacheKey).job == job {
			c.evict(el)
		}
		el = next
	}
}

// Bytes is the size of the cached volumes.
func (c *VolumeCache) Bytes() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.bytes
}

func volumeBytes(v *ipc.Volume) int64 {
	if v == nil {
		return 0
	}
	return int64(len(v.Data))*4 + 512
}
