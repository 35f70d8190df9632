package cacher

import "sync"

// The slices Next fills with frames come from a pool shared by all
// watchers. A writer holds one only from Next until it has written the
// frames, and since writers take turns (turns.go), a few slices serve
// thousands of watches; kept by each watch instead, 10,000 of them held
// 10 MB between writes in the load of issue 15.

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
