package informer

import (
	"sync"
	"sync/atomic"
)

// syncTracker decides when one handler has synced: its informer has
// synced, and every initial-list add queued for it has been handled
// (client-go's synctrack.SingleFileTracker). Without the second half a
// controller would start work while its handler is still catching up.
type syncTracker struct {
	pending  atomic.Int64 // initial-list adds queued but not handled yet
	upstream atomic.Bool  // the informer has synced
	once     sync.Once
	done     chan struct{}
}

func newSyncTracker() *syncTracker { return &syncTracker{done: make(chan struct{})} }

// start counts an initial-list add about to be queued.
func (t *syncTracker) start() { t.pending.Add(1) }

// finished counts one handled.
func (t *syncTracker) finished() {
	if t.pending.Add(-1) == 0 && t.upstream.Load() {
		t.markDone()
	}
}

// upstreamHasSynced records that the informer has synced.
func (t *syncTracker) upstreamHasSynced() {
	t.upstream.Store(true)
	if t.pending.Load() == 0 {
		t.markDone()
	}
}

func (t *syncTracker) markDone() { t.once.Do(func() { close(t.done) }) }

func (t *syncTracker) hasSynced() bool {
	select {
	case <-t.done:
		return true
	default:
		return false
	}
}
