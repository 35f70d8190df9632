package store

import (
	"fmt"

	"listwatch/narrate"
)

// A live watcher's channel is small (watchChanSize events). When a writer
// finds it full, the watcher spills: the writers queue its events aside
// from then on, and a goroutine of its own feeds them to the channel as the
// reader takes them, until nothing is left aside and the watcher is live
// again. Only a reader Options.WatchBuffer events behind is ended as too
// slow, as before; but the memory for those events is taken only while a
// reader is behind, not reserved for every watcher from its start. A
// server with a watch cache per resource holds one store watch per
// resource with a buffer for bursts (16,384 events in cmd/apiserver), most
// of them idle.
//
// etcd's writer does not wait for a slow watcher either (v3.7.0,
// server/storage/mvcc/watchable_store.go): each watch channel holds
// chanBufLen (128) responses; a watcher whose channel is full becomes a
// victim (notify, addVictim), the response that did not fit is kept aside
// and retried (syncVictimsLoop, moveVictims), and the watcher then catches
// up from the store's history like a new one.

// watchChanSize is a live watcher's channel capacity (Options.WatchBuffer
// if smaller): one batch of the watch cache's reader (its maxApplyBatch).
const watchChanSize = 256

// spillLocked queues ev aside for w, whose channel is full or which has
// events waiting aside already, and starts w's goroutine if it has none.
// It returns false if w has ended instead, because it is WatchBuffer
// events behind. The caller is a writer holding s.mu for writing.
func (s *Store) spillLocked(w *watcher, ev Event) bool {
	if len(w.ch)+int(w.spilled.Load()) >= s.opts.WatchBuffer {
		s.endLocked(w, fmt.Errorf("%w: buffer of %d events full at revision %d",
			ErrWatcherTooSlow, s.opts.WatchBuffer, ev.Revision))
		return false
	}
	w.spill = append(w.spill, ev)
	w.spilled.Add(1)
	if w.state == live {
		w.state = spilling
		s.catchUps.Add(1)
		go w.feedSpill()
		if s.tr.Enabled() {
			s.tr.Printf(narrate.Store, "watch %s: its channel is full at rev %d, queueing its events aside", w.prefix, ev.Revision)
		}
	}
	return true
}

// endSpillingLocked marks a spilling watcher to end with err (the first
// reason given is kept). Its goroutine, which may be blocked sending, closes
// the channel itself: after the events already aside, as a full channel is
// closed after the events in it, unless the watch is stopped or the store
// closed first.
func (s *Store) endSpillingLocked(w *watcher, err error) {
	if w.spillErr == nil {
		w.spillErr = err
	}
}

// feedSpill is a spilling watcher's goroutine: it moves the events queued
// aside into the channel, blocking as the reader allows, in batches taken
// under the lock and sent without it. Once none is left aside the watcher
// is live again, or ends if it was marked to; the goroutine, and the memory
// aside, are gone. Events still aside when the watch is stopped or the
// store closed are dropped.
func (w *watcher) feedSpill() {
	s := w.s
	defer s.catchUps.Done()
	var batch []Event
	for {
		s.mu.Lock()
		if w.stopped() || s.closed || (len(w.spill) == 0 && w.spillErr != nil) {
			err := w.spillErr
			if err == nil && s.closed {
				err = ErrClosed
			}
			s.unlistLocked(w)
			s.closeLocked(w, err)
			s.mu.Unlock()
			return
		}
		if len(w.spill) == 0 {
			w.state, w.spill = live, nil
			s.mu.Unlock()
			return
		}
		batch, w.spill = w.spill, batch[:0]
		s.mu.Unlock()
		w.send(batch)
		clear(batch) // drop object references while waiting
	}
}

// send sends events to the channel as the reader takes them, until they
// are all sent or the watch is stopped or the store closed.
func (w *watcher) send(events []Event) {
	for _, ev := range events {
		select {
		case w.ch <- ev:
			w.spilled.Add(-1)
		case <-w.stopc:
			return
		case <-w.s.closedc:
			return
		}
	}
}
