package cacher

import (
	"context"
	"fmt"
	"sync"

	"listwatch/api"
)

// A new watch: where it starts (the current state, the ring's events after
// its resourceVersion, or only what comes next) and its registration in the
// set of watchers the dispatcher hands events to. Kubernetes: Cacher.Watch
// in cacher.go and the interval of events a watch starts with
// (watch_cache_interval.go). Kubernetes indexes its watchers by scope, a
// namespace and a name, and by an index value such as a Pod's node
// (indexedWatchers in cacher.go); we index them by namespace only.

// watcherSet is the set of open watchers, indexed by namespace ("" for
// watches of all namespaces), so the dispatcher looks only at the watchers
// an event's namespace concerns.
type watcherSet struct {
	mu          sync.Mutex
	byNamespace map[string][]*CacheWatcher
	count       int
	nextID      int64
	// stopped: the cacher is stopped (or its store closed); no new watcher
	// may register.
	stopped bool
}

// Watch registers a watcher. Errors that Kubernetes reports in-stream (410
// too old, 504 with sendInitialEvents) are not returned here: the watcher
// delivers one ERROR frame and ends (ErrStatusSent). ctx bounds only the
// wait of a watch with sendInitialEvents; the watcher lives until Stop (the
// caller must call it) or until the cacher ends it. Watch returns an error
// only when ctx is done while it waits, or the cacher is stopped.
func (c *Cacher) Watch(ctx context.Context, opts WatchOptions) (*CacheWatcher, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	w := c.newWatcher(opts)
	if opts.SendInitialEvents != nil && *opts.SendInitialEvents {
		if err := c.waitForWatchList(ctx, opts); err != nil {
			if s, ok := api.StatusOf(err); ok {
				return c.statusWatcher(w, s), nil
			}
			return nil, err
		}
	}

	// Under the read lock, no event is applied between the snapshot the
	// watch starts from and its registration.
	c.mu.RLock()
	defer c.mu.RUnlock()
	if s := c.startLocked(w); s != nil {
		return c.statusWatcher(w, s), nil
	}
	if err := c.register(w); err != nil {
		return nil, err
	}
	if c.tracing() {
		c.trace("watch %d %s: %d events to replay, then live after rev %d",
			w.id, w.describe(), len(w.replay), w.startRev)
	}
	return w, nil
}

// waitForWatchList waits until the cache is fresh enough for a watch-list
// (sendInitialEvents=true): its state must be at least as new as the one a
// consistent list would return (resourceVersion unset) or as the
// resourceVersion it names.
func (c *Cacher) waitForWatchList(ctx context.Context, opts WatchOptions) error {
	required := opts.ResourceVersion
	if !opts.RVSet {
		r, err := c.storeRevision(ctx)
		if err != nil {
			return err
		}
		required = r
	}
	return c.waitFresh(ctx, required)
}

// startLocked decides what w starts with, from its options: the current
// state as synthetic ADDED events, the ring's events after its
// resourceVersion, or nothing but the changes to come. It returns the 410
// Status for a resourceVersion older than the ring can replay. The caller
// holds c.mu for reading.
func (c *Cacher) startLocked(w *CacheWatcher) *api.Status {
	opts := w.opts
	sendInitial := opts.SendInitialEvents != nil && *opts.SendInitialEvents
	cur := c.wc.rev
	switch {
	case sendInitial || (!opts.RVSet || opts.ResourceVersion == 0) && opts.SendInitialEvents == nil:
		// The current state as synthetic ADDED events, then changes.
		c.sortMu.Lock()
		w.replay = c.wc.sortedState()
		c.sortMu.Unlock()
		w.replayInitial = true
		w.startRev = cur
		if sendInitial && opts.AllowBookmarks {
			w.endBookmarkRev = cur
		}
	case !opts.RVSet || opts.ResourceVersion == 0:
		// sendInitialEvents=false: just the changes from now on.
		w.startRev = cur
	default:
		n := opts.ResourceVersion
		if oldest := c.oldestLocked(); n < oldest-1 {
			c.counters.tooOld.Add(1)
			if c.tracing() {
				c.trace("watch from rev %d: too old, oldest replayable is %d: 410", n, oldest)
			}
			return api.NewResourceExpired(fmt.Sprintf("too old resource version: %d (%d)", n, oldest-1))
		}
		w.bookmarkAfter = n
		if n >= cur {
			// From now, or from a future revision: the dispatcher sends
			// only events after n, so the watch simply waits for them.
			w.startRev = n
		} else {
			w.replay = c.wc.eventsAfter(n)
			w.startRev = cur
			if len(w.replay) > 0 {
				w.bookmarkAfter = w.replay[len(w.replay)-1].rev
			}
		}
	}
	if w.bookmarkAfter == 0 {
		w.bookmarkAfter = w.startRev
	}
	return nil
}

