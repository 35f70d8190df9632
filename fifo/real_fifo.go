package fifo

import (
	"context"
	"fmt"
	"slices"

	"listwatch/api"
	"listwatch/narrate"
)

// RealFIFO is client-go's tools/cache/the_real_fifo.go: every delta is kept,
// in the order it arrived, and Pop hands them out one at a time. Nothing is
// merged per key, so a consumer sees changes to different objects in the
// order the server made them. client-go's informers use it since 1.33; since
// 1.36 in its atomic form (Options.Atomic, Options.UnlockWhileProcessing).
//
// What the atomic form does differently is in real_fifo_atomic.go; this
// file reads as the plain RealFIFO, with one line where each method hands
// over to it.
type RealFIFO struct {
	core
	items []Delta
	// emitAtomicEvents and unlockWhileProcessing are Options.Atomic and
	// Options.UnlockWhileProcessing (client-go's field names).
	emitAtomicEvents, unlockWhileProcessing bool
}

// NewRealFIFO returns the in-order queue client-go's informers use since
// 1.33. With opts.Atomic it is the 1.36 queue: KnownObjects is then ignored
// (the consumer reconciles re-lists itself).
func NewRealFIFO(opts Options) *RealFIFO {
	f := &RealFIFO{core: newCore(opts), emitAtomicEvents: opts.Atomic}
	if f.emitAtomicEvents {
		f.known = nil
		f.unlockWhileProcessing = opts.UnlockWhileProcessing
	}
	return f
}

// Add queues an Added delta for obj.
func (f *RealFIFO) Add(obj *api.Object) error { return f.change(Added, obj) }

// Update queues an Updated delta for obj.
func (f *RealFIFO) Update(obj *api.Object) error { return f.change(Updated, obj) }

// Delete queues a Deleted delta for obj. Unlike DeltaFIFO it does not check
// that the object is known: with every delta delivered in order, the
// consumer is the one that knows.
func (f *RealFIFO) Delete(obj *api.Object) error { return f.change(Deleted, obj) }

