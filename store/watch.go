package store

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"listwatch/api"
	"listwatch/narrate"
)

// Event is one committed change, as a watch delivers it.
type Event struct {
	Type     api.EventType // Added, Modified or Deleted
	Key      string
	Revision int64
	// Object is the new state. For Deleted it is the last state with
	// metadata.resourceVersion set to the deletion's revision.
	Object *api.Object
	// PrevObject is the state before this change; nil for Added.
	PrevObject *api.Object
}

// IsProgress reports whether ev is a progress event (Type api.Bookmark,
// answering Watcher.RequestProgress) rather than a change.
func (ev Event) IsProgress() bool { return ev.Type == api.Bookmark }

// watcher is the in-memory store's Watcher.
//
// A watcher is in one of four states, changed only with the store's lock
// held for writing:
//
//   - catching up: a goroutine of its own replays history into the channel,
//     blocking as the reader allows, until it reaches the newest revision;
//   - live: it is in the store's watcher list, and each writer hands it the
//     new event with a non-blocking send;
//   - spilling: live, but its channel was full: writers queue its events
//     aside and a goroutine of its own feeds them to the channel, until it
//     has caught up and the watcher is live again (spill.go); Options.
//     WatchBuffer events unread end it;
//   - ended: the channel is closed and err says why.
//
// A watch whose backlog fits in its channel skips the first state and costs
// no goroutine at all, which is the common case for a watch started at a
// list's revision.
type watcher struct {
	s      *Store
	prefix string
	from   int64 // deliver only revisions > from
	ch     chan Event

	stopc    chan struct{} // closed by Stop
	stopOnce sync.Once
	done     chan struct{} // closed when the watch has ended and ch is closed
	// stopCtx unregisters the context callback that stops the watch.
	stopCtx func() bool

	// guarded by s.mu
	state watcherState
	index int // position in s.watchers while listed, else -1
	// spill holds the events of a spilling watcher not yet handed to its
	// feeding goroutine, and spillErr why it must end (spill.go).
	spill    []Event
	spillErr error
	// spilled counts the events queued aside and not yet in ch.
	spilled atomic.Int64

	errMu sync.Mutex
	err   error
}

type watcherState int

const (
	catchingUp watcherState = iota
	live
	spilling
	ended
)

// Watch streams every change under prefix with revision > fromRevision, in
// order, first from history then live (CompactedError if fromRevision <
// CompactedRevision()). It ends when ctx is done, Stop is called, the store
// closes, or the watcher falls behind (ErrWatcherTooSlow).
//
// A fromRevision ahead of the store is fine: the watch waits for it. Watching
// from 0 (or 1) replays every change since the store began, if none was
// compacted; Kubernetes' "resourceVersion=0 means now" is the apiserver's
// business, not the store's. The events' objects are shared: read-only.
func (s *Store) Watch(ctx context.Context, prefix string, fromRevision int64) (Watcher, error) {
	if fromRevision < 0 {
		return nil, invalid("negative revision %d", fromRevision)
	}
	if err := s.ctxErr(ctx); err != nil {
		return nil, err
	}
	w := &watcher{
		s:      s,
		prefix: prefix,
		from:   fromRevision,
		ch:     make(chan Event, min(s.opts.WatchBuffer, watchChanSize)),
		stopc:  make(chan struct{}),
		done:   make(chan struct{}),
		index:  -1,
	}

	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, ErrClosed
	}
	if fromRevision < s.compacted {
		err := &CompactedError{Requested: fromRevision, Compacted: s.compacted}
		s.mu.Unlock()
		return nil, err
	}
	// Register the context callback before the watch can end, so whoever
	// ends it can always unregister it.
	w.stopCtx = context.AfterFunc(ctx, w.Stop)
	next := max(fromRevision+1, s.hist.first)
	goLive := s.tryGoLiveLocked(w, next, 4*cap(w.ch))
	if !goLive {
		s.catchUps.Add(1)
	}
	s.mu.Unlock()

	if s.tr.Enabled() {
		how := "live"
		if !goLive {
			how = "replaying history"
		}
		s.tr.Printf(narrate.Store, "watch %s from rev %d: %s", prefix, fromRevision, how)
	}
	if !goLive {
		go w.catchUp(next)
	}
	return w, nil
}

