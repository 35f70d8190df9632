package cacher

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"listwatch/api"
	"listwatch/narrate"
)

// freshnessTimeout is how long a list (or a watch with sendInitialEvents)
// waits for the cache to reach the revision it needs before answering 504,
// Kubernetes' blockTimeout in watch_cache.go.
const freshnessTimeout = 3 * time.Second

// progressRetry is how often a waiter asks again whether the store has moved
// on without any event of this resource.
const progressRetry = 100 * time.Millisecond

// Cacher is the watch cache of one resource: it follows one store watch and
// serves every list from memory and every watch from its ring of recent
// events, fanning each event out to all the watchers it concerns.
//
// Three kinds of goroutines touch it: the one following the store (writes
// the cache), the dispatcher (hands events and bookmarks to watchers), and
// the callers (List, Watch, and each watch's HTTP writer calling Next).
type Cacher struct {
	cfg    Config
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	// mu guards wc. Watch holds it for reading while it takes its snapshot
	// and registers, so no event can be applied (and dispatched) between
	// the two: nothing is missed and nothing is sent twice.
	mu sync.RWMutex
	wc watchCache
	// sortMu guards wc.sorted, which readers build under mu.RLock.
	sortMu sync.Mutex
	// rev mirrors wc.rev for lock-free reads; moved, when set, is closed
	// and cleared whenever it changes, to wake waitFresh.
	rev   atomic.Int64
	moved atomic.Pointer[chan struct{}]

	// watchers are the open watches (watchers.go).
	watchers watcherSet

	// dispatchWake tells the dispatcher the ring has new events.
	dispatchWake chan struct{}
	// dispatched is the sequence number the dispatcher will read next; the
	// store follower stops reading the store while the dispatcher is a
	// whole ring behind. dispatchedSignal wakes it when that changes.
	dispatched       atomic.Uint64
	dispatchedSignal chan struct{}
	// progressReq asks the store follower for a progress check.
	progressReq chan struct{}
	// spaceFreed is poked by a watcher's Next when it drains a queue the
	// dispatcher is waiting on.
	spaceFreed chan struct{}

	// admission makes writers wait for the fan-out (backpressure.go).
	admission writeAdmission
	frameEncoder
	counters counters
}

// New starts a cacher: it lists the prefix, watches the store from that
// revision and keeps the watch cache up to date until ctx is done or Stop.
// The first list happens before New returns, so a store error is reported
// here; later failures of the store watch make the cache re-list by itself.
func New(ctx context.Context, cfg Config) (*Cacher, error) {
	switch {
	case cfg.Store == nil:
		return nil, errors.New("cacher: Config.Store is nil")
	case cfg.Prefix == "":
		return nil, errors.New("cacher: Config.Prefix is empty")
	case cfg.Kind == "" || cfg.APIVersion == "":
		return nil, fmt.Errorf("cacher: Config.Kind and Config.APIVersion are needed for bookmarks (resource %s)", cfg.Resource)
	case cfg.HistorySize < 0 || cfg.WatcherBuffer < 0 || cfg.HistoryBytes < 0:
		return nil, fmt.Errorf("cacher: negative HistorySize (%d), HistoryBytes (%d) or WatcherBuffer (%d)",
			cfg.HistorySize, cfg.HistoryBytes, cfg.WatcherBuffer)
	}
	if cfg.HistoryBytes == 0 {
		cfg.HistoryBytes = DefaultHistoryBytes
	}
	if cfg.MaxQueuedFrames == 0 {
		cfg.MaxQueuedFrames = DefaultMaxQueuedFrames
	}
	if cfg.Turns == nil {
		cfg.Turns = NewTurns(0)
	}
	if cfg.HistorySize == 0 {
		cfg.HistorySize = DefaultHistorySize
	}
	if cfg.WatcherBuffer == 0 {
		cfg.WatcherBuffer = DefaultWatcherBuffer
	}
	c := &Cacher{
		cfg:              cfg,
		watchers:         watcherSet{byNamespace: map[string][]*CacheWatcher{}},
		dispatchWake:     make(chan struct{}, 1),
		dispatchedSignal: make(chan struct{}, 1),
		progressReq:      make(chan struct{}, 1),
		spaceFreed:       make(chan struct{}, 1),
		frameEncoder:     frameEncoder{kind: cfg.Kind, apiVersion: cfg.APIVersion},
	}
	c.wc.hist.capy = cfg.HistorySize
	c.wc.hist.maxBytes = cfg.HistoryBytes
	c.ctx, c.cancel = context.WithCancel(ctx)

	w, err := c.listAndWatch(false)
	if err != nil {
		c.cancel()
		return nil, fmt.Errorf("cacher %s: %w", c.name(), err)
	}
	d := c.newDispatcher()
	c.wg.Add(2)
	go c.followStore(w)
	go c.dispatch(d)
	return c, nil
}

// Stop ends the cacher and every watcher it serves (ErrStopped). It returns
// once the cacher's goroutines have exited. Idempotent.
func (c *Cacher) Stop() {
	c.cancel()
	c.wg.Wait()
	c.shutdown()
}

