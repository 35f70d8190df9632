package cacher

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"listwatch/api"
	"listwatch/narrate"
)

// maxReplayBatch bounds how many replayed or synthetic frames one Next call
// returns, so a watch from resourceVersion 0 of a big resource is written in
// reasonably sized chunks.
const maxReplayBatch = 256

// CacheWatcher is one client's watch. Frames are complete JSON events,
// encoded once per event and shared by every watcher that gets the same
// event type, each ending in '\n'. They must not be modified.
//
// A CacheWatcher has no goroutine of its own (Kubernetes' cacheWatcher has
// one): the dispatcher appends frames to its bounded queue, and the HTTP
// handler's goroutine takes them with Next, on its turn (turns.go): the
// writers of many watchers take turns rather than all waking at once.
// Before the queue come the frames the watch starts with (replayed history
// or the current state), which Next builds lazily from a snapshot taken
// when the watch registered. It mirrors storage/cacher/cache_watcher.go.
type CacheWatcher struct {
	c    *Cacher
	id   int64
	opts WatchOptions
	// started is when the watch registered.
	started time.Time
	// startRev: the dispatcher queues only events after it.
	startRev int64
	// bookmarkAfter: bookmarks wait until the cache is past it: the
	// revision the watch's first frames bring the client to (Kubernetes
	// cacheWatcher.processInterval's resourceVersion).
	bookmarkAfter int64

	// The frames the watch starts with. Only the goroutine calling Next
	// touches these after registration.
	replay         []*event
	replayInitial  bool  // replay is the current state (ADDED frames)
	replayPos      int   // next index in replay
	endBookmarkRev int64 // > 0: send the initial-events-end bookmark after replay
	errFrame       []byte

	// slot is the watcher's index in Cacher.watchers[opts.Namespace];
	// guarded by Cacher.wmu.
	slot       int
	registered bool
	stopOnce   sync.Once

	// The dispatcher's own bookkeeping, touched by the dispatcher only
	// (and by register before the dispatcher can see the watcher).
	nextBookmark time.Time

	mu sync.Mutex
	// queue holds the frames by reference (event.frameRef).
	queue []*[]byte
	// err says why the watcher ended; nil while it runs.
	err error
	// dispatcherWaiting: the dispatcher waits for this queue to drain.
	dispatcherWaiting bool
	// lastQueued is the highest revision queued so far.
	lastQueued int64
	// wake has room for one token: "your turn came" or "err changed".
	wake chan struct{}
	// idle: the writer waits in Next with nothing queued, so the
	// dispatcher asks for its turn when it queues the first frame. A
	// writer busy elsewhere (writing) asks for itself when it comes back.
	idle bool
	// turn is the watcher's place with Cacher.turns, and ticket the
	// number of its latest place in line; both guarded by Turns.mu.
	turn   turnState
	ticket uint64

	// sent is the highest revision Next has returned, and replayLeft the
	// number of replay events not yet looked at, for the debug view.
	sent       atomic.Int64
	replayLeft atomic.Int64
	// bookmarks counts the BOOKMARK frames queued for this watcher, for
	// the debug view.
	bookmarks atomic.Int64
}

func (c *Cacher) newWatcher(opts WatchOptions) *CacheWatcher {
	return &CacheWatcher{c: c, opts: opts, started: time.Now(), wake: make(chan struct{}, 1)}
}

// register adds w to the watcher set. The caller holds c.mu for reading,
// so no event is applied meanwhile.
func (c *Cacher) register(w *CacheWatcher) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if c.stopped || c.ctx.Err() != nil {
		return ErrStopped
	}
	c.nextID++
	w.id = c.nextID
	if w.opts.AllowBookmarks {
		w.nextBookmark = nextBookmarkTime(w.started, c.bookmarkInterval(), w.opts.Deadline)
	}
	ns := w.opts.Namespace
	w.replayLeft.Store(int64(len(w.replay)))
	w.slot = len(c.watchers[ns])
	c.watchers[ns] = append(c.watchers[ns], w)
	c.count++
	w.registered = true
	return nil
}