// tryGoLiveLocked looks at the history from revision next on (examining at
// most scan events, or all if scan < 0). If every matching event fits in
// w's buffer it queues them and makes w live; otherwise it changes nothing.
func (s *Store) tryGoLiveLocked(w *watcher, next int64, scan int) bool {
	end := s.hist.next()
	if scan >= 0 && end-next > int64(scan) {
		return false
	}
	free := cap(w.ch) - len(w.ch)
	n := 0
	for r := next; r < end; r++ {
		if strings.HasPrefix(s.hist.at(r).Key, w.prefix) {
			if n++; n > free {
				return false
			}
		}
	}
	for r := next; r < end; r++ {
		if ev := s.hist.at(r); strings.HasPrefix(ev.Key, w.prefix) {
			w.ch <- *ev // cannot block: counted above
		}
	}
	w.state = live
	w.index = len(s.watchers)
	s.watchers = append(s.watchers, w)
	return true
}

// catchUp replays history into w's channel, in batches read under the read
// lock and sent without it, until the rest fits in the buffer; then it makes
// w live. Writers keep committing meanwhile; if the history w still needs is
// compacted away first, w has fallen too far behind.
func (w *watcher) catchUp(next int64) {
	s := w.s
	defer s.catchUps.Done()
	batch := make([]Event, 0, min(cap(w.ch), 256))
	for {
		s.mu.RLock()
		if done, why := w.catchUpOverLocked(next); done {
			s.mu.RUnlock()
			w.end(why)
			return
		}
		end := s.hist.next()
		batch = batch[:0]
		for ; next < end && len(batch) < cap(batch); next++ {
			if ev := s.hist.at(next); strings.HasPrefix(ev.Key, w.prefix) {
				batch = append(batch, *ev)
			}
		}
		s.mu.RUnlock()

		for _, ev := range batch {
			select {
			case w.ch <- ev:
			case <-w.stopc:
				w.end(nil)
				return
			case <-s.closedc:
				w.end(ErrClosed)
				return
			}
		}
		clear(batch) // drop object references while waiting

		if next == end {
			// Reached the head as it was; whatever was written since is
			// queued with the write lock held, so no event slips between
			// replay and live delivery.
			s.mu.Lock()
			if done, _ := w.catchUpOverLocked(next); done {
				s.mu.Unlock()
				continue // the top of the loop ends it
			}
			if s.tryGoLiveLocked(w, next, -1) {
				s.mu.Unlock()
				return
			}
			s.mu.Unlock()
		}
	}
}

// catchUpOverLocked reports whether a catch-up whose next revision to send
// is next must end, and why (nil for a plain stop).
func (w *watcher) catchUpOverLocked(next int64) (done bool, why error) {
	s := w.s
	switch {
	case w.stopped():
		return true, nil
	case s.closed:
		return true, ErrClosed
	case next < s.hist.first:
		return true, fmt.Errorf("%w while replaying history: %w", ErrWatcherTooSlow,
			&CompactedError{Requested: next - 1, Compacted: s.compacted})
	}
	return false, nil
}

// dispatchLocked hands a committed event to every live watcher it concerns.
// A watcher whose buffer is full is ended rather than waited for: one slow
// reader must not hold up the writer or the other watchers.
func (s *Store) dispatchLocked(ev Event) {
	for i := 0; i < len(s.watchers); {
		w := s.watchers[i]
		if ev.Revision <= w.from || !strings.HasPrefix(ev.Key, w.prefix) {
			i++
			continue
		}
		if w.state == live {
			select {
			case w.ch <- ev:
				i++
				continue
			default:
			}
		}
		// Its channel is full, or events already wait aside: this one
		// waits aside too, unless w is too far behind (spill.go).
		if s.spillLocked(w, ev) {
			i++
		}
		// Otherwise w has ended, and the last watcher moved into slot i:
		// look at i again.
	}
}

