package watchserver

import (
	"context"

	"listwatch/apiserver/cacher"
)

// Where a watch's frames come from. Most resources are watch-cached, and
// every watch of one is a CacheWatcher of its watch cache (package cacher).
// A resource kube-apiserver does not cache (Events) is watched straight
// from the store, one store watch per client watch (package storagewatch),
// as kube-apiserver's undecorated storage watches etcd
// (k8s.io/apiserver v0.37.2 pkg/storage/etcd3/watcher.go, watcher.Watch).
// The pump drains both the same way.

// Watcher is one watch as the pump drains it.
type Watcher interface {
	// ID numbers the watch in narration and the debug view.
	ID() int64
	// Next blocks until frames are ready and appends them all to buf (nil:
	// a pooled slice, given back with cacher.ReleaseFrames once written).
	// When the watch has ended it returns its last frames with the
	// reason; it returns ctx.Err() as soon as ctx is done.
	Next(ctx context.Context, buf [][]byte) ([][]byte, error)
	// Pending reports whether Next would return more frames at once.
	Pending() bool
	// Sent counts n frames handed to the writer.
	Sent(n int)
	// Stop ends the watch; idempotent, safe from any goroutine.
	Stop()
}

// Source opens one watch, its query parsed into the watch cache's options.
// An error is answered as the request's status; a Status the watch must
// send in-stream (410 Expired) is the Watcher's first and last frame.
type Source func(ctx context.Context, opts cacher.WatchOptions) (Watcher, error)

// FromCache is the watch cache c as a Source.
func FromCache(c *cacher.Cacher) Source {
	return func(ctx context.Context, opts cacher.WatchOptions) (Watcher, error) {
		cw, err := c.Watch(ctx, opts)
		if err != nil {
			return nil, err
		}
		return cw, nil
	}
}
