package fifo

import (
	"context"
	"fmt"
	"slices"

	"listwatch/api"
	"listwatch/narrate"
)

// DeltaFIFO is client-go's tools/cache/delta_fifo.go: a queue of keys, each
// holding every delta that arrived for that key since it was last popped.
//
// A key joins the back of the line when its first delta arrives and keeps
// its place however many more arrive, so Pop hands a consumer everything
// that happened to one object since it last looked, at the cost of the
// order between objects: a busy key is delivered as early as its first
// delta, ahead of keys that changed in between.
type DeltaFIFO struct {
	core
	// items maps each queued key to its deltas (never empty); queue holds
	// the same keys in the order Pop hands them out, each once.
	items map[string]Deltas
	queue []string
}

// NewDeltaFIFO returns the classic keyed queue that merges deltas per key.
func NewDeltaFIFO(opts Options) *DeltaFIFO {
	return &DeltaFIFO{core: newCore(opts), items: map[string]Deltas{}}
}

// Add queues an Added delta for obj.
func (f *DeltaFIFO) Add(obj *api.Object) error { return f.change(Added, obj) }

// Update queues an Updated delta for obj.
func (f *DeltaFIFO) Update(obj *api.Object) error { return f.change(Updated, obj) }

// Delete queues a Deleted delta for obj, unless the queue has never heard
// of it: neither queued nor in KnownObjects. That happens when a re-list
// already turned the deletion into a tombstone and the watch then reports
// it again; telling the consumer twice would be wrong.
func (f *DeltaFIFO) Delete(obj *api.Object) error { return f.change(Deleted, obj) }