// unregisterLocked removes w from the watcher set. The caller holds c.wmu.
func (c *Cacher) unregisterLocked(w *CacheWatcher) {
	if !w.registered {
		return
	}
	ns := w.opts.Namespace
	list := c.watchers[ns]
	last := len(list) - 1
	list[w.slot] = list[last]
	list[w.slot].slot = w.slot
	list[last] = nil
	if last == 0 {
		delete(c.watchers, ns)
	} else {
		c.watchers[ns] = list[:last]
	}
	c.count--
	w.registered = false
}

// terminateAll ends every registered watcher with err and returns how many.
func (c *Cacher) terminateAll(err error) int {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	n := 0
	for ns, list := range c.watchers {
		for _, w := range list {
			w.registered = false
			if w.end(err) {
				n++
			}
		}
		delete(c.watchers, ns)
	}
	c.count = 0
	return n
}

// Next blocks until at least one frame is ready, then appends every ready
// frame to buf and returns it, so the caller can write them all in one
// write() and flush once. With buf nil, the frames come in a slice from a
// shared pool, to be given back with ReleaseFrames once written. When the
// watcher has ended and its queue is drained it returns the frames it has
// with the reason (ErrTooSlow, ErrKilled, ErrStopped, ErrStatusSent); it
// returns ctx.Err() as soon as ctx is done, even with frames still queued.
//
// Next must not be called from two goroutines at once: a watch has one
// writer.
func (w *CacheWatcher) Next(ctx context.Context, buf [][]byte) ([][]byte, error) {
	if w.errFrame != nil {
		buf = append(buf, w.errFrame)
		w.errFrame = nil
		return buf, ErrStatusSent
	}
	for {
		// A done ctx wins over pending frames: a watch that is never idle
		// must still end at its timeout (the client resumes from the last
		// revision it got).
		if err := ctx.Err(); err != nil {
			w.stepOut()
			return buf, err
		}
		if w.replay != nil || w.endBookmarkRev > 0 {
			if err := w.Err(); err != nil {
				// A watch that ends half-way through its replay must not
				// deliver the live events queued behind it: that would
				// leave a gap. Drop both.
				w.dropReplay()
				w.mu.Lock()
				w.c.dequeued(len(w.queue))
				clear(w.queue)
				w.queue = w.queue[:0]
				w.mu.Unlock()
				return buf, err
			}
			n := len(buf)
			buf = w.nextReplay(buf)
			if len(buf) > n {
				return buf, nil
			}
			continue // nothing in this batch matched
		}

		// Live frames. The writer takes them on its turn (turns.go); an
		// ended watcher hands out its last frames without one, and never
		// takes one again: its writer may block on a slow client, and the
		// line must not wait for it.
		w.mu.Lock()
		switch {
		case len(w.queue) == 0:
			err := w.err
			w.idle = err == nil
			if err == nil {
				// Nothing to write: a turn held now (there should be none)
				// goes on, or the whole line would wait for this watch.
				w.c.turns.pass(w)
			}
			w.mu.Unlock()
			if err != nil {
				w.c.turns.leave(w)
				return buf, err
			}
		case w.err == nil && !w.c.turns.ask(w):
			// In line; the queue keeps filling meanwhile.
			w.idle = false
			w.mu.Unlock()
		default:
			if w.err != nil {
				w.c.turns.leave(w)
			}
			return w.takeQueuedLocked(buf), nil
		}
		select {
		case <-w.wake:
		case <-ctx.Done():
			w.stepOut()
			return buf, ctx.Err()
		}
	}
}

// stepOut is Next giving up its place with the turns when its context
// ends: a later Next asks again.
func (w *CacheWatcher) stepOut() {
	// Under w.mu, so that the dispatcher cannot offer a turn to a writer
	// that has just gone (push offers under w.mu too).
	w.mu.Lock()
	defer w.mu.Unlock()
	w.idle = false
	w.c.turns.stepOut(w)
}

