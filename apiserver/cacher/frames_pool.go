package cacher

import "sync"

// Frame pooling: ours, not Kubernetes'. The slices Next fills with frames
// come from a pool shared by all watchers. A writer holds one only from
// Next until it has written the frames, and since writers take turns
// (turns.go), a few slices serve thousands of watches, where slices kept
// by each watch held megabytes between writes in the 10,000-watcher
// fan-out (docs/performance-limits.md, "Memory").
//
// Kubernetes has nothing to pool here: its watch handler reads one event
// at a time from the watcher's result channel, encodes it and writes it
// (endpoints/handlers/watch.go, WatchServer.HandleHTTP), and flushes when
// the channel is empty.

// maxPooledFrames bounds the slices kept for reuse: a burst's big slice
// is left to the garbage collector.
const maxPooledFrames = 4096

// framesPool holds the slices in holders (*[][]byte): a slice put into a
// sync.Pool as it is would be copied into a new interface value, one
// allocation per write, which is what the pool is there to avoid. A holder
// goes back into the pool empty when its slice is taken, and carries a
// slice again when one is given back.
var framesPool = sync.Pool{New: func() any { return new([][]byte) }}

// getFrames returns an empty slice from the pool (nil if it has none, and
// append allocates one).
func getFrames() [][]byte {
	p := framesPool.Get().(*[][]byte)
	fs := *p
	*p = nil
	framesPool.Put(p)
	return fs[:0]
}

// ReleaseFrames gives back a slice Next returned, once its frames have been
// written; the frames themselves are shared and stay untouched. The caller
// must not use frames afterwards.
func ReleaseFrames(frames [][]byte) {
	if frames == nil || cap(frames) > maxPooledFrames {
		return
	}
	clear(frames[:cap(frames)])
	p := framesPool.Get().(*[][]byte)
	*p = frames[:0]
	framesPool.Put(p)
}