func (f *DeltaFIFO) change(t DeltaType, obj *api.Object) error {
	key, err := KeyOf(obj)
	if err != nil {
		return fmt.Errorf("queueing %s delta: %w", t, err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.populatedLocked()
	if t == Deleted && !f.knowsLocked(key) {
		f.tr.Printf(narrate.Queue, "ignored Deleted %s: neither queued nor known (a relist already reported it)", key)
		return nil
	}
	f.queueLocked(key, Delta{Type: t, Object: obj})
	return nil
}

// knowsLocked reports whether key is queued or in KnownObjects.
func (f *DeltaFIFO) knowsLocked(key string) bool {
	if _, queued := f.items[key]; queued {
		return true
	}
	if f.known == nil {
		return false
	}
	_, known := f.known.GetByKey(key)
	return known
}

// queueLocked appends d to key's deltas, putting the key at the back of the
// line only if it is not already waiting.
func (f *DeltaFIFO) queueLocked(key string, d Delta) {
	old, queued := f.items[key]
	before := len(old)
	deltas := dedupDeltas(append(old, d))
	if !queued {
		f.queue = append(f.queue, key)
	}
	f.items[key] = deltas
	f.wakeLocked()
	if f.tr.Enabled() {
		if len(deltas) == before {
			f.tr.Printf(narrate.Queue, "queued %s %s, collapsed into the Deleted before it (%s)", d.describe(), key, plural(len(deltas), "delta"))
		} else {
			f.tr.Printf(narrate.Queue, "queued %s %s (%s)", d.describe(), key, plural(len(deltas), "delta"))
		}
	}
}

// Replace is a re-list at resourceVersion. Each listed object gets a
// Replaced delta; then every key the queue knows of that the list lacks
// gets a Deleted delta carrying a tombstone: first the queued keys (their
// tombstone holds the newest queued object), then the KnownObjects keys with
// nothing queued (their tombstone holds the cached object). A list with an
// object that has no key is refused whole.
func (f *DeltaFIFO) Replace(list []*api.Object, resourceVersion string) error {
	keys, listed, err := keyAll(list)
	if err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for i, obj := range list {
		f.queueLocked(keys[i], Delta{Type: Replaced, Object: obj})
	}
	tombstones := 0
	for _, key := range f.queue {
		if listed[key] {
			continue
		}
		f.tombstoneLocked(f.queueLocked, key, tombstoneFor(key, f.items[key].Newest().Object), resourceVersion, "queued")
		tombstones++
	}
	if f.known != nil {
		for _, key := range f.known.ListKeys() {
			if listed[key] || len(f.items[key]) > 0 {
				continue
			}
			cached, _ := f.known.GetByKey(key)
			f.tombstoneLocked(f.queueLocked, key, DeletedFinalStateUnknown{Key: key, Obj: cached}, resourceVersion, "cached")
			tombstones++
		}
	}
	if f.tr.Enabled() {
		f.tr.Printf(narrate.Queue, "replaced at rv %s: %s listed, %s, %s queued",
			resourceVersion, plural(len(list), "object"), plural(tombstones, "tombstone"), plural(len(f.queue), "key"))
	}
	f.firstReplaceLocked(len(f.queue))
	return nil
}

// Resync queues a Sync delta for every KnownObjects key with nothing queued.
// A key with deltas waiting is skipped: its cached object is older than
// what is queued, and a Sync carrying it would hand the consumer a stale
// version after the fresh one (and would re-create an object whose Deleted
// delta is waiting). Without KnownObjects Resync does nothing.
func (f *DeltaFIFO) Resync() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.known == nil {
		return nil
	}
	synced, skipped := 0, 0
	for _, key := range f.known.ListKeys() {
		if len(f.items[key]) > 0 {
			skipped++
			continue
		}
		obj, ok := f.known.GetByKey(key)
		if !ok || obj == nil {
			continue // gone from the cache since it was listed
		}
		f.queueLocked(key, Delta{Type: Sync, Object: obj})
		synced++
	}
	if f.tr.Enabled() {
		f.tr.Printf(narrate.Queue, "resync: %s, %s skipped (deltas already queued)", plural(synced, "Sync delta"), plural(skipped, "key"))
	}
	return nil
}

// Pop waits for the key at the front of the line, removes it, and calls
// process with all its deltas. process runs under the queue's lock, as in
// client-go, so the consumer can update its cache (the KnownObjects) before
// Replace or Resync look at it again; it must not call back into the queue.
// The item is gone from the queue even if process fails; its error is
// returned as is.
func (f *DeltaFIFO) Pop(ctx context.Context, process func(deltas Deltas, isInInitialList bool) error) error {
	if err := checkPopArgs(ctx, process); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.waitLocked(ctx, func() bool { return len(f.queue) > 0 }); err != nil {
		return err
	}
	key := f.queue[0]
	f.queue[0] = ""
	f.queue = f.queue[1:]
	deltas := f.items[key]
	delete(f.items, key)
	// Before the queue has synced, everything popped belongs to the
	// initial list (client-go's reading of isInInitialList).
	initial := !f.hasSynced
	// Count the item down only after process: HasSynced must not turn
	// true while the last initial item is still being handled.
	defer f.poppedLocked()
	if f.tr.Enabled() {
		f.tr.Printf(narrate.Queue, "popped %s %s (%s%s left)", key, deltas.types(), initialNote(initial), plural(len(f.queue), "key"))
	}
	return process(deltas, initial)
}

// HasSynced is true once the first Replace's items have all been popped,
// at once after an empty first Replace, and at once if an Add, Update or
// Delete came before any Replace.
func (f *DeltaFIFO) HasSynced() bool { return f.hasSyncedNow() }

// Synced returns a channel closed when HasSynced turns true, for callers
// that would rather wait than poll.
func (f *DeltaFIFO) Synced() <-chan struct{} { return f.synced }

// Len is the number of keys queued.
func (f *DeltaFIFO) Len() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.queue)
}

// ListKeys returns the queued keys in the order Pop will hand them out.
func (f *DeltaFIFO) ListKeys() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.queue)
}

// Get returns a copy of the deltas queued for key.
func (f *DeltaFIFO) Get(key string) (Deltas, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	d, ok := f.items[key]
	return slices.Clone(d), ok
}

// Close wakes every blocked Pop. Items still queued are handed out by later
// Pops; once none are left Pop returns ErrClosed.
func (f *DeltaFIFO) Close() {
	f.close()
	f.tr.Printf(narrate.Queue, "closed")
}

// IsClosed reports whether Close was called.
func (f *DeltaFIFO) IsClosed() bool { return f.isClosed() }