func (f *RealFIFO) change(t DeltaType, obj *api.Object) error {
	key, err := KeyOf(obj)
	if err != nil {
		return fmt.Errorf("queueing %s delta: %w", t, err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.populatedLocked()
	f.queueLocked(key, Delta{Type: t, Object: obj})
	return nil
}

func (f *RealFIFO) queueLocked(key string, d Delta) {
	f.items = append(f.items, d)
	f.wakeLocked()
	if f.tr.Enabled() {
		if key != "" {
			key = " " + key
		}
		f.tr.Printf(narrate.Queue, "queued %s%s (%s in line)", d.describe(), key, plural(len(f.items), "delta"))
	}
}

// Replace is a re-list at resourceVersion. An atomic RealFIFO queues it as
// one ReplacedAll delta (addReplaceToItemsLocked); otherwise
// reconcileReplacementLocked queues tombstones, then the list. A list with
// an object that has no key is refused whole.
func (f *RealFIFO) Replace(list []*api.Object, resourceVersion string) error {
	keys, listed, err := keyAll(list)
	if err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.emitAtomicEvents {
		f.addReplaceToItemsLocked(list, resourceVersion)
	} else {
		f.reconcileReplacementLocked(list, keys, listed, resourceVersion)
	}
	f.firstReplaceLocked(len(f.items))
	return nil
}

// reconcileReplacementLocked is client-go's reconcileReplacement. First,
// tombstones: for every queued key the list lacks whose newest queued delta
// is not already a Deleted (the tombstone holds that newest object), then
// for every KnownObjects key the list lacks with nothing queued (holding
// the cached object). Then a Replaced delta for each listed object, in list
// order. The deletions go first so that a key deleted and re-created while
// we were away reaches the consumer as a delete followed by the new object.
func (f *RealFIFO) reconcileReplacementLocked(list []*api.Object, keys []string, listed map[string]bool, resourceVersion string) {
	// The newest queued delta of each queued key, keys in first-seen order.
	var queuedKeys []string
	newest := map[string]Delta{}
	for _, d := range f.items {
		key, err := KeyOf(d.Object)
		if err != nil {
			continue // cannot happen: only keyed objects are ever queued
		}
		if _, seen := newest[key]; !seen {
			queuedKeys = append(queuedKeys, key)
		}
		newest[key] = d
	}

	tombstones := 0
	for _, key := range queuedKeys {
		last := newest[key]
		if listed[key] || last.Type == Deleted {
			continue
		}
		f.tombstoneLocked(f.queueLocked, key, tombstoneFor(key, last.Object), resourceVersion, "queued")
		tombstones++
	}
	if f.known != nil {
		for _, key := range f.known.ListKeys() {
			if _, queued := newest[key]; listed[key] || queued {
				continue
			}
			cached, _ := f.known.GetByKey(key)
			f.tombstoneLocked(f.queueLocked, key, DeletedFinalStateUnknown{Key: key, Obj: cached}, resourceVersion, "cached")
			newest[key] = Delta{Type: Deleted} // a key listed twice gets one tombstone
			tombstones++
		}
	}
	for i, obj := range list {
		f.queueLocked(keys[i], Delta{Type: Replaced, Object: obj})
	}
	if f.tr.Enabled() {
		f.tr.Printf(narrate.Queue, "replaced at rv %s: %s listed, %s, %s queued",
			resourceVersion, plural(len(list), "object"), plural(tombstones, "tombstone"), plural(len(f.items), "delta"))
	}
}

// Resync queues a Sync delta for every KnownObjects key with nothing queued,
// for the same reason as DeltaFIFO.Resync: a queued delta is newer than the
// cache. Without KnownObjects Resync does nothing. An atomic RealFIFO
// queues one SyncAll delta instead (addResyncToItemsLocked).
func (f *RealFIFO) Resync() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.emitAtomicEvents {
		f.addResyncToItemsLocked()
		return nil
	}
	if f.known == nil {
		return nil
	}
	queued := make(map[string]bool, len(f.items))
	for _, d := range f.items {
		if key, err := KeyOf(d.Object); err == nil {
			queued[key] = true
		}
	}
	synced, skipped := 0, 0
	for _, key := range f.known.ListKeys() {
		if queued[key] {
			skipped++
			continue
		}
		obj, ok := f.known.GetByKey(key)
		if !ok || obj == nil {
			continue // gone from the cache since it was listed
		}
		f.queueLocked(key, Delta{Type: Sync, Object: obj})
		queued[key] = true
		synced++
	}
	if f.tr.Enabled() {
		f.tr.Printf(narrate.Queue, "resync: %s, %s skipped (deltas already queued)", plural(synced, "Sync delta"), plural(skipped, "key"))
	}
	return nil
}

// Pop waits for the oldest delta, removes it, and calls process with it
// alone (a Deltas of length one). As with DeltaFIFO, process runs under the
// queue's lock and must not call back into the queue, unless the queue was
// built with Atomic and UnlockWhileProcessing: then the lock is released
// while process runs (see Options.UnlockWhileProcessing) and only one
// goroutine may Pop. The delta is gone even if process fails, and its error
// is returned as is.
func (f *RealFIFO) Pop(ctx context.Context, process func(deltas Deltas, isInInitialList bool) error) error {
	if err := checkPopArgs(ctx, process); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.waitLocked(ctx, func() bool { return len(f.items) > 0 }); err != nil {
		return err
	}
	d := f.items[0]
	f.items[0] = Delta{} // the backing array must not keep the object alive
	f.items = f.items[1:]
	initial := !f.hasSynced
	// Counted down only once process is done, so HasSynced never turns
	// true while the last initial item is still being handled.
	defer f.poppedLocked()
	if f.tr.Enabled() {
		f.tr.Printf(narrate.Queue, "popped %s%s (%s%s left)", d.describe(), keySuffix(d), initialNote(initial), plural(len(f.items), "delta"))
	}
	return f.whileProcessingLocked(func() error { return process(Deltas{d}, initial) })
}

// HasSynced is true once the first Replace's deltas have all been popped,
// at once after an empty first Replace, and at once if an Add, Update or
// Delete came before any Replace.
func (f *RealFIFO) HasSynced() bool { return f.hasSyncedNow() }

// Synced returns a channel closed when HasSynced turns true.
func (f *RealFIFO) Synced() <-chan struct{} { return f.synced }

// Len is the number of deltas queued.
func (f *RealFIFO) Len() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.items)
}

// Pending returns a copy of the queued deltas, oldest first.
func (f *RealFIFO) Pending() Deltas {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(Deltas(f.items))
}

// Close wakes every blocked Pop. Deltas still queued are handed out by later
// Pops; once none are left Pop returns ErrClosed.
func (f *RealFIFO) Close() {
	f.close()
	f.tr.Printf(narrate.Queue, "closed")
}

// IsClosed reports whether Close was called.
func (f *RealFIFO) IsClosed() bool { return f.isClosed() }
