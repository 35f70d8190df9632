package main

import (
	"context"
	"sync"
	"time"

	"listwatch/api"
	"listwatch/client"
	"listwatch/narrate"
	"listwatch/reflector"
)

// networkLayer tags the tour's own lines about the (simulated) network.
const networkLayer = "network"

// cable sits between the Reflector and the client, where the network is.
// It records every List and Watch the Reflector asks for, and it can be
// unplugged: while it is, every List and Watch waits, as a request does
// while the network is down. That is how the tour stays away long enough
// for the cluster to move on without it, deterministically, without
// racing the Reflector's immediate re-watch.
type cable struct {
	who string // whose cable: "informer", "RetryWatcher"
	lw  reflector.ListerWatcher
	ev  *evidence
	tr  *narrate.Tracer
	mu  sync.Mutex
	up  chan struct{} // closed while plugged in
	out bool          // unplugged
}

func newCable(who string, lw reflector.ListerWatcher, ev *evidence, tr *narrate.Tracer) *cable {
	up := make(chan struct{})
	close(up)
	return &cable{who: who, lw: lw, ev: ev, tr: tr, up: up}
}

// unplug makes the next List or Watch wait until plugIn.
func (c *cable) unplug() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.out {
		c.out, c.up = true, make(chan struct{})
		c.tr.Printf(networkLayer, "cable unplugged: the %s's next request will wait", c.who)
	}
}

// plugIn releases the waiting requests.
func (c *cable) plugIn() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.out {
		// Said before the waiting requests go on, so that it is printed
		// before anything they cause.
		c.tr.Printf(networkLayer, "the %s's cable plugged back in", c.who)
		c.out = false
		close(c.up)
	}
}

// wait blocks while the cable is unplugged.
func (c *cable) wait(ctx context.Context, what string) error {
	c.mu.Lock()
	up, out := c.up, c.out
	c.mu.Unlock()
	if out {
		c.tr.Printf(networkLayer, "%s is waiting for the network", what)
		c.ev.record(func() { c.ev.waiting++ })
	}
	select {
	case <-up:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// List implements reflector.ListerWatcher.
func (c *cable) List(ctx context.Context, opts api.ListOptions) (*api.List, error) {
	if err := c.wait(ctx, "the "+c.who+"'s LIST at rv "+quoteRV(opts.ResourceVersion)); err != nil {
		return nil, err
	}
	c.ev.record(func() { c.ev.lists = append(c.ev.lists, opts.ResourceVersion) })
	return c.lw.List(ctx, opts)
}

// Watch implements reflector.ListerWatcher.
func (c *cable) Watch(ctx context.Context, opts api.ListOptions) (client.Watcher, error) {
	if err := c.wait(ctx, "the "+c.who+"'s WATCH from rv "+quoteRV(opts.ResourceVersion)); err != nil {
		return nil, err
	}
	w, err := c.lw.Watch(ctx, opts)
	if err == nil {
		// Recorded once the server has said 200: the watch is open.
		c.ev.record(func() {
			c.ev.watches = append(c.ev.watches, watchReq{rv: opts.ResourceVersion, at: time.Now()})
		})
	}
	return w, err
}

func quoteRV(rv string) string {
	if rv == "" {
		return `""`
	}
	return rv
}
