package cacher

import (
	"context"
	"time"
)

// Back-pressure on writers. A write is cheap for the store; what it costs
// is fanning its event out to every watcher: with 10,000 watchers, one
// create is 10,000 frames to write to 10,000 sockets. A server that
// accepts writes faster than that lets the frames pile up in the watchers'
// queues, and every event waits behind the pile: on a loaded 2-core
// machine the p99 from write to receive reached 11 s with every event
// still delivered (issue 15). Making the writer wait until the pile is
// small again keeps each event's trip short, and moves the waiting to where
// it belongs: to the client that writes faster than the server can tell
// everyone. kube-apiserver has no such wait (its answer is to close the
// watchers that fall behind); ours is bounded, so a writer is slowed, never
// refused.

// DefaultMaxQueuedFrames is how many frames may wait in the queues of all
// of a resource's watchers before a writer of that resource waits: about
// a tenth of a second of fan-out on one core.
const DefaultMaxQueuedFrames = 20000

// maxFanOutWait bounds a writer's wait: past it the write goes ahead. A
// watcher that never reads is closed as too slow long before.
const maxFanOutWait = time.Second

// fanOutPoll is how often a waiting writer looks again.
const fanOutPoll = 2 * time.Millisecond

// dequeued counts n frames that left the watchers' queues.
func (c *Cacher) dequeued(n int) {
	if n > 0 {
		c.queued.Add(-int64(n))
	}
}

// QueuedFrames is how many frames wait in this resource's watcher queues.
func (c *Cacher) QueuedFrames() int64 { return c.queued.Load() }

// WaitForFanOut is called by a writer of this resource before it writes:
// it returns at once unless more than Config.MaxQueuedFrames frames wait
// in the watchers' queues, and then once they are fewer, when ctx ends, or
// after a second at most. It reports whether it waited.
func (c *Cacher) WaitForFanOut(ctx context.Context) bool {
	limit := c.cfg.MaxQueuedFrames
	if limit < 0 || c.queued.Load() <= limit {
		return false
	}
	deadline := time.NewTimer(maxFanOutWait)
	defer deadline.Stop()
	poll := time.NewTicker(fanOutPoll)
	defer poll.Stop()
	for c.queued.Load() > limit {
		select {
		case <-poll.C:
		case <-deadline.C:
			return true
		case <-ctx.Done():
			return true
		case <-c.ctx.Done():
			return true
		}
	}
	return true
}
