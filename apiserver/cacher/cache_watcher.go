package cacher

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"listwatch/api"
)

// CacheWatcher is one client's watch: a bounded queue of frames that the
// dispatcher fills (push) and the watch's HTTP writer empties (Next).
// Frames are complete JSON events, encoded once per event and shared by
// every watcher that gets the same event type, each ending in '\n'. They
// must not be modified.
//
// It mirrors Kubernetes' cacheWatcher (storage/cacher/cache_watcher.go):
// the queue is its bounded input channel; push is its
// nonblockingAdd, and the dispatcher's wait for a full queue its add with
// a timer; Next is what its goroutine (processInterval, then process) does
// with each event it reads, except that the HTTP writer's own goroutine
// calls Next and takes every ready frame at once, where Kubernetes' watcher
// goroutine passes one event at a time on to the handler's (a second
// channel, result). Before the queue come the frames the watch starts with,
// the replayed history or the current state (replay.go; Kubernetes'
// watchCacheInterval).
//
// Ours apart: a writer takes its frames on its turn (turns.go: the seat
// field and its calls), the slice Next fills comes from a pool
// (frames_pool.go), and the frames queued are counted for the writers'
// back-pressure (backpressure.go).
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

	// The frames the watch starts with (replay.go). Only the goroutine
	// calling Next touches these after registration.
	replay         []*event
	replayInitial  bool  // replay is the current state (ADDED frames)
	replayPos      int   // next index in replay
	endBookmarkRev int64 // > 0: send the initial-events-end bookmark after replay
	errFrame       []byte

	// slot is the watcher's index in its namespace's list of the watcher
	// set (watchers.go); guarded by the set's mu.
	slot       int
	registered bool
	stopOnce   sync.Once

	// The dispatcher's own bookkeeping, touched by the dispatcher only
	// (and by register before the dispatcher can see the watcher).
	nextBookmark time.Time

	mu sync.Mutex
	// queue holds the frames by reference (event.frameRef), at most
	// Config.WatcherBuffer of them.
	queue []*[]byte
	// err says why the watcher ended; nil while it runs.
	err error
	// dispatcherWaiting: the dispatcher waits for this queue to drain.
	dispatcherWaiting bool
	// lastQueued is the highest revision queued so far.
	lastQueued int64
	// wake has room for one token: "your turn came" or "err changed".
	wake chan struct{}
	// seat is the watcher's place with the writers' Turns (turns.go).
	seat seat

	// sent is the highest revision Next has returned, and replayLeft the
	// number of replay events not yet looked at, for the debug view.
	sent       atomic.Int64
	replayLeft atomic.Int64
	// bookmarks counts the BOOKMARK frames queued for this watcher, for
	// the debug view.
	bookmarks atomic.Int64
}

func (c *Cacher) newWatcher(opts WatchOptions) *CacheWatcher {
	wake := make(chan struct{}, 1)
	return &CacheWatcher{c: c, opts: opts, started: time.Now(), wake: wake,
		seat: seat{turns: c.cfg.Turns, wake: wake}}
}

// pushResult is what happened to a frame offered to a watcher.
type pushResult uint8

const (
	pushed pushResult = iota
	full
	closed
)

// push appends a frame to the queue if there is room; it never blocks
// (Kubernetes' nonblockingAdd). With wait set and the queue full, it
// records that the dispatcher waits for it, so Next pokes
// Cacher.spaceFreed after draining.
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
	if len(w.queue) == 0 {
		w.seat.firstFrameLocked()
	}
	w.queue = append(w.queue, frame)
	w.c.enqueued()
	w.lastQueued = max(w.lastQueued, rev)
	w.mu.Unlock()
	return pushed
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
	// First the frames the watch starts with (replay.go), then the queue.
	for w.replay != nil || w.endBookmarkRev > 0 {
		if err := ctx.Err(); err != nil {
			return buf, err
		}
		if err := w.Err(); err != nil {
			// A watch that ends half-way through its replay must not
			// deliver the live events queued behind it: that would
			// leave a gap. Drop both.
			w.dropReplay()
			w.mu.Lock()
			w.dropQueueLocked(false)
			w.mu.Unlock()
			return buf, err
		}
		n := len(buf)
		buf = w.nextReplay(buf)
		if len(buf) > n {
			return buf, nil
		}
		// nothing in this batch matched
	}
	return w.nextQueued(ctx, buf)
}

// nextQueued waits until frames are queued and the writer may take them,
// then takes them all: Kubernetes' watcher goroutine reading its input
// channel (cacheWatcher.process). The writer may take them on its turn
// (turns.go), which its seat decides; an ended watcher hands out its last
// frames, then its end.
func (w *CacheWatcher) nextQueued(ctx context.Context, buf [][]byte) ([][]byte, error) {
	for {
		// A done ctx wins over pending frames: a watch that is never idle
		// must still end at its timeout (the client resumes from the last
		// revision it got).
		if err := ctx.Err(); err != nil {
			w.stepOut()
			return buf, err
		}
		w.mu.Lock()
		ended := w.err != nil
		if len(w.queue) > 0 {
			if w.seat.mayTakeLocked(ended) {
				return w.takeQueuedLocked(buf), nil
			}
			w.mu.Unlock() // in line; the queue keeps filling meanwhile
		} else {
			err := w.err
			w.seat.nothingQueuedLocked(ended)
			w.mu.Unlock()
			if ended {
				return buf, err
			}
		}
		select {
		case <-w.wake:
		case <-ctx.Done():
			w.stepOut()
			return buf, ctx.Err()
		}
	}
}

// stepOut gives up the writer's place with the turns when its context
// ends: a later Next asks again. Under w.mu, so that the dispatcher cannot
// offer a turn to a writer that has just gone (push offers under w.mu too).
func (w *CacheWatcher) stepOut() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.seat.stepOutLocked()
}

// takeQueuedLocked appends every queued frame to buf, unlocks w.mu and
// passes the turn on. The caller holds w.mu and may take the frames.
func (w *CacheWatcher) takeQueuedLocked(buf [][]byte) [][]byte {
	last := w.lastQueued
	if buf == nil {
		buf = getFrames()
	}
	for _, f := range w.queue {
		buf = append(buf, *f)
	}
	w.dropQueueLocked(false)
	poke := w.dispatcherWaiting
	w.dispatcherWaiting = false
	w.mu.Unlock()
	w.seat.taken()
	if last > w.sent.Load() {
		w.sent.Store(last)
	}
	if poke {
		w.c.poke(w.c.spaceFreed)
	}
	return buf
}

// dropQueueLocked empties the queue, letting its array go too if release
// is set. The caller holds w.mu.
func (w *CacheWatcher) dropQueueLocked(release bool) {
	w.c.dequeued(len(w.queue))
	clear(w.queue)
	if release {
		w.queue = nil
	} else {
		w.queue = w.queue[:0]
	}
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
	return n > 0 && !w.seat.contended()
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
		w.c.unregister(w)
		w.end(ErrStopped)
		w.seat.leave()
		// No one reads a stopped watcher: its frames no longer wait for
		// a connection (see Cacher.AdmitWrite).
		w.mu.Lock()
		w.dropQueueLocked(true)
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
		w.dropQueueLocked(true)
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

// matches reports whether obj is in the watch's namespace and selectors.
func (w *CacheWatcher) matches(obj *api.Object) bool { return w.opts.Matches(obj) }

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
