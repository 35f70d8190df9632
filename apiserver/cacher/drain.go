package cacher

import (
	"context"
	"time"
)

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