// takeQueuedLocked appends every queued frame to buf, unlocks w.mu and
// passes the turn on. The caller holds w.mu and the turn (or w has ended).
func (w *CacheWatcher) takeQueuedLocked(buf [][]byte) [][]byte {
	last := w.lastQueued
	if buf == nil {
		buf = getFrames()
	}
	for _, f := range w.queue {
		buf = append(buf, *f)
	}
	w.c.dequeued(len(w.queue))
	clear(w.queue)
	w.queue = w.queue[:0]
	poke := w.dispatcherWaiting
	w.dispatcherWaiting = false
	w.idle = false
	w.mu.Unlock()
	w.c.turns.pass(w)
	if last > w.sent.Load() {
		w.sent.Store(last)
	}
	if poke {
		w.c.poke(w.c.spaceFreed)
	}
	return buf
}

// nextReplay appends the next batch of the frames the watch starts with.
func (w *CacheWatcher) nextReplay(buf [][]byte) [][]byte {
	if buf == nil {
		buf = getFrames()
	}
	sent := w.sent.Load()
	for n := 0; w.replayPos < len(w.replay) && n < maxReplayBatch; {
		e := w.replay[w.replayPos]
		w.replayPos++
		var k frameKind
		if w.replayInitial {
			if !w.matches(e.obj) {
				continue
			}
			k = frameAdded
		} else {
			var ok bool
			if k, ok = w.classify(e); !ok {
				continue
			}
		}
		buf = append(buf, e.frame(w.c, k))
		sent = max(sent, e.rev)
		n++
	}
	w.replayLeft.Store(int64(len(w.replay) - w.replayPos))
	if w.replayPos == len(w.replay) {
		w.dropReplay()
		if rev := w.endBookmarkRev; rev > 0 {
			w.endBookmarkRev = 0
			buf = append(buf, w.c.initialEventsEndFrame(rev))
			w.bookmarks.Add(1)
			sent = max(sent, rev)
			if w.c.tr.Enabled() {
				w.c.tr.Printf(narrate.WatchCache, "%s: watch %d: initial events sent, BOOKMARK rev %d (initial-events-end)", w.c.name, w.id, rev)
			}
		}
	}
	w.sent.Store(sent)
	return buf
}

func (w *CacheWatcher) dropReplay() {
	w.replay = nil
	w.replayPos = 0
	w.replayLeft.Store(0)
}

// Pending reports whether Next would return at once with more frames. The
// HTTP writer flushes only when nothing more is pending. Like Next, it must
// be called from the watch's one writer goroutine.
func (w *CacheWatcher) Pending() bool {
	if w.errFrame != nil || w.replay != nil || w.endBookmarkRev > 0 {
		return true
	}
	w.mu.Lock()
	n := len(w.queue)
	w.mu.Unlock()
	// Frames that must wait for a turn are not ready: the writer should
	// flush what it has rather than hold it back until then.
	return n > 0 && !w.c.turns.contended()
}

// Err returns why the watcher ended (wrapping one of ErrTooSlow, ErrKilled,
// ErrStopped, ErrStatusSent), or nil while it runs.
func (w *CacheWatcher) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// ID is the watcher's number in the debug view and in narration.
func (w *CacheWatcher) ID() int64 { return w.id }

// Stop unregisters the watcher. Idempotent; safe from any goroutine.
func (w *CacheWatcher) Stop() {
	w.stopOnce.Do(func() {
		c := w.c
		c.wmu.Lock()
		c.unregisterLocked(w)
		c.wmu.Unlock()
		w.end(ErrStopped)
		c.turns.leave(w)
		// No one reads a stopped watcher: its frames no longer wait for
		// a connection (see Cacher.AdmitWrite).
		w.mu.Lock()
		c.dequeued(len(w.queue))
		clear(w.queue)
		w.queue = nil
		w.mu.Unlock()
	})
}

