package fifo

import (
	"slices"

	"listwatch/api"
	"listwatch/narrate"
)

// This file is the atomic RealFIFO: what a RealFIFO built with
// Options.Atomic (client-go's RealFIFOOptions.AtomicEvents, the
// emitAtomicEvents field) and Options.UnlockWhileProcessing does instead of
// the plain one. client-go keeps the same split inside the_real_fifo.go:
// Replace and Resync hand over to addReplaceToItemsLocked and
// addResyncToItemsLocked when emitAtomicEvents is set, Bookmark queues only
// then, and Pop runs the consumer through whileProcessing_locked. The
// names here mirror those.

// unlockBelow is how many queued deltas an unlocking RealFIFO tolerates
// before it keeps its lock while processing again: client-go's two batches
// of defaultBatchSize (1000). Past it, a Reflector queueing faster than
// the consumer pops waits for each Pop instead of growing the queue.
const unlockBelow = 2 * 1000

// addReplaceToItemsLocked queues a re-list as one ReplacedAll delta. The
// queue looks at neither what it holds nor the consumer's cache: deltas
// queued before it stay (they are older than the list and are applied
// first), and the consumer computes the tombstones when it pops it,
// against a cache that by then holds every earlier delta. That is why an
// atomic queue needs no KnownObjects, and why it may unlock while the
// consumer processes.
func (f *RealFIFO) addReplaceToItemsLocked(list []*api.Object, resourceVersion string) {
	f.queueLocked("", Delta{Type: ReplacedAll, Object: ReplacedAllInfo{
		ResourceVersion: resourceVersion,
		Objects:         slices.Clone(list),
	}})
	if f.tr.Enabled() {
		f.tr.Printf(narrate.Queue, "replaced at rv %s: %s listed, one ReplacedAll delta, %s queued",
			resourceVersion, plural(len(list), "object"), plural(len(f.items), "delta"))
	}
}

// addResyncToItemsLocked queues a periodic resync as one SyncAll delta: the
// consumer re-delivers every object it has cached when it pops it.
func (f *RealFIFO) addResyncToItemsLocked() {
	f.queueLocked("", Delta{Type: SyncAll, Object: SyncAllInfo{}})
	f.tr.Printf(narrate.Queue, "resync: one SyncAll delta (the informer re-delivers every cached object)")
}

// Bookmark queues a Bookmark delta when the queue is atomic, so the
// consumer's cache learns the resourceVersion a BOOKMARK event brought in
// the order it arrived; otherwise it does nothing (client-go emits them only
// from an atomic queue, where nothing else can reorder them).
func (f *RealFIFO) Bookmark(resourceVersion string) error {
	if !f.emitAtomicEvents {
		return nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.queueLocked("", Delta{Type: Bookmark, Object: BookmarkInfo{ResourceVersion: resourceVersion}})
	return nil
}

// whileProcessingLocked runs process, with mu released meanwhile if the
// queue unlocks while processing and is not too long. It is entered and
// left with mu held, even if process panics.
func (f *RealFIFO) whileProcessingLocked(process func() error) error {
	if f.unlockWhileProcessing && len(f.items) < unlockBelow {
		f.mu.Unlock()
		defer f.mu.Lock()
	}
	return process()
}
