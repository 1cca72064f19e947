package niche

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/singleflight"
)

// readCache keeps the results of public reads (List and Search) for a
// short time, keyed by everything a result depends on, and lets
// concurrent identical reads share one store call.
//
// Every write through the engine moves the cache to a new generation:
// results read before it are never served after it. Writes made by other
// engines sharing the database (other instances) show after at most the
// TTL.
type readCache struct {
	ttl   time.Duration
	max   int
	now   func() time.Time
	gen   atomic.Uint64
	group singleflight.Group

	mu    sync.Mutex
	items map[string]cacheEntry
}

type cacheEntry struct {
	v       any
	gen     uint64
	expires time.Time
}

// cacheLoadTimeout bounds a shared load, which runs detached from the
// first caller's context so that its cancellation fails nobody else.
const cacheLoadTimeout = 30 * time.Second

func newReadCache(ttl time.Duration, max int, now func() time.Time) *readCache {
	return &readCache{ttl: ttl, max: max, now: now, items: map[string]cacheEntry{}}
}

// invalidate starts a new generation.
func (c *readCache) invalidate() {
	if c != nil {
		c.gen.Add(1)
	}
}

// get returns the cached value of key, or loads it (once for all
// concurrent callers of the same key and generation) and caches it.
// Values are shared: callers must not modify them.
func (c *readCache) get(ctx context.Context, key string, load func(context.Context) (any, error)) (any, error) {
	gen := c.gen.Load()
	now := c.now()
	c.mu.Lock()
	e, ok := c.items[key]
	c.mu.Unlock()
	if ok && e.gen == gen && now.Before(e.expires) {
		return e.v, nil
	}
	flight := strconv.FormatUint(gen, 10) + "\x00" + key
	ch := c.group.DoChan(flight, func() (any, error) {
		lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cacheLoadTimeout)
		defer cancel()
		v, err := load(lctx)
		if err != nil {
			return nil, err
		}
		c.put(key, cacheEntry{v: v, gen: gen, expires: c.now().Add(c.ttl)})
		return v, nil
	})
	select {
	case r := <-ch:
		return r.Val, r.Err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (c *readCache) put(key string, e cacheEntry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e.gen != c.gen.Load() {
		return // written meanwhile: never served, do not keep
	}
	if len(c.items) >= c.max {
		now := c.now()
		for k, old := range c.items {
			if old.gen != e.gen || !now.Before(old.expires) {
				delete(c.items, k)
			}
		}
		// Still full of live entries: drop about a quarter of them.
		for k := range c.items {
			if len(c.items) < c.max*3/4 {
				break
			}
			delete(c.items, k)
		}
	}
	c.items[key] = e
}

// cacheKey joins the parts of a cache key unambiguously.
func cacheKey(parts ...string) string {
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(strconv.Itoa(len(p)))
		b.WriteByte(':')
		b.WriteString(p)
	}
	return b.String()
}