// oldestLocked is the oldest revision a watch can be replayed from: the
// ring's, or later if the store's history was compacted past it. Kubernetes'
// watch cache ignores etcd's compaction for watches it can still replay; we
// follow the store's, so that compacting the store (a workshop fault, or the
// store's own history limit) makes every older watch get 410, as a
// compacted etcd does. The caller holds c.mu.
func (c *Cacher) oldestLocked() int64 {
	return max(c.wc.oldest(), c.cfg.Store.CompactedRevision()+1)
}

// statusWatcher turns w into a watcher that delivers one ERROR frame.
func (c *Cacher) statusWatcher(w *CacheWatcher, s *api.Status) *CacheWatcher {
	w.errFrame = c.encodeStatus(s)
	w.err = ErrStatusSent
	return w
}

// register adds w to the watcher set. The caller holds c.mu for reading,
// so no event is applied meanwhile.
func (c *Cacher) register(w *CacheWatcher) error {
	ws := &c.watchers
	ws.mu.Lock()
	defer ws.mu.Unlock()
	if ws.stopped || c.ctx.Err() != nil {
		return ErrStopped
	}
	ws.nextID++
	w.id = ws.nextID
	if w.opts.AllowBookmarks {
		w.nextBookmark = nextBookmarkTime(w.started, c.bookmarkInterval(), w.opts.Deadline)
	}
	ns := w.opts.Namespace
	w.replayLeft.Store(int64(len(w.replay)))
	w.slot = len(ws.byNamespace[ns])
	ws.byNamespace[ns] = append(ws.byNamespace[ns], w)
	ws.count++
	w.registered = true
	return nil
}

// unregisterLocked removes w from the watcher set. The caller holds
// c.watchers.mu.
func (c *Cacher) unregisterLocked(w *CacheWatcher) {
	if !w.registered {
		return
	}
	ws := &c.watchers
	ns := w.opts.Namespace
	list := ws.byNamespace[ns]
	last := len(list) - 1
	list[w.slot] = list[last]
	list[w.slot].slot = w.slot
	list[last] = nil
	if last == 0 {
		delete(ws.byNamespace, ns)
	} else {
		ws.byNamespace[ns] = list[:last]
	}
	ws.count--
	w.registered = false
}

// unregister is unregisterLocked for a caller that does not hold the lock.
func (c *Cacher) unregister(w *CacheWatcher) {
	c.watchers.mu.Lock()
	c.unregisterLocked(w)
	c.watchers.mu.Unlock()
}

// terminateAll ends every registered watcher with err and returns how many.
func (c *Cacher) terminateAll(err error) int {
	c.watchers.mu.Lock()
	defer c.watchers.mu.Unlock()
	return c.terminateAllLocked(err)
}

// terminateAllLocked is terminateAll with c.watchers.mu held.
func (c *Cacher) terminateAllLocked(err error) int {
	ws := &c.watchers
	n := 0
	for ns, list := range ws.byNamespace {
		for _, w := range list {
			w.registered = false
			if w.end(err) {
				n++
			}
		}
		delete(ws.byNamespace, ns)
	}
	ws.count = 0
	return n
}

// KillWatchers is the workshop's kill-connections fault: it ends every open
// watcher with ErrKilled and returns how many. The HTTP layer then drops
// each connection abruptly, as tcpkill does in the first article: the
// clients see a broken stream, not a clean end, and must re-watch from the
// last revision they saw.
func (c *Cacher) KillWatchers() int {
	return KillAll([]*Cacher{c})
}

// KillAll is KillWatchers over several caches at once, as the kill fault
// needs: every cache's watcher set is locked before any watcher ends. A
// killed HTTP/2 watch resets its whole connection, and the connection's
// other watches then leave their caches; were the caches killed one after
// the other, a watch of a later cache could leave before its kill and go
// uncounted, and the fault's answer would depend on timing. The locks are
// taken in the order of cs; nothing else holds two caches' watcher sets.
func KillAll(cs []*Cacher) int {
	for _, c := range cs {
		c.watchers.mu.Lock()
	}
	total := 0
	for _, c := range cs {
		n := c.terminateAllLocked(ErrKilled)
		c.counters.killed.Add(int64(n))
		if c.tracing() {
			c.trace("fault: killed %d watch connections", n)
		}
		total += n
	}
	for i := len(cs) - 1; i >= 0; i-- {
		cs[i].watchers.mu.Unlock()
	}
	return total
}

// watcherCount is how many watchers are open.
func (c *Cacher) watcherCount() int {
	c.watchers.mu.Lock()
	defer c.watchers.mu.Unlock()
	return c.watchers.count
}
