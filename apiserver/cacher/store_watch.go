package cacher

import (
	"context"
	"errors"
	"fmt"
	"time"

	"listwatch/store"
)

// This file is the cacher's own list-watch of the store: the only watch the
// store serves for this resource, however many clients watch the apiserver.
// Kubernetes' cacher runs a reflector over etcd for it (cacher.go
// startCaching); ours lists and watches the store.Interface directly, the
// in-memory store or etcd alike.

// maxApplyBatch bounds how many events are applied under one lock.
const maxApplyBatch = 256

// relist backoff bounds.
const (
	relistBackoffMin = 50 * time.Millisecond
	relistBackoffMax = 2 * time.Second
)

// listAndWatch lists the prefix, resets the cache to it and watches the
// store from the list's revision. On a re-list every open watcher is ended:
// the events between what it got and the new list are lost to the cache, so
// it cannot be served continuously and must re-watch (and, if its revision
// is older than the new list, re-list after a 410).
func (c *Cacher) listAndWatch(relist bool) (store.Watcher, error) {
	res, err := c.cfg.Store.List(c.ctx, c.cfg.Prefix, store.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing %s: %w", c.cfg.Prefix, err)
	}
	// Watching from the list's own revision leaves a backlog of at most the
	// writes that slipped in between, so the in-memory store makes the
	// watch live at once (see store.Watch) and answers progress requests.
	w, err := c.cfg.Store.Watch(c.ctx, c.cfg.Prefix, res.Revision)
	if err != nil {
		return nil, fmt.Errorf("watching %s from rev %d: %w", c.cfg.Prefix, res.Revision, err)
	}
	c.mu.Lock()
	c.wc.replace(c.cfg.Prefix, res.Items, res.Revision)
	c.revisionMovedLocked()
	ended := 0
	if relist {
		ended = c.terminateAll(fmt.Errorf("%w: the cache re-listed the store at rev %d", ErrStopped, res.Revision))
	}
	c.mu.Unlock()
	c.poke(c.dispatchWake)
	if c.tracing() {
		verb := "listed"
		if relist {
			verb = "re-listed"
		}
		c.trace("%s %d objects at rev %d, watching the store from there (%d watchers ended)",
			verb, len(res.Items), res.Revision, ended)
	}
	return w, nil
}

// followStore applies the store's events to the cache until the cacher
// stops, re-listing whenever the store watch ends.
func (c *Cacher) followStore(w store.Watcher) {
	defer c.wg.Done()
	defer c.shutdown()
	backoff := relistBackoffMin
	for {
		err := c.follow(w)
		w.Stop()
		if c.ctx.Err() != nil {
			return
		}
		if c.tracing() {
			c.trace("store watch ended (%v): re-listing", err)
		}
		for {
			if errors.Is(err, store.ErrClosed) {
				if c.tracing() {
					c.trace("the store is closed: stopping")
				}
				return
			}
			if !sleepCtx(c.ctx, backoff) {
				return
			}
			backoff = min(2*backoff, relistBackoffMax)
			c.counters.relists.Add(1)
			w, err = c.listAndWatch(true)
			if err == nil {
				break
			}
			if c.tracing() {
				c.trace("re-list failed: %v", err)
			}
		}
		backoff = relistBackoffMin
	}
}

// follow reads w until it ends; it returns why.
func (c *Cacher) follow(w store.Watcher) error {
	events := w.Events()
	c.admission.following.Store(&events)
	defer c.admission.following.Store(nil)
	for {
		select {
		case ev, ok := <-events:
			if !ok {
				return watchEndErr(w)
			}
			if !c.applyBatch(ev, events) {
				return watchEndErr(w)
			}
		case <-c.progressReq:
			c.requestStoreProgress(w)
		case <-c.ctx.Done():
			return c.ctx.Err()
		}
	}
}

func watchEndErr(w store.Watcher) error {
	if err := w.Err(); err != nil {
		return err
	}
	return errors.New("store watch stopped")
}

// applyBatch applies first and whatever else is already queued (up to a
// batch) under one lock, then wakes the dispatcher once. It returns false
// when it found the channel closed.
func (c *Cacher) applyBatch(first store.Event, events <-chan store.Event) (open bool) {
	open = true
	next, pending := first, true
	for pending {
		if !c.waitForDispatcher(ringCost(next)) {
			return true // stopping; follow sees ctx.Done next
		}
		c.mu.Lock()
		c.applyLocked(next)
		pending = false
		applied := int64(1)
	batch:
		for n := 1; n < maxApplyBatch; n++ {
			select {
			case ev, ok := <-events:
				if !ok {
					open = false
					break batch
				}
				if !c.fitsLocked(ringCost(ev)) {
					next, pending = ev, true // after the dispatcher has made room
					break batch
				}
				c.applyLocked(ev)
				applied++
			default:
				break batch
			}
		}
		c.counters.received.Add(applied)
		c.revisionMovedLocked()
		c.mu.Unlock()
		c.poke(c.dispatchWake)
	}
	return open
}

// fitsLocked reports whether an event charged size can be added to the ring
// without overwriting one the dispatcher has not handed out yet: the ring
// must have room in events, and the events not dispatched yet plus this one
// must fit its byte budget (unless none is waiting: one event is always
// let in, however large).
func (c *Cacher) fitsLocked(size int64) bool {
	h := &c.wc.hist
	from := max(c.dispatched.Load(), h.first)
	behind := h.next - from
	switch {
	case int(behind) >= h.capy:
		return false
	case behind == 0:
		return true
	}
	return h.pendingBytes(from)+size <= h.maxBytes
}

// waitForDispatcher blocks while the ring is full of events the dispatcher
// has not handed out yet, in events or in bytes: back-pressure instead of
// losing events. The store keeps buffering meanwhile (and ends our watch if
// even that overflows, which makes the cache re-list).
func (c *Cacher) waitForDispatcher(size int64) bool {
	for {
		c.mu.RLock()
		fits := c.fitsLocked(size)
		c.mu.RUnlock()
		if fits {
			return true
		}
		select {
		case <-c.dispatchedSignal:
		case <-c.ctx.Done():
			return false
		}
	}
}

// applyLocked applies one store event: a change goes into the cache and its
// ring; a progress event (the store's answer to RequestProgress) only moves
// the cache's revision, since it promises that every change of this
// resource up to its revision has been applied already. Kubernetes' watch
// cache turns etcd's progress notifications into bookmarks the same way
// (watch_cache.go UpdateResourceVersion). The caller holds c.mu for writing.
func (c *Cacher) applyLocked(ev store.Event) {
	if !ev.IsProgress() {
		c.wc.apply(newEvent(ev))
		return
	}
	if ev.Revision > c.wc.rev {
		if c.tracing() {
			c.trace("progress: no change since rev %d, cache now at store rev %d", c.wc.rev, ev.Revision)
		}
		c.wc.rev = ev.Revision
	}
}

// requestStoreProgress asks the store watch for a progress event: the way a
// cache that only sees its own resource learns that the store's revision
// moved on without it (writes to other resources). Its answer arrives on
// the watch channel, in order after every event it covers.
func (c *Cacher) requestStoreProgress(w store.Watcher) {
	if err := w.RequestProgress(c.ctx); err != nil && c.tracing() {
		c.trace("progress request failed: %v", err)
	}
}

// poke does a non-blocking send on a wake-up channel of capacity 1.
func (c *Cacher) poke(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// sleepCtx sleeps for d unless ctx ends first; it reports whether it slept.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
