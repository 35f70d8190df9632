package cacher

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"listwatch/store"
)

// Back-pressure on writers: ours, not Kubernetes'. A write is cheap for the
// store; what it costs is fanning its event out to every watcher: with
// 10,000 watchers, one create is 10,000 frames to write to 10,000 sockets.
// A server that accepts writes faster than that lets the frames pile up in
// the watchers' queues, and every event waits behind the pile: on a loaded
// 2-core machine the p99 from write to receive grew to seconds, with every
// event still delivered. Making the writer
// wait until the pile is small again keeps each event's trip short, and
// moves the waiting to where it belongs: to the client that writes faster
// than the server can tell everyone; the wait is bounded, so a writer is
// slowed, never refused.
//
// Kubernetes has no such wait: a write goes to etcd whatever the watchers
// do, and a watcher whose channel stays full past the dispatcher's time
// budget is closed (cacher.go dispatchEvent, cache_watcher.go add). Our
// dispatcher does that too (dispatcher.go); this wait only makes it rarer.
//
// The watch cache's own code touches this file in two places: a watcher
// counts the frames it queues and takes (CacheWatcher.push, dequeued), and
// the store follower says which store watch channel it reads.

// writeAdmission is what AdmitWrite needs besides the ring and the
// watcher set.
type writeAdmission struct {
	// mu lets one writer at a time check and count.
	mu sync.Mutex
	// line is the writers waiting, first come first. Only the first may
	// be admitted: writers that all looked again every few milliseconds,
	// whoever looked first winning, let one writer lose to the others
	// again and again, and its event waited that much longer (with 4
	// writers and 10,000 watchers, a write's p99 wait was 4 to 5 times its
	// p50; docs/performance-limits.md, "Where the p99 goes").
	line []*admitTicket
	// writing counts the writes admitted and not over yet.
	writing atomic.Int64
	// queued counts the frames waiting in all watchers' queues.
	queued atomic.Int64
	// following is the channel of the store watch being followed, whose
	// length is events written but not in the ring yet (those in the
	// channel: a store may hold more aside while the cache is behind).
	following atomic.Pointer[<-chan store.Event]
}

// DefaultMaxQueuedFrames is how much fan-out may wait, in frames, before a
// writer of the resource waits: about a tenth of a second of it for one
// writing core, twelve events for 10,000 watchers. It is also what each
// write to a watcher carries: a watcher waiting its turn (turns.go)
// collects the events that arrive meanwhile. With 10,000 watchers on 2
// cores, 30,000 cost 1.8 µs of CPU per delivery for a p99 of
// 0.3–0.5 s; 120,000, 1 µs for 0.23–0.26 s; 200,000, 0.9 µs for 0.28–0.32 s
// (docs/performance-limits.md).
const DefaultMaxQueuedFrames = 120000

// maxFanOutWait bounds a writer's wait: past it the write goes ahead. A
// watcher that never reads is closed as too slow long before.
const maxFanOutWait = time.Second

// fanOutPoll is how often a waiting writer looks again.
const fanOutPoll = 2 * time.Millisecond

// enqueued counts a frame a watcher queued.
func (c *Cacher) enqueued() { c.admission.queued.Add(1) }

// dequeued counts n frames that left the watchers' queues.
func (c *Cacher) dequeued(n int) {
	if n > 0 {
		c.admission.queued.Add(-int64(n))
	}
}

// QueuedFrames is how many frames wait in this resource's watcher queues.
func (c *Cacher) QueuedFrames() int64 { return c.admission.queued.Load() }

// AdmitWrite is called by a writer of this resource before it writes. It
// returns at once unless the fan-out still to do is more than
// Config.MaxQueuedFrames frames or other writers wait; then the writer
// waits in line, and returns once it is first and the fan-out is less,
// when ctx ends, or after a second at most; waited reports whether it
// waited. The write counts as fan-out to do until done is called, once it
// is over: writers let through together would otherwise all pass the same
// check before the first of their events reached the watch cache.
func (c *Cacher) AdmitWrite(ctx context.Context) (done func(), waited bool) {
	limit := c.cfg.MaxQueuedFrames
	if limit < 0 {
		return func() {}, false
	}
	if t := c.admitOrQueue(limit); t != nil {
		waited = true
		c.waitToAdmit(ctx, limit, t)
	}
	var once sync.Once
	return func() { once.Do(func() { c.admission.writing.Add(-1) }) }, waited
}

// admitTicket is a writer's place in the admission line. (Not empty:
// pointers to distinct zero-size values may be equal.)
type admitTicket struct{ _ byte }

// admitOrQueue counts the write and returns nil if nobody waits and the
// fan-out still to do is within limit; otherwise it puts the writer at the
// end of the line and returns its place.
func (c *Cacher) admitOrQueue(limit int64) *admitTicket {
	a := &c.admission
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.line) == 0 && c.fanOutPending() <= limit {
		a.writing.Add(1)
		return nil
	}
	t := &admitTicket{}
	a.line = append(a.line, t)
	return t
}

// waitToAdmit polls until the write, first in line, is admitted, or ctx or
// the cache ends, or maxFanOutWait has passed; the write is counted in
// every case.
func (c *Cacher) waitToAdmit(ctx context.Context, limit int64, t *admitTicket) {
	deadline := time.NewTimer(maxFanOutWait)
	defer deadline.Stop()
	poll := time.NewTicker(fanOutPoll)
	defer poll.Stop()
	for {
		select {
		case <-poll.C:
			if c.admitFirst(limit, t) {
				return
			}
			continue
		case <-deadline.C:
		case <-ctx.Done():
		case <-c.ctx.Done():
		}
		c.leaveLine(t) // it goes ahead anyway
		return
	}
}

// admitFirst admits t, taking it out of line and counting the write, if
// it is first in line and the fan-out still to do is within limit.
func (c *Cacher) admitFirst(limit int64, t *admitTicket) bool {
	a := &c.admission
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.line[0] != t || c.fanOutPending() > limit {
		return false
	}
	a.line = a.line[1:]
	a.writing.Add(1)
	return true
}

// leaveLine takes t out of line and counts its write, which goes ahead
// without waiting any longer.
func (c *Cacher) leaveLine(t *admitTicket) {
	a := &c.admission
	a.mu.Lock()
	defer a.mu.Unlock()
	for i, u := range a.line {
		if u == t {
			a.line = append(a.line[:i:i], a.line[i+1:]...)
			break
		}
	}
	a.writing.Add(1)
}

// fanOutPending is the fan-out still to do, in frames: those queued for
// watchers, plus one per watcher for each event the dispatcher has not
// reached yet: being written, on its way from the store, or in the ring.
// Counting the latter matters when writers come faster than the cache
// follows: their events would pass unseen, and the check with them.
func (c *Cacher) fanOutPending() int64 {
	c.mu.RLock()
	next := c.wc.hist.next
	c.mu.RUnlock()
	undispatched := c.admission.writing.Load()
	if ch := c.admission.following.Load(); ch != nil {
		undispatched += int64(len(*ch))
	}
	if d := c.dispatched.Load(); next > d {
		undispatched += int64(next - d)
	}
	watchers := int64(c.watcherCount())
	return c.admission.queued.Load() + undispatched*watchers
}
