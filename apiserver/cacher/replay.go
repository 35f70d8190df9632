package cacher

// The frames a watch starts with, before its queue: the current state as
// synthetic ADDED events (a watch from resourceVersion 0, or a watch-list
// with sendInitialEvents=true, which ends them with a BOOKMARK), or the
// ring's events after the resourceVersion it asked for. Watch takes the
// snapshot when the watch registers (watchers.go, startLocked); Next builds
// the frames from it lazily, a batch at a time. Kubernetes: the
// watchCacheInterval (watch_cache_interval.go) that
// cacheWatcher.processInterval sends before reading its input channel.

// maxReplayBatch bounds how many replayed or synthetic frames one Next call
// returns, so a watch from resourceVersion 0 of a big resource is written in
// reasonably sized chunks.
const maxReplayBatch = 256

// nextReplay appends the next batch of the frames the watch starts with.
func (w *CacheWatcher) nextReplay(buf [][]byte) [][]byte {
	if buf == nil {
		buf = getFrames()
	}
	sent := w.sent.Load()
	for n := 0; w.replayPos < len(w.replay) && n < maxReplayBatch; {
		e := w.replay[w.replayPos]
		w.replayPos++
		var k frameKind
		if w.replayInitial {
			if !w.matches(e.obj) {
				continue
			}
			k = frameAdded
		} else {
			var ok bool
			if k, ok = w.classify(e); !ok {
				continue
			}
		}
		buf = append(buf, e.frame(&w.c.frameEncoder, k))
		sent = max(sent, e.rev)
		n++
	}
	w.replayLeft.Store(int64(len(w.replay) - w.replayPos))
	if w.replayPos == len(w.replay) {
		w.dropReplay()
		if rev := w.endBookmarkRev; rev > 0 {
			w.endBookmarkRev = 0
			buf = append(buf, w.c.initialEventsEndFrame(rev))
			w.bookmarks.Add(1)
			sent = max(sent, rev)
			if w.c.tracing() {
				w.c.trace("watch %d: initial events sent, BOOKMARK rev %d (initial-events-end)", w.id, rev)
			}
		}
	}
	w.sent.Store(sent)
	return buf
}

func (w *CacheWatcher) dropReplay() {
	w.replay = nil
	w.replayPos = 0
	w.replayLeft.Store(0)
}