// endLocked ends w with err (nil for a plain stop), if it has not ended yet.
// Called with s.mu held for writing, by the only goroutine that may send on
// w.ch at that moment (a writer for a live watcher, the catch-up or spill
// goroutine otherwise), so closing the channel cannot race a send. A
// spilling watcher is only marked to end: its goroutine, which may be
// sending, ends it (spill.go).
func (s *Store) endLocked(w *watcher, err error) {
	if w.state == ended {
		return
	}
	s.unlistLocked(w)
	if w.state == spilling {
		s.endSpillingLocked(w, err)
		return
	}
	s.closeLocked(w, err)
}

// closeLocked ends w: it records why and closes its channel. The caller
// holds s.mu for writing and is the only goroutine that may send on w.ch.
func (s *Store) closeLocked(w *watcher, err error) {
	w.state = ended
	w.errMu.Lock()
	w.err = err
	w.errMu.Unlock()
	close(w.ch)
	close(w.done)
	w.stopCtx()
	if err != nil && s.tr.Enabled() {
		s.tr.Printf(narrate.Store, "watch %s ended: %v", w.prefix, err)
	}
}

// unlistLocked takes w out of the watcher list, if it is in it.
func (s *Store) unlistLocked(w *watcher) {
	if w.index < 0 {
		return
	}
	last := len(s.watchers) - 1
	s.watchers[w.index] = s.watchers[last]
	s.watchers[w.index].index = w.index
	s.watchers[last] = nil
	s.watchers = s.watchers[:last]
	w.index = -1
}

// end takes the lock and ends w; used by the catch-up goroutine.
func (w *watcher) end(err error) {
	w.s.mu.Lock()
	w.s.endLocked(w, err)
	w.s.mu.Unlock()
}

func (w *watcher) stopped() bool {
	select {
	case <-w.stopc:
		return true
	default:
		return false
	}
}

// Events delivers the changes; it is closed when the watch ends.
func (w *watcher) Events() <-chan Event { return w.ch }

// Err says why Events was closed (nil after Stop or ctx cancel):
// ErrWatcherTooSlow or ErrClosed, wrapped with details. It is nil while the
// watch runs.
func (w *watcher) Err() error {
	w.errMu.Lock()
	defer w.errMu.Unlock()
	return w.err
}

// RequestProgress queues a progress event at the store's current revision
// if the watcher is live: it gets every event in commit order under the
// store's lock, so everything up to that revision is already queued ahead
// of it. A watcher still replaying history, spilling, or whose channel is
// full, skips the request (the caller asks again); it never ends the watch.
func (w *watcher) RequestProgress(ctx context.Context) error {
	if err := w.s.ctxErr(ctx); err != nil {
		return err
	}
	w.s.mu.Lock()
	defer w.s.mu.Unlock()
	if w.state != live {
		return nil
	}
	select {
	case w.ch <- Event{Type: api.Bookmark, Revision: w.s.rev.Load()}:
	default:
	}
	return nil
}

// Stop ends the watch; idempotent, safe from any goroutine. When it returns
// the Events channel is closed (events already buffered can still be read)
// and the watch holds no goroutine and no place in the store.
func (w *watcher) Stop() {
	w.stopOnce.Do(func() { close(w.stopc) })
	w.s.mu.Lock()
	if w.state == live {
		w.s.endLocked(w, nil)
	}
	w.s.mu.Unlock()
	// A catching-up watcher is ended by its goroutine, which sees stopc.
	<-w.done
}
