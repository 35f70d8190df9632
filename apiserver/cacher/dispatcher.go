package cacher

import (
	"context"
	"fmt"
	"time"
)

// maxDispatchBatch bounds how many events the dispatcher copies out of the
// ring under one read lock.
const maxDispatchBatch = 256

// dispatcher is the state of the one goroutine per resource that hands each
// event to the watchers it concerns (Kubernetes' Cacher.dispatchEvents). It
// reads the events from the ring in order, so the ring is its queue.
type dispatcher struct {
	c     *Cacher
	seq   uint64 // next sequence number to read from the ring
	epoch int64  // the cache's epoch seq belongs to
	// rev is the revision every watcher has been given everything up to:
	// the revision of the last event dispatched, or the cache's revision
	// once the ring is drained. Bookmarks carry it.
	rev int64

	batch    []*event
	watchers []*CacheWatcher
	blocked  []blockedPush
	// budget is how long the dispatcher may still wait for full queues
	// (time_budget.go), and timer measures each wait.
	budget *timeBudget
	timer  *time.Timer
}

// blockedPush is a frame a full watcher still has to take.
type blockedPush struct {
	w     *CacheWatcher
	frame *[]byte
}

// newDispatcher starts where the cache is now. New calls it before the
// store follower runs, so the dispatcher's position predates every event.
func (c *Cacher) newDispatcher() *dispatcher {
	d := &dispatcher{c: c, budget: newTimeBudget(time.Now), timer: time.NewTimer(time.Hour)}
	d.timer.Stop()
	c.mu.RLock()
	d.seq, d.epoch, d.rev = c.wc.hist.next, c.wc.epoch, c.wc.rev
	c.mu.RUnlock()
	c.dispatched.Store(d.seq)
	return d
}

// dispatch is the dispatcher goroutine.
func (c *Cacher) dispatch(d *dispatcher) {
	defer c.wg.Done()
	tick := time.NewTimer(c.bookmarkTick())
	defer tick.Stop()
	for {
		select {
		case <-c.ctx.Done():
			return
		case <-c.dispatchWake:
			d.drain()
		case now := <-tick.C:
			d.drain()
			d.bookmarks(now)
			tick.Reset(c.bookmarkTick())
		}
	}
}

// drain dispatches every event in the ring not dispatched yet.
func (d *dispatcher) drain() {
	c := d.c
	for c.ctx.Err() == nil {
		c.mu.RLock()
		h := &c.wc.hist
		if c.wc.epoch != d.epoch {
			// A re-list reset the ring and ended every watcher: the events
			// not dispatched yet concern nobody any more.
			d.epoch = c.wc.epoch
			d.seq = h.first
		}
		if d.seq < h.first {
			// Cannot happen while the store follower waits for us (see
			// waitForDispatcher); if it ever did, no watcher could be
			// served continuously any more.
			lost := h.first - d.seq
			d.seq = h.first
			c.mu.RUnlock()
			n := c.terminateAll(fmt.Errorf("%w: the dispatcher fell %d events behind the ring", ErrTooSlow, lost))
			c.counters.closedTooSlow.Add(int64(n))
			continue
		}
		d.batch = d.batch[:0]
		for d.seq < h.next && len(d.batch) < maxDispatchBatch {
			d.batch = append(d.batch, h.at(d.seq))
			d.seq++
		}
		drained := d.seq == h.next
		rev := c.wc.rev
		c.mu.RUnlock()

		for _, e := range d.batch {
			d.dispatchEvent(e)
			d.rev = max(d.rev, e.rev)
		}
		clear(d.batch)
		c.dispatched.Store(d.seq)
		c.poke(c.dispatchedSignal)
		if drained {
			// The cache's revision may be past the last event (a re-list or
			// a progress check): every watcher has everything up to it.
			d.rev = max(d.rev, rev)
			return
		}
	}
}

// snapshotWatchers copies the watchers that may be interested in an event
// in namespace ns: those of all namespaces and those of ns.
func (d *dispatcher) snapshotWatchers(ns string) []*CacheWatcher {
	c := d.c
	c.watchers.mu.Lock()
	d.watchers = append(d.watchers[:0], c.watchers.byNamespace[""]...)
	if ns != "" {
		d.watchers = append(d.watchers, c.watchers.byNamespace[ns]...)
	}
	c.watchers.mu.Unlock()
	return d.watchers
}