// shutdown ends every watcher and refuses new ones. The store follower
// calls it too, when the store closes.
func (c *Cacher) shutdown() {
	c.watchers.mu.Lock()
	already := c.watchers.stopped
	c.watchers.stopped = true
	c.watchers.mu.Unlock()
	n := c.terminateAll(ErrStopped)
	if !already && c.tracing() {
		c.trace("stopped, %d watchers ended", n)
	}
}

// name is the resource as narration and errors show it.
func (c *Cacher) name() string { return c.cfg.Resource.String() }

// tracing reports whether narration is on; trace narrates one step of the
// watch cache, prefixed with the resource.
func (c *Cacher) tracing() bool { return c.cfg.Tracer.Enabled() }

func (c *Cacher) trace(format string, args ...any) {
	c.cfg.Tracer.Printf(narrate.WatchCache, "%s: "+format, append([]any{c.name()}, args...)...)
}

// Revision is the newest revision the cache has applied.
func (c *Cacher) Revision() int64 { return c.rev.Load() }

// List returns the cached objects that match, at a revision >= minRV,
// sorted by key. If the cache is behind minRV it waits up to 3 s, then
// returns api.NewTooLargeResourceVersion(minRV, current, 1). The objects
// are shared: read-only. Like a real watch cache it ignores paging: a list
// served from the cache is always complete (fixture list-rv0-limit1.json).
func (c *Cacher) List(ctx context.Context, minRV int64, match func(*api.Object) bool) ([]*api.Object, int64, error) {
	if err := c.waitFresh(ctx, minRV); err != nil {
		return nil, 0, err
	}
	c.mu.RLock()
	c.sortMu.Lock()
	snap := c.wc.sortedState()
	c.sortMu.Unlock()
	rev := c.wc.rev
	c.mu.RUnlock()

	out := make([]*api.Object, 0, len(snap))
	for _, e := range snap {
		if match == nil || match(e.obj) {
			out = append(out, e.obj)
		}
	}
	return out, rev, nil
}

// waitFresh waits until the cache is at rev or newer: at most 3 s, then it
// returns the 504 Kubernetes answers. Because the cache only sees events of
// its own resource, its revision can lag the store's while other resources
// are written; so while it waits it keeps asking the store follower for a
// progress event, as Kubernetes asks etcd for a progress notification.
func (c *Cacher) waitFresh(ctx context.Context, rev int64) error {
	if rev <= 0 || c.rev.Load() >= rev {
		return ctx.Err()
	}
	timeout := time.NewTimer(freshnessTimeout)
	defer timeout.Stop()
	retry := time.NewTicker(progressRetry)
	defer retry.Stop()
	for {
		c.mu.RLock()
		cur := c.wc.rev
		var moved chan struct{}
		if cur < rev {
			moved = c.revisionMovedChanLocked()
		}
		c.mu.RUnlock()
		if cur >= rev {
			return nil
		}
		c.requestProgress()
		select {
		case <-moved:
		case <-retry.C:
		case <-timeout.C:
			if c.tracing() {
				c.trace("still at rev %d after %v waiting for rev %d: 504", cur, freshnessTimeout, rev)
			}
			return api.NewTooLargeResourceVersion(uint64(rev), uint64(cur), 1)
		case <-ctx.Done():
			return ctx.Err()
		case <-c.ctx.Done():
			return ErrStopped
		}
	}
}

// WaitFresh waits until the cache has seen revision rev, as a list at
// resourceVersion rev does: at most 3 s, then the 504 "Too large resource
// version" Status. A GET of one object at a resourceVersion uses it, so a
// revision from the future is answered as the real server answers it.
func (c *Cacher) WaitFresh(ctx context.Context, rev int64) error { return c.waitFresh(ctx, rev) }

// revisionMovedChanLocked returns the channel revisionMovedLocked closes
// next. The caller holds c.mu for reading, so it cannot be closed meanwhile.
func (c *Cacher) revisionMovedChanLocked() chan struct{} {
	if p := c.moved.Load(); p != nil {
		return *p
	}
	ch := make(chan struct{})
	if c.moved.CompareAndSwap(nil, &ch) {
		return ch
	}
	return *c.moved.Load() // another waiter made it first
}

// revisionMovedLocked wakes the waiters of waitFresh. Called with mu held
// for writing, right after wc.rev changed.
func (c *Cacher) revisionMovedLocked() {
	c.rev.Store(c.wc.rev)
	if p := c.moved.Swap(nil); p != nil {
		close(*p)
	}
}

// storeRevision reads the store's current revision consistently (a quorum
// read on etcd): the revision a consistent read must reach. Kubernetes
// serves consistent lists from the watch cache the same way (the
// ConsistentListFromCache feature: cacher.go asks the storage's
// GetCurrentResourceVersion, then waits for the cache to get there).
func (c *Cacher) storeRevision(ctx context.Context) (int64, error) {
	r, err := c.cfg.Store.CurrentRevision(ctx)
	if err != nil {
		return 0, fmt.Errorf("cacher %s: reading the store's revision: %w", c.name(), err)
	}
	return r, nil
}

// requestProgress asks the store follower for a progress check.
func (c *Cacher) requestProgress() {
	select {
	case c.progressReq <- struct{}{}:
	default:
	}
}