// end records why the watcher ended and wakes its reader. It returns false
// if it had ended already. A killed watcher drops its queue: the connection
// goes away mid-stream, as with a tcpkill.
func (w *CacheWatcher) end(err error) bool {
	w.mu.Lock()
	if w.err != nil {
		w.mu.Unlock()
		return false
	}
	w.err = err
	if errors.Is(err, ErrKilled) {
		w.c.dequeued(len(w.queue))
		clear(w.queue)
		w.queue = nil
	}
	poke := w.dispatcherWaiting
	w.dispatcherWaiting = false
	w.mu.Unlock()
	w.signal()
	if poke {
		w.c.poke(w.c.spaceFreed)
	}
	return true
}

// pushResult is what happened to a frame offered to a watcher.
type pushResult uint8

const (
	pushed pushResult = iota
	full
	closed
)

// push appends a frame to the queue if there is room. With wait set and
// the queue full, it records that the dispatcher waits for it, so Next
// pokes Cacher.spaceFreed after draining.
func (w *CacheWatcher) push(frame *[]byte, rev int64, wait bool) pushResult {
	w.mu.Lock()
	switch {
	case w.err != nil:
		w.mu.Unlock()
		return closed
	case len(w.queue) >= w.c.cfg.WatcherBuffer:
		if wait {
			w.dispatcherWaiting = true
		}
		w.mu.Unlock()
		return full
	}
	if len(w.queue) == 0 && w.idle {
		// The writer waits in Next: ask for its turn on its behalf. Under
		// w.mu, so that it cannot step out meanwhile (stepOut).
		w.idle = false
		w.c.turns.offer(w)
	}
	w.queue = append(w.queue, frame)
	w.c.queued.Add(1)
	w.lastQueued = max(w.lastQueued, rev)
	w.mu.Unlock()
	return pushed
}

// matches reports whether obj is in the watch's namespace and selectors.
func (w *CacheWatcher) matches(obj *api.Object) bool {
	if obj == nil {
		return false
	}
	if w.opts.Namespace != "" && obj.Metadata.Namespace != w.opts.Namespace {
		return false
	}
	if !w.opts.Label.Empty() && !w.opts.Label.Matches(obj.Metadata.Labels) {
		return false
	}
	if !w.opts.Field.Empty() {
		if w.opts.FieldMatch != nil {
			return w.opts.FieldMatch(obj)
		}
		return w.opts.Field.MatchesObject(obj)
	}
	return true
}

// classify decides which frame, if any, this watcher gets for e, from
// whether the object matches now and matched before (Kubernetes'
// cacheWatcher.convertToWatchEvent): both → the event's own type; now only
// → ADDED; before only → DELETED with the previous state; neither → none.
func (w *CacheWatcher) classify(e *event) (frameKind, bool) {
	switch e.typ {
	case api.Added:
		return frameAdded, w.matches(e.obj)
	case api.Deleted:
		return frameDeleted, w.matches(e.obj)
	}
	now, before := w.matches(e.obj), w.matches(e.prev)
	switch {
	case now && before:
		return frameModified, true
	case now:
		return frameAdded, true
	case before:
		return frameDeletedPrev, true
	}
	return 0, false
}

// describe is the watch's scope for narration.
func (w *CacheWatcher) describe() string {
	var b strings.Builder
	if w.opts.Namespace != "" {
		b.WriteString("ns=" + w.opts.Namespace)
	} else {
		b.WriteString("all namespaces")
	}
	if !w.opts.Label.Empty() {
		b.WriteString(" labels=" + w.opts.Label.String())
	}
	if !w.opts.Field.Empty() {
		b.WriteString(" fields=" + w.opts.Field.String())
	}
	return b.String()
}

// buffered counts frames queued plus replay events still to look at.
func (w *CacheWatcher) buffered() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.queue) + int(w.replayLeft.Load())
}

// signal wakes the watcher's reader, if it waits in Next.
func (w *CacheWatcher) signal() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}