// dispatchEvent hands e to every watcher it concerns. Each gets the frame
// its selectors call for; the frame of each kind is encoded once, by the
// first watcher that needs it. Watchers with room get it at once; then the
// full ones are waited for out of the shared time budget, and those still
// full when it runs out are closed.
func (d *dispatcher) dispatchEvent(e *event) {
	c := d.c
	ns := ""
	if e.obj != nil {
		ns = e.obj.Metadata.Namespace
	}
	ws := d.snapshotWatchers(ns)
	sent := 0
	d.blocked = d.blocked[:0]
	for _, w := range ws {
		if e.rev <= w.startRev {
			continue // in the watch's replay or before the revision it asked for
		}
		k, ok := w.classify(e)
		if !ok {
			continue
		}
		f := e.frameRef(&c.frameEncoder, k)
		switch w.push(f, e.rev, false) {
		case pushed:
			sent++
		case full:
			d.blocked = append(d.blocked, blockedPush{w: w, frame: f})
		}
	}
	if len(d.blocked) > 0 {
		sent += d.waitForBlocked(e.rev)
	}
	clear(ws)
	c.counters.eventsDispatched.Add(1)
	if c.tracing() {
		c.trace("rev %d %s %s: sent to %d of %d watchers",
			e.rev, e.typ, e.key, sent, len(ws))
	}
}

// waitForBlocked offers the frame again to each full watcher until it has
// room, for at most the time budget; the ones still full are closed with
// ErrTooSlow. It returns how many took the frame.
func (d *dispatcher) waitForBlocked(rev int64) int {
	c := d.c
	budget := d.budget.takeAvailable()
	start := time.Now()
	for _, b := range d.blocked {
		// Their queues drain only on their turns: bring those forward.
		b.w.seat.expedite()
	}
	d.timer.Reset(budget)
	sent := 0
	expired := false
	for {
		still := d.blocked[:0]
		for _, b := range d.blocked {
			switch b.w.push(b.frame, rev, !expired) {
			case pushed:
				sent++
			case full:
				still = append(still, b)
			}
		}
		clear(d.blocked[len(still):])
		d.blocked = still
		if len(still) == 0 {
			break
		}
		if expired {
			for _, b := range still {
				c.closeTooSlow(b.w, rev, budget)
			}
			break
		}
		select {
		case <-c.spaceFreed:
		case <-d.timer.C:
			expired = true
		case <-c.ctx.Done():
			expired = true
		}
	}
	clear(d.blocked)
	d.blocked = d.blocked[:0]
	d.timer.Stop()
	d.budget.returnUnused(budget - time.Since(start))
	return sent
}

// closeTooSlow ends a watcher whose queue stayed full.
func (c *Cacher) closeTooSlow(w *CacheWatcher, rev int64, budget time.Duration) {
	c.unregister(w)
	if !w.end(fmt.Errorf("%w: queue of %d frames still full at rev %d after waiting %v", ErrTooSlow, c.cfg.WatcherBuffer, rev, budget)) {
		return
	}
	c.counters.closedTooSlow.Add(1)
	if c.tracing() {
		c.trace("watch %d too slow: queue of %d frames full at rev %d after %v of budget: closed, it must re-watch",
			w.id, c.cfg.WatcherBuffer, rev, budget.Round(time.Millisecond))
	}
}

// drainPoll is how often Drain looks at the dispatcher's progress.
const drainPoll = 5 * time.Millisecond

// Drain waits until the cache has applied the store's revision rev and the
// dispatcher has handed every event up to it to the watchers' queues. A
// Stop after Drain therefore ends each watch only after it has sent those
// events: it is how deleting a CustomResourceDefinition shows open watches
// one DELETED per object, then the end of the stream.
func (c *Cacher) Drain(ctx context.Context, rev int64) error {
	if err := c.waitFresh(ctx, rev); err != nil {
		return err
	}
	c.poke(c.dispatchWake)
	tick := time.NewTicker(drainPoll)
	defer tick.Stop()
	for {
		c.mu.RLock()
		next := c.wc.hist.next
		c.mu.RUnlock()
		if c.dispatched.Load() >= next {
			return nil
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			return ctx.Err()
		case <-c.ctx.Done():
			return ErrStopped
		}
	}
}
