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
	"listwatch/store"
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
	cfg Config
	tr  *narrate.Tracer
	// name is the resource as narration and errors show it.
	name string

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	// stopOnce guards Stop.
	stopOnce sync.Once

	// mu guards wc. Watch holds it for reading while it takes its snapshot
	// and registers, so no event can be applied (and dispatched) between
	// the two: nothing is missed and nothing is sent twice.
	mu sync.RWMutex
	wc watchCache
	// sortMu guards wc.sorted, which readers build under mu.RLock.
	sortMu sync.Mutex
	// rev mirrors wc.rev for lock-free reads.
	rev atomic.Int64

	// waitMu guards revCh, closed (and forgotten) whenever the revision
	// moves, to wake List and Watch calls waiting for a fresher cache.
	waitMu sync.Mutex
	revCh  chan struct{}

	// wmu guards the set of watchers, indexed by namespace ("" for watches
	// of all namespaces), and stopped.
	wmu      sync.Mutex
	watchers map[string][]*CacheWatcher
	count    int
	nextID   int64
	stopped  bool

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
	// following is the channel of the store watch being followed, whose
	// length is events written but not in the ring yet (fanOutPending).
	following atomic.Pointer[<-chan store.Event]
	// writing counts the writes admitted (AdmitWrite) and not over yet;
	// admitMu lets one writer at a time check and count.
	writing atomic.Int64
	admitMu sync.Mutex
	// turns is the line the watchers wait in to write.
	turns  *Turns
	budget *timeBudget

	lastBookmark    atomic.Pointer[revFrame]
	lastEndBookmark atomic.Pointer[revFrame]

	// queued counts the frames waiting in all watchers' queues, for
	// AdmitWrite (backpressure.go).
	queued atomic.Int64

	eventsDispatched atomic.Int64
	tooOld           atomic.Int64
	closedTooSlow    atomic.Int64
	killed           atomic.Int64
	framesEncoded    atomic.Int64
	bytesEncoded     atomic.Int64
	relists          atomic.Int64
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
		tr:               cfg.Tracer,
		name:             cfg.Resource.String(),
		watchers:         map[string][]*CacheWatcher{},
		dispatchWake:     make(chan struct{}, 1),
		dispatchedSignal: make(chan struct{}, 1),
		progressReq:      make(chan struct{}, 1),
		spaceFreed:       make(chan struct{}, 1),
		turns:            cfg.Turns,
		budget:           newTimeBudget(time.Now),
	}
	c.wc.hist.capy = cfg.HistorySize
	c.wc.hist.maxBytes = cfg.HistoryBytes
	c.ctx, c.cancel = context.WithCancel(ctx)

	w, err := c.listAndWatch(false)
	if err != nil {
		c.cancel()
		return nil, fmt.Errorf("cacher %s: %w", c.name, err)
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
	c.stopOnce.Do(func() {
		c.cancel()
		c.wg.Wait()
		c.shutdown()
	})
}

// shutdown ends every watcher and refuses new ones.
func (c *Cacher) shutdown() {
	c.wmu.Lock()
	already := c.stopped
	c.stopped = true
	c.wmu.Unlock()
	n := c.terminateAll(ErrStopped)
	if !already && c.tr.Enabled() {
		c.tr.Printf(narrate.WatchCache, "%s: stopped, %d watchers ended", c.name, n)
	}
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
		var ch chan struct{}
		if cur < rev {
			c.waitMu.Lock()
			if c.revCh == nil {
				c.revCh = make(chan struct{})
			}
			ch = c.revCh
			c.waitMu.Unlock()
		}
		c.mu.RUnlock()
		if cur >= rev {
			return nil
		}
		c.requestProgress()
		select {
		case <-ch:
		case <-retry.C:
		case <-timeout.C:
			if c.tr.Enabled() {
				c.tr.Printf(narrate.WatchCache, "%s: still at rev %d after %v waiting for rev %d: 504", c.name, cur, freshnessTimeout, rev)
			}
			return api.NewTooLargeResourceVersion(uint64(rev), uint64(cur), 1)
		case <-ctx.Done():
			return ctx.Err()
		case <-c.ctx.Done():
			return ErrStopped
		}
	}
}

// revisionMoved wakes the waiters of waitFresh. Called with mu held for
// writing, right after wc.rev changed.
func (c *Cacher) revisionMovedLocked() {
	c.rev.Store(c.wc.rev)
	c.waitMu.Lock()
	if c.revCh != nil {
		close(c.revCh)
		c.revCh = nil
	}
	c.waitMu.Unlock()
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
	sendInitial := opts.SendInitialEvents != nil && *opts.SendInitialEvents
	if sendInitial {
		// A watch-list must start from a state at least as new as the one a
		// consistent list would return (RV unset) or as the RV it names.
		required := opts.ResourceVersion
		if !opts.RVSet {
			r, err := c.storeRevision(ctx)
			if err != nil {
				return nil, err
			}
			required = r
		}
		if err := c.waitFresh(ctx, required); err != nil {
			if s, ok := api.StatusOf(err); ok {
				return c.statusWatcher(w, s), nil
			}
			return nil, err
		}
	}

	c.mu.RLock()
	defer c.mu.RUnlock()
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
			c.tooOld.Add(1)
			if c.tr.Enabled() {
				c.tr.Printf(narrate.WatchCache, "%s: watch from rev %d: too old, oldest replayable is %d: 410", c.name, n, oldest)
			}
			return c.statusWatcher(w, api.NewResourceExpired(fmt.Sprintf("too old resource version: %d (%d)", n, oldest-1))), nil
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
	if err := c.register(w); err != nil {
		return nil, err
	}
	if c.tr.Enabled() {
		c.tr.Printf(narrate.WatchCache, "%s: watch %d %s: %d events to replay, then live after rev %d",
			c.name, w.id, w.describe(), len(w.replay), w.startRev)
	}
	return w, nil
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

// storeRevision reads the store's current revision consistently (a quorum
// read on etcd): the revision a consistent read must reach. Kubernetes 1.31+
// serves consistent lists from the watch cache the same way
// (ConsistentListFromCache: GetCurrentResourceVersionFromStorage, then wait
// for the cache to get there).
func (c *Cacher) storeRevision(ctx context.Context) (int64, error) {
	r, err := c.cfg.Store.CurrentRevision(ctx)
	if err != nil {
		return 0, fmt.Errorf("cacher %s: reading the store's revision: %w", c.name, err)
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
